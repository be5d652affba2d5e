import { SchedulerLoop, SubscriptionScheduler } from '../../src/modules/subscriptions/subscription.scheduler';

/**
 * The loop's own contract, apart from what a sweep does (test/subscriptions/recovery.test.ts runs real sweeps): a
 * sweep waiting on the database (PostgreSQL gone, or the pool closed under it: up to the pool's 60 s acquire timeout)
 * must not hold up shutdown past the grace period.
 */
describe('SchedulerLoop.stop', () => {
  const stuck = () => {
    let sweeps = 0;
    const scheduler = {
      sweep: () => (sweeps++, new Promise<number>(() => undefined)),
      reconcileOverdue: async () => 0,
      settleUnanswered: async () => 0,
    };
    return { scheduler: scheduler as unknown as SubscriptionScheduler, sweeps: () => sweeps };
  };

  it('waits for a running sweep at most the grace period, then returns', async () => {
    const s = stuck();
    const loop = new SchedulerLoop(s.scheduler, {
      pollMs: 10,
      reconcileMs: 60_000,
      reconcileGraceMs: 0,
      pendingOutcomeGraceMs: 0,
    });
    loop.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(s.sweeps()).toBe(1); // started, and still waiting
    const started = Date.now();
    await loop.stop(300);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(2_000);
  });

  it('returns at once when no sweep runs, and starts none after', async () => {
    let sweeps = 0;
    const scheduler = {
      sweep: async () => (sweeps++, 0),
      reconcileOverdue: async () => 0,
      settleUnanswered: async () => 0,
    } as unknown as SubscriptionScheduler;
    const loop = new SchedulerLoop(scheduler, {
      pollMs: 10,
      reconcileMs: 60_000,
      reconcileGraceMs: 0,
      pendingOutcomeGraceMs: 0,
    });
    loop.start();
    await new Promise((r) => setTimeout(r, 60));
    const started = Date.now();
    await loop.stop(5_000);
    expect(Date.now() - started).toBeLessThan(100);
    const after = sweeps;
    await new Promise((r) => setTimeout(r, 60));
    expect(sweeps).toBe(after);
  });
});
