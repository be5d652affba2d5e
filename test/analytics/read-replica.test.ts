import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { Mode } from '../../src/core/entity';
import { openReadPool } from '../../src/core/read-pool';
import { reportQuery } from '../../src/modules/analytics/analytics.store';
import { ADMIN_TOKEN, Client_, request, startTestApp, TestApp, TestMerchant } from '../harness';
import { startStreamingPair, StreamingPair } from '../harness/replica';
import { connect } from '../payments/helpers';
import { ok, startSecondApp } from '../subscriptions/helpers';
import { analytics, planAt, subscribed } from './helpers';

/**
 * DATABASE_READ_URL (docs/production.md, "A read replica for analytics") against a real PostgreSQL primary and a real
 * streaming replica of it (test/harness/replica.ts): the analytics reports read the replica, so while its replay is
 * paused they answer the figures it has replayed while the primary (and a process without DATABASE_READ_URL) has the
 * new ones; they follow once replay resumes. Each merchant and mode sees only its own figures there, and a replica that
 * cannot be reached answers 503 service_unavailable while the rest of the API goes on.
 */

jest.setTimeout(60_000);

let pair: StreamingPair | undefined;
let t: TestApp | undefined;
let plain: Awaited<ReturnType<typeof startSecondApp>> | undefined;
let m: TestMerchant;
let planId: string;

beforeAll(async () => {
  pair = await startStreamingPair();
  t = await startTestApp({}, { adminUrl: pair.primaryUrl, replicaUrl: pair.replicaUrl });
  // Another process on the same primary without DATABASE_READ_URL: its reports read the primary.
  plain = await startSecondApp(t, { worker: false });
  m = await t.createMerchant();
  await connect(m.test, 'stripe');
  planId = (await planAt(m.test, {}, { amount: 49900 })).id;
});

afterAll(async () => {
  try {
    await plain?.close();
    await t?.close();
  } finally {
    await pair?.stop();
  }
});

/** The merchant's MRR in test mode as the primary's ledger has it (the sum of its movements). */
async function primaryMrr(merchantId: string): Promise<number> {
  const c = new Client({ connectionString: t!.databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ mrr: string }>(
      `select coalesce(sum(amount), 0)::text as mrr from mrr_movements where merchant_id = $1 and mode = 'test'`,
      [merchantId],
    );
    return Number(rows[0].mrr);
  } finally {
    await c.end();
  }
}

/** MRR, autopay attempts and cohort customers as `c` answers them. */
async function figures(c: TestMerchant['test']) {
  const mrr = (await analytics(c, 'mrr')).mrr as number;
  const attempts = (await ok(c.get('/analytics/autopay'))).attempts as number;
  const cohorts = (await ok(c.get('/analytics/cohorts'))).cohorts as { customers: number }[];
  return { mrr, attempts, customers: cohorts.reduce((n, x) => n + x.customers, 0) };
}

it('DATABASE_READ_URL is read beside DATABASE_URL only', () => {
  const primary = 'postgresql://u@db:5432/cadence';
  const replica = 'postgresql://u@replica:5432/cadence';
  expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: replica }).databaseReadUrl).toBe(replica);
  expect(loadConfig({ DATABASE_URL: primary }).databaseReadUrl).toBeUndefined();
  expect(() => loadConfig({ DATABASE_READ_URL: replica })).toThrow('DATABASE_READ_URL needs DATABASE_URL');
});

it("on the replica, a statement names the request's tenant and is run once more after a recovery conflict", async () => {
  const sent: { text: string; values?: unknown[] }[] = [];
  let failures = [{ code: '40001', message: 'canceling statement due to conflict with recovery' }];
  const replica = {
    async query(q: { text: string; values?: unknown[] }) {
      sent.push(q);
      const fail = failures.shift();
      if (fail) throw Object.assign(new Error(fail.message), { code: fail.code });
      return { rows: [{ n: 1 }] };
    },
  };
  const tenant = { merchantId: 'mer_1', mode: Mode.TEST };
  const rows = await reportQuery(
    { replica, tenant },
    'select count(*) as n from mrr_movements x where {tenant:x} and x.currency = $1',
    ['INR'],
  );
  expect(rows).toEqual([{ n: 1 }]);
  expect(sent).toHaveLength(2);
  for (const q of sent) {
    expect(q.text).toContain('x.merchant_id = $2 and x.mode = $3');
    expect(q.values).toEqual(['INR', 'mer_1', 'test']);
  }
  // Any other error is the caller's, at once.
  failures = [{ code: '57P01', message: 'terminating connection due to administrator command' }];
  sent.length = 0;
  await expect(reportQuery({ replica, tenant }, 'select 1 from mrr_movements where {tenant}', [])).rejects.toThrow(
    /administrator command/,
  );
  expect(sent).toHaveLength(1);
});

