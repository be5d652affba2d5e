import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import {
  after,
  authorise,
  collectedAt,
  createSubscription,
  invoicesOf,
  ok,
  recurringPlan,
} from '../subscriptions/helpers';
import { meteredPlan, razorpayAddonAmounts, unbilled, usageInvoices } from './helpers';

/**
 * Usage billed in arrears (docs/usage.md): a plan's usage rates price the usage of a closed billing period on an
 * invoice of its own, issued with the renewal that bills the next period (and at a period-end cancellation), GST from
 * the subscription's tax snapshot, collected from the mandate: Stripe charges it at once (the invoice is paid);
 * Razorpay adds it to the next charge (open until that charge pays it). Every amount below is worked out by hand.
 *
 * Merchant GSTIN state 29, customer state 29: intra-state, CGST = SGST = round(subtotal x 9%), each head split over the
 * lines by the largest remainder (invoice.tax.ts).
 */

const h = useHarness();
jest.setTimeout(180_000);
const DAY = 86_400_000;
const GSTIN = '29ABCDE1234F1ZW';

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

interface Usage {
  event_type: string;
  quantity: number;
  unit: string;
  timestamp?: string;
}

async function report(m: TestMerchant, subscriptionId: string, events: Usage[]): Promise<void> {
  const r = await m.test.post('/usage/events/batch', {
    events: events.map((e) => ({ subscription_id: subscriptionId, ...e })),
  });
  if (r.status !== 201) throw new Error(`usage batch answered ${r.status}: ${r.text}`);
}

/** One event (a batch of one): the answer with the event as `body`. */
async function reportOne(m: TestMerchant, subscriptionId: string, e: Usage) {
  const r = await m.test.post('/usage/events/batch', { events: [{ subscription_id: subscriptionId, ...e }] });
  return { ...r, body: r.body?.data?.[0] ?? r.body };
}

