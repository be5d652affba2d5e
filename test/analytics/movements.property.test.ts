import fc from 'fast-check';
import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { ok } from '../subscriptions/helpers';
import { monthlyAmount } from '../../src/money';
import { analytics, planAt, subscribed } from './helpers';

/**
 * The ledger's invariant (docs/analytics.md), as a property over random histories made through the API on the test
 * clock: for any window, the movements in (from, to] sum to MRR(to) - MRR(from), as the endpoints answer them; and
 * at every instant after a command, the MRR the endpoint answers is what the subscriptions' own state says
 * (docs/analytics.md: each counted subscription's normalised amount). Kept small: every command is a real request.
 */

const h = useHarness();
jest.setTimeout(600_000);

type Command =
  | { kind: 'subscribe'; plan: number; customer: number }
  | { kind: 'pause' | 'resume' | 'cancel'; target: number }
  | { kind: 'change'; target: number; plan: number }
  | { kind: 'advance'; hours: number };

const PLANS = [
  { plan: { billing_frequency: 'monthly' }, price: { amount: 10000 } },
  { plan: { billing_frequency: 'monthly' }, price: { amount: 25000 } },
  { plan: { billing_frequency: 'yearly' }, price: { amount: 130000 } },
  { plan: { billing_frequency: 'weekly' }, price: { amount: 1500 } },
];

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('subscribe' as const),
      plan: fc.nat(PLANS.length - 1),
      customer: fc.nat(3),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('pause' as const, 'resume' as const, 'cancel' as const),
      target: fc.nat(9),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('change' as const), target: fc.nat(9), plan: fc.nat(PLANS.length - 1) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), hours: fc.integer({ min: 1, max: 24 * 40 }) }),
  },
);

/** MRR the subscriptions' state gives now: each active or past_due one at its plan's normalised amount. */
async function modelMrr(m: TestMerchant, plans: Map<string, { amount: number; frequency: string; interval: number }>) {
  const list = await ok(m.test.get('/subscriptions?limit=100'));
  let mrr = 0;
  let counted = 0;
  for (const s of list.data) {
    if (s.status !== 'active' && s.status !== 'past_due') continue;
    const p = plans.get(s.plan_id)!;
    mrr += monthlyAmount(p.amount, p.frequency, p.interval);
    counted++;
  }
  return { mrr, counted };
}

it('the movements of any window sum to the change of MRR, and MRR follows the subscriptions', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(command, { minLength: 3, maxLength: 8 }),
      fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })), {
        minLength: 2,
        maxLength: 4,
      }),
      async (commands, windows) => {
        const m = await h.merchant();
        await connect(m.test, 'stripe');
        const plans = new Map<string, { amount: number; frequency: string; interval: number }>();
        const planIds: string[] = [];
        for (const p of PLANS) {
          const made = await planAt(m.test, p.plan, p.price);
          plans.set(made.id, { amount: p.price.amount, frequency: p.plan.billing_frequency, interval: 1 });
          planIds.push(made.id);
        }
        const subs: { id: string; customer_id: string }[] = [];
        const customers: string[] = [];
        // Checkpoints: after each command, the merchant's time and the MRR the subscriptions' state gives.
        const start = await h.clock.now(m);
        const checkpoints: { at: Date; mrr: number; counted: number }[] = [{ at: start, mrr: 0, counted: 0 }];

        for (const c of commands) {
          const sub = 'target' in c && subs.length ? subs[c.target % subs.length] : null;
          if (c.kind === 'subscribe') {
            const known = customers[c.customer];
            const s = await subscribed(m.test, planIds[c.plan], known ? { customer_id: known } : {});
            if (!known) customers.push(s.customer_id);
            subs.push(s);
          } else if (c.kind === 'advance') {
            await h.clock.advance(m, c.hours * 3600);
          } else if (sub) {
            const r =
              c.kind === 'change'
                ? await m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: planIds[c.plan] })
                : await m.test.post(
                    `/subscriptions/${sub.id}/${c.kind}`,
                    c.kind === 'cancel' ? { cancel_at_period_end: false } : {},
                  );
            // Commands the state table refuses (409) or a plan change to the same plan (400) change nothing.
            expect([200, 400, 409]).toContain(r.status);
          }
          const model = await modelMrr(m, plans);
          checkpoints.push({ at: await h.clock.now(m), ...model });
        }

        // MRR at each checkpoint is the model's.
        const end = checkpoints[checkpoints.length - 1].at;
        for (const cp of checkpoints.slice(1)) {
          const a = await analytics(m.test, 'mrr', { from: new Date(start.getTime() - 1000), to: cp.at });
          expect([cp.at.toISOString(), a.mrr, a.active_subscriptions]).toEqual([
            cp.at.toISOString(),
            cp.mrr,
            cp.counted,
          ]);
        }
        // Any window: checkpoints and random instants between the first and the last.
        const span = end.getTime() - start.getTime();
        const pairs: [Date, Date][] = windows.map(([x, y]) => {
          const [lo, hi] = [Math.min(x, y), Math.max(x, y)];
          return [
            new Date(start.getTime() - 1000 + Math.floor(lo * span)),
            new Date(start.getTime() + Math.ceil(hi * span) + 1000),
          ];
        });
        pairs.push([checkpoints[0].at, end]);
        for (let i = 1; i + 1 < checkpoints.length && i < 4; i++)
          pairs.push([checkpoints[i].at, checkpoints[i + 1].at]);
        for (const [from, to] of pairs) {
          if (from.getTime() >= to.getTime()) continue;
          const before = await analytics(m.test, 'mrr', { from: new Date(from.getTime() - 1000), to: from });
          for (const interval of ['month', 'week']) {
            const a = await analytics(m.test, 'mrr', { from, to, interval });
            const mv = a.movements;
            expect(mv.net_new).toBe(a.mrr - before.mrr);
            expect(mv.new + mv.expansion + mv.reactivation - mv.contraction - mv.churn).toBe(mv.net_new);
            // The series covers the window exactly, its sums are the window's, and its MRR runs from MRR(from) to MRR(to).
            expect(a.series[0].period_start).toBe(from.toISOString());
            expect(a.series.at(-1).period_end).toBe(to.toISOString());
            expect(a.series.at(-1).mrr).toBe(a.mrr);
            let running = before.mrr;
            for (const p of a.series) {
              running += p.new + p.expansion + p.reactivation - p.contraction - p.churn;
              expect(p.mrr).toBe(running);
            }
            const churn = await analytics(m.test, 'churn', { from, to, interval });
            expect([
              churn.mrr_at_start,
              churn.subscriptions_at_start,
              churn.churned_mrr,
              churn.contraction_mrr,
            ]).toEqual([before.mrr, before.active_subscriptions, mv.churn, mv.contraction]);
          }
        }
      },
    ),
    { numRuns: 4 },
  );
});
