import { TestMerchant, useHarness } from '../harness';
import { useSandboxFaults } from '../harness/faults';
import { eventually } from '../harness/wait';
import { tenantEm } from '../invoices/helpers';
import {
  connect,
  createPayment,
  gatewayCharge,
  LOST_TIMES,
  pay,
  PROVIDERS,
  ProviderName,
  REFUND_ROUTE,
} from '../payments/helpers';
import { authorise, createSubscription, invoicesOf, ok, outboxTypesOf, recurringPlan } from '../subscriptions/helpers';

/**
 * Durable gateway commands (docs/durable-work.md), through the sandbox's injected faults (src/gateways/sandbox/faults.ts):
 * a command the gateway fails, or whose answer is lost, is run again by the worker until the gateway has done it, and
 * done there once; one it keeps failing is given up with the event gateway_command.failed; all of it visible in GraphQL
 * and REST. And the Razorpay sequence that once charged a halted subscription three more times.
 */
// Retries 200 ms apart at first, given up after 6 s (a gateway call is bounded by the harness's 3 s timeout).
const h = useHarness({ gatewayCommandFirstRetryMs: 200, gatewayCommandRetrySeconds: 6, pendingOutcomeGraceMs: 500 });
const DAY = 86_400;

/** The sandbox route that ends a gateway subscription now, per provider. */
const CANCEL_ROUTE: Record<ProviderName, { method: string; path: string }> = {
  stripe: { method: 'DELETE', path: '/v1/subscriptions/' },
  razorpay: { method: 'POST', path: '/razorpay/v1/subscriptions/*/cancel' },
};
/** The sandbox event a gateway sends when a subscription ends. */
const CANCELLED_EVENT: Record<ProviderName, string> = {
  stripe: 'customer.subscription.deleted',
  razorpay: 'subscription.cancelled',
};
/** The sandbox route that pauses a subscription, per provider. */
const PAUSE_ROUTE: Record<ProviderName, { method: string; path: string }> = {
  stripe: { method: 'POST', path: '/v1/subscriptions/' },
  razorpay: { method: 'POST', path: '/razorpay/v1/subscriptions/*/pause' },
};

const { fault } = useSandboxFaults(h);

const sql = <T>(text: string, params: unknown[]) => h.app.orm.em.getConnection().execute<T[]>(text, params);

/** What the gateway captured for a gateway subscription (its charges, mandate authorisation excluded). */
async function gatewayCollected(provider: ProviderName, providerSubscriptionId: string): Promise<number> {
  if (provider === 'razorpay') {
    const [row] = await sql<{ sum: string | null }>(
      `select sum((data->>'amount')::bigint) as sum from sandbox_objects where provider = 'razorpay' and type = 'payment'
        and data->>'subscription_id' = ? and data->>'status' = 'captured' and (data->>'amount')::bigint > 0 and data->>'invoice_id' is not null`,
      [providerSubscriptionId],
    );
    return Number(row.sum ?? 0);
  }
  const [row] = await sql<{ sum: string | null }>(
    `select sum((data->>'amount_paid')::bigint) as sum from sandbox_objects where provider = 'stripe' and type = 'invoice'
        and data->'parent'->'subscription_details'->>'subscription' = ?`,
    [providerSubscriptionId],
  );
  return Number(row.sum ?? 0);
}

async function gatewayStatus(providerSubscriptionId: string): Promise<string> {
  const [row] = await sql<{ status: string }>(`select data->>'status' as status from sandbox_objects where id = ?`, [
    providerSubscriptionId,
  ]);
  return row.status;
}

/** How many times the gateway ended the subscription (its cancellation events). */
async function cancellations(provider: ProviderName, providerSubscriptionId: string): Promise<number> {
  const [row] = await sql<{ n: string }>(`select count(*) as n from sandbox_events where type = ? and body like ?`, [
    CANCELLED_EVENT[provider],
    `%${providerSubscriptionId}%`,
  ]);
  return Number(row.n);
}

