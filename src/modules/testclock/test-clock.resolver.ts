import { Arg, Ctx as C, Field, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { Mode } from '../../core/entity';
import { DomainError, invalid } from '../../core/errors';
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

function testMerchant(ctx: Ctx): string {
  const { merchant, mode } = tenantOf(ctx);
  if (mode !== Mode.TEST) throw new DomainError('test_mode_only', 'The test clock exists in test mode only: use your test secret key (sk_test_...).');
  return merchant.id;
}

const state = (now: Date) => Object.assign(new TestClockState(), { now });

@Resolver()
export class TestClockResolver {
  @Query(() => TestClockState, { description: "The merchant's test clock (test mode only)." })
  async testClock(@C() ctx: Ctx): Promise<TestClockState> {
    return state(await services(ctx).clock.now(testMerchant(ctx), Mode.TEST));
  }

  @Mutation(() => TestClockState, {
    description: 'Moves the test clock forward by `seconds` or to `to`, and answers once all work due by then is done, in time order.',
  })
  async advanceTestClock(
    @C() ctx: Ctx,
    @Arg('seconds', () => Int, { nullable: true }) seconds?: number | null,
    @Arg('to', () => DateTime, { nullable: true }) to?: Date | null,
  ): Promise<TestClockState> {
    const merchantId = testMerchant(ctx);
    if (seconds == null && to == null) throw new DomainError('parameter_missing', 'Missing required parameter: seconds (or to).', 'seconds');
    if (seconds != null && to != null) throw invalid('to', 'Give either seconds or to, not both.');
    if (seconds != null && seconds < 0) throw invalid('seconds', 'seconds must be at least 0: the test clock only moves forward.');
    return state(await services(ctx).clock.advance(merchantId, { seconds, to }));
  }
}
