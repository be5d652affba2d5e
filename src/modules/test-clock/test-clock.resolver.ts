import { Arg, Ctx as C, Field, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { DateTime } from '../../core/scalars';
import { services } from '../../services';
import type { ClockState } from './test-clock.service';

@ObjectType({ description: "The merchant's test-mode time." })
export class TestClockState {
  @Field()
  get object(): string {
    return 'test_clock';
  }
  @Field(() => DateTime) now!: Date;
  @Field(() => DateTime, {
    nullable: true,
    description:
      'The target of an advance not finished: one running now, or one that stopped early (its client left, the service stopped, or it failed). ' +
      'The next advance resumes it. Null when there is none.',
  })
  advanceTarget!: Date | null;
  @Field(() => DateTime, {
    nullable: true,
    description:
      'Where an advance that stopped early stopped: every piece of work due up to this time is done. Null while an advance runs and when none is unfinished.',
  })
  advanceInterruptedAt!: Date | null;
}

const state = (s: ClockState) => Object.assign(new TestClockState(), s);

@Resolver()
export class TestClockResolver {
  @Query(() => TestClockState, { description: "The merchant's test clock (test mode only)." })
  async testClock(@C() ctx: Ctx): Promise<TestClockState> {
    return state(await services(ctx).clock.read(ctx));
  }

  @Mutation(() => TestClockState, {
    description:
      'Moves the test clock forward by `seconds` or to `to`, at most 366 days per call, and answers once all work due by then is done, in time order. ' +
      'If the client leaves or the service stops first, it stops between two pieces of due work at a consistent point and records it ' +
      '(`advanceTarget`, `advanceInterruptedAt`); the next advance resumes towards the later of that target and its own.',
  })
  async advanceTestClock(
    @C() ctx: Ctx,
    @Arg('seconds', () => Int, { nullable: true }) seconds?: number | null,
    @Arg('to', () => DateTime, { nullable: true }) to?: Date | null,
  ): Promise<TestClockState> {
    return state(await services(ctx).clock.advanceFor(ctx, { seconds, to }));
  }
}
