import { Client, Pool } from 'pg';
import { createPartition, monthOf } from '../../src/modules/usage';

/**
 * The analytics and usage data set (bench/README.md), written by set-based SQL (generate_series) straight into a
 * database the service migrated, for one merchant in test mode: a catalog (3 products x monthly / yearly / weekly plans
 * x INR and USD default prices), customers, subscriptions, the MRR movements ledger (mrr_movements; its daily rollup
 * is kept by the table's own trigger), mandate attempts, and usage events with their aggregates.
 *
 * The ledger follows docs/analytics.md exactly, so every analytics answer over it is a true answer:
 * - each subscription that was ever paid for has a time-ordered sequence of movements over up to two years, starting
 *   when it became counted: it became counted (+1 subscription; `new` for the customer's first in its currency,
 *   `expansion` when another of the customer's subscriptions is counted, `reactivation` when it or the customer was
 *   counted before), changed MRR while counted (`expansion` / `contraction`: plan and quantity changes), stopped being
 *   counted (`churn`: a pause, later resumed, or its final cancel / pause / halt / completion);
 * - a subscription's amounts add up to its mrr_after at every step, and to its MRR now (docs/analytics.md normalisation
 *   of its price) when it is active or past_due, to 0 otherwise; customer_delta is +1 / -1 exactly when the customer's
 *   counted subscriptions in the currency go 0 -> 1 / 1 -> 0 (customers of one currency, a tenth with two subscriptions);
 * - subscriptions that never paid: trials running now, and failed mandate checkouts (cancelled, a failed attempt).
 * Older subscriptions get more movements (one roughly every month); the total is exactly `movements`.
 *
 * Usage: `usageSubscriptions` active monthly subscriptions (INR, at least 3 periods old) get `usageEvents` events over
 * three event types (api_calls in calls, storage in GB-hours with decimals, sms in messages): the hot subscription (two
 * years old, all its 24 periods) a `hotShare` of them, the others their last 3 periods, each event with an idempotency
 * key (usage_event_keys). Monthly partitions are made by the service's own createPartition; usage_aggregates gets the
 * sums per (subscription, period, event type), spread over the 8 slots as the service spreads them, and usage_units
 * the units.
 *
 * Pseudo-random choices come from hashes of the row numbers (pg_temp.u), so a data set is the same for the same shape
 * and instant. Runs in one transaction (the partitions before it, VACUUM ANALYZE after it: the planner and the
 * index-only scans see what autovacuum would have left by the time a merchant had this much history).
 *
 * Alone: `npm run seed:analytics -- <database url> <merchant id> [--customers N] [--subscriptions N] [--movements N]
 * [--usage-events N] [--usage-subscriptions N]` seeds an existing merchant (test mode; it needs a test-mode gateway
 * connection, e.g. POST /v1/providers/connections with the sandbox) of a database the service has migrated.
 */

/** Share of a seeded table's pages the visibility map must mark all-visible after VACUUM, and the vacuums allowed. */
const ALL_VISIBLE_SHARE = 0.95;
const VACUUM_ATTEMPTS = 5;

export interface AnalyticsShape {
  customers: number;
  subscriptions: number;
  movements: number;
  usageEvents: number;
  usageSubscriptions: number;
  /** Share of the usage events on the hot subscription (0..1). */
  hotShare: number;
  /** Active subscriptions (not among the usage ones) listed for ingestion benches. */
  ingestSubscriptions: number;
}

export const DEFAULT_SHAPE: AnalyticsShape = {
  customers: 100_000,
  subscriptions: 100_000,
  movements: 1_000_000,
  usageEvents: 1_000_000,
  usageSubscriptions: 1_000,
  hotShare: 0.2,
  ingestSubscriptions: 200,
};

export interface AnalyticsSeed {
  merchantId: string;
  /** Merchant time when the seed started: every movement, attempt and event is before it. */
  now: Date;
  reportingCurrency: string;
  /** The usage subscription with every period of two years (the heaviest summary). */
  hotSubscriptionId: string;
  /** The usage subscriptions, the hot one first. */
  usageSubscriptionIds: string[];
  /** Active monthly subscriptions whose current period runs at least another day, without seeded usage. */
  ingestSubscriptionIds: string[];
  counts: Record<string, number>;
  /** Seconds per step. */
  timings: [string, number][];
  totalSeconds: number;
}

/** Prices per tier (index) of each cadence and currency, in subunits. */
const PRICES: Record<string, Record<string, number[]>> = {
  INR: { monthly: [49_900, 99_900, 199_900], yearly: [499_000, 999_000, 1_999_000], weekly: [14_900, 29_900, 59_900] },
  USD: { monthly: [999, 1_999, 4_999], yearly: [9_900, 19_900, 49_900], weekly: [299, 599, 1_499] },
};
const TIERS = ['Basic', 'Pro', 'Business'];
const CADENCES = ['monthly', 'yearly', 'weekly'];

