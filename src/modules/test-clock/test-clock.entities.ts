import { BigIntType, Entity, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * A merchant's test-mode clock: test-mode time is wall time plus `offsetMs`, which only ever grows
 * (POST /v1/test-clock/advance). Live mode always reads the wall clock. No row: offset 0.
 */
@Entity({ tableName: 'test_clocks' })
export class TestClock {
  @PrimaryKey({ type: 'uuid' })
  merchantId!: string;

  @Property({ type: new BigIntType('number') })
  offsetMs: number = 0;

  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
