import { Arg, Ctx as C, Field, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { DateTime } from '../../core/scalars';
import { services } from '../../services';

@ObjectType({ description: "The merchant's test-mode time (contract 8)." })
export class TestClockState {
  @Field()
  get object(): string {
    return 'test_clock';
  }
  @Field(() => DateTime) now!: Date;
}

const state = (now: Date) => Object.assign(new TestClockState(), { now });

@Resolver()
export class TestClockResolver {
  @Query(() => TestClockState, { description: "The merchant's test clock (test mode only)." })
  async testClock(@C() ctx: Ctx): Promise<TestClockState> {
    return state(await services(ctx).clock.read(ctx));
  }

  @Mutation(() => TestClockState, {
    description: 'Moves the test clock forward by `seconds` or to `to`, and answers once all work due by then is done, in time order.',
  })
  async advanceTestClock(
    @C() ctx: Ctx,
    @Arg('seconds', () => Int, { nullable: true }) seconds?: number | null,
    @Arg('to', () => DateTime, { nullable: true }) to?: Date | null,
  ): Promise<TestClockState> {
    return state(await services(ctx).clock.advanceFor(ctx, { seconds, to }));
  }
}
