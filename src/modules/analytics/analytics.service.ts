import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import type { Queryable } from '../../core/sql';
import { divRound } from '../../money';
import { BucketRow, type ReportDb, windowBuckets } from './analytics.store';
import {
  ChurnAnalytics,
  ChurnSeriesPoint,
  LtvAnalytics,
  MrrAnalytics,
  MrrMovements,
  MrrSeriesPoint,
  QuickRatioAnalytics,
  QuickRatioSeriesPoint,
} from './analytics.types';
import { AnalyticsWindow, analyticsWindow, AnalyticsWindowArgs } from './analytics.window';
import { autopay } from './autopay.service';
import type { PreDebitCountsSql, SubscriptionInCurrencySql } from './autopay.store';
import type { AutopayReport } from './autopay.types';
import { cohorts, type CohortsArgs } from './cohorts.service';
import type { CohortAnalytics } from './cohorts.types';

/**
 * MRR, churn, LTV and quick ratio (docs/analytics.md), each one SQL aggregation over the MRR
 * movements ledger (analytics.store.ts) and arithmetic on its few rows here. Amounts are subunits of the asked
 * currency; rates are fractions.
 *
 * Decisions:
 * - Windows are (from, to]; the state "at the start" is the state at `from`, the state "at" an instant includes the
 *   movements at that instant. Series buckets are clipped to the window, so their sums are the window's totals and
 *   the last bucket's MRR is the MRR at `to`.
 * - A rate whose denominator is 0 is 0 when its numerator is 0 too (nothing there, nothing lost) and null otherwise
 *   (something was lost from nothing: undefined). The quick ratio is null when nothing was lost (docs/analytics.md); it
 *   is `healthy` when it is above 4 (gains > 4 x losses); a null ratio is never healthy (no losses: nothing to judge).
 * - ARPU = MRR / paying customers rounded half away from zero (0 with no paying customer); LTV is computed exactly
 *   from MRR, paying customers and the churn counts, rounded once (half away from zero).
 * - LTV takes the same `currency`, `from` and `to` as every analytics answer: `to` (default the merchant's now) ends
 *   the churn window and is the instant ARPU is read at; `from` starts it (default `to` less 90 days, the API's
 *   window). The window's logo churn is scaled to 30 days by its exact length: x 30 days / (to - from), which is
 *   x 30 / 90 for the default window.
 */

const LTV_WINDOW_DAYS = 90;
const DAY_MS = 86_400_000;
/** The month churn is scaled to (docs/analytics.md: 30 days). */
const MONTH_MS = 30 * DAY_MS;

/** a / b as a fraction: 0 for 0/0, null for x/0. */
function rate(a: number, b: number): number | null {
  if (b === 0) return a === 0 ? 0 : null;
  return a / b;
}

/** round(a / b) half away from zero, exactly (b > 0). */
function roundDiv(a: number, b: number): number {
  return Number(divRound(BigInt(a), BigInt(b)));
}

interface Totals {
  newMrr: number;
  expansionMrr: number;
  reactivationMrr: number;
  /** Positive: MRR lost. */
  contractionMrr: number;
  /** Positive: MRR lost. */
  churnMrr: number;
  churned: number;
}

function totalsOf(rows: BucketRow[]): Totals {
  const t: Totals = { newMrr: 0, expansionMrr: 0, reactivationMrr: 0, contractionMrr: 0, churnMrr: 0, churned: 0 };
  for (const r of rows) {
    t.newMrr += r.newMrr;
    t.expansionMrr += r.expansionMrr;
    t.reactivationMrr += r.reactivationMrr;
    t.contractionMrr += lost(r.contractionMrr);
    t.churnMrr += lost(r.churnMrr);
    t.churned += r.churned;
  }
  return t;
}

/** A ledger sum of losses (negative) as the positive amount lost (never -0). */
const lost = (signed: number) => 0 - signed;

/**
 * The quick ratio, null when nothing was lost (docs/analytics.md); healthy only when there is a ratio and it is above
 * 4.
 */