const COMMANDS = `query($id: ID!) { subscription(id: $id) { status gatewayCommands { id action status attempts lastError idempotencyKey nextAttemptAt completedAt } } }`;
const commandsOf = async (m: TestMerchant, id: string) => (await m.test.gql(COMMANDS, { id })).data.subscription;
/** The subscription's latest gateway command, once it is in `status` (waits up to `ms`). */
const latestCommandOnce = (m: TestMerchant, id: string, status: 'SUCCEEDED' | 'FAILED', ms: number) =>
  eventually(
    async () => {
      const [c] = (await commandsOf(m, id)).gatewayCommands;
      return c.status === status ? c : null;
    },
    ms,
    `the command ${status.toLowerCase()}`,
  );

describe.each(PROVIDERS)('%s', (provider) => {
  async function merchant(): Promise<TestMerchant> {
    const m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, provider);
    await ok(m.test.post('/merchant/billing-settings', { max_retries: 0 }));
    return m;
  }

  /** An active subscription on card 4000000000000119 (its renewals fail at first), halted at its first renewal. */
  async function halted(m: TestMerchant) {
    const { plan } = await recurringPlan(m.test);
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id, { provider }), {
      outcome: 'success',
      card_number: '4000000000000119',
    });
    expect(sub.status).toBe('active');
    await h.clock.advance(m, 31 * DAY);
    return ok(m.test.get(`/subscriptions/${sub.id}`));
  }

  it('max_retries 0 and card 4000000000000119, 31 days four times: halted at the first renewal, and the gateway collects nothing after', async () => {
    const m = await merchant();
    const sub = await halted(m);
    for (let i = 0; i < 3; i++) await h.clock.advance(m, 31 * DAY);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('halted');
    const invoices = await invoicesOf(m.test, sub.id);
    expect(invoices.map((i) => i.status)).toEqual(['paid', 'uncollectible']);
    // What Cadence shows collected is what the gateway collected: the first period, nothing since.
    const recorded = invoices.reduce((s, i) => s + i.amount_paid, 0);
    expect(recorded).toBe(invoices[0].total);
    expect(await gatewayCollected(provider, sub.provider_subscription_id)).toBe(recorded);
    // Collection stopped by ending the gateway subscription (whatever state the gateway held it in), once.
    expect(await gatewayStatus(sub.provider_subscription_id)).toBe(provider === 'razorpay' ? 'cancelled' : 'canceled');
    expect(await cancellations(provider, sub.provider_subscription_id)).toBe(1);
    const view = await commandsOf(m, sub.id);
    expect(view.gatewayCommands).toMatchObject([
      { action: 'stop_collection', status: 'SUCCEEDED', attempts: 1, lastError: null, nextAttemptAt: null },
    ]);
    // The gateway's cancellation event is the echo of the command: the subscription stays halted; a cancel still works.
    expect(view.status).toBe('HALTED');
    expect((await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, {}))).status).toBe('cancelled');
  });

  it('a stop the gateway fails twice is run again by the worker, visible meanwhile, and done at the gateway once', async () => {
    const m = await merchant();
    await fault({ ...CANCEL_ROUTE[provider], kind: 'error', times: 2 });
    const sub = await halted(m);
    expect(sub.status).toBe('halted');
    // Seen failing at once (the first attempt ran right after the halt committed), then done by the worker's retries.
    const done = await latestCommandOnce(m, sub.id, 'SUCCEEDED', 10_000);
    // The last error stays on record (what was wrong before it went through).
    expect(done).toMatchObject({
      action: 'stop_collection',
      attempts: 3,
      lastError: expect.stringMatching(/Injected fault|HTTP 500/),
      idempotencyKey: `stop-collection-${sub.id}`,
    });
    expect(await cancellations(provider, sub.provider_subscription_id)).toBe(1);
    // REST shows the same.
    const listed = await ok(m.test.get(`/gateway-commands?subscription_id=${sub.id}`));
    expect(listed.data).toMatchObject([
      {
        object: 'gateway_command',
        id: done.id,
        action: 'stop_collection',
        status: 'succeeded',
        attempts: 3,
        subscription_id: sub.id,
      },
    ]);
  });

  it('a stop whose answer is lost is tried again, and the gateway ends the subscription once: the repeat finds it ended', async () => {
    const m = await merchant();
    await fault({ ...CANCEL_ROUTE[provider], kind: 'lost', times: LOST_TIMES[provider] });
    const sub = await halted(m);
    const done = await latestCommandOnce(m, sub.id, 'SUCCEEDED', 10_000);
    // The first attempt's answer was lost; the second found the subscription ended, and the gateway ended it once.
    expect(done.attempts).toBe(2);
    expect(await cancellations(provider, sub.provider_subscription_id)).toBe(1);
    expect(await gatewayStatus(sub.provider_subscription_id)).toBe(provider === 'razorpay' ? 'cancelled' : 'canceled');
  });

  it('a stop the gateway keeps failing is given up after GATEWAY_COMMAND_RETRY_SECONDS, with the event gateway_command.failed', async () => {
    const m = await merchant();
    await fault({ ...CANCEL_ROUTE[provider], kind: 'error', times: 1000 });
    const sub = await halted(m);
    const failed = await latestCommandOnce(m, sub.id, 'FAILED', 15_000);
    expect(failed.attempts).toBeGreaterThanOrEqual(3);
    expect(failed.lastError).toBeTruthy();
    expect(failed.completedAt).toBeTruthy();
    const failedEvents = await sql<{ payload: any }>(
      `select payload from outbox_events where merchant_id = ? and type = 'gateway_command.failed'`,
      [m.id],
    );
    expect(failedEvents.map((e) => e.payload.data.object)).toMatchObject([
      { id: failed.id, object: 'gateway_command', status: 'failed', subscription_id: sub.id },
    ]);
    expect((await outboxTypesOf(h.app, m.id, sub.id)).slice(-2)).toEqual([
      'subscription.halted',
      'gateway_command.failed',
    ]);
  });

  describe('a pause or cancel without an answer', () => {
    async function active() {
      const m = await h.merchant();
      await connect(m.test, provider);
      const { plan } = await recurringPlan(m.test);
      const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id, { provider }));
      expect(subscription.status).toBe('active');
      return { m, subscription };
    }
    const pendingOf = async (m: TestMerchant, id: string) =>
      (await m.test.gql(`query($id: ID!) { subscription(id: $id) { status pendingGatewayCommand } }`, { id })).data
        .subscription;

    it('a pause the gateway never got answers 502, stays pending (other commands 409), then reconciliation drops it', async () => {
      const { m, subscription } = await active();
      await fault({ ...PAUSE_ROUTE[provider], kind: 'timeout', times: 1 });
      const r = await m.test.post(`/subscriptions/${subscription.id}/pause`);
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe('gateway_unavailable');
      expect(await pendingOf(m, subscription.id)).toEqual({ status: 'ACTIVE', pendingGatewayCommand: 'pause' });
      const other = await m.test.post(`/subscriptions/${subscription.id}/cancel`);
      expect(other.status).toBe(409);
      expect(other.body.error.message).toMatch(/pause/);
      // The gateway shows it active: the pause did not happen, and the subscription is free again.
      await eventually(
        async () => (await pendingOf(m, subscription.id)).pendingGatewayCommand === null,
        10_000,
        'the pause settled',
      );
      expect(await pendingOf(m, subscription.id)).toEqual({ status: 'ACTIVE', pendingGatewayCommand: null });
      expect((await ok(m.test.get(`/subscriptions/${subscription.id}/events`))).map((e: any) => e.event_type)).toEqual([
        'subscription.created',
        'subscription.activated',
      ]);
      expect((await ok(m.test.post(`/subscriptions/${subscription.id}/pause`))).status).toBe('paused');
    });

    it.each(['pause', 'cancel'] as const)(
      'a %s the gateway did but whose answer was lost is applied once its outcome is known',
      async (command) => {
        const { m, subscription } = await active();
        const route = command === 'pause' ? PAUSE_ROUTE[provider] : CANCEL_ROUTE[provider];
        await fault({ ...route, kind: 'lost', times: LOST_TIMES[provider] });
        const r = await m.test.post(`/subscriptions/${subscription.id}/${command}`);
        expect(r.status).toBe(502);
        const want = command === 'pause' ? 'PAUSED' : 'CANCELLED';
        await eventually(
          async () => (await pendingOf(m, subscription.id)).status === want,
          10_000,
          `the ${command} applied`,
        );
        expect(await pendingOf(m, subscription.id)).toEqual({ status: want, pendingGatewayCommand: null });
        const events = await ok(m.test.get(`/subscriptions/${subscription.id}/events`));
        expect(events.at(-1)).toMatchObject({
          from_state: 'active',
          to_state: command === 'pause' ? 'paused' : 'cancelled',
          triggered_by: 'api',
        });
        expect(events).toHaveLength(3);
      },
    );
  });

  describe('refunds', () => {
    async function paidPayment() {
      const m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
      await connect(m.test, provider);
      const { payment } = await pay(m.test, await createPayment(m.test, { provider, amount: 49_900 }));
      expect(payment).toMatchObject({ status: 'succeeded', amount_total: 58_882 });
      return { m, payment };
    }
    const refundOf = async (
      m: TestMerchant,
      paymentId: string,
    ): Promise<{ id: string; amount: number; status: string }[]> =>
      (
        await m.test.gql(`query($id: ID!) { payment(id: $id) { refunds { id amount status } } }`, { id: paymentId })
      ).data.payment.refunds.map((r: any) => ({ ...r, status: r.status.toLowerCase() }));

    it.each(['timeout', 'lost'] as const)(
      'a refund whose gateway call gets no answer (%s) is not dropped: pending, then settled once with its credit note',
      async (kind) => {
        const { m, payment } = await paidPayment();
        await fault({ ...REFUND_ROUTE[provider], kind, times: kind === 'lost' ? LOST_TIMES[provider] : 1 });
        const r = await m.test.post(`/payments/${payment.id}/refund`, { amount: 10_000 });
        const [first] = await refundOf(m, payment.id);
        if (kind === 'timeout' || r.status === 502) {
          expect(r.status).toBe(502);
          expect(r.body.error.code).toBe('gateway_unavailable');
        } else {
          // Lost: the gateway did refund, and its event (naming the refund) can settle it before the call gives up.
          expect(r.status).toBe(201);
          expect(first.status).toBe('succeeded');
        }
        if (first.status === 'pending') {
          // Not dropped: its amount reserved against what is refundable.
          expect(first.amount).toBe(10_000);
          expect((await ok(m.test.get(`/payments/${payment.id}`))).amount_refunded).toBe(10_000);
          const over = await m.test.post(`/payments/${payment.id}/refund`, { amount: 58_882 - 10_000 + 1 });
          expect(over.body.error.code).toBe('amount_exceeds_refundable');
        }
        // Timeout: the gateway did nothing, and the worker's retry (same idempotency key) makes the one refund there.
        // Lost: the gateway's refund event settles it; the retry finds it settled and asks nothing more.
        await eventually(
          async () => (await refundOf(m, payment.id))[0].status === 'succeeded',
          15_000,
          'the refund settled',
        );
        expect(await gatewayCharge(h.app, provider, payment.provider_payment_id)).toEqual({
          charged: 58_882,
          refunded: 10_000,
        });
        const after = await ok(m.test.get(`/payments/${payment.id}`));
        expect(after).toMatchObject({ status: 'partially_refunded', amount_refunded: 10_000 });
        const notes = (await ok(m.test.get(`/invoices?type=credit_note`))).data;
        expect(notes.map((n: any) => [n.billing_reason, n.total])).toEqual([['refund', 10_000]]);
        await eventually(
          async () =>
            (await ok(m.test.get(`/gateway-commands?payment_id=${payment.id}`))).data[0]?.status === 'succeeded',
          15_000,
          'the refund command done',
        );
        const listed = await ok(m.test.get(`/gateway-commands?payment_id=${payment.id}`));
        expect(listed.data).toMatchObject([
          { action: 'refund', status: 'succeeded', payment_id: payment.id, idempotency_key: `refund-${first.id}` },
        ]);
      },
    );

    it('a refund asked for before refunds carried their id is asked again exactly as first asked', async () => {
      const { m, payment } = await paidPayment();
      await fault({ ...REFUND_ROUTE[provider], kind: 'timeout' });
      const r = await m.test.post(`/payments/${payment.id}/refund`, { amount: 10_000 });
      expect(r.status).toBe(502);
      // As such a refund was written: not named at the gateway. Changed before its command's retry (200 ms off) is
      // claimed; the count shows it was.
      const changed = await sql<{ id: string }>(
        `update refunds r set named_at_gateway = false where r.payment_id = ? and exists (
          select 1 from gateway_commands c where c.payment_id = r.payment_id and c.action = 'refund'
            and c.lock_token is null and c.attempts = 1) returning r.id`,
        [payment.id],
      );
      expect(changed).toHaveLength(1);
      const [refund] = await refundOf(m, payment.id);
      await eventually(
        async () => (await refundOf(m, payment.id))[0].status === 'succeeded',
        15_000,
        'the refund settled',
      );
      // A retry under the same idempotency key repeats the first call's parameters: the refund's id is not sent.
      const atGateway = await sql<{ data: unknown }>(
        `select data from sandbox_objects where type = 'refund' and data::text like ?`,
        [`%${payment.provider_payment_id}%`],
      );
      expect(atGateway).toHaveLength(1);
      expect(JSON.stringify(atGateway[0].data)).not.toContain(refund.id);
    });

    it('a credit return names its invoice at the gateway; one written before that is asked again without it', async () => {
      const { m, payment } = await paidPayment();
      const [row] = await sql<{ invoice_id: string; connection_id: string }>(
        'select i.id as invoice_id, p.connection_id from invoices i join payments p on p.id = i.payment_id where p.id = ?',
        [payment.id],
      );
      // Written as a renewal writes one (subscription.gateway-events.ts returnCredit), with and without the flag.
      const queue = (args: Record<string, unknown>, key: string) =>
        tenantEm(h, m.id).transactional(async (tx) =>
          h.app.app.services.commands.queue(
            tx,
            {
              action: 'refund_credit',
              description: 'Refund the credit applied',
              connectionId: row.connection_id,
              paymentId: payment.id,
              invoiceId: row.invoice_id,
              args: { provider_payment_id: payment.provider_payment_id, currency: 'INR', ...args },
              idempotencyKey: key,
            },
            { runBy: 'worker' },
          ),
        );
      await queue({ amount: 1_000, send_invoice_id: true }, `credit-new-${payment.id}`);
      await queue({ amount: 2_000 }, `credit-old-${payment.id}`);
      const done = async () =>
        (await ok(m.test.get(`/gateway-commands?payment_id=${payment.id}`))).data.filter(
          (c: any) => c.action === 'refund_credit' && c.status === 'succeeded',
        ).length === 2;
      await eventually(done, 15_000, 'both credit returns made');
      const atGateway = await sql<{ data: any }>(
        `select data from sandbox_objects where type = 'refund' and data::text like ? order by (data->>'amount')::int`,
        [`%${payment.provider_payment_id}%`],
      );
      const refs = atGateway.map((r) => {
        const d = typeof r.data === 'string' ? JSON.parse(r.data) : r.data;
        return [Number(d.amount), (provider === 'stripe' ? d.metadata : d.notes)?.credit_invoice_id ?? null];
      });
      expect(refs).toEqual([
        [1_000, row.invoice_id],
        [2_000, null],
      ]);
    });

    it('a refund the gateway refuses fails at once and gives its amount back', async () => {
      const { m, payment } = await paidPayment();
      await ok(m.test.post(`/payments/${payment.id}/refund`, { amount: 10_000 }), 201);
      // The gateway's record already returned more than this payment holds, as if refunded in its dashboard: refused.
      await sql(`update sandbox_objects set data = jsonb_set(data, ?, to_jsonb(58882)) where id = ?`, [
        provider === 'stripe' ? '{latest_charge,amount_refunded}' : '{amount_refunded}',
        payment.provider_payment_id,
      ]);
      const r = await m.test.post(`/payments/${payment.id}/refund`, { amount: 5_000 });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe('gateway_rejected');
      const refunds = await refundOf(m, payment.id);
      expect(refunds.map((x) => x.status).sort()).toEqual(['failed', 'succeeded']);
      expect((await ok(m.test.get(`/payments/${payment.id}`))).amount_refunded).toBe(10_000);
      const [failed] = (await ok(m.test.get(`/gateway-commands?payment_id=${payment.id}&status=failed`))).data;
      expect(failed).toMatchObject({ action: 'refund', attempts: 1 });
    });
  });
});

