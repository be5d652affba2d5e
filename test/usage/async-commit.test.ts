import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { billableSubscription, report, rnd, totals } from './helpers';

/**
 * USAGE_SYNCHRONOUS_COMMIT=off (src/config.ts): single events commit without waiting for the WAL flush. Events are
 * taken exactly as with the default, and the setting stays with each event's own transaction: the pool's connections
 * (shared with payments, subscriptions, ...) keep committing synchronously.
 */

const POOL = 4;
const h = useHarness({ usageSynchronousCommit: false, dbPoolMax: POOL });
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant();
  await connect(m.test, 'stripe');
});

it('events count once each, keys answer the first event, and no connection is left with synchronous_commit off', async () => {
  const s = await billableSubscription(m.test);
  const keys = Array.from({ length: 20 }, (_, i) => `ac-${rnd()}-${i}`);
  const first = await Promise.all(keys.map((k) => report(m.test, s.id, { idempotency_key: k, quantity: 0.5 })));
  const again = await Promise.all(keys.map((k) => report(m.test, s.id, { idempotency_key: k, quantity: 7 })));
  expect(again.map((e) => e.id)).toEqual(first.map((e) => e.id));
  expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 10 calls`]);

  // Every connection of the pool at once (each event above ran on one of them): all still commit synchronously.
  const pool = h.app.app.services.plainPool;
  const held = await Promise.all(Array.from({ length: POOL }, () => pool.connect()));
  try {
    const settings = await Promise.all(held.map(async (c) => (await c.query('show synchronous_commit')).rows[0].synchronous_commit));
    expect(settings).toEqual(Array(POOL).fill('on'));
  } finally {
    held.forEach((c) => c.release());
  }
});
