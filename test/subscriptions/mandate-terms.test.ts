import { TestMerchant, useHarness } from '../harness';
import { connect, outbox, PROVIDERS, ProviderName } from '../payments/helpers';
import { after, authorise, createSubscription, ok, recurringPlan, trail } from './helpers';

/**
 * The terms an INR subscription's mandate is registered with (docs/india.md, "Mandates"): the most one debit may take
 * (the merchant's limit, or the first debit when that is more), the frequency (as presented) and the validity (the
 * end of a max_cycles term, else 10 years), on both transports and sent to the gateway; past its validity the gateway
 * debits nothing more (its end told with the next debit's notice) and the subscription is halted at once. Both gateways, through the sandbox and the test clock.
 */
const h = useHarness();
jest.setTimeout(240_000);

const sql = <T>(text: string, params: unknown[]) => h.app.orm.em.getConnection().execute<T[]>(text, params);

/** What Cadence sent the gateway with the subscription (Stripe metadata, Razorpay notes). */
async function sentToGateway(providerSubscriptionId: string): Promise<Record<string, string>> {
  const [row] = await sql<{ notes: Record<string, string> }>(
    `select coalesce(data->'metadata', data->'notes') as notes from sandbox_objects where id = ?`,
    [providerSubscriptionId],
  );
  return row.notes;
}

const years = (from: Date, n: number) => {
  const d = new Date(from);
  d.setUTCFullYear(d.getUTCFullYear() + n);
  return d;
};

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, provider);
  });

  it('an open-ended subscription: the limit as maximum, as presented, 10 years; on both transports and at the gateway', async () => {
    const { plan } = await recurringPlan(m.test);
    const created = await createSubscription(m.test, plan.id);
    const clock = await h.clock.now(m);
    const { subscription: sub } = await authorise(m.test, created);
    expect(sub).toMatchObject({ mandate_max_amount: 1_500_000, mandate_frequency: 'as_presented' });
    expect(Math.abs(new Date(sub.mandate_valid_until).getTime() - years(clock, 10).getTime())).toBeLessThan(60_000);
    const g = await m.test.gql(
      'query($id: ID!) { subscription(id: $id) { mandateMaxAmount mandateFrequency mandateValidUntil } }',
      { id: sub.id },
    );
    expect(g.data.subscription).toEqual({
      mandateMaxAmount: 1_500_000,
      mandateFrequency: 'as_presented',
      mandateValidUntil: sub.mandate_valid_until,
    });
    const notes = await sentToGateway(sub.provider_subscription_id);
    expect(notes).toMatchObject({
      mandate_afa_limit: '1500000',
      mandate_max_amount: '1500000',
      mandate_frequency: 'as_presented',
      mandate_valid_until: String(Math.floor(new Date(sub.mandate_valid_until).getTime() / 1000)),
    });
  });

  it('a first debit above the limit is the maximum; a max_cycles term ends the validity at its last period', async () => {
    // ₹16,000 + 18% GST = ₹18,880 a month, for 3 months after a 7-day trial.
    const { plan } = await recurringPlan(m.test, { trial_period_days: 7, max_cycles: 3 }, { amount: 1_600_000 });
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(sub.status).toBe('trialing');
    expect(sub.mandate_max_amount).toBe(1_888_000);
    const end = new Date(sub.trial_end);
    end.setUTCMonth(end.getUTCMonth() + 3);
    expect(Math.abs(new Date(sub.mandate_valid_until).getTime() - end.getTime())).toBeLessThan(60_000);
  });

  it('past its validity the mandate debits nothing: the renewal after it is a hard decline, halted at once', async () => {
    const { plan } = await recurringPlan(m.test, { name: 'Yearly', billing_frequency: 'yearly' });
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    const validUntil = new Date(sub.mandate_valid_until);
    // Every renewal up to the validity goes through (the tenth year's falls a moment before it: periods start on
    // whole seconds); the first after it is declined.
    await h.clock.advance(m, after(validUntil.toISOString()));
    const before = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(before).toMatchObject({ status: 'active', cycles_completed: 11 });
    expect(new Date(before.current_period_start).getTime()).toBeLessThanOrEqual(validUntil.getTime());
    expect(before.mandate_status).toBe('active');
    // The next debit's notice, 48 hours ahead, tells of the mandate's end before the debit is declined.
    const noticeAt = new Date(new Date(before.current_period_end).getTime() - 47 * 3_600_000);
    await h.clock.advance(m, noticeAt);
    const ended = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(ended).toMatchObject({ status: 'active', mandate_status: 'revoked' });
    expect(new Date(ended.mandate_revoked_at).getTime()).toBeLessThanOrEqual(noticeAt.getTime());
    const told = await ok(m.test.get(`/subscriptions/${sub.id}/events`));
    expect(told.at(-1)).toMatchObject({
      from_state: 'active',
      to_state: 'active',
      event_type: 'subscription.mandate_revoked',
      triggered_by: 'scheduler',
      metadata_json: { reason: 'expired', mandate_valid_until: sub.mandate_valid_until },
    });
    const revoked = (await outbox(h.app, m.id, 'subscription.mandate_revoked')).filter(
      (e) => e.payload.data.object.id === sub.id,
    );
    expect(revoked).toHaveLength(1);
    await h.clock.advance(m, after(before.current_period_end));
    const halted = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(halted.status).toBe('halted');
    const events = await ok(m.test.get(`/subscriptions/${sub.id}/events`));
    expect(events.at(-1)).toMatchObject({ to_state: 'halted' });
    expect(JSON.stringify(events.slice(-2))).toContain('mandate_expired');
    expect((await trail(m.test, sub.id)).at(-1)).toMatch(/>halted:/);
  });
});
