import { useHarness } from '../harness';
import { eventually } from '../harness/wait';
import { connect, createPayment, outbox, pay, PROVIDERS, ProviderName } from './helpers';

/**
 * One-off payments are reconciled like subscriptions (docs/durable-work.md): a payment whose checkout was paid while
 * its webhook could not reach the service does not stay pending; reconciliation reads the checkout back and applies it
 * once, and the webhook arriving later changes nothing more.
 */
// Reconciliation looks every second at payments pending for 3 s (the checkout below is paid within that).
const h = useHarness({ reconcileIntervalMs: 1000, reconcileGraceMs: 3000 });
const sql = <T>(text: string, params: unknown[]) => h.app.orm.em.getConnection().execute<T[]>(text, params);

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  it('a payment paid while its webhook cannot be delivered is found paid by reconciliation, and applied once', async () => {
    const m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    const { connection } = await connect(m.test, provider);
    // The gateway cannot reach the service: its webhooks for this connection go nowhere (the sandbox retries later).
    const hooks = await sql<{ id: string; url: string }>(`select id, url from sandbox_webhooks where url like ?`, [
      `%${connection.id}%`,
    ]);
    expect(hooks.length).toBeGreaterThan(0);
    for (const hook of hooks)
      await sql(`update sandbox_webhooks set url = 'http://127.0.0.1:9/nowhere' where id = ?`, [hook.id]);

    const created = await createPayment(m.test, { provider, amount: 49_900 });
    const { payment: right } = await pay(m.test, created);
    expect(right.status).toBe('pending'); // the webhook never arrived

    const paid = await eventually(
      async () => {
        const p = (await m.test.get(`/payments/${created.id}`)).body;
        return p.status === 'succeeded' ? p : null;
      },
      15_000,
      'reconciliation found the payment paid',
    );
    expect(paid.provider_payment_id).toBeTruthy();
    expect(await outbox(h.app, m.id, 'payment.succeeded')).toHaveLength(1);
    const invoices = (await m.test.get(`/invoices?customer_id=${paid.customer_id}`)).body.data;
    expect(invoices).toMatchObject([{ payment_id: created.id, status: 'paid', total: 58_882 }]);

    // The webhook, delivered once the service is reachable again, changes nothing more.
    for (const hook of hooks) await sql(`update sandbox_webhooks set url = ? where id = ?`, [hook.url, hook.id]);
    await h.app.app.sandbox!.redeliverPending();
    await h.app.app.sandbox!.sandbox.settle();
    expect(await outbox(h.app, m.id, 'payment.succeeded')).toHaveLength(1);
    expect((await m.test.get(`/invoices?customer_id=${paid.customer_id}`)).body.data).toHaveLength(1);
  });
});
