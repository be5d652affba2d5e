import { closedPortUrl, eventually, TestMerchant, useHarness } from '../harness';
import { connect, Connected, PROVIDERS, ProviderName } from '../payments/helpers';
import { OVERDUE_AT_GATEWAY } from '../../src/modules/subscriptions/subscription.store';
import {
  authorise,
  createSubscription,
  invoicesOf,
  ok,
  recurringPlan,
  redirectGatewayWebhook,
  sandboxEventsAbout,
  startSecondApp,
  trail,
} from './helpers';

/**
 * Recovery: a renewal whose webhook never reached the service converges through the reconciliation job (and the late
 * webhook then bills nothing twice); scheduled work left due when a worker process stops runs exactly once when a
 * new process starts on the same database, also with two workers sweeping at once.
 */

const h = useHarness();
jest.setTimeout(90_000);

describe.each(PROVIDERS)('%s: a lost renewal webhook', (provider: ProviderName) => {
  let m: TestMerchant;
  let conn: Connected;
  beforeAll(async () => {
    m = await h.merchant();
    conn = await connect(m.test, provider);
  });

  it('converges through reconciliation; the late webhook then changes nothing', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(subscription.cycles_completed).toBe(1);

    // The gateway renews while the service cannot hear it (its webhook points at a closed port).
    const restore = await redirectGatewayWebhook(h.app, conn.connection, await closedPortUrl());
    try {
      // The advance does not answer as if all were well while the merchant has not heard of a renewal it caused.
      const r = await m.test.post('/test-clock/advance', {
        to: new Date(new Date(subscription.current_period_end).getTime() + 60_000).toISOString(),
      });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe('gateway_unavailable');
    } finally {
      await restore();
    }
    const undelivered = (await sandboxEventsAbout(h.app, subscription)).filter((e) => !e.delivered);
    expect(undelivered.length).toBeGreaterThan(0);
    const stale = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(stale).toMatchObject({
      status: 'active',
      cycles_completed: 1,
      current_period_end: subscription.current_period_end,
    });

    // The reconciliation job reads it back from the gateway.
    expect(await h.app.app.services.scheduler.reconcileOverdue(0)).toBeGreaterThanOrEqual(1);
    const fixed = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(fixed).toMatchObject({
      status: 'active',
      cycles_completed: 2,
      current_period_start: subscription.current_period_end,
    });
    expect(new Date(fixed.current_period_end) > new Date(fixed.current_period_start)).toBe(true);
    const invoices = await invoicesOf(m.test, subscription.id);
    expect(invoices.map((i) => `${i.billing_reason}:${i.status}:${i.period_start}`)).toEqual([
      `subscription_create:paid:${subscription.current_period_start}`,
      `subscription_cycle:paid:${subscription.current_period_end}`,
    ]);
    const settled = { sub: fixed, trail: await trail(m.test, subscription.id), invoices };

    // A second pass, and then the late webhook: nothing billed twice.
    await h.app.app.services.scheduler.reconcileOverdue(0);
    expect(await h.app.app.sandbox!.redeliverPending()).toBeGreaterThan(0);
    expect((await sandboxEventsAbout(h.app, subscription)).filter((e) => !e.delivered)).toEqual([]);
    const { updated_at: _u, ...after } = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    const { updated_at: _s, ...was } = settled.sub;
    expect(after).toEqual(was);
    expect(await trail(m.test, subscription.id)).toEqual(settled.trail);
    expect(await invoicesOf(m.test, subscription.id)).toEqual(settled.invoices);

    // And the next renewal, heard normally, follows on from the reconciled period.
    await h.clock.advance(m, new Date(new Date(fixed.current_period_end).getTime() + 60_000));
    const next = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(next).toMatchObject({ cycles_completed: 3, current_period_start: fixed.current_period_end });
    expect(await invoicesOf(m.test, subscription.id)).toHaveLength(3);
  });
});

describe('a worker stopped with work due', () => {
  it('the due action runs exactly once when a new process starts, also with two workers sweeping', async () => {
    const m = await h.merchant();
    await connect(m.test, 'stripe');
    const { plan } = await recurringPlan(m.test);
    const loop = h.app.app.services.schedulerLoop;
    await loop.stop(); // this process's worker "dies"
    try {
      const subs = [];
      for (let i = 0; i < 6; i++) {
        const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
        expect(
          (await ok(m.test.post(`/subscriptions/${subscription.id}/cancel?cancel_at_period_end=true`)))
            .cancel_at_period_end,
        ).toBe(true);
        subs.push(subscription);
      }
      // Their period ends pass while no worker runs (the gateway was told at_period_end; the service must act itself).
      const ids = subs.map((s) => s.id);
      await h.app.orm.em
        .getConnection()
        .execute(
          `update subscriptions set current_period_end = now() - interval '1 minute', next_action_at = now() - interval '1 minute' where id in (${ids.map(() => '?').join(',')})`,
          ids,
        );
      for (const id of ids) expect((await ok(m.test.get(`/subscriptions/${id}`))).status).toBe('active');

      // Two new worker processes start on the database, and this one's worker comes back too: three sweeping at once.
      const workers = await Promise.all([1, 2].map(() => startSecondApp(h.app, { worker: true, schedulerPollMs: 20 })));
      try {
        loop.start();
        await eventually(
          async () => {
            for (const id of ids)
              if ((await ok(m.test.get(`/subscriptions/${id}`))).status !== 'cancelled') return false;
            return true;
          },
          15_000,
          'the period-end cancellations',
        );
        await new Promise((r) => setTimeout(r, 300)); // more sweeps
      } finally {
        await Promise.all(workers.map((w) => w.close()));
      }
      for (const id of ids) {
        const t = await trail(m.test, id);
        expect(t.filter((x) => x.includes('>cancelled:'))).toEqual([
          'active>cancelled:subscription.cancelled:scheduler',
        ]);
        expect((await ok(m.test.get(`/subscriptions/${id}`))).next_action ?? null).toBeNull();
        const cancelledEvents = await h.app.orm.em
          .getConnection()
          .execute<{ n: number }[]>(
            `select count(*)::int as n from outbox_events where type = 'subscription.cancelled' and payload->'data'->'object'->>'id' = ?`,
            [id],
          );
        expect(cancelledEvents[0].n).toBe(1);
      }
    } finally {
      loop.start();
    }
  });
});

describe('the reconciliation lookup across merchants', () => {
  it('can be served by its index (the most overdue first), not by reading every subscription', async () => {
    const em = h.app.orm.em.fork();
    const plan = await em.transactional(async (tx) => {
      const conn = tx.getConnection();
      const ctx = tx.getTransactionContext();
      // A small test database would be scanned whatever the indexes; what is checked is that the index can serve it.
      await conn.execute('set local enable_seqscan = off', [], 'run', ctx);
      return conn.execute(`explain (format json) ${OVERDUE_AT_GATEWAY}`, [60_000, 60_000, 50], 'all', ctx);
    });
    expect(JSON.stringify(plan)).toContain('"Index Name":"subscriptions_gateway_overdue_index"');
    expect(JSON.stringify(plan)).not.toContain('"Node Type":"Sort"');
  });
});
