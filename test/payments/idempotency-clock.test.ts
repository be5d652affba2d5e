import { TestMerchant, useHarness } from '../harness';
import type { Client_ } from '../harness/app';
import { connect, paymentBody } from './helpers';

const createPayment = (c: Client_, overrides: Record<string, unknown>, headers: Record<string, string>) =>
  c.post('/payments', paymentBody(overrides), headers);

const h = useHarness();
let m: TestMerchant;
beforeAll(async () => {
  m = await h.merchant();
  await connect(m.test, 'stripe');
  await connect(m.live, 'stripe');
});

// The idempotency rules (docs/api.md, docs/sandbox.md): keys are kept 24 hours, and in test mode those hours are the
// merchant's test clock.
describe('Idempotency-Key expiry follows the test clock', () => {
  it('a key used 25 test-clock hours ago is free again; before that it is still bound to its request', async () => {
    const key = { 'Idempotency-Key': 'clock-key-1' };
    const first = await createPayment(m.test, { amount: 1000 }, key);
    expect(first.status).toBe(201);
    expect((await createPayment(m.test, { amount: 2000 }, key)).body.error.code).toBe('idempotency_key_reused');

    expect((await m.test.post('/test-clock/advance', { seconds: 23 * 3600 })).status).toBe(200);
    expect((await createPayment(m.test, { amount: 2000 }, key)).body.error.code).toBe('idempotency_key_reused');

    expect((await m.test.post('/test-clock/advance', { seconds: 2 * 3600 })).status).toBe(200);
    const again = await createPayment(m.test, { amount: 2000 }, key);
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
    expect(again.body.amount).toBe(2000);
  });

  it('live keys keep real time (the test clock never touches live mode)', async () => {
    const key = { 'Idempotency-Key': 'clock-key-live' };
    expect((await createPayment(m.live, { amount: 1000 }, key)).status).toBe(201);
    await h.clock.advance(m, 30 * 3600);
    expect((await createPayment(m.live, { amount: 2000 }, key)).body.error.code).toBe('idempotency_key_reused');
  });
});
