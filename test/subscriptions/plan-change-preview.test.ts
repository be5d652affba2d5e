import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, invoicesOf, ok, recurringPlan, trail } from './helpers';

/**
 * previewPlanChange (POST /v1/subscriptions/{id}/change-plan/preview): what a change would do now, computed by the
 * same arithmetic as the change itself, with nothing changed. Yearly plans: a second between the preview and the change
 * moves the proration by far less than a paisa, so the two agree exactly.
 */

const h = useHarness();
jest.setTimeout(60_000);
const DAY = 86_400_000;

async function activeYearly(m: TestMerchant) {
  const { plan } = await recurringPlan(m.test, { billing_frequency: 'yearly' }, { amount: 499000 });
  const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
  await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + 100 * DAY));
  return subscription;
}

describe.each([
  ['with GST', { gstin: '29AAGCB7383J1Z4', state_code: '29' }],
  ['without GST', {}],
])('%s', (_label, merchantBody) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant(merchantBody);
    await connect(m.test, 'stripe');
  });

  it('an upgrade: the preview equals the change made after it, and changes nothing itself', async () => {
    const sub = await activeYearly(m);
    const { plan: bigger } = await recurringPlan(m.test, { billing_frequency: 'yearly' }, { amount: 999000 });
    const before = { trail: await trail(m.test, sub.id), invoices: (await invoicesOf(m.test, sub.id)).length };

    const preview = await ok(m.test.post(`/subscriptions/${sub.id}/change-plan/preview`, { plan_id: bigger.id }));
    expect(await trail(m.test, sub.id)).toEqual(before.trail);
    expect((await invoicesOf(m.test, sub.id)).length).toBe(before.invoices);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).plan_id).toBe(sub.plan_id);

    const changed = await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: bigger.id }));
    expect(preview.proration).toEqual(changed.proration);
    expect(preview.proration.net_amount).toBeGreaterThan(0);
    expect(preview.tax_amount).toBe(changed.invoice.tax_amount);
    expect(preview.total).toBe(changed.invoice.total);
    expect(preview.new_amount).toBe(999000);
    if ('gstin' in merchantBody) expect(preview.tax_amount).toBeGreaterThan(0);
    else expect(preview.tax_amount).toBe(0);
  });

  it('a downgrade: a negative total, the credit note the change issues', async () => {
    const sub = await activeYearly(m);
    const { plan: smaller } = await recurringPlan(m.test, { billing_frequency: 'yearly' }, { amount: 199000 });
    const preview = await ok(m.test.post(`/subscriptions/${sub.id}/change-plan/preview`, { plan_id: smaller.id }));
    const changed = await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: smaller.id }));
    expect(preview.proration).toEqual(changed.proration);
    expect(preview.total).toBe(-changed.credit_note.total);
    expect(preview.tax_amount).toBe(0 - changed.credit_note.tax_amount);
  });
});

it('over GraphQL; at the period end no proration; refusals as the change would answer', async () => {
  const m = await h.merchant();
  await connect(m.test, 'stripe');
  const sub = await activeYearly(m);
  const { plan: other } = await recurringPlan(m.test, { billing_frequency: 'yearly' }, { amount: 999000 });
  const q = `query($id: ID!, $input: ChangePlanInput!) { previewPlanChange(id: $id, input: $input) { total taxAmount newAmount effectiveAt proration { netAmount } } }`;
  const later = await m.test.gql(q, { id: sub.id, input: { planId: other.id, effective: 'PERIOD_END' } });
  expect(later.data.previewPlanChange).toMatchObject({ proration: null, total: 0, taxAmount: 0, newAmount: 999000 });
  expect(later.data.previewPlanChange.effectiveAt).toBe(
    new Date((await ok(m.test.get(`/subscriptions/${sub.id}`))).current_period_end).toISOString(),
  );

  const same = await m.test.post(`/subscriptions/${sub.id}/change-plan/preview`, { plan_id: sub.plan_id });
  expect(same.status).toBe(400);
  const other2 = await h.merchant();
  const foreign = await other2.test.post(`/subscriptions/${sub.id}/change-plan/preview`, { plan_id: other.id });
  expect(foreign.status).toBe(404);
  await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, {}));
  const cancelled = await m.test.post(`/subscriptions/${sub.id}/change-plan/preview`, { plan_id: other.id });
  expect(cancelled.status).toBe(409);
});
