import { TestMerchant, useHarness } from '../harness';
import { connect, Connected, postEvent, PROVIDERS, ProviderName } from '../payments/helpers';
import { authorise, captureGatewayEvents, createSubscription, invoicesOf, ok, recurringPlan, trail } from './helpers';

/**
 * The two hot paths of the subscriptions engine stay cheap: a create and a renewal webhook cost a bounded number of
 * SQL statements (every statement the service sends: the ORM's through knex, the plain ones on the pool), and still
 * do all they did.
 */

const h = useHarness();
jest.setTimeout(60_000);

/**
 * The statements the service sends while `fn` runs: the harness's count (the ORM's through knex, a request's plain
 * ones) and, for SHOW_SQL=1, every text including the pool's own (the clock; background delivery polls too).
 */
async function statements<T>(fn: () => Promise<T>): Promise<[number, string[], T]> {
  const log: string[] = [];
  const knex = (h.app.orm.em.getConnection() as unknown as { getKnex(): any }).getKnex();
  const onQuery = (q: { sql: string }) => void log.push(q.sql);
  knex.on('query', onQuery);
  const pool = h.app.app.services.plainPool as unknown as { query: (...a: any[]) => any };
  const query = pool.query;
  pool.query = function (this: unknown, config: any, ...rest: any[]) {
    log.push(typeof config === 'string' ? config : config.text);
    return query.call(this, config, ...rest);
  };
  h.app.sql.reset();
  try {
    const result = await fn();
    return [h.app.sql.count, log, result];
  } finally {
    knex.removeListener('query', onQuery);
    pool.query = query;
  }
}

const show = (log: string[]) => log.map((s) => s.replace(/\s+/g, ' ').slice(0, 160)).join('\n');

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  let conn: Connected;
  beforeAll(async () => {
    m = await h.merchant();
    conn = await connect(m.test, provider);
  });

  it('a renewal webhook: bounded statements, the period billed once', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    // Capture the renewal's events on their way, then deliver them ourselves while counting.
    const received = await captureGatewayEvents(h.app, await h.receiver(), conn.connection, () =>
      h.clock.advance(m, new Date(new Date(subscription.current_period_end).getTime() + 1000)),
    );
    expect(received.length).toBeGreaterThan(0);
    const counts: number[] = [];
    for (const got of received) {
      const [n, log, r] = await statements(() =>
        postEvent(conn.connection.webhook_url, { payload: got.body, headers: got.headers }),
      );
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ received: true, duplicate: false });
      counts.push(n);
      if (process.env.SHOW_SQL)
        console.log(`${provider} ${JSON.parse(got.body).type ?? JSON.parse(got.body).event}: ${n}\n${show(log)}`);
    }
    const after = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(after.cycles_completed).toBe(2);
    expect((await invoicesOf(m.test, subscription.id)).map((i) => `${i.billing_reason}:${i.status}`)).toEqual([
      'subscription_create:paid',
      'subscription_cycle:paid',
    ]);
    expect(await trail(m.test, subscription.id)).toEqual([
      'none>created:subscription.created:api',
      'created>active:subscription.activated:webhook',
    ]);
    if (process.env.SHOW_SQL) console.log(`${provider} renewal: ${counts.join(' + ')}`);
    // One event: the connection, then one transaction: begin; one statement recording the event, reading the clock and
    // locking the subscription with its merchant and customer; the invoice and the subscription; the charge's payment
    // (every collection is a payment; the invoice names it from its insert); the usage close; the invoice number (with
    // the invoice's outbox rows) and the live-update notice, sent with the COMMIT (the ORM's own COMMIT then ends an
    // empty transaction). Was 12 (and the clock's offset read before the transaction), then 8 before the payment row.
    expect(counts).toHaveLength(1);
    expect(counts[0]).toBeLessThanOrEqual(9);
  });

  it('a create: bounded statements', async () => {
    const { plan, price } = await recurringPlan(m.test);
    await createSubscription(m.test, plan.id); // registers the price at the gateway
    const [n, log, sub] = await statements(() => createSubscription(m.test, plan.id));
    expect(sub.status).toBe('created');
    expect(sub).toMatchObject({ plan_id: plan.id, price_id: price.id, amount: 49900, currency: 'INR' });
    // Plan + product + price (and its gateway registrations) + clock offset, the connection, then begin, the insert, the
    // outbox row, notify, commit. Was 9.
    expect(n).toBeLessThanOrEqual(7);
    if (process.env.SHOW_SQL) console.log(`${provider} create: ${n}\n${show(log)}`);
  });

  it("a create for a merchant with a GSTIN: one statement more (the customer's state fixes the tax)", async () => {
    const g = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(g.test, provider);
    const { plan } = await recurringPlan(g.test);
    await createSubscription(g.test, plan.id, { customer_state_code: '27' }); // registers the price for IGST
    const [n, log, sub] = await statements(() => createSubscription(g.test, plan.id, { customer_state_code: '27' }));
    expect(sub).toMatchObject({ status: 'created', tax_treatment: 'inter', tax_rate_bps: 1800 });
    // As above, plus the existing customer's state and GSTIN by e-mail (the create keeps an existing customer's).
    expect(n).toBeLessThanOrEqual(8);
    if (process.env.SHOW_SQL) console.log(`${provider} GSTIN create: ${n}\n${show(log)}`);
  });
});
