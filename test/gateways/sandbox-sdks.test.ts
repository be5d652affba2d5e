import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import { SecretBox } from '../../src/core/secrets';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Stripe from 'stripe';
import { startSandbox } from '../../src/gateways/sandbox';
import { SANDBOX_SECRETS, useGatewaySandbox } from '../harness/sandbox';

/**
 * A merchant's own code against the sandbox, through the official SDKs and their public options only
 * (docs/sandbox.md, "Pointing the official SDKs at the sandbox"); none of Cadence's adapter wiring
 * (src/gateways/transport.ts). Stripe: `host`, `port`, `protocol`. Razorpay: a separate Node process whose SDK is
 * untouched, given HTTPS_PROXY (the sandbox) and NODE_EXTRA_CA_CERTS (the sandbox's certificate for api.razorpay.com).
 */
const env = useGatewaySandbox();

const run = promisify(execFile);

const page = async (url: string) => {
  const r = await fetch(url);
  expect(r.status).toBe(200);
  // The page's text as a customer reads it (tags dropped, entities kept as they are: no amount has one).
  return (await r.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
};

describe('Stripe SDK pointed at the sandbox with host, port and protocol', () => {
  const stripe = () => {
    const u = new URL(env.sandbox.url);
    return new Stripe('sk_test_merchant_own_code', {
      host: u.hostname,
      port: Number(u.port),
      protocol: 'http',
      maxNetworkRetries: 0,
    });
  };

  it('a trialing subscription checkout shows the price after the trial; a one-off payment its amount', async () => {
    const s = stripe();
    const product = await s.products.create({ name: 'Pro plan' });
    const monthly = await s.prices.create({
      product: product.id,
      currency: 'inr',
      unit_amount: 58882,
      recurring: { interval: 'month' },
    });
    const trial = await s.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: monthly.id, quantity: 1 }],
      subscription_data: { trial_period_days: 7 },
      success_url: 'https://merchant.example/ok',
      cancel_url: 'https://merchant.example/cancel',
    });
    const trialText = await page(trial.url!);
    expect(trialText).toContain('7 days free, then ₹588.82 / month');
    expect(trialText).toContain('Due today: ₹0.00');
    expect(trialText).not.toContain('period');

    const quarterly = await s.prices.create({
      product: product.id,
      currency: 'usd',
      unit_amount: 1500,
      recurring: { interval: 'month', interval_count: 3 },
    });
    const noTrial = await s.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: quarterly.id, quantity: 1 }],
      success_url: 'https://merchant.example/ok',
    });
    const noTrialText = await page(noTrial.url!);
    expect(noTrialText).toContain('$15.00 every 3 months');
    expect(noTrialText).toContain('Authorise and pay $15.00');

    const oneOff = await s.checkout.sessions.create({
      mode: 'payment',
      line_items: [{ price_data: { currency: 'inr', unit_amount: 12345678, product_data: { name: 'Lifetime' } } }],
      success_url: 'https://merchant.example/ok',
    });
    const oneOffText = await page(oneOff.url!);
    expect(oneOffText).toContain('₹1,23,456.78');
    expect(oneOffText).toContain('Pay ₹1,23,456.78');

    const yen = await s.checkout.sessions.create({
      mode: 'payment',
      line_items: [{ price_data: { currency: 'jpy', unit_amount: 1500, product_data: { name: 'Stickers' } } }],
      success_url: 'https://merchant.example/ok',
    });
    expect(await page(yen.url!)).toContain('Pay ¥1,500');
  });

  it('a call the sandbox does not serve raises the SDK own invalid request error naming it', async () => {
    const s = stripe();
    const err = await s.customers.create({ email: 'asha@example.com' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    const e = err as InstanceType<typeof Stripe.errors.StripeInvalidRequestError>;
    expect(e.statusCode).toBe(404);
    expect(e.type).toBe('StripeInvalidRequestError');
    expect(e.message).toBe(
      'The Cadence gateway sandbox does not emulate POST /v1/customers: it serves only the Stripe calls listed in docs/sandbox.md.',
    );
    // A served call still answers as before: an unknown id is Stripe's resource_missing.
    const missing = await s.subscriptions.retrieve('sub_missing').catch((x: { code?: string }) => x);
    expect(missing).toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });
});

/** The merchant's script: the official Razorpay SDK, constructed as its documentation shows, nothing else. */
const RAZORPAY_SCRIPT = `
const Razorpay = require(process.env.RAZORPAY_SDK);
const rzp = new Razorpay({ key_id: 'rzp_test_merchant_own', key_secret: 'secret' });
(async () => {
  const out = {};
  const plan = await rzp.plans.create({
    period: 'monthly', interval: 1, item: { name: 'Pro plan', amount: 58882, currency: 'INR' },
  });
  out.fetched = (await rzp.plans.fetch(plan.id)).id === plan.id;
  const quarterly = await rzp.plans.create({
    period: 'monthly', interval: 3, item: { name: 'Quarterly', amount: 150000, currency: 'INR' },
  });
  const trial = await rzp.subscriptions.create({
    plan_id: plan.id, total_count: 12, start_at: Math.floor(Date.now() / 1000) + 7 * 86400,
  });
  out.trialUrl = trial.short_url;
  out.quarterlyUrl = (await rzp.subscriptions.create({ plan_id: quarterly.id, total_count: 4 })).short_url;
  out.linkUrl = (await rzp.paymentLink.create({ amount: 12345678, currency: 'INR', description: 'Lifetime' })).short_url;
  try {
    await rzp.qrCode.create({ type: 'upi_qr', usage: 'single_use', fixed_amount: true, payment_amount: 300 });
    out.unserved = 'answered';
  } catch (e) {
    out.unserved = { isError: e instanceof Error, ...e };
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { process.stderr.write(String(e && e.stack || JSON.stringify(e))); process.exit(1); });
`;