const sqlArray = (xs: string[]) =>
  `array[${xs.map((x) => (x === null ? 'null' : `'${x.replace(/'/g, "''")}'`)).join(',')}]`;

/**
 * Seeds the data set for `merchantId` (test mode) on `databaseUrl`. `log` gets one line per step with its time.
 * Fails (nothing written but partitions) if the merchant does not exist or has no test-mode gateway connection.
 */
export async function seedAnalytics(
  databaseUrl: string,
  merchantId: string,
  shape: AnalyticsShape = DEFAULT_SHAPE,
  log: (line: string) => void = () => undefined,
): Promise<AnalyticsSeed> {
  if (shape.subscriptions < 10 || shape.customers < 10)
    throw new Error('seed: at least 10 customers and 10 subscriptions');
  if (shape.usageSubscriptions < 2) throw new Error('seed: at least 2 usage subscriptions');
  const t0 = Date.now();
  const timings: [string, number][] = [];
  let lap = Date.now();
  const step = (label: string) => {
    const s = (Date.now() - lap) / 1000;
    timings.push([label, s]);
    log(`seed: ${label} (${s.toFixed(1)} s)`);
    lap = Date.now();
  };

  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const q = <T = any>(text: string, values: unknown[] = []) => db.query(text, values).then((r) => r.rows as T[]);
  try {
    // Calendar arithmetic in UTC, as billing.ts computes periods (date-fns addMonths on UTC dates).
    await q(`set timezone = 'UTC'`);
    await q(`set temp_buffers = '256MB'`);
    await q(`set work_mem = '256MB'`);
    await q(`set maintenance_work_mem = '256MB'`);
    await q(`set synchronous_commit = off`);

    const [merchant] = await q<{ reporting_currency: string; now: Date; connection_id: string | null }>(
      `select m.reporting_currency,
         date_trunc('milliseconds', now() + coalesce((select tc.offset_ms from test_clocks tc where tc.merchant_id = m.id), 0) * interval '1 millisecond') as now,
         (select c.id from provider_connections c where c.merchant_id = m.id and c.mode = 'test' order by c.is_default desc, c.created_at limit 1) as connection_id
       from merchants m where m.id = $1`,
      [merchantId],
    );
    if (!merchant) throw new Error(`seed: no merchant ${merchantId}`);
    if (!merchant.connection_id)
      throw new Error(
        `seed: merchant ${merchantId} has no test-mode gateway connection (POST /v1/providers/connections first)`,
      );
    const now = merchant.now;
    const reporting = merchant.reporting_currency;

    // The hot subscription's months, and the next one, before the transaction (DDL of the service's own function).
    const pool = new Pool({ connectionString: databaseUrl, max: 2 });
    try {
      const first = new Date(now.getTime() - 731 * 86_400_000);
      for (
        let m = monthOf(first);
        new Date(m.from).getTime() <= now.getTime() + 31 * 86_400_000;
        m = monthOf(new Date(m.to))
      ) {
        await createPartition(pool, m);
      }
    } finally {
      await pool.end();
    }
    step('usage_events partitions for two years');

    await q('begin');
    // u(a, b): a pseudo-random number in [0, 1) from two integers (inlined by the planner).
    await q(`create function pg_temp.u(a bigint, b bigint) returns float8 language sql immutable parallel safe as
      $$ select (hashint8(a * 1000003 + b)::float8 + 2147483648) / 4294967296 $$`);

    // --- catalog ---------------------------------------------------------------------------------------------------
    await q(`create temp table seed_catalog on commit drop as
      with plans as (
        select t.tier, f.freq, gen_random_uuid() as plan_id, p.product_id
        from generate_series(0, 2) t(tier)
        join (select tier, gen_random_uuid() as product_id from generate_series(0, 2) tier) p using (tier)
        cross join unnest(${sqlArray(CADENCES)}) f(freq)
      )
      select plans.*, c.currency, gen_random_uuid() as price_id,
        (case c.currency ${Object.entries(PRICES)
          .map(
            ([cur, byFreq]) =>
              `when '${cur}' then case plans.freq ${Object.entries(byFreq)
                .map(([f, a]) => `when '${f}' then array[${a.join(',')}]`)
                .join(' ')} end`,
          )
          .join(' ')} end)[plans.tier + 1]::bigint as amount
      from plans cross join unnest(array['INR', 'USD']) c(currency)`);
    await q(
      `insert into products (id, created_at, updated_at, merchant_id, mode, name, description, type)
       select distinct on (tier) product_id, $2::timestamptz - interval '800 days', now(), $1, 'test', 'Analytics seed ' || (${sqlArray(TIERS)})[tier + 1],
         'Seeded by bench/lib/analytics-seed.ts', 'subscription' from seed_catalog order by tier`,
      [merchantId, now],
    );
    await q(
      `insert into plans (id, created_at, merchant_id, mode, product_id, name, billing_frequency, billing_interval, trial_period_days)
       select distinct on (plan_id) plan_id, $2::timestamptz - interval '800 days', $1, 'test', product_id, initcap(freq), freq, 1, 0 from seed_catalog order by plan_id`,
      [merchantId, now],
    );
    await q(
      `insert into prices (id, created_at, merchant_id, mode, plan_id, currency, amount, setup_fee, is_default, provider_price_ids)
       select price_id, $2::timestamptz - interval '800 days', $1, 'test', plan_id, currency, amount, 0, true, '{}' from seed_catalog`,
      [merchantId, now],
    );
    // The catalog cache is keyed by this version (catalog.store.ts): a bump retires what the service cached.
    await q(
      `insert into catalog_versions (merchant_id, mode, version) values ($1, 'test', 1)
       on conflict (merchant_id, mode) do update set version = catalog_versions.version + 1`,
      [merchantId],
    );

    // --- subscriptions (decisions) -----------------------------------------------------------------------------------
    // Subscription i belongs to customer i % spread (spread = 90% of the subscriptions, at most the customers): a tenth
    // of those customers has a second subscription, in the customer's currency (85% INR). Subscription 0 is the hot one.
    const spread = Math.min(shape.customers, Math.ceil(shape.subscriptions * 0.9));
    await q(
      `create temp table seed_subs on commit drop as
       with a as (
         select i, i % $2::int as ci,
           case when i = 0 or pg_temp.u(i % $2::int, 6) < 0.85 then 'INR' else 'USD' end as currency,
           case when i = 0 then 'monthly' when pg_temp.u(i, 5) < 0.7 then 'monthly' when pg_temp.u(i, 5) < 0.9 then 'yearly' else 'weekly' end as freq,
           floor(pg_temp.u(i, 7) * 3)::int as tier,
           pg_temp.u(i, 9) as u_method, pg_temp.u(i, 10) as u_bank, pg_temp.u(i, 11) as u_reason
         from generate_series(0, $1::int - 1) i
       ),
       b as (
         select a.*,
           case when currency = 'USD' then 'card' when u_method < 0.5 then 'upi' when u_method < 0.8 then 'card' else 'emandate' end as method
         from a
       ),
       c as (
         select b.*,
           case method
             when 'upi' then (array['HDFC', 'ICICI', 'SBI', 'AXIS', 'YES', 'PAYTM'])[1 + floor(u_bank * 6)::int]
             when 'emandate' then (array['HDFC', 'ICICI', 'SBI', 'AXIS', 'KOTAK', 'PNB', 'BOB'])[1 + floor(u_bank * 7)::int]
             else case when currency = 'USD' then (array['CHASE', 'BANK OF AMERICA', 'CITI', null])[1 + floor(u_bank * 4)::int]
                       else (array['HDFC', 'ICICI', 'SBI', 'AXIS', 'KOTAK'])[1 + floor(u_bank * 5)::int] end
           end as bank
         from b
       ),
       d as (
         select c.*,
           (case method when 'upi' then 0.14 when 'card' then 0.07 else 0.18 end) + case when bank in ('PNB', 'BOB', 'YES') then 0.06 else 0 end as fail_rate
         from c
       ),
       e as (
         select d.*,
           case when i = 0 then 'moving' when pg_temp.u(i, 1) < fail_rate then 'failed' when pg_temp.u(i, 1) < fail_rate + 0.04 then 'trialing' else 'moving' end as category
         from d
       ),
       f as (
         select e.*,
           case when i = 0 then interval '730 days'
                when category = 'trialing' then interval '1 hour' + pg_temp.u(i, 2) * interval '13 days'
                else greatest(interval '1 day', (1 - sqrt(pg_temp.u(i, 2))) * interval '730 days') end as age
         from e
       ),
       g as (
         select f.*, date_trunc('milliseconds', $3::timestamptz - age) as t0,
           category = 'moving' and (i = 0 or pg_temp.u(i, 3) < 0.9 - 0.35 * extract(epoch from age) / (730 * 86400)) as counted
         from f
       )
       select g.*, gen_random_uuid() as id,
         case when category = 'failed' then 'cancelled' when category = 'trialing' then 'trialing'
              when counted then case when i = 0 or pg_temp.u(i, 4) < 0.93 then 'active' else 'past_due' end
              else case when pg_temp.u(i, 4) < 0.7 then 'cancelled' when pg_temp.u(i, 4) < 0.85 then 'paused' when pg_temp.u(i, 4) < 0.95 then 'halted' else 'completed' end
         end as status,
         case when category = 'moving' then case when counted then 1 else 2 end else 0 end as base_moves,
         case when category = 'moving' then greatest(1, (extract(epoch from age) / 3600)::bigint) else 0 end as weight,
         cat.amount, cat.product_id, cat.plan_id, cat.price_id,
         (case g.freq when 'monthly' then cat.amount::numeric when 'yearly' then round(cat.amount::numeric / 12) else round(cat.amount::numeric * 52 / 12) end)::bigint as mrr,
         case when method = 'upi' then (array['upi_mandate_rejected', 'upi_pin_incorrect', 'upi_app_timeout', 'insufficient_funds'])[1 + floor(u_reason * 4)::int]
              when method = 'card' then (array['card_declined', 'insufficient_funds', 'authentication_failed', 'expired_card'])[1 + floor(u_reason * 4)::int]
              else (array['emandate_registration_failed', 'bank_account_invalid', 'mandate_limit_exceeded'])[1 + floor(u_reason * 3)::int] end as reason
       from g join seed_catalog cat on cat.tier = g.tier and cat.freq = g.freq and cat.currency = g.currency`,
      [shape.subscriptions, spread, now],
    );
    // Movements per subscription: its base (1, or 2 when it ends not counted) plus a share of the rest by age, the
    // shares made exact by cumulative rounding (floor of running totals), so the total is exactly `movements`.
    const [totals] = await q<{ base: string; weight: string }>(
      `select sum(base_moves) as base, sum(weight) as weight from seed_subs`,
    );
    const extra = shape.movements - Number(totals.base);
    if (extra < 0)
      throw new Error(
        `seed: ${shape.movements} movements are fewer than the ${totals.base} the subscriptions need at least`,
      );
    await q(`alter table seed_subs add column m int`);
    await q(
      `update seed_subs s set m = x.m from (
         select i, base_moves + (floor(($1::bigint * cum) / $2::bigint) - floor(($1::bigint * (cum - weight)) / $2::bigint))::int as m
         from (select i, base_moves, weight, sum(weight) over (order by i) as cum from seed_subs) y
       ) x where x.i = s.i`,
      [extra, Math.max(1, Number(totals.weight))],
    );
    await q(`create index on seed_subs (i)`);
    await q(`analyze seed_subs`);
    step(`${shape.subscriptions} subscriptions decided`);

    // --- customers -------------------------------------------------------------------------------------------------
    const tag = Math.random().toString(36).slice(2, 8);
    await q(
      `create temp table seed_customers on commit drop as
       select g.ci, gen_random_uuid() as id,
         coalesce(f.first, date_trunc('milliseconds', $2::timestamptz - pg_temp.u(g.ci, 12) * interval '730 days')) as created_at
       from generate_series(0, $1::int - 1) g(ci)
       left join (select ci, min(t0) as first from seed_subs group by ci) f on f.ci = g.ci`,
      [shape.customers, now],
    );
    await q(`create unique index on seed_customers (ci)`);
    await q(
      `insert into customers (id, created_at, updated_at, merchant_id, mode, email, name)
       select id, created_at, created_at, $1, 'test', 'seed-' || $2::text || '-' || ci || '@example.com', 'Seed customer ' || ci from seed_customers order by ci`,
      [merchantId, tag],
    );
    step(`${shape.customers} customers`);

    // --- the ledger --------------------------------------------------------------------------------------------------
    // Step j of m of a moving subscription: 1 becomes counted; an intermediate pause may come at j with (m - j) even,
    // 2 <= j <= m - 2 (8%), and is resumed at j + 1; a subscription that ends not counted stops at j = m; every other
    // step changes its MRR. Levels: the MRR at step j is mrr + g(k) x unit, k = steps to its last counted step,
    // g(0) = 0 and g(k) = (7k mod 11) - 5: neighbouring steps never share a level, about 2 in 3 changes are expansions,
    // and the last counted level is the subscription's MRR now (its price normalised, docs/analytics.md).
    const pauseOk = (j: string) =>
      `(${j} >= 2 and ${j} <= s.m - 2 and (s.m - ${j}) % 2 = 0 and pg_temp.u(s.i, 100 + ${j}) < 0.08)`;
    const level = (j: string) =>
      `(s.mrr + case when (case when s.counted then s.m else s.m - 1 end) - ${j} <= 0 then 0
         else ((7 * ((case when s.counted then s.m else s.m - 1 end) - ${j})) % 11) - 5 end * greatest(1, s.mrr / 12))`;
    await q(
      `create temp table seed_steps on commit drop as
       select s.i, s.ci, s.id as subscription_id, s.currency, j,
         x.action, x.mrr_after, x.mrr_before, x.mrr_after - x.mrr_before as amount,
         case x.action when 'on' then 1 when 'off' then -1 else 0 end as sub_delta,
         case when x.action = 'on' and j = 1 then 'subscription.activated' when x.action = 'on' then 'subscription.resumed'
              when x.action = 'change' then 'subscription.plan_changed' when j = s.m then 'subscription.' || s.status else 'subscription.paused' end as cause,
         date_trunc('milliseconds', s.t0 + ($1::timestamptz - interval '1 hour' - s.t0)
           * ((j - 1) + case when j = 1 then 0 else 0.05 + 0.9 * pg_temp.u(s.i, 2000 + j) end) / s.m) as occurred_at
       from seed_subs s
       cross join lateral generate_series(1, s.m) j
       cross join lateral (
         select a.action,
           case when a.action = 'off' then 0 else ${level('j')} end as mrr_after,
           case when j = 1 or ${pauseOk('(j - 1)')} then 0 else ${level('(j - 1)')} end as mrr_before
         from (select case when j = 1 then 'on' when (j = s.m and not s.counted) or ${pauseOk('j')} then 'off'
                           when ${pauseOk('(j - 1)')} then 'on' else 'change' end as action) a
       ) x
       where s.category = 'moving'`,
      [now],
    );
    step(`ledger steps laid out`);

    // Kinds and customer deltas from the customer's history (one currency per customer): its counted subscriptions
    // before each movement (this one's own state excluded) and whether any of them was ever counted. The cohort
    // instant (customer_first_at: the customer's first +1) is the customer's first movement, the activation of its
    // earliest subscription: given here, in the window's own order, so the ledger's per-row trigger does not run.
    const movements = await db.query(
      `insert into mrr_movements (id, created_at, merchant_id, mode, subscription_id, customer_id, currency, kind, amount, mrr_before, mrr_after,
         subscription_delta, customer_delta, reporting_currency, fx_rate, cause, occurred_at, customer_first_at)
       select gen_random_uuid(), x.occurred_at, $1, 'test', x.subscription_id, c.id, x.currency,
         case when x.action = 'off' then 'churn'
              when x.action = 'change' then case when x.amount > 0 then 'expansion' else 'contraction' end
              when x.j > 1 then 'reactivation'
              when x.others = 0 and x.ever then 'reactivation'
              when x.others > 0 then 'expansion'
              else 'new' end,
         x.amount, x.mrr_before, x.mrr_after, x.sub_delta,
         case when x.action = 'on' and x.others = 0 then 1 when x.action = 'off' and x.others = 0 then -1 else 0 end,
         $2, case when x.currency = $2 then 1 end, x.cause, x.occurred_at, x.first_at
       from (
         select st.*,
           coalesce(sum(st.sub_delta) over w, 0) - case when st.action = 'off' then 1 else 0 end as others,
           coalesce(bool_or(st.sub_delta > 0) over w, false) as ever,
           first_value(st.occurred_at) over (partition by st.ci order by st.occurred_at, st.i, st.j) as first_at
         from seed_steps st
         window w as (partition by st.ci order by st.occurred_at, st.i, st.j rows between unbounded preceding and 1 preceding)
       ) x
       join seed_customers c on c.ci = x.ci
       order by x.occurred_at`,
      [merchantId, reporting],
    );
    step(`${movements.rowCount} MRR movements (and their daily rollup, by the table's trigger)`);

    // --- subscriptions (rows) ----------------------------------------------------------------------------------------
    // The period holding instant x of a subscription anchored at a: a first guess from the average cadence length,
    // corrected by the calendar arithmetic (UTC), as usage.rules.ts periodFor does.
    await q(`create function pg_temp.cadence(f text) returns interval language sql immutable as
      $$ select case f when 'monthly' then interval '1 month' when 'yearly' then interval '1 year' when 'weekly' then interval '1 week' else interval '1 day' end $$`);
    await q(`create function pg_temp.k(a timestamptz, f text, x timestamptz) returns int language sql stable as
      $$ select k0 - (a + k0 * pg_temp.cadence(f) > x)::int + (a + (k0 + 1) * pg_temp.cadence(f) <= x)::int
         from (select greatest(0, floor(extract(epoch from x - a)
           / case f when 'monthly' then 2629746 when 'yearly' then 31556952 when 'weekly' then 604800 else 86400 end))::int as k0) z $$`);
    const subs = await db.query(
      `insert into subscriptions (id, created_at, updated_at, merchant_id, mode, customer_id, product_id, plan_id, price_id, status, currency, amount,
         setup_fee, billing_frequency, billing_interval, trial_period_days, trial_end_action, provider, connection_id, provider_subscription_id,
         provider_customer_id, success_url, cancel_url, cancel_at_period_end, current_period_start, current_period_end, billing_anchor, anchor_cycle,
         trial_start, trial_end, cycles_completed, max_cycles, paused_at, cancelled_at, ended_at, metadata, retry_attempt, past_due_since, credit_balance)
       select s.id, s.t0, $2, $1, 'test', c.id, s.product_id, s.plan_id, s.price_id, s.status, s.currency, s.amount,
         0, s.freq, 1, case when s.category = 'trialing' then 14 else 0 end, 'start_subscription', 'stripe', $3, 'sub_seed_' || $4::text || '_' || s.i,
         'cus_seed_' || $4::text || '_' || s.ci, 'http://127.0.0.1:9/ok', 'http://127.0.0.1:9/cancel', false,
         case s.category when 'moving' then s.t0 + p.k * pg_temp.cadence(s.freq) when 'trialing' then s.t0 end,
         case s.category when 'moving' then s.t0 + (p.k + 1) * pg_temp.cadence(s.freq) when 'trialing' then s.t0 + interval '14 days' end,
         case s.category when 'moving' then s.t0 when 'trialing' then s.t0 + interval '14 days' end, 0,
         case when s.category = 'trialing' then s.t0 end, case when s.category = 'trialing' then s.t0 + interval '14 days' end,
         case when s.category = 'moving' then p.k + 1 else 0 end,
         case when s.status = 'completed' then p.k + 1 end,
         case when s.status = 'paused' then l.occurred_at end,
         case when s.category = 'failed' then s.t0 + interval '5 minutes' when s.status = 'cancelled' then l.occurred_at end,
         case when s.category = 'failed' then s.t0 + interval '5 minutes' when s.status in ('cancelled', 'completed') then l.occurred_at end,
         '{}', case when s.status = 'past_due' then 1 else 0 end,
         case when s.status = 'past_due' then greatest(s.t0 + p.k * pg_temp.cadence(s.freq), $2::timestamptz - interval '3 days') end, 0
       from seed_subs s
       join seed_customers c on c.ci = s.ci
       left join seed_steps l on l.i = s.i and l.j = s.m
       cross join lateral (select case when s.category = 'moving' then pg_temp.k(s.t0, s.freq, case when s.counted then $2::timestamptz else l.occurred_at end) end as k) p
       order by s.i`,
      [merchantId, now, merchant.connection_id, tag],
    );
    step(`${subs.rowCount} subscriptions`);

    const attempts = await db.query(
      `insert into mandate_attempts (id, created_at, merchant_id, mode, subscription_id, customer_id, provider, method, bank, status, failure_reason,
         gateway_event_id, occurred_at)
       select gen_random_uuid(), a.at, $1, 'test', s.id, c.id, 'stripe', s.method, s.bank,
         case when s.category = 'failed' then 'failed' else 'authorized' end, case when s.category = 'failed' then s.reason end,
         'evt_seed_' || $2::text || '_' || s.i, a.at
       from seed_subs s join seed_customers c on c.ci = s.ci
       cross join lateral (select case when s.category = 'failed' then s.t0 + interval '5 minutes' else s.t0 end as at) a
       order by a.at`,
      [merchantId, tag],
    );
    step(`${attempts.rowCount} mandate attempts`);

    // --- usage ---------------------------------------------------------------------------------------------------------
    await q(
      `create temp table seed_usage on commit drop as
       select (row_number() over (order by s.i) - 1)::int as n, s.i, s.id, s.t0 as anchor, pg_temp.k(s.t0, 'monthly', $1::timestamptz) as k_now
       from seed_subs s
       where s.status = 'active' and s.freq = 'monthly' and s.currency = 'INR' and s.t0 <= $1::timestamptz - interval '3 months'
       order by s.i limit $2`,
      [now, shape.usageSubscriptions],
    );
    const [{ n: usageSubs }] = await q<{ n: number }>(`select count(*)::int as n from seed_usage`);
    if (usageSubs < 2)
      throw new Error(`seed: only ${usageSubs} active monthly INR subscriptions older than 3 months for usage`);
    const hotEvents = Math.round(shape.usageEvents * shape.hotShare);
    const rest = shape.usageEvents - hotEvents;
    await q(`alter table seed_usage add column events int, add column periods int`);
    await q(
      `update seed_usage set
         events = case when n = 0 then $1::bigint else ($2::bigint * n) / ($3::int - 1) - ($2::bigint * (n - 1)) / ($3::int - 1) end,
         periods = case when n = 0 then k_now + 1 else 3 end`,
      [hotEvents, rest, usageSubs],
    );
    const usageEvents = await db.query(
      `insert into usage_events (id, "timestamp", merchant_id, mode, subscription_id, period_start, period_end, created_at, event_type, unit, quantity,
         metadata, idempotency_key)
       select gen_random_uuid(), c.ts, $1, 'test', su.id, b.ps, b.pe, c.ts, t.event_type, t.unit, t.qty, '{}', 'seed-' || $3::text || '-' || su.n || '-' || e
       from seed_usage su
       cross join lateral generate_series(1, su.events) e
       cross join lateral (select su.k_now - (e % su.periods) as p, (e / su.periods) % 3 as ti, pg_temp.u(su.n::bigint * 10000000 + e, 50) as r) a
       cross join lateral (select su.anchor + a.p * interval '1 month' as ps, su.anchor + (a.p + 1) * interval '1 month' as pe) b
       cross join lateral (select date_trunc('milliseconds', b.ps + (least(b.pe, $2::timestamptz) - b.ps) * pg_temp.u(su.n::bigint * 10000000 + e, 51)) as ts) c
       cross join lateral (
         select (array['api_calls', 'storage', 'sms'])[a.ti + 1] as event_type, (array['calls', 'GB-hours', 'messages'])[a.ti + 1] as unit,
           case a.ti when 0 then (1 + floor(a.r * 100))::numeric when 1 then round((a.r * 10)::numeric, 3) else (1 + floor(a.r * 5))::numeric end as qty
       ) t`,
      [merchantId, now, tag],
    );
    // Every event carries its idempotency key, as the bench's own do (and Lago's transaction_id): the key table is as
    // big as the events, which is what ingestion's key look-ups meet in production.
    await q(
      `insert into usage_event_keys (merchant_id, mode, key, event_id, "timestamp", created_at)
       select merchant_id, mode, idempotency_key, id, "timestamp", created_at from usage_events
       where merchant_id = $1 and mode = 'test' and idempotency_key like 'seed-' || $2::text || '-%'`,
      [merchantId, tag],
    );
    step(
      `${usageEvents.rowCount} usage events over ${usageSubs} subscriptions (${hotEvents} on the hot one), each with its idempotency key`,
    );
    // The sums the service keeps in the event's statement, spread over its 8 slots (each event in one).
    const aggregates = await db.query(
      `insert into usage_aggregates (subscription_id, period_start, event_type, slot, merchant_id, mode, period_end, unit, total_quantity, event_count)
       select subscription_id, period_start, event_type, (hashtext(id::text) & 7)::smallint, $1, 'test', max(period_end), min(unit), sum(quantity), count(*)
       from usage_events where merchant_id = $1 and mode = 'test' and subscription_id in (select id from seed_usage)
       group by 1, 2, 3, 4`,
      [merchantId],
    );
    await q(
      `insert into usage_units (subscription_id, event_type, merchant_id, mode, unit)
       select distinct subscription_id, event_type, $1::uuid, 'test', unit from usage_aggregates
       where merchant_id = $1 and mode = 'test' and subscription_id in (select id from seed_usage)`,
      [merchantId],
    );
    step(`${aggregates.rowCount} usage aggregate rows and the units`);

    const usageIds = (await q<{ id: string }>(`select id from seed_usage order by n`)).map((r) => r.id);
    const ingestIds = (
      await q<{ id: string }>(
        `select s.id from subscriptions s join seed_subs ss on ss.id = s.id
         where s.merchant_id = $1 and s.mode = 'test' and ss.status = 'active' and s.current_period_end > $2::timestamptz + interval '1 day'
           and s.id not in (select id from seed_usage)
         order by ss.i limit $3`,
        [merchantId, now, shape.ingestSubscriptions],
      )
    ).map((r) => r.id);
    await q('commit');
    step('commit');

    // As autovacuum would have by the time a merchant has this history: statistics and the visibility map (index-only
    // scans). VACUUM marks a page all-visible only if no transaction still running began before the seed's commit; in the
    // whole bench the service is busy for other merchants meanwhile and one sometimes has, and then cohorts' index-only
    // scans fetch every row from the heap (5 times slower, measured). So the map is checked, and a table vacuumed again.
    const tables = [
      'customers',
      'subscriptions',
      'mrr_movements',
      'mrr_movement_days',
      'mandate_attempts',
      'usage_events',
      'usage_event_keys',
      'usage_aggregates',
      'usage_units',
    ];
    const again = new Set<string>();
    for (const t of tables) {
      const [{ exists }] = await q<{ exists: boolean }>(`select to_regclass($1) is not null as exists`, [t]);
      if (!exists) continue;
      await q(`vacuum (analyze) "${t}"`);
      for (let attempt = 1; attempt <= VACUUM_ATTEMPTS; attempt++) {
        const [{ pages, visible }] = await q<{ pages: string; visible: string }>(
          `select coalesce(sum(c.relpages), 0) as pages, coalesce(sum(c.relallvisible), 0) as visible from pg_class c
            where c.oid = $1::regclass or c.oid in (select inhrelid from pg_inherits where inhparent = $1::regclass)`,
          [t],
        );
        if (Number(visible) >= ALL_VISIBLE_SHARE * Number(pages)) break;
        if (attempt === VACUUM_ATTEMPTS) {
          // Figures from here on pay heap fetches: say so rather than fail a seed already committed.
          log(
            `seed: WARNING ${t}: ${visible} of ${pages} pages all-visible after ${attempt} vacuums (a long transaction on the database?)`,
          );
          break;
        }
        again.add(t);
        await new Promise((r) => setTimeout(r, 200));
        await q(`vacuum "${t}"`);
      }
    }
    step(again.size ? `vacuum analyze (again: ${[...again].join(', ')})` : 'vacuum analyze');

    // The ledger as seeded must be the ledger's semantics, or every figure after it is meaningless.
    const seeded = `provider_subscription_id like 'sub_seed_' || $2::text || '_%'`;
    const [check] = await q<{ bad_subs: number; bad_customers: number; counted: number }>(
      `with m as (
         select subscription_id, sum(amount) as amount, sum(subscription_delta) as subs
         from mrr_movements where merchant_id = $1 and mode = 'test' group by 1
       ),
       s as (
         select s.id, s.customer_id, s.currency, s.status in ('active', 'past_due') as counted,
           (case s.billing_frequency when 'monthly' then s.amount::numeric when 'yearly' then round(s.amount::numeric / 12)
              else round(s.amount::numeric * 52 / 12) end)::bigint as mrr
         from subscriptions s where s.merchant_id = $1 and s.mode = 'test' and ${seeded}
       ),
       c as (
         select customer_id, currency, sum(customer_delta) as d, count(*) filter (where kind = 'new') as news,
           min(occurred_at) filter (where customer_delta = 1) as first_at, min(customer_first_at) as lo, max(customer_first_at) as hi
         from mrr_movements where merchant_id = $1 and mode = 'test' and customer_id in (select customer_id from s) group by 1, 2
       ),
       k as (select customer_id, currency, bool_or(counted) as counted from s group by 1, 2)
       select
         (select count(*)::int from s left join m on m.subscription_id = s.id
           where coalesce(m.amount, 0) <> case when s.counted then s.mrr else 0 end or coalesce(m.subs, 0) <> s.counted::int) as bad_subs,
         (select count(*)::int from c left join k using (customer_id, currency) where c.d <> coalesce(k.counted, false)::int or c.news <> 1
           or c.lo is distinct from c.first_at or c.hi is distinct from c.first_at) as bad_customers,
         (select count(*)::int from s where counted) as counted`,
      [merchantId, tag],
    );
    if (check.bad_subs || check.bad_customers) {
      throw new Error(
        `seed: the ledger is inconsistent: ${check.bad_subs} subscriptions whose movements do not add up to their MRR, ${check.bad_customers} customers whose deltas, new movements or cohort instants are wrong`,
      );
    }
    step(
      'ledger checked (every subscription sums to its MRR, every customer to its paying state, one new each, its cohort instant on every row)',
    );

    const [counts] = await q<Record<string, number>>(
      `select
         (select count(*)::int from subscriptions where merchant_id = $1 and mode = 'test' and ${seeded}) as subscriptions,
         (select count(*)::int from subscriptions where merchant_id = $1 and mode = 'test' and ${seeded} and status in ('active', 'past_due')) as counted,
         (select count(*)::int from mrr_movements where merchant_id = $1 and mode = 'test') as movements,
         (select count(*)::int from mandate_attempts where merchant_id = $1 and mode = 'test') as attempts,
         (select count(*)::int from usage_events where merchant_id = $1 and mode = 'test') as usage_events`,
      [merchantId, tag],
    );
    const statuses = await q<{ status: string; n: number }>(
      `select status, count(*)::int as n from subscriptions where merchant_id = $1 and mode = 'test' and ${seeded} group by 1 order by 2 desc`,
      [merchantId, tag],
    );
    for (const s of statuses) counts[`status ${s.status}`] = s.n;
    const kinds = await q<{ kind: string; n: number }>(
      `select kind, count(*)::int as n from mrr_movements where merchant_id = $1 and mode = 'test' group by 1 order by 2 desc`,
      [merchantId],
    );
    for (const k of kinds) counts[`movements ${k.kind}`] = k.n;
    counts.customers = shape.customers;
    return {
      merchantId,
      now,
      reportingCurrency: reporting,
      hotSubscriptionId: usageIds[0],
      usageSubscriptionIds: usageIds,
      ingestSubscriptionIds: ingestIds,
      counts,
      timings,
      totalSeconds: (Date.now() - t0) / 1000,
    };
  } catch (err) {
    await db.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    await db.end().catch(() => undefined);
  }
}