function quick(gains: number, losses: number): { quickRatio: number | null; healthy: boolean } {
  if (losses === 0) return { quickRatio: null, healthy: false };
  return { quickRatio: gains / losses, healthy: gains > 4 * losses };
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

export class AnalyticsService {
  /**
   * `inCurrency`: the subscriptions module's SQL piece that tells an attempt's subscription's currency (autopay's
   * `currency`), and its count of pre-debit notices, given by the composition root (analytics may not import
   * subscriptions). `replica`: the read replica's pool (DATABASE_READ_URL, src/core/read-pool.ts), or null.
   */
  constructor(
    private readonly inCurrency: SubscriptionInCurrencySql,
    private readonly preDebitSql: PreDebitCountsSql,
    private readonly replica: Queryable | null = null,
  ) {}

  /**
   * Where the request's reports read: the read replica when there is one (its figures lag the primary by the
   * replication delay), else the request's EntityManager. Only the report statements: the arguments' checks (the
   * merchant's reporting currency, its clock) read the primary, as every request's authentication does.
   */
  private reports(ctx: Ctx): ReportDb {
    return this.replica ? { replica: this.replica, tenant: tenantOf(ctx) } : ctx.em;
  }

  /** GET /analytics/autopay (autopay.service.ts). */
  autopay(
    ctx: Ctx,
    args: { currency?: string | null; from?: string | null; to?: string | null },
  ): Promise<AutopayReport> {
    return autopay(ctx, this.reports(ctx), args, this.inCurrency, this.preDebitSql);
  }

  /** GET /analytics/cohorts (cohorts.service.ts). */
  cohorts(ctx: Ctx, args: CohortsArgs): Promise<CohortAnalytics> {
    return cohorts(ctx, this.reports(ctx), args);
  }

  private async buckets(ctx: Ctx, w: AnalyticsWindow): Promise<BucketRow[]> {
    return windowBuckets(this.reports(ctx), { currency: w.currency, from: w.from, to: w.to, unit: w.interval });
  }

  async mrr(ctx: Ctx, args: AnalyticsWindowArgs): Promise<MrrAnalytics> {
    const w = await analyticsWindow(ctx, args);
    const rows = await this.buckets(ctx, w);
    const last = rows[rows.length - 1];
    const t = totalsOf(rows);
    const movements = Object.assign(new MrrMovements(), {
      new: t.newMrr,
      expansion: t.expansionMrr,
      contraction: t.contractionMrr,
      churn: t.churnMrr,
      reactivation: t.reactivationMrr,
      netNew: t.newMrr + t.expansionMrr + t.reactivationMrr - t.contractionMrr - t.churnMrr,
    });
    const series = rows.map((r) =>
      Object.assign(new MrrSeriesPoint(), {
        periodStart: r.periodStart,
        periodEnd: r.periodEnd,
        mrr: r.mrrEnd,
        new: r.newMrr,
        expansion: r.expansionMrr,
        contraction: lost(r.contractionMrr),
        churn: lost(r.churnMrr),
        reactivation: r.reactivationMrr,
      }),
    );
    return Object.assign(new MrrAnalytics(), {
      currency: w.currency,
      from: w.from,
      asOf: w.to,
      interval: w.interval,
      mrr: last.mrrEnd,
      arr: 12 * last.mrrEnd,
      activeSubscriptions: last.subscriptionsEnd,
      payingCustomers: last.customersEnd,
      arpu: last.customersEnd > 0 ? roundDiv(last.mrrEnd, last.customersEnd) : 0,
      movements,
      series,
    });
  }

  async churn(ctx: Ctx, args: AnalyticsWindowArgs): Promise<ChurnAnalytics> {
    const w = await analyticsWindow(ctx, args);
    const rows = await this.buckets(ctx, w);
    const t = totalsOf(rows);
    const first = rows[0];
    const figures = (
      subsAtStart: number,
      churned: number,
      mrrAtStart: number,
      churnedMrr: number,
      contractionMrr: number,
    ) => ({
      subscriptionsAtStart: subsAtStart,
      churnedSubscriptions: churned,
      logoChurnRate: rate(churned, subsAtStart),
      mrrAtStart,
      churnedMrr,
      contractionMrr,
      revenueChurnRate: rate(churnedMrr + contractionMrr, mrrAtStart),
    });
    return Object.assign(new ChurnAnalytics(), {
      currency: w.currency,
      from: w.from,
      to: w.to,
      interval: w.interval,
      ...figures(first.subscriptionsStart, t.churned, first.mrrStart, t.churnMrr, t.contractionMrr),
      series: rows.map((r) =>
        Object.assign(new ChurnSeriesPoint(), {
          periodStart: r.periodStart,
          periodEnd: r.periodEnd,
          ...figures(r.subscriptionsStart, r.churned, r.mrrStart, lost(r.churnMrr), lost(r.contractionMrr)),
        }),
      ),
    });
  }

  /** LTV over the churn window (from, to], default the 90 days ending at the merchant's now (docs/analytics.md). */
  async ltv(ctx: Ctx, args: Omit<AnalyticsWindowArgs, 'interval'>): Promise<LtvAnalytics> {
    const w = await analyticsWindow(
      ctx,
      { currency: args.currency, from: args.from, to: args.to },
      { defaultDays: LTV_WINDOW_DAYS },
    );
    const [r] = await windowBuckets(this.reports(ctx), {
      currency: w.currency,
      from: w.from,
      to: w.to,
      unit: 'window',
    });
    const mrr = r.mrrEnd;
    const customers = r.customersEnd;
    const base = r.subscriptionsStart;
    const churned = r.churned;
    // The window's length against 30 days, as a reduced fraction (1 / 3 for the default 90 days): exact integers.
    const windowMs = w.to.getTime() - w.from.getTime();
    const g = gcd(MONTH_MS, windowMs);
    const [month, window] = [MONTH_MS / g, windowMs / g];
    // monthly rate = (churned / base) x 30 days / window; null when undefined (churn from nothing), 0 when nothing churned.
    const monthly = rate(churned * month, base * window);
    const churns = monthly !== null && monthly > 0;
    return Object.assign(new LtvAnalytics(), {
      currency: w.currency,
      from: w.from,
      to: w.to,
      asOf: w.to,
      arpu: customers > 0 ? roundDiv(mrr, customers) : 0,
      monthlyLogoChurnRate: monthly,
      // ARPU / monthly rate = (mrr / customers) x (base x window) / (churned x month), one exact division.
      ltv: !churns
        ? null
        : customers > 0
          ? Number(
              divRound(
                BigInt(mrr) * BigInt(base) * BigInt(window),
                BigInt(customers) * BigInt(churned) * BigInt(month),
              ),
            )
          : 0,
      expectedLifetimeMonths: churns ? (base * window) / (churned * month) : null,
    });
  }

  async quickRatio(ctx: Ctx, args: AnalyticsWindowArgs): Promise<QuickRatioAnalytics> {
    const w = await analyticsWindow(ctx, args);
    const rows = await this.buckets(ctx, w);
    const t = totalsOf(rows);
    return Object.assign(new QuickRatioAnalytics(), {
      currency: w.currency,
      from: w.from,
      to: w.to,
      interval: w.interval,
      newMrr: t.newMrr,
      expansionMrr: t.expansionMrr,
      contractionMrr: t.contractionMrr,
      churnMrr: t.churnMrr,
      ...quick(t.newMrr + t.expansionMrr, t.contractionMrr + t.churnMrr),
      series: rows.map((r) =>
        Object.assign(new QuickRatioSeriesPoint(), {
          periodStart: r.periodStart,
          periodEnd: r.periodEnd,
          newMrr: r.newMrr,
          expansionMrr: r.expansionMrr,
          contractionMrr: lost(r.contractionMrr),
          churnMrr: lost(r.churnMrr),
          ...quick(r.newMrr + r.expansionMrr, lost(r.contractionMrr) + lost(r.churnMrr)),
        }),
      ),
    });
  }
}
