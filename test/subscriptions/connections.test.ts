import { useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan } from './helpers';

/**
 * Gateway connections (docs/sandbox.md): a connection used by a subscription that has not ended cannot be deleted
 * (409 provider_in_use).
 */

const h = useHarness();

it('refuses to delete a connection while a subscription that has not ended uses it, and allows it once all have ended', async () => {
  const m = await h.merchant();
  const { connection } = await connect(m.test, 'stripe');
  const { plan } = await recurringPlan(m.test);
  const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
  const pending = await createSubscription(m.test, plan.id); // created: not ended either

  const refused = await m.test.delete(`/providers/connections/${connection.id}`);
  expect(refused.status).toBe(409);
  expect(refused.body.error.code).toBe('provider_in_use');
  expect((await m.test.get('/providers/connections')).body.data.map((c: any) => c.id)).toEqual([connection.id]);

  await ok(m.test.post(`/subscriptions/${subscription.id}/cancel`));
  expect((await m.test.delete(`/providers/connections/${connection.id}`)).status).toBe(409); // one still open
  await ok(m.test.post(`/subscriptions/${pending.id}/cancel`));
  expect((await m.test.delete(`/providers/connections/${connection.id}`)).body).toMatchObject({
    id: connection.id,
    deleted: true,
  });
});
