import { BigIntType, Entity, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * A merchant's test-mode clock: test-mode time is wall time plus `offsetMs`, which only ever grows
 * (POST /v1/test-clock/advance). Live mode always reads the wall clock. No row: offset 0.
 * `advanceTarget` / `advanceInterruptedAt`: an advance not finished (running, or stopped early) and where it stopped;
 * the next advance resumes it (test-clock.service.ts).
 */
@Entity({ tableName: 'test_clocks' })
export class TestClock {
  @PrimaryKey({ type: 'uuid' })
  merchantId!: string;

  @Property({ type: new BigIntType('number') })
  offsetMs: number = 0;

  @Property({ type: 'timestamptz', nullable: true })
  advanceTarget?: Date | null;

  @Property({ type: 'timestamptz', nullable: true })
  advanceInterruptedAt?: Date | null;

  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