it('is a real streaming replica of the primary', async () => {
  const c = new Client({ connectionString: pair!.replicaUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ standby: boolean }>('select pg_is_in_recovery() as standby');
    expect(rows[0].standby).toBe(true);
    // Read-only: a write there fails.
    await expect(c.query('create table nope (id int)')).rejects.toThrow(/read-only transaction/);
  } finally {
    await c.end();
  }
  expect(t!.app.readPool).not.toBeNull();
  expect(plain!.readPool).toBeNull();
  // GET /metrics shows the replica's pool beside the primary's; a process without one shows none.
  const scrape = async (url: string) => (await request(`${url}/metrics`, { key: ADMIN_TOKEN })).text;
  const withReplica = await scrape(t!.url);
  expect(withReplica).toMatch(/^cadence_db_read_pool_max 4$/m);
  expect(withReplica).toMatch(/^cadence_db_read_pool_connections\{state="waiting"\} 0$/m);
  expect(await scrape(plain!.url)).not.toContain('cadence_db_read_pool');
  // The pool's sessions are read-only even on a primary: a write sent through it by mistake fails.
  const onPrimary = await openReadPool(t!.databaseUrl, 1);
  try {
    await expect(onPrimary.pool.query('create table nope (id int)')).rejects.toThrow(/read-only transaction/);
  } finally {
    await onPrimary.close();
  }
});

it('analytics answers what the replica has replayed: the old figures while replay is paused, the new once it resumes', async () => {
  await subscribed(m.test, planId);
  await pair!.caughtUp();
  expect(await figures(m.test)).toEqual({ mrr: 49900, attempts: 1, customers: 1 });

  await pair!.pauseReplay();
  try {
    // A second customer's subscription, through the API: written to the primary, and read back from it.
    const sub = await subscribed(m.test, planId);
    expect(sub.status).toBe('active');
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('active');
    expect(await primaryMrr(m.id)).toBe(99800);
    // The replica has not replayed it: every report still answers the figures from before.
    expect(await figures(m.test)).toEqual({ mrr: 49900, attempts: 1, customers: 1 });
    const g = await m.test.gql('{ mrr { mrr } churn { subscriptionsAtStart } }');
    expect(g.errors).toBeUndefined();
    expect(g.data.mrr.mrr).toBe(49900);
    // A process without DATABASE_READ_URL reads the primary: the new figures.
    expect((await analytics(new Client_(plain!.url, m.keys.test), 'mrr')).mrr).toBe(99800);
  } finally {
    await pair!.resumeReplay();
  }
  await pair!.caughtUp();
  expect(await figures(m.test)).toEqual({ mrr: 99800, attempts: 2, customers: 2 });
});

it("holds tenancy on the replica: another merchant's figures, and the other mode's, are not seen", async () => {
  const other = await t!.createMerchant();
  await connect(other.test, 'stripe');
  const otherPlan = await planAt(other.test, {}, { amount: 30000 });
  await subscribed(other.test, otherPlan.id);
  await pair!.caughtUp();
  expect(await figures(other.test)).toEqual({ mrr: 30000, attempts: 1, customers: 1 });
  expect(await figures(m.test)).toEqual({ mrr: 99800, attempts: 2, customers: 2 });
  // Live mode has nothing, for either merchant.
  expect(await figures(m.live)).toEqual({ mrr: 0, attempts: 0, customers: 0 });
  expect(await figures(other.live)).toEqual({ mrr: 0, attempts: 0, customers: 0 });
});

it('answers 503 service_unavailable while the replica is down, and the rest of the API goes on', async () => {
  await pair!.stopReplica();
  try {
    for (const path of ['/analytics/mrr', '/analytics/churn', '/analytics/cohorts', '/analytics/autopay']) {
      const r = await m.test.get(path);
      expect({ path, status: r.status, code: r.body?.error?.code }).toEqual({
        path,
        status: 503,
        code: 'service_unavailable',
      });
      expect(r.headers.get('retry-after')).toBe('1');
    }
    const g = await m.test.gql('{ ltv { ltv } }');
    expect(g.errors?.[0]?.extensions?.code).toBe('service_unavailable');
    // What reads the primary answers as before.
    expect((await m.test.get('/customers')).status).toBe(200);
    expect((await fetch(`${t!.url}/readyz`)).status).toBe(200);
  } finally {
    await pair!.startReplica();
  }
  // Back: the pool opens new connections to it.
  await pair!.caughtUp();
  expect(await figures(m.test)).toEqual({ mrr: 99800, attempts: 2, customers: 2 });
});