const iso = (d: Date | string, plusMs = 0) => new Date(new Date(d).getTime() + plusMs).toISOString();

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  let metered: { plan: any; price: any };

  beforeAll(async () => {
    m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    await connect(m.test, provider);
    metered = await meteredPlan(m);
  });

  async function activeSubscription(planId = metered.plan.id) {
    const { subscription } = await authorise(
      m.test,
      await createSubscription(m.test, planId, { customer_state_code: '29' }),
    );
    expect(subscription.status).toBe('active');
    return subscription;
  }

  /** What the customer paid the gateway (the sandbox's records) equals what the invoices say was paid. */
  async function expectCollectedAsInvoiced(subscriptionId: string) {
    const sub = await ok(m.test.get(`/subscriptions/${subscriptionId}`));
    const paid = sum((await invoicesOf(m.test, subscriptionId)).map((i) => i.amount_paid));
    expect(await collectedAt(h.app, provider, sub)).toBe(paid);
  }

  it('a period closes: its usage invoice (lines, GST, total), collected; a late event is billed by the next close; no usage, no invoice', async () => {
    const sub = await activeSubscription();
    const p1 = { start: sub.current_period_start, end: sub.current_period_end };
    await report(m, sub.id, [
      { event_type: 'api_calls', quantity: 1000, unit: 'call' },
      { event_type: 'api_calls', quantity: 234.5, unit: 'call' },
      ...Array.from({ length: 10 }, () => ({ event_type: 'gpu_seconds', quantity: 0.1, unit: 'second' })),
      { event_type: 'pings', quantity: 5, unit: 'ping' }, // the plan does not price pings: closed without a charge
    ]);
    expect((await reportOne(m, sub.id, { event_type: 'api_calls', quantity: 0, unit: 'call' })).status).toBe(201);

    await h.clock.advance(m, after(p1.end));
    const renewed = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(renewed.cycles_completed).toBe(2);
    const p2 = { start: renewed.current_period_start, end: renewed.current_period_end };
    expect(p2.start).toBe(p1.end);

    // api_calls: 1234.5 x 0.25 = 308.625 -> 309. gpu_seconds: 10 x 0.1 = 1 exactly (in floats 0.9999999999999999, which
    // x 250.5 would round to 250) -> 250.5 -> 251. Subtotal 560; CGST = SGST = round(50.4) = 50, split
    // 50 x 309 / 560 = 27.59 and 50 x 251 / 560 = 22.41: 27 + 22, the subunit left to the larger remainder (27.59).
    let usage = await usageInvoices(m.test, sub.id);
    expect(usage).toHaveLength(1);
    const first = usage[0];
    expect(first).toMatchObject({
      object: 'invoice',
      type: 'invoice',
      billing_reason: 'subscription_cycle',
      subscription_id: sub.id,
      currency: 'INR',
      subtotal: 560,
      cgst_amount: 50,
      sgst_amount: 50,
      igst_amount: 0,
      tax_amount: 100,
      total: 660,
      tax_rate_bps: 1800,
      period_start: p1.start,
      period_end: p1.end,
    });
    expect(first.number).toMatch(/^TINV-/);
    expect(first.line_items).toEqual([
      expect.objectContaining({
        description: 'Usage: api_calls (1,234.5 call x ₹0.0025)',
        quantity: 1,
        unit_amount: 309,
        amount: 309,
        period_start: p1.start,
        period_end: p1.end,
        cgst_amount: 28,
        sgst_amount: 28,
        igst_amount: 0,
        proration: false,
      }),
      expect.objectContaining({
        description: 'Usage: gpu_seconds (1 second x ₹2.505)',
        quantity: 1,
        unit_amount: 251,
        amount: 251,
        period_start: p1.start,
        period_end: p1.end,
        cgst_amount: 22,
        sgst_amount: 22,
        igst_amount: 0,
      }),
    ]);
    // The rates are paise a unit; the invoice is in rupees, so its lines (and its PDF) show them in rupees: a quarter
    // paisa is ₹0.0025, 250.5 paise ₹2.505. The Unit price (₹) column is the line's own (quantity 1): ₹3.09 and ₹2.51.
    if (!spawnSync('pdftotext', ['-v']).error) {
      const res = await fetch(`${h.app.url}/v1/invoices/${first.id}/pdf`, {
        headers: { authorization: `Bearer ${m.keys.test}` },
      });
      expect(res.status).toBe(200);
      const file = path.join(os.tmpdir(), `cadence-usage-${first.id}.pdf`);
      fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
      try {
        const text = execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-']).toString();
        expect(text).toContain('call x ₹0.0025)');
        expect(text).toContain('second x ₹2.505)');
        expect(text).not.toMatch(/x 0\.25\b|x 250\.5\b/);
        expect(text).toMatch(/Usage: api_calls \(1,234\.5.*\b1\s+3\.09\s+3\.09\b/);
      } finally {
        fs.rmSync(file, { force: true });
      }
    }
    // The renewal's own invoice is the plan's amount and its GST (49900 x 9% = 4491 twice), usage apart.
    const plain = (await invoicesOf(m.test, sub.id)).filter(
      (i) => i.billing_reason === 'subscription_cycle' && i.id !== first.id,
    );
    expect(plain.map((i) => [i.subtotal, i.total, i.status])).toEqual([[49900, 49900 + 2 * 4491, 'paid']]);
    expect(await unbilled(h.app, sub.id)).toBe('0');

    if (provider === 'stripe') {
      // Announced, and charged from the mandate 24 hours later (docs/india.md): open until then, then paid.
      expect(first).toMatchObject({ status: 'open', amount_paid: 0, amount_due: 660 });
      await h.clock.advance(m, 24 * 3600 + 60);
      const collected = await ok(m.test.get(`/invoices/${first.id}`));
      expect(collected).toMatchObject({ status: 'paid', amount_paid: 660, amount_due: 0 });
    } else {
      // An add-on of the total, which the next charge carries: open until then.
      expect(first).toMatchObject({ status: 'open', amount_paid: 0, amount_due: 660 });
      expect(await razorpayAddonAmounts(h.app, renewed.provider_subscription_id)).toEqual([660]);
    }
    await expectCollectedAsInvoiced(sub.id);

    // Period 2: a late event for period 1 (counted there, after its close) and usage of period 2.
    const late = await reportOne(m, sub.id, {
      event_type: 'api_calls',
      quantity: 8,
      unit: 'call',
      timestamp: iso(p1.start, DAY),
    });
    expect(late.status).toBe(201);
    expect(late.body).toMatchObject({ billing_period_start: p1.start, billing_period_end: p1.end });
    await report(m, sub.id, [{ event_type: 'gpu_seconds', quantity: 2, unit: 'second' }]);
    await h.clock.advance(m, after(p2.end));

    // 8 x 0.25 = 2 (period 1), 2 x 250.5 = 501 (period 2). Subtotal 503; CGST = SGST = round(45.27) = 45, split
    // 45 x 2 / 503 = 0.18 and 45 x 501 / 503 = 44.82: 0 + 44, the subunit left to the larger remainder (44.82).
    usage = await usageInvoices(m.test, sub.id);
    expect(usage).toHaveLength(2);
    expect(usage[1]).toMatchObject({
      subtotal: 503,
      cgst_amount: 45,
      sgst_amount: 45,
      tax_amount: 90,
      total: 593,
      period_start: p1.start,
      period_end: p2.end,
    });
    expect(usage[1].line_items).toEqual([
      expect.objectContaining({
        description: 'Usage: api_calls (8 call x ₹0.0025)',
        amount: 2,
        period_start: p1.start,
        period_end: p1.end,
        cgst_amount: 0,
        sgst_amount: 0,
      }),
      expect.objectContaining({
        description: 'Usage: gpu_seconds (2 second x ₹2.505)',
        amount: 501,
        period_start: p2.start,
        period_end: p2.end,
        cgst_amount: 45,
        sgst_amount: 45,
      }),
    ]);
    if (provider === 'stripe') {
      // The second is charged 24 hours after its notice (docs/india.md).
      expect(usage.map((i) => i.status)).toEqual(['paid', 'open']);
      await h.clock.advance(m, 24 * 3600 + 60);
      usage = await usageInvoices(m.test, sub.id);
      expect(usage.map((i) => i.status)).toEqual(['paid', 'paid']);
    } else {
      // The charge at the end of period 2 carried the first add-on: that invoice is paid, once; the second waits.
      expect(usage.map((i) => [i.status, i.amount_paid])).toEqual([
        ['paid', 660],
        ['open', 0],
      ]);
      expect(await razorpayAddonAmounts(h.app, renewed.provider_subscription_id)).toEqual([660, 593]);
    }
    await expectCollectedAsInvoiced(sub.id);

    // Period 3: no usage, no usage invoice (Razorpay: the charge carries the second add-on and pays it).
    const p3end = (await ok(m.test.get(`/subscriptions/${sub.id}`))).current_period_end;
    await h.clock.advance(m, after(p3end));
    usage = await usageInvoices(m.test, sub.id);
    expect(usage.map((i) => i.status)).toEqual(['paid', 'paid']);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).cycles_completed).toBe(4);
    await expectCollectedAsInvoiced(sub.id);
  });

  it('a plan without usage rates: usage is reported and closed, never invoiced', async () => {
    const { plan } = await recurringPlan(m.test, { name: 'Flat' });
    const sub = await activeSubscription(plan.id);
    await report(m, sub.id, [{ event_type: 'api_calls', quantity: 1000, unit: 'call' }]);
    await h.clock.advance(m, after(sub.current_period_end));
    expect(await usageInvoices(m.test, sub.id)).toEqual([]);
    expect((await invoicesOf(m.test, sub.id)).map((i) => i.billing_reason)).toEqual([
      'subscription_create',
      'subscription_cycle',
    ]);
    expect(await unbilled(h.app, sub.id)).toBe('0');
  });

  it('cancelled at period end: the last period is billed when it ends (Stripe charges it; Razorpay leaves it open)', async () => {
    const sub = await activeSubscription();
    await report(m, sub.id, [{ event_type: 'api_calls', quantity: 400, unit: 'call' }]); // 100; GST 9 + 9
    await ok(m.test.post(`/subscriptions/${sub.id}/cancel?cancel_at_period_end=true`));
    await h.clock.advance(m, after(sub.current_period_end));
    const ended = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(ended.status).toBe('cancelled');
    const usage = await usageInvoices(m.test, sub.id);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({
      subtotal: 100,
      cgst_amount: 9,
      sgst_amount: 9,
      total: 118,
      period_start: sub.current_period_start,
      period_end: sub.current_period_end,
    });
    expect(usage[0].line_items.map((l: any) => l.description)).toEqual(['Usage: api_calls (400 call x ₹0.0025)']);
    if (provider === 'stripe') {
      // Announced, and charged from the mandate 24 hours later (docs/india.md).
      expect(usage[0]).toMatchObject({ status: 'open', amount_due: 118 });
      await h.clock.advance(m, 24 * 3600 + 60);
      expect(await ok(m.test.get(`/invoices/${usage[0].id}`))).toMatchObject({ status: 'paid', amount_paid: 118 });
    } else {
      // No later charge can carry an add-on: the invoice stays open for the merchant to collect.
      expect(usage[0]).toMatchObject({ status: 'open', amount_due: 118 });
      expect(await razorpayAddonAmounts(h.app, ended.provider_subscription_id)).toEqual([]);
    }
    await expectCollectedAsInvoiced(sub.id);
  });

  it('cancelled now: nothing is billed for the unfinished period (its usage stays unbilled)', async () => {
    const sub = await activeSubscription();
    await report(m, sub.id, [{ event_type: 'api_calls', quantity: 400, unit: 'call' }]);
    expect((await ok(m.test.post(`/subscriptions/${sub.id}/cancel`))).status).toBe('cancelled');
    await h.clock.advance(m, after(sub.current_period_end));
    expect(await usageInvoices(m.test, sub.id)).toEqual([]);
    expect(await unbilled(h.app, sub.id)).toBe('400');
  });

  it('events racing a renewal are billed exactly once: in its invoice or in the next', async () => {
    const sub = await activeSubscription();
    const p1 = { start: sub.current_period_start, end: sub.current_period_end };
    await h.clock.advance(m, new Date(new Date(p1.end).getTime() - 60_000));
    // Each event is 4 calls x 0.25 = 1 subunit, so any split of them over closes sums to exactly N.
    const N = 40;
    const posts = Array.from({ length: N }, (_, i) =>
      new Promise((r) => setTimeout(r, i * 3)).then(() =>
        reportOne(m, sub.id, { event_type: 'api_calls', quantity: 4, unit: 'call', timestamp: iso(p1.start, DAY) }),
      ),
    );
    const [, ...answers] = await Promise.all([h.clock.advance(m, after(p1.end)), ...posts]);
    expect(answers.map((a) => a.status)).toEqual(Array(N).fill(201));
    const p2end = (await ok(m.test.get(`/subscriptions/${sub.id}`))).current_period_end;
    await h.clock.advance(m, after(p2end));
    const lines = (await usageInvoices(m.test, sub.id)).flatMap((i) => i.line_items);
    expect(lines.every((l: any) => /^Usage: api_calls \(\d+ call x ₹0\.0025\)$/.test(l.description))).toBe(true);
    expect(sum(lines.map((l: any) => l.amount))).toBe(N);
    expect(await unbilled(h.app, sub.id)).toBe('0');
    await expectCollectedAsInvoiced(sub.id);
  });
});

describe('a free trial', () => {
  it('usage during the trial is free; the first paid period is billed at its close', async () => {
    const m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    await connect(m.test, 'stripe');
    const { plan } = await meteredPlan(m, { trial_period_days: 7 });
    const { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { customer_state_code: '29' }),
    );
    expect(sub.status).toBe('trialing');
    await report(m, sub.id, [{ event_type: 'gpu_seconds', quantity: 3, unit: 'second' }]);
    await h.clock.advance(m, after(sub.trial_end));
    const active = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(active.status).toBe('active');
    expect(await usageInvoices(m.test, sub.id)).toEqual([]);
    expect(await unbilled(h.app, sub.id)).toBe('0');
    await report(m, sub.id, [{ event_type: 'api_calls', quantity: 40, unit: 'call' }]); // 10; GST round(0.9) = 1 + 1
    await h.clock.advance(m, after(active.current_period_end));
    // Charged 24 hours after its notice (docs/india.md).
    await h.clock.advance(m, 24 * 3600 + 60);
    const usage = await usageInvoices(m.test, sub.id);
    expect(usage.map((i) => [i.subtotal, i.total, i.status, i.period_start])).toEqual([
      [10, 12, 'paid', active.current_period_start],
    ]);
  });
});
