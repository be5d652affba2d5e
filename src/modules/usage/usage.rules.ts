import { validate as isUuid } from 'uuid';
import { DomainError, invalid, notFound } from '../../core/errors';
import { validateMetadata } from '../../core/validate';
import { Frequency, period } from '../../core/billing-period';
import {
  EVENT_TYPE,
  MAX_EVENT_TYPE,
  MAX_FRACTION_DIGITS,
  MAX_KEY,
  MAX_QUANTITY,
  MAX_UNIT,
  ReportUsageInput,
} from './usage.inputs';

/**
 * The rules of a usage event that need no database: field checks, the exact decimal of a quantity, and which billing
 * period of a subscription holds an instant.
 */

/** Statuses a subscription takes usage in (docs/usage.md); any other answers 409 subscription_not_billable. */
export const BILLABLE = ['active', 'trialing', 'past_due', 'paused'] as const;
export const isBillable = (status: string) => (BILLABLE as readonly string[]).includes(status);

/** How far ahead of the merchant's clock an event's timestamp may be. */
export const MAX_FUTURE_MS = 5 * 60_000;

/**
 * The quantity as the decimal PostgreSQL stores: JavaScript's shortest round-trip form of the number (`String(0.1)` is
 * "0.1"), so the sum of ten 0.1 events is exactly 1. Never added up in JavaScript.
 */
export function quantityDecimal(q: number, param: string): string {
  if (typeof q !== 'number' || !Number.isFinite(q)) throw invalid(param, `${param} must be a finite number.`);
  if (q < 0) throw invalid(param, `${param} must be at least 0.`);
  if (q > MAX_QUANTITY) throw invalid(param, `${param} must be at most ${MAX_QUANTITY} (1e15).`);
  const text = String(q === 0 ? 0 : q); // -0 is 0
  if (fractionDigits(text) > MAX_FRACTION_DIGITS) {
    throw invalid(param, `${param} may have at most ${MAX_FRACTION_DIGITS} decimal places.`);
  }
  return text;
}

