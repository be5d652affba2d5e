import { TestMerchant, useHarness } from '../harness';
import { useWsClients } from '../harness/ws';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';
import { PORTAL_ROOT_FIELDS } from '../../src/modules/portal';
import { createSchema } from '../../src/schema';
import { Mode } from '../../src/core/entity';

/**
 * Customer portal sessions (docs/portal.md): POST /v1/portal/sessions, the token's reach (the portal's fields, the
 * session's customer only, for an hour, GraphQL over HTTP only) and the portal's commands.
 */

const h = useHarness();
const wsClient = useWsClients(h);
jest.setTimeout(60_000);

const PORTAL = `{ portal { merchantName returnUrl expiresAt customer { id email } subscriptions { id status cancelAtPeriodEnd }
  invoices { id number customerId } } }`;

const tokenOf = (url: string) => decodeURIComponent(new URL(url).hash.slice(1));

async function subscriber(m: TestMerchant, email: string) {
  const customer = await ok(m.test.post('/customers', { email, name: 'Asha Rao' }), 201);
  const { plan } = await recurringPlan(m.test);
  const { subscription } = await authorise(
    m.test,
    await createSubscription(m.test, plan.id, { customer_id: customer.id }),
  );
  return { customer, subscription };
}

async function session(m: TestMerchant, customerId: string) {
  const s = await ok(
    m.test.post('/portal/sessions', { customer_id: customerId, return_url: 'https://shop.example/account' }),
    201,
  );
  return { ...s, token: tokenOf(s.url) };
}

