import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { normaliseCurrency } from '../../core/currency';
import type { Mode } from '../../core/entity';
import { invalid } from '../../core/errors';
import { currentMerchant } from '../merchants';
import { services } from '../../services';

/**
 * The arguments every analytics answer shares (docs/analytics.md), parsed and validated in one place for every
 * analytics endpoint (MRR, churn, LTV, quick ratio, cohorts, autopay): `currency`, `from`, `to` and the bucket size.
 *
 * Decisions:
 * - `currency`: a known ISO 4217 code in any case (answered upper case); default the merchant's reporting currency.
 *   Amounts are never converted (docs/analytics.md): an answer covers the subscriptions billed in that currency.
 * - `from` / `to`: ISO 8601, either a date (`2026-01-31`, midnight UTC) or a date-time with `Z` or an offset
 *   (`2026-01-31T12:00:00Z`); a date-time without a zone is refused as ambiguous. `to` defaults to the merchant's now
 *   (the test clock in test mode, docs/sandbox.md), `from` to `to` less 30 days. `from` must be before
 *   `to`, and the window at most MAX_WINDOW_DAYS long. A window is half-open, (from, to]: what happened at `from`
 *   is part of the state at its start.
 * - Buckets (`interval`, or `granularity` for cohorts): `month` (calendar months, from the 1st 00:00 UTC) or `week`
 *   (from Monday 00:00 UTC); default month.
 * Bad values answer 400 `parameter_invalid` naming the parameter.
 */

export enum AnalyticsInterval {
  MONTH = 'month',
  WEEK = 'week',
}

/** The longest window an analytics answer covers (three years, a leap day included). */
export const MAX_WINDOW_DAYS = 1096;
/** The window when `from` is not given: this many days before `to`. */
export const DEFAULT_WINDOW_DAYS = 30;

const DAY_MS = 86_400_000;

export interface AnalyticsWindowArgs {
  currency?: string | null;
  from?: string | Date | null;
  to?: string | Date | null;
  interval?: AnalyticsInterval | string | null;
}

export interface AnalyticsWindow {
  merchantId: string;
  mode: Mode;
  /** Upper-case ISO 4217 code. */
  currency: string;
  from: Date;
  to: Date;
  interval: AnalyticsInterval;
}

export interface WindowOptions {
  /** The parameter the bucket size arrives in (`interval`; cohorts call it `granularity`). */
  intervalParam?: string;
  /** The window's length when `from` is omitted (days before `to`). */
  defaultDays?: number;
  /** The longest window allowed (days). */
  maxDays?: number;
}

/** Validates the shared analytics arguments of the request's merchant and mode; 400 parameter_invalid on a bad one. */
export async function analyticsWindow(
  ctx: Ctx,
  args: AnalyticsWindowArgs,
  opts: WindowOptions = {},
): Promise<AnalyticsWindow> {
  const { merchantId, mode } = tenantOf(ctx);
  const intervalParam = opts.intervalParam ?? 'interval';
  const interval = parseInterval(args.interval, intervalParam);
  const currency = await analyticsCurrency(ctx, args.currency);
  let to = parseInstant(args.to, 'to');
  const from = parseInstant(args.from, 'from');
  if (!to) to = await merchantNow(ctx);
  const start = from ?? new Date(to.getTime() - (opts.defaultDays ?? DEFAULT_WINDOW_DAYS) * DAY_MS);
  if (start.getTime() >= to.getTime()) {
    throw invalid(from ? 'from' : 'to', `from (${start.toISOString()}) must be before to (${to.toISOString()}).`);
  }
  const maxDays = opts.maxDays ?? MAX_WINDOW_DAYS;
  if (to.getTime() - start.getTime() > maxDays * DAY_MS) {
    throw invalid(
      'from',
      `The window from ${start.toISOString()} to ${to.toISOString()} is longer than ${maxDays} days.`,
    );
  }
  return { merchantId, mode, currency, from: start, to, interval };
}

/** `currency` validated (upper case), or the merchant's reporting currency when omitted. */
export async function analyticsCurrency(ctx: Ctx, raw: string | null | undefined): Promise<string> {
  if (raw != null) {
    if (raw.length > 16) throw invalid('currency', 'Invalid currency: use a 3-letter ISO 4217 code.');
    return normaliseCurrency(raw, 'currency');
  }
  return (await currentMerchant(ctx)).reportingCurrency;
}

/** The merchant's now: the test clock in test mode (docs/sandbox.md). */
export function merchantNow(ctx: Ctx): Promise<Date> {
  const { merchantId, mode } = tenantOf(ctx);
  return services(ctx).clock.now(merchantId, mode);
}

function parseInterval(raw: AnalyticsInterval | string | null | undefined, param: string): AnalyticsInterval {
  if (raw == null) return AnalyticsInterval.MONTH;
  const v = String(raw).toLowerCase();
  if (v === AnalyticsInterval.MONTH || v === AnalyticsInterval.WEEK) return v as AnalyticsInterval;
  throw invalid(param, `Invalid value for ${param}: expected one of month, week`);
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2}))?$/i;

/**
 * An ISO 8601 date (midnight UTC) or date-time with a zone, checked field by field (2026-02-30 is refused, not rolled
 * over into March); null when absent.
 */
export function parseInstant(raw: string | Date | null | undefined, param: string): Date | null {
  if (raw == null) return null;
  if (raw instanceof Date) {
    if (Number.isNaN(raw.getTime())) throw invalid(param, `Invalid ${param}: not a valid date-time.`);
    return raw;
  }
  const bad = () =>
    invalid(
      param,
      `Invalid ${param}: '${String(raw).slice(0, 64)}'. Use an ISO 8601 date or date-time, e.g. 2026-01-31 or 2026-01-31T12:00:00Z.`,
    );
  const m = typeof raw === 'string' && raw.length <= 40 ? ISO.exec(raw) : null;
  if (!m) throw bad();
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = m;
  const [Y, MO, D, H, MI, S] = [y, mo, d, h, mi, s].map(Number);
  if (Y < 1970 || MO < 1 || MO > 12 || D < 1 || H > 23 || MI > 59 || S > 59) throw bad();
  const ms = Number((frac + '000').slice(0, 3));
  const local = Date.UTC(Y, MO - 1, D, H, MI, S, ms);
  const check = new Date(local);
  if (check.getUTCFullYear() !== Y || check.getUTCMonth() !== MO - 1 || check.getUTCDate() !== D) throw bad();
  let offsetMin = 0;
  if (zone.toUpperCase() !== 'Z') {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const zh = Number(z[2]);
    const zm = Number(z[3]);
    if (zh > 23 || zm > 59) throw bad();
    offsetMin = (z[1] === '-' ? -1 : 1) * (zh * 60 + zm);
  }
  return new Date(local - offsetMin * 60_000);
}