/** `npm run seed:analytics -- <database url> <merchant id> [--customers N] ...` */
async function cli(): Promise<void> {
  const args = process.argv.slice(2);
  const positional: string[] = [];
  const shape: AnalyticsShape = { ...DEFAULT_SHAPE };
  const flags: Record<string, keyof AnalyticsShape> = {
    '--customers': 'customers',
    '--subscriptions': 'subscriptions',
    '--movements': 'movements',
    '--usage-events': 'usageEvents',
    '--usage-subscriptions': 'usageSubscriptions',
    '--hot-share': 'hotShare',
  };
  for (let i = 0; i < args.length; i++) {
    const flag = flags[args[i]];
    if (flag) {
      const n = Number(args[++i]);
      if (!Number.isFinite(n) || n < 0) throw new Error(`${args[i - 1]} needs a number`);
      shape[flag] = n;
    } else if (args[i].startsWith('--')) {
      throw new Error(`unknown option ${args[i]} (known: ${Object.keys(flags).join(', ')})`);
    } else positional.push(args[i]);
  }
  if (positional.length !== 2) {
    throw new Error(
      'usage: npm run seed:analytics -- <database url> <merchant id> [--customers N] [--subscriptions N] [--movements N] [--usage-events N] [--usage-subscriptions N] [--hot-share 0.2]',
    );
  }
  const [databaseUrl, merchantId] = positional;
  const out = await seedAnalytics(databaseUrl, merchantId, shape, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(
    `${JSON.stringify(
      {
        merchant_id: out.merchantId,
        now: out.now,
        seconds: Number(out.totalSeconds.toFixed(1)),
        counts: out.counts,
        hot_subscription_id: out.hotSubscriptionId,
        usage_subscriptions: out.usageSubscriptionIds.length,
      },
      null,
      2,
    )}\n`,
  );
}

if (require.main === module) {
  cli().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`seed:analytics: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