describe('portal sessions', () => {
  let m: TestMerchant;
  let a: Awaited<ReturnType<typeof subscriber>>;
  let b: Awaited<ReturnType<typeof subscriber>>;
  beforeAll(async () => {
    m = await h.merchant({ name: 'Chai Club' });
    await connect(m.test, 'stripe');
    a = await subscriber(m, 'a@example.com');
    b = await subscriber(m, 'b@example.com');
  });

  it('POST /v1/portal/sessions answers a one-hour link to the portal page for that customer', async () => {
    const before = Date.now();
    const s = await session(m, a.customer.id);
    expect(s).toMatchObject({
      object: 'portal_session',
      customer_id: a.customer.id,
      return_url: 'https://shop.example/account',
      livemode: false,
    });
    expect(s.url).toMatch(new RegExp(`^${h.app.url}/portal#pt_[A-Za-z0-9_-]{43}$`));
    const ttl = new Date(s.expires_at).getTime() - before;
    expect(ttl).toBeGreaterThan(3590_000);
    expect(ttl).toBeLessThanOrEqual(3601_000);

    const r = await h.graphql(s.token, PORTAL);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.portal).toMatchObject({
      merchantName: 'Chai Club',
      returnUrl: 'https://shop.example/account',
      customer: { id: a.customer.id, email: 'a@example.com' },
      subscriptions: [{ id: a.subscription.id, status: 'ACTIVE', cancelAtPeriodEnd: false }],
    });
    expect(r.body.data.portal.invoices.length).toBeGreaterThan(0);
    for (const inv of r.body.data.portal.invoices) expect(inv.customerId).toBe(a.customer.id);

    const gql = await m.test.gql(
      `mutation($input: CreatePortalSessionInput!) { createPortalSession(input: $input) { object url customerId } }`,
      { input: { customerId: a.customer.id, returnUrl: 'https://shop.example/account' } },
    );
    expect(gql.data.createPortalSession).toMatchObject({ object: 'portal_session', customerId: a.customer.id });
  });

  it('refuses a bad return_url and a customer that is not the merchant’s (or not of this mode)', async () => {
    const bad = await m.test.post('/portal/sessions', {
      customer_id: a.customer.id,
      return_url: 'javascript:alert(1)',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'return_url' });
    const other = await h.merchant();
    const foreign = await other.test.post('/portal/sessions', {
      customer_id: a.customer.id,
      return_url: 'https://shop.example',
    });
    expect(foreign.status).toBe(404);
    const live = await m.live.post('/portal/sessions', {
      customer_id: a.customer.id,
      return_url: 'https://shop.example',
    });
    expect(live.status).toBe(404);
  });

  it("reaches only its customer's records: another customer's subscription or document is not found", async () => {
    const s = await session(m, a.customer.id);
    const invoicesOfB = (await ok(m.test.get(`/invoices?customer_id=${b.customer.id}`))).data;
    expect(invoicesOfB.length).toBeGreaterThan(0);
    const attempts = [
      [
        `mutation { portalCancelAtPeriodEnd(subscriptionId: "${b.subscription.id}") { id } }`,
        'portalCancelAtPeriodEnd',
      ],
      [`mutation { portalKeepSubscription(subscriptionId: "${b.subscription.id}") { id } }`, 'portalKeepSubscription'],
      [`{ portalPlanOptions(subscriptionId: "${b.subscription.id}") { priceId } }`, 'portalPlanOptions'],
      [`{ portalInvoicePdf(id: "${invoicesOfB[0].id}") { filename } }`, 'portalInvoicePdf'],
      [
        `mutation { portalChangePlan(subscriptionId: "${b.subscription.id}", priceId: "${b.subscription.price_id}") { subscription { id } } }`,
        'portalChangePlan',
      ],
    ];
    for (const [query] of attempts) {
      const r = await h.graphql(s.token, query);
      expect(r.body.errors?.[0]?.extensions?.code).toBe('resource_not_found');
    }
    expect((await ok(m.test.get(`/subscriptions/${b.subscription.id}`))).cancel_at_period_end).toBe(false);

    // Another merchant's customer, through that merchant's own session: not found either way.
    const other = await h.merchant();
    await connect(other.test, 'stripe');
    const c = await subscriber(other, 'c@example.com');
    const otherSession = await session(other, c.customer.id);
    const cross = await h.graphql(
      otherSession.token,
      `mutation { portalCancelAtPeriodEnd(subscriptionId: "${a.subscription.id}") { id } }`,
    );
    expect(cross.body.errors[0].extensions.code).toBe('resource_not_found');
  });

  it('reaches no merchant field, however it is asked; a merchant key reaches no portal field', async () => {
    const s = await session(m, a.customer.id);
    for (const query of [
      '{ subscriptions(first: 5) { totalCount } }',
      '{ products(first: 5) { totalCount } }',
      'query { ...Root } fragment Root on Query { customer(id: "x") { email } }',
      '{ ... on Query { merchant { name } } }',
      `mutation { pauseSubscription(id: "${a.subscription.id}") { id } }`,
    ]) {
      const r = await h.graphql(s.token, query);
      expect(r.body.errors[0].extensions.code).toBe('invalid_api_key');
      expect(r.body.data ?? null).toBeNull();
    }
    // Beside a portal field: refused (a non-null root field's refusal leaves no data at all).
    const mixed = await h.graphql(s.token, '{ portal { merchantName } customers(first: 5) { totalCount } }');
    expect(mixed.body.data).toBeNull();
    expect(mixed.body.errors.map((e: any) => [e.path[0], e.extensions.code])).toEqual([
      ['customers', 'invalid_api_key'],
    ]);
    expect((await ok(m.test.get(`/subscriptions/${a.subscription.id}`))).status).toBe('active');

    const merchantAsks = await m.test.gql('{ portal { merchantName } }');
    expect(merchantAsks.errors?.[0].extensions.code).toBe('invalid_api_key');

    // REST and WebSockets take merchant keys only.
    expect((await h.rest('/v1/subscriptions', { key: s.token })).status).toBe(401);
    const ws = wsClient(s.token, { lazy: false, onNonLazyError: () => undefined });
    const closed = await new Promise<number>((resolve) =>
      ws.on('closed', (e) => resolve((e as { code: number }).code)),
    );
    expect(closed).toBe(4403);
  });

  it('refuses every root field of the schema but the portal’s to a portal session, and the portal’s to a key', async () => {
    const schema = await createSchema();
    const portal = { kind: 'portal', merchantId: m.id, mode: Mode.TEST, customerId: a.customer.id, sessionId: 's' };
    const merchant = { kind: 'merchant', merchantId: m.id, mode: Mode.TEST, apiKeyId: 'k' };
    const roots = [schema.getQueryType()!, schema.getMutationType()!, schema.getSubscriptionType()!];
    const fields = roots.flatMap((t) => Object.values(t.getFields()));
    for (const name of PORTAL_ROOT_FIELDS) expect(fields.some((f) => f.name === name)).toBe(true);
    // The root guard runs before the field's own resolver (and its arguments' checks): nothing else is reached.
    const refusal = async (field: (typeof fields)[number], principal: object) => {
      try {
        await field.resolve!(undefined, {}, { principal } as never, {} as never);
        return null;
      } catch (err) {
        return (err as { code?: string }).code ?? String(err);
      }
    };
    let refused = 0;
    for (const field of fields) {
      if (PORTAL_ROOT_FIELDS.has(field.name)) {
        expect(await refusal(field, merchant)).toBe('invalid_api_key');
      } else {
        expect([field.name, await refusal(field, portal)]).toEqual([field.name, 'invalid_api_key']);
        refused++;
      }
    }
    expect(refused).toBe(fields.length - PORTAL_ROOT_FIELDS.size);
  });

  it('expires: a session past its hour answers 401 like an unknown token', async () => {
    const s = await session(m, a.customer.id);
    await h.app.orm.em
      .getConnection()
      .execute(`update portal_sessions set expires_at = now() - interval '1 second' where id = ?`, [s.id]);
    const r = await h.graphql(s.token, PORTAL);
    expect(r.status).toBe(401);
    expect(r.body.errors[0].extensions.code).toBe('invalid_api_key');
    expect((await h.graphql('pt_unknown', PORTAL)).status).toBe(401);
  });

  it('cancels at period end and undoes it; changes plan as previewed', async () => {
    const s = await session(m, a.customer.id);
    const cancel = await h.graphql(
      s.token,
      `mutation { portalCancelAtPeriodEnd(subscriptionId: "${a.subscription.id}") { id cancelAtPeriodEnd status } }`,
    );
    expect(cancel.body.data.portalCancelAtPeriodEnd).toMatchObject({ cancelAtPeriodEnd: true, status: 'ACTIVE' });
    const keep = await h.graphql(
      s.token,
      `mutation { portalKeepSubscription(subscriptionId: "${a.subscription.id}") { id cancelAtPeriodEnd } }`,
    );
    expect(keep.body.data.portalKeepSubscription.cancelAtPeriodEnd).toBe(false);
    const events = (await ok(m.test.get(`/subscriptions/${a.subscription.id}/events`))).map((e: any) => e.event_type);
    expect(events.at(-1)).toBe('subscription.cancellation_removed');

    // Another plan of the same product: offered, previewed, then changed to.
    await ok(
      m.test.post(`/products/${a.subscription.product_id}/plans`, {
        name: 'Monthly Plus',
        billing_frequency: 'monthly',
      }),
      201,
    ).then((plan) =>
      ok(m.test.post(`/plans/${plan.id}/prices`, { currency: 'INR', amount: 99900, is_default: true }), 201),
    );
    const options = (
      await h.graphql(
        s.token,
        `{ portalPlanOptions(subscriptionId: "${a.subscription.id}") { planName priceId amount current } }`,
      )
    ).body.data.portalPlanOptions;
    expect(options.map((o: any) => [o.planName, o.amount, o.current])).toEqual([
      ['Monthly', 49900, true],
      ['Monthly Plus', 99900, false],
    ]);
    const target = options[1].priceId;
    const preview = (
      await h.graphql(
        s.token,
        `{ portalPreviewPlanChange(subscriptionId: "${a.subscription.id}", priceId: "${target}") { total proration { netAmount } } }`,
      )
    ).body.data.portalPreviewPlanChange;
    const changed = (
      await h.graphql(
        s.token,
        `mutation { portalChangePlan(subscriptionId: "${a.subscription.id}", priceId: "${target}") { subscription { priceId } proration { netAmount } invoice { total } } }`,
      )
    ).body.data.portalChangePlan;
    expect(changed.subscription.priceId).toBe(target);
    expect(Math.abs(changed.proration.netAmount - preview.proration.netAmount)).toBeLessThanOrEqual(1);
  });
});