/** Digits after the point of a number's shortest form: "1.25" -> 2, "1.5e-10" -> 11, "7" -> 0. */
export function fractionDigits(text: string): number {
  const e = text.indexOf('e');
  const mantissaLength = e < 0 ? text.length : e;
  const dot = text.indexOf('.');
  const frac = dot < 0 || dot > mantissaLength ? 0 : mantissaLength - dot - 1;
  return Math.max(0, frac - (e < 0 ? 0 : Number(text.slice(e + 1))));
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** A UTF-16 surrogate without its pair: PostgreSQL's jsonb refuses it, text columns would store U+FFFD instead. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** An event whose fields passed the checks that need no database. */
export interface EventDraft {
  subscriptionId: string;
  eventType: string;
  unit: string;
  /** Decimal text. */
  quantity: string;
  metadata: Record<string, string>;
  /** Null: the merchant's now (the single-event statement reads it). */
  timestamp: Date | null;
  key: string | null;
}

/**
 * Checks one event's fields; `prefix` names them inside a batch (`events[3].`). An id that is not a UUID names no
 * subscription: 404, as an unknown one.
 */
export function checkEvent(input: ReportUsageInput, prefix = ''): EventDraft {
  const p = (field: string) => `${prefix}${field}`;
  if (typeof input.subscriptionId !== 'string' || !isUuid(input.subscriptionId)) {
    throw notFound('subscription', String(input.subscriptionId), p('subscription_id'));
  }
  if (!EVENT_TYPE.test(input.eventType)) {
    throw invalid(
      p('event_type'),
      `${p('event_type')} must be 1 to ${MAX_EVENT_TYPE} characters: letters, digits, "_", ".", ":" or "-".`,
    );
  }
  const quantity = quantityDecimal(input.quantity, p('quantity'));
  const unit = input.unit;
  if (unit.length > MAX_UNIT || !unit.trim() || CONTROL.test(unit) || LONE_SURROGATE.test(unit)) {
    throw invalid(
      p('unit'),
      `${p('unit')} must be 1 to ${MAX_UNIT} characters, not blank, without control characters.`,
    );
  }
  const metadata = validateMetadata(input.metadata, p('metadata'));
  for (const k in metadata) {
    if (LONE_SURROGATE.test(k) || LONE_SURROGATE.test(metadata[k]))
      throw invalid(p('metadata'), `${p('metadata')} holds a string that is not valid Unicode (a lone surrogate).`);
  }
  const ts = input.timestamp ?? null;
  if (ts && Number.isNaN(ts.getTime()))
    throw invalid(p('timestamp'), `${p('timestamp')} must be an ISO 8601 date-time.`);
  const key = input.idempotencyKey ?? null;
  if (key !== null && (key.length > MAX_KEY || !PRINTABLE_ASCII.test(key))) {
    throw invalid(p('idempotency_key'), `${p('idempotency_key')} must be 1 to ${MAX_KEY} printable ASCII characters.`);
  }
  return {
    subscriptionId: input.subscriptionId.toLowerCase(),
    eventType: input.eventType,
    unit,
    quantity,
    metadata,
    timestamp: ts,
    key,
  };
}

/** What of a subscription decides its billing periods (its columns, as usage.store.ts reads them). */
export interface SubscriptionPeriods {
  status: string;
  currentPeriodStart: Date | null;
  currentPeriodEnd: Date | null;
  billingAnchor: Date | null;
  trialStart: Date | null;
  trialEnd: Date | null;
  billingFrequency: Frequency;
  billingInterval: number;
}

/** Rough length of one cadence unit in ms: a first guess of the cycle, corrected by exact calendar arithmetic. */
const APPROX_MS: Record<Frequency, number> = {
  daily: 86_400_000,
  weekly: 7 * 86_400_000,
  monthly: 30.436875 * 86_400_000,
  yearly: 365.2425 * 86_400_000,
};

/**
 * The billing period `[start, end)` of the subscription that holds instant `t`, or null when none does:
 * - the current period (`current_period_start/end`) when it holds `t`: during a trial that is the trial itself
 *   (`trial_start` .. `trial_end`: the subscriptions engine sets the current period to it);
 * - the trial, when `t` falls in it;
 * - otherwise the period of the billing anchor's calendar arithmetic (src/core/billing-period.ts `period`,
 *   docs/subscriptions.md) holding `t`: earlier periods, and later ones not yet entered (a paused subscription's, or a
 *   renewal not yet charged). A trialing subscription's periods after the trial count from the trial's end, where its
 *   first charge starts them.
 * Null for an instant before the subscription's first period, or before the anchor when a change of billing cadence
 * restarted it (the periods before such a change are not kept, so usage cannot be attributed to them).
 */
export function periodFor(s: SubscriptionPeriods, t: Date): { start: Date; end: Date } | null {
  const at = t.getTime();
  const cps = s.currentPeriodStart?.getTime();
  const cpe = s.currentPeriodEnd?.getTime();
  if (cps !== undefined && cpe !== undefined && cps <= at && at < cpe)
    return { start: s.currentPeriodStart!, end: s.currentPeriodEnd! };
  if (s.trialStart && s.trialEnd && s.trialStart.getTime() <= at && at < s.trialEnd.getTime())
    return { start: s.trialStart, end: s.trialEnd };
  const anchor = s.billingAnchor ?? s.trialEnd ?? s.currentPeriodStart;
  if (!anchor || at < anchor.getTime()) return null;
  const interval = s.billingInterval;
  let k = Math.max(0, Math.floor((at - anchor.getTime()) / (APPROX_MS[s.billingFrequency] * interval)));
  // The guess is within a cycle or two of the answer; step to the period whose start <= t < end.
  for (let i = 0; i < 8; i++) {
    const p = period(anchor, s.billingFrequency, interval, k);
    if (p.start.getTime() > at && k > 0) k--;
    else if (p.end.getTime() <= at) k++;
    else return p;
  }
  throw new DomainError('internal_error', 'usage: no billing period found for the timestamp');
}

/**
 * For the message refusing an instant `t` that periodFor placed nowhere: where usage can be counted from (the trial's
 * start for an instant before it, else the billing anchor).
 */
export function firstPeriodStart(s: SubscriptionPeriods, t: Date): Date | null {
  if (s.trialStart && t < s.trialStart) return s.trialStart;
  return s.billingAnchor ?? s.trialEnd ?? s.currentPeriodStart;
}
