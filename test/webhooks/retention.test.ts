import { pruneHistory, uuidv7Floor } from '../../src/modules/webhooks/retention';
import { v7 as uuidv7 } from 'uuid';
import { Receiver, useHarness } from '../harness';
import { connect, countRows, createPayment, pay } from '../payments/helpers';
import { emitEvent } from './helpers';

const h = useHarness();
let rx: Receiver;

beforeAll(async () => {
  rx = await h.receiver();
  rx.respond = (r) => (r.path === '/fail' ? 500 : 200);
});

const DAY = 86_400_000;

it('uuidv7Floor sorts below every id made at or after the instant and above every id made before it', () => {
  const at = new Date('2026-10-01T00:00:00Z');
  const floor = uuidv7Floor(at);
  expect(floor).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7000-8000-000000000000$/);
  expect(uuidv7({ msecs: at.getTime() }) >= floor).toBe(true);
  expect(uuidv7({ msecs: at.getTime() - 1 }) < floor).toBe(true);
});

it('prunes finished deliveries, fanned-out events without deliveries and inbound gateway events past the retention; keeps pending ones', async () => {
  const m = await h.merchant();
  await m.test.post('/webhooks/endpoints', {
    url: `${rx.url}/ok`,
    mode: 'test',
    enabled_events: ['payment.succeeded'],
  });
  await m.test.post('/webhooks/endpoints', { url: `${rx.url}/fail`, mode: 'test', enabled_events: ['payment.failed'] });
  const succeeded = await emitEvent(h.app, m.id, 'test', 'payment.succeeded');
  const failing = await emitEvent(h.app, m.id, 'test', 'payment.failed');
  const unheard = await emitEvent(h.app, m.id, 'test', 'customer.created'); // no endpoint takes it
  // a real checkout: inbound gateway events, and its own payment.succeeded delivered
  await connect(m.test, 'stripe');
  await pay(m.test, await createPayment(m.test));
  const { dispatcher, db } = h.app.app.services.delivery;
  await dispatcher.drain();
  const deliveries = () => countRows(h.app, 'webhook_deliveries', 'merchant_id = ?', [m.id]);
  const events = () => countRows(h.app, 'outbox_events', 'merchant_id = ?', [m.id]);
  const gatewayEvents = () => countRows(h.app, 'gateway_events', 'merchant_id = ?', [m.id]);
  expect(await deliveries()).toBe(3); // two succeeded, one pending a retry
  const eventsBefore = await events();
  expect(eventsBefore).toBeGreaterThanOrEqual(4);
  expect(await gatewayEvents()).toBeGreaterThan(0);

  // Nothing is 30 days old yet.
  expect(await pruneHistory(db, 30)).toEqual({ deliveries: 0, events: 0, gatewayEvents: 0 });

  // 31 days later (small batches, to go through several).
  const pruned = await pruneHistory(db, 30, new Date(Date.now() + 31 * DAY), 1);
  expect(pruned.deliveries).toBe(2);
  expect(await deliveries()).toBe(1);
  const log = (await m.test.get('/webhooks/deliveries')).body.data;
  expect(log).toHaveLength(1);
  expect(log[0]).toMatchObject({ event_id: failing, status: 'pending' });
  // the pending delivery's event stays; the others (with or without deliveries) are gone
  const left = await h.app.orm.em
    .getConnection()
    .execute<{ id: string }[]>('select id from outbox_events where merchant_id = ?', [m.id]);
  expect(left.map((r) => r.id)).toEqual([failing]);
  expect(pruned.events).toBe(eventsBefore - 1);
  expect([succeeded, unheard].every((id) => !left.some((r) => r.id === id))).toBe(true);
  expect(await gatewayEvents()).toBe(0);
});