describe('razorpay: a charge the gateway makes after the halt', () => {
  it('is recorded (invoice, payment) and refunded at once with a credit note: the gateway keeps nothing Cadence does not show', async () => {
    const m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, 'razorpay');
    await ok(m.test.post('/merchant/billing-settings', { max_retries: 0 }));
    // Stopping collection never gets through: the gateway goes on with the pending subscription (the sequence).
    await fault({ ...CANCEL_ROUTE.razorpay, kind: 'error', times: 1000 });
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { provider: 'razorpay' }),
      { outcome: 'success', card_number: '4000000000000119' },
    );
    for (let i = 0; i < 4; i++) await h.clock.advance(m, 31 * DAY);
    await h.app.app.sandbox!.sandbox.settle();
    const sub = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(sub.status).toBe('halted');

    // The gateway charged after the halt, each charge recorded and refunded in full.
    const payments = (await ok(m.test.get(`/payments?customer_id=${subscription.customer_id}`))).data.filter(
      (p: any) => p.subscription_id === subscription.id,
    );
    const stray = payments.filter((p: any) => p.status !== 'succeeded');
    expect(stray.length).toBeGreaterThanOrEqual(1);
    await eventually(
      async () => {
        const all = (await ok(m.test.get(`/payments?customer_id=${subscription.customer_id}`))).data.filter(
          (p: any) => p.subscription_id === subscription.id && p.billing_reason !== 'subscription_create',
        );
        return all.every((p: any) => p.status === 'refunded') ? all : null;
      },
      15_000,
      'every charge after the halt refunded',
    );
    const [row] = await sql<{ captured: string; refunded: string }>(
      `select sum((data->>'amount')::bigint) as captured, sum((data->>'amount_refunded')::bigint) as refunded from sandbox_objects
        where provider = 'razorpay' and type = 'payment' and data->>'subscription_id' = ? and data->>'status' in ('captured', 'refunded') and (data->>'amount')::bigint > 0`,
      [sub.provider_subscription_id],
    );
    const netAtGateway = Number(row.captured) - Number(row.refunded);
    const all = (await ok(m.test.get(`/payments?customer_id=${subscription.customer_id}`))).data;
    const netInCadence = all.reduce((s: number, p: any) => s + p.amount_total - p.amount_refunded, 0);
    expect(netAtGateway).toBe(netInCadence);
    expect(netInCadence).toBe(58_882); // the first period, and nothing after the halt

    // Each is on paper: a paid invoice naming the payment, and a refund credit note against it.
    const invoices = await invoicesOf(m.test, subscription.id);
    const notes = (await ok(m.test.get(`/invoices?subscription_id=${subscription.id}&type=credit_note`))).data;
    for (const p of all.filter((x: any) => x.status === 'refunded')) {
      const invoice = invoices.find((i) => i.payment_id === p.id);
      expect(invoice).toMatchObject({ status: 'paid', total: p.amount_total, amount_credited: p.amount_total });
      expect(
        notes.filter((n: any) => n.related_invoice_id === invoice.id).reduce((s: number, n: any) => s + n.total, 0),
      ).toBe(p.amount_total);
    }
  });
});
