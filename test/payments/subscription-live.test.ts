import type { Client as WsClient } from 'graphql-ws';
import { eventually, TestMerchant, useHarness, sleep } from '../harness';
import { useWsClients } from '../harness/ws';
import { connect, createPayment, pay } from './helpers';

/** GraphQL subscription paymentUpdated(id) over graphql-ws: live changes, only ever the subscriber's own. */

const h = useHarness();
let a: TestMerchant;
let b: TestMerchant;

beforeAll(async () => {
  a = await h.merchant();
  b = await h.merchant();
  await connect(a.test, 'stripe');
  await connect(a.live, 'razorpay');
  await connect(b.test, 'stripe');
});
const newClient = useWsClients(h);

function wsClient(key: string | null, onClosed?: (e: unknown) => void): WsClient {
  return newClient(key, { lazy: true, on: onClosed ? { closed: onClosed } : undefined });
}

const FIELDS = 'id status amountRefunded provider';

interface Sub {
  events: any[];
  errors: unknown[];
  done: boolean;
  stop(): void;
}

/** Subscribes and collects every notice; resolves once the server has had time to register the subscription. */
async function subscribe(key: string | null, id?: string): Promise<Sub> {
  const sub: Sub = { events: [], errors: [], done: false, stop: () => undefined };
  const client = wsClient(key);
  sub.stop = client.subscribe(
    { query: `subscription($id: ID) { paymentUpdated(id: $id) { ${FIELDS} } }`, variables: id ? { id } : {} },
    {
      next: (v) => {
        if (v.errors) sub.errors.push(...v.errors);
        else sub.events.push((v.data as any).paymentUpdated);
      },
      error: (e) => {
        sub.errors.push(e);
        sub.done = true;
      },
      complete: () => {
        sub.done = true;
      },
    },
  );
  await sleep(400);
  return sub;
}

describe('paymentUpdated over graphql-ws', () => {
  it('delivers every change of the payment, committed, to its merchant and mode only', async () => {
    const p = await createPayment(a.test);
    const q = await createPayment(a.test);
    const bp = await createPayment(b.test);
    const lp = await createPayment(a.live);

    const aOne = await subscribe(a.keys.test, p.id);
    const aAll = await subscribe(a.keys.test);
    const aLive = await subscribe(a.keys.live);
    const bAll = await subscribe(b.keys.test);
    const bSpy = await subscribe(b.keys.test, p.id); // B asks for A's payment by id
    const aLiveSpy = await subscribe(a.keys.live, p.id); // A's other mode asks for it too

    await pay(a.test, p);
    const first = await eventually(async () => aOne.events.length >= 1 && aAll.events.length >= 1, 5000); // the bound the old helper had
    expect(first).toBe(true);
    // The notice reads the committed row: it already says SUCCEEDED.
    expect(aOne.events[0]).toEqual({ id: p.id, status: 'SUCCEEDED', amountRefunded: 0, provider: 'STRIPE' });

    expect((await a.test.post(`/payments/${p.id}/refund`, { amount: 1000 })).status).toBe(201);
    await eventually(async () => aOne.events.some((e) => e.status === 'PARTIALLY_REFUNDED'), 5000);
    expect(aOne.events.at(-1)).toEqual({
      id: p.id,
      status: 'PARTIALLY_REFUNDED',
      amountRefunded: 1000,
      provider: 'STRIPE',
    });

    await pay(a.test, q, { outcome: 'failure' });
    await pay(b.test, bp);
    await pay(a.live, lp);
    await eventually(
      async () => aAll.events.some((e) => e.id === q.id) && bAll.events.length >= 1 && aLive.events.length >= 1,
      5000,
    );
    await sleep(500); // anything misrouted would have arrived by now

    expect(new Set(aOne.events.map((e) => e.id))).toEqual(new Set([p.id]));
    expect(new Set(aAll.events.map((e) => e.id))).toEqual(new Set([p.id, q.id]));
    expect(aAll.events.find((e) => e.id === q.id).status).toBe('FAILED');
    expect(bAll.events).toEqual([{ id: bp.id, status: 'SUCCEEDED', amountRefunded: 0, provider: 'STRIPE' }]);
    expect(aLive.events).toEqual([{ id: lp.id, status: 'SUCCEEDED', amountRefunded: 0, provider: 'RAZORPAY' }]);
    expect(bSpy.events).toEqual([]);
    expect(aLiveSpy.events).toEqual([]);
    for (const s of [aOne, aAll, aLive, bAll, bSpy, aLiveSpy]) expect(s.errors).toEqual([]);
  });

  it('refuses a connection without a valid key', async () => {
    for (const key of [null, 'sk_test_not_a_real_key_0000000000000000']) {
      let closed: any = null;
      const client = wsClient(key, (e) => {
        closed = e;
      });
      const errors: unknown[] = [];
      let got = false;
      await new Promise<void>((resolve) => {
        client.subscribe(
          { query: 'subscription { paymentUpdated { id } }' },
          {
            next: () => {
              got = true;
            },
            error: (e) => {
              errors.push(e);
              resolve();
            },
            complete: () => resolve(),
          },
        );
      });
      expect(got).toBe(false);
      expect(errors.length + (closed ? 1 : 0)).toBeGreaterThan(0);
      expect(closed?.code).toBe(4403);
    }
  });
});