describe('Razorpay SDK reaching the sandbox through HTTPS_PROXY and NODE_EXTRA_CA_CERTS', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rzp-merchant-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const childEnv = (extra: Record<string, string>) => {
    const e: Record<string, string | undefined> = { ...process.env, RAZORPAY_SDK: require.resolve('razorpay') };
    for (const k of ['NO_PROXY', 'no_proxy', 'HTTP_PROXY', 'http_proxy', 'NODE_EXTRA_CA_CERTS']) delete e[k];
    return { ...e, ...extra };
  };

  it('serves the SDK calls at their real paths; an unserved call raises the SDK own error naming it', async () => {
    const certResponse = await fetch(`${env.sandbox.url}/_sandbox/certificates/api.razorpay.com.pem`);
    expect(certResponse.status).toBe(200);
    const certFile = path.join(dir, 'sandbox-razorpay.pem');
    fs.writeFileSync(certFile, await certResponse.text());
    const script = path.join(dir, 'merchant.js');
    fs.writeFileSync(script, RAZORPAY_SCRIPT);

    const { stdout } = await run(process.execPath, [script], {
      env: childEnv({ HTTPS_PROXY: env.sandbox.url, https_proxy: env.sandbox.url, NODE_EXTRA_CA_CERTS: certFile }),
      timeout: 30_000,
    });
    const out = JSON.parse(stdout);
    expect(out.fetched).toBe(true);
    // The SDK's own error: a plain {statusCode, error} (INormalizeError), Razorpay's 400 for a URL it does not serve.
    expect(out.unserved).toEqual({
      isError: false,
      statusCode: 400,
      error: {
        code: 'BAD_REQUEST_ERROR',
        description:
          'The requested URL was not found on the server. The Cadence gateway sandbox does not emulate POST /v1/payments/qr_codes: it serves only the Razorpay calls listed in docs/sandbox.md.',
        source: 'NA',
        step: 'NA',
        reason: 'NA',
        metadata: {},
      },
    });

    // The hosted pages the objects name.
    const trialText = await page(out.trialUrl);
    expect(trialText).toContain('7 days free, then ₹588.82 / month');
    expect(trialText).toContain('Due today: ₹0.00');
    const quarterlyText = await page(out.quarterlyUrl);
    expect(quarterlyText).toContain('₹1,500.00 every 3 months');
    expect(quarterlyText).toContain('Authorise and pay ₹1,500.00');
    const linkText = await page(out.linkUrl);
    expect(linkText).toContain('Pay ₹1,23,456.78');
  });

  it('without the certificate trusted the SDK cannot connect (the sandbox is not silently trusted)', async () => {
    const script = path.join(dir, 'untrusted.js');
    fs.writeFileSync(
      script,
      `const R = require(process.env.RAZORPAY_SDK); new R({ key_id: 'rzp_test_x', key_secret: 's' }).plans.fetch('plan_x')
        .then(() => process.stdout.write('answered'), () => process.stdout.write('failed'));`,
    );
    const { stdout } = await run(process.execPath, [script], {
      env: childEnv({ HTTPS_PROXY: env.sandbox.url, https_proxy: env.sandbox.url }),
      timeout: 30_000,
    });
    expect(stdout).toBe('failed');
  });

  it('shows one certificate per database: a restarted (or second) sandbox on it shows the same', async () => {
    const first = await (await fetch(`${env.sandbox.url}/_sandbox/certificates/api.razorpay.com.pem`)).text();
    const second = await startSandbox({ databaseUrl: env.databaseUrl, port: 0, secrets: SANDBOX_SECRETS });
    try {
      const again = await (await fetch(`${second.url}/_sandbox/certificates/api.razorpay.com.pem`)).text();
      expect(again).toBe(first);
      const cert = new crypto.X509Certificate(first);
      expect(cert.checkHost('api.razorpay.com')).toBe('api.razorpay.com');
      expect(cert.checkHost('example.com')).toBeUndefined();
      expect(cert.ca).toBe(false);
    } finally {
      await second.close();
    }
  });

  it('a sandbox started with another ENCRYPTION_KEY on the database starts, with a new certificate it can use', async () => {
    const before = await (await fetch(`${env.sandbox.url}/_sandbox/certificates/api.razorpay.com.pem`)).text();
    const otherKey = SecretBox.fromEnv('', { ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64') });
    const other = await startSandbox({ databaseUrl: env.databaseUrl, port: 0, secrets: otherKey });
    try {
      const shown = await (await fetch(`${other.url}/_sandbox/certificates/api.razorpay.com.pem`)).text();
      expect(shown).not.toBe(before);
      expect(new crypto.X509Certificate(shown).checkHost('api.razorpay.com')).toBe('api.razorpay.com');
      // The next start with that key shows the same one: it was stored, sealed with that key.
      const again = await startSandbox({ databaseUrl: env.databaseUrl, port: 0, secrets: otherKey });
      try {
        expect(await (await fetch(`${again.url}/_sandbox/certificates/api.razorpay.com.pem`)).text()).toBe(shown);
      } finally {
        await again.close();
      }
    } finally {
      await other.close();
    }
  });

  it('refuses a tunnel to any other host: it forwards nothing', async () => {
    const u = new URL(env.sandbox.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, method: 'CONNECT', path: 'example.com:443' });
      req.on('connect', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    const absolute = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: 'http://example.com/v1/plans' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(absolute).toBe(403);
  });
});
