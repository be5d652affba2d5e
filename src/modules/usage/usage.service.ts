import crypto from 'node:crypto';
import { validate as isUuid, v5 as uuidv5, v7 as uuidv7 } from 'uuid';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { Mode } from '../../core/entity';
import { DomainError, invalid, notFound } from '../../core/errors';
import type { ServicePool } from '../../core/orm-pool';
import type { Clock } from '../test-clock/test-clock.service';
import { MAX_BATCH, ReportUsageBatchInput, ReportUsageInput } from './usage.inputs';
import { isMissingPartition, UsagePartitions } from './usage.partitions';
import { checkEvent, EventDraft, firstPeriodStart, isBillable, MAX_FUTURE_MS, periodFor, SubscriptionPeriods } from './usage.rules';
import {
  BatchRow,
  EventRow,
  NewUnit,
  eventsByKeys,
  reportOne,
  subscriptionsFor,
  SubscriptionRow,
  summaryRows,
  unitsFor,
  writeBatch,
} from './usage.store';
import type { UsageAggregation, UsageEvent, UsageEventList, UsageSummary } from './usage.types';

/** Aggregate rows one (subscription, period, event type) is spread over: concurrent events rarely share a row lock. */
const SLOTS = 8;
/** Namespace of the aggregation ids (UUID v5 of subscription, period start and event type). */
const AGGREGATION_NAMESPACE = '5f0b5a8e-3c1d-4e57-9d6c-2a4b8e1f7c30';
/** Rounds of the single-event statement: a period worked out, a partition made, a unit registered meanwhile. */
const MAX_ROUNDS = 6;

/** The aggregate row an event adds to: spreads concurrent events over the slots (no secret, so no crypto RNG). */
const randomSlot = () => Math.floor(Math.random() * SLOTS);

/** A deadlock or serialization failure: the statement changed nothing and may run again. */
const retryable = (err: unknown) => ['40P01', '40001'].includes((err as { code?: string })?.code ?? '');

/**
 * Metered usage (contract 6, issue 12): report events one by one or in batches, read the sums per billing period.
 * A single event is one statement in the common case (usage.store.ts reportOne); a batch is one INSERT of all its
 * events (arrays) with its sums, in one transaction. Quantities stay decimal text end to end.
 */
export class UsageService {
  readonly partitions: UsagePartitions;

  /**
   * @param asyncCommit USAGE_SYNCHRONOUS_COMMIT=off: single events commit without waiting for the WAL flush (see
   *   src/config.ts usageSynchronousCommit for what that risks).
   */
  constructor(
    private readonly pool: ServicePool,
    private readonly clock: Clock,
    private readonly asyncCommit = false,
  ) {
    this.partitions = new UsagePartitions(pool);
  }

  /** `POST /usage/events`: stores one event (or answers the event its idempotency_key already made). */
  async report(ctx: Ctx, input: ReportUsageInput): Promise<UsageEvent> {
    const { merchantId, mode } = tenantOf(ctx);
    const d = checkEvent(input);
    const id = uuidv7();
    const slot = randomSlot();
    let period: { start: Date; end: Date } | null = null;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      let out;
      try {
        out = await reportOne(ctx.em, { ...d, id, period, slot }, this.asyncCommit);
      } catch (err) {
        if (isMissingPartition(err)) {
          // Only an event that passed every check reaches the insert: make its month, then again.
          d.timestamp ??= await this.clock.now(merchantId, mode);
          await this.partitions.repair(d.timestamp);
          continue;
        }
        if (retryable(err)) continue;
        throw err;
      }
      if (!out) throw notFound('subscription', input.subscriptionId, 'subscription_id');
      if (out.inserted) {
        return {
          id,
          object: 'usage_event',
          subscriptionId: d.subscriptionId,
          eventType: d.eventType,
          quantity: Number(d.quantity),
          unit: d.unit,
          metadata: d.metadata,
          timestamp: out.ts,
          billingPeriodStart: out.period_start,
          billingPeriodEnd: out.period_end,
          idempotencyKey: d.key,
          livemode: mode === Mode.LIVE,
          createdAt: out.created_at,
        };
      }
      // Not written. A key used before answers its event, whatever else this request says (a retry after success).
      if (d.key) {
        const [first] = await eventsByKeys(ctx.em, [d.key]);
        if (first) return eventOf(first);
      }
      const at = d.timestamp ?? out.ts;
      const p = this.placeEvent(out, at, d, '', out.known_unit);
      if (!period || period.start.getTime() !== p.start.getTime() || period.end.getTime() !== p.end.getTime() || !d.timestamp) {
        // Outside the current period: the statement again with the period worked out (and the timestamp it was for).
        period = p;
        d.timestamp = at;
        continue;
      }
      // Everything fits: a concurrent event registered this event type's unit after the statement's snapshot. Again.
    }
    throw new Error('usage: the event could not be stored (too many rounds)');
  }

  /**
   * The checks of one event against its subscription (billable, timestamp, unit), in the order a client fixes them;
   * answers the billing period holding the event.
   */
  private placeEvent(sub: SubscriptionRow, at: Date, d: EventDraft, prefix: string, knownUnit: string | null): { start: Date; end: Date } {
    const param = (f: string) => `${prefix}${f}`;
    if (!isBillable(sub.status)) {
      throw new DomainError(
        'subscription_not_billable',
        `Subscription '${d.subscriptionId}' is ${sub.status}: usage is taken only while it is active, trialing, past_due or paused.`,
        param('subscription_id'),
      );
    }
    const now = sub.merchant_now.getTime();
    if (at.getTime() > now + MAX_FUTURE_MS) {
      throw invalid(param('timestamp'), `${param('timestamp')} may be at most 5 minutes ahead of the merchant's clock (now ${new Date(now).toISOString()}).`);
    }
    const s = periodsOf(sub);
    const p = periodFor(s, at);
    if (!p) {
      const from = firstPeriodStart(s, at);
      throw invalid(
        param('timestamp'),
        `${param('timestamp')} ${at.toISOString()} is before the billing periods of subscription '${d.subscriptionId}'` +
          (from ? ` that usage can be counted in (from ${from.toISOString()}).` : '.'),
      );
    }
    if (knownUnit !== null && knownUnit !== d.unit) throw unitConflict(param('unit'), d, knownUnit);
    return p;
  }

  /** `POST /usage/events/batch`: up to 1,000 events, all stored or none (the first failing event names the error). */
  async reportBatch(ctx: Ctx, input: ReportUsageBatchInput): Promise<UsageEventList> {
    const tenant = tenantOf(ctx);
    if (input.events.length < 1 || input.events.length > MAX_BATCH) {
      throw invalid('events', `events must hold 1 to ${MAX_BATCH} usage events; it holds ${input.events.length}.`);
    }
    const drafts = input.events.map((e, i) => checkEvent(e, `events[${i}].`));
    const subIds = [...new Set(drafts.map((d) => d.subscriptionId))];
    const keys = [...new Set(drafts.flatMap((d) => (d.key ? [d.key] : [])))];
    const [subs, units, existing] = await Promise.all([subscriptionsFor(ctx.em, subIds), unitsFor(ctx.em, subIds), eventsByKeys(ctx.em, keys)]);
    const subById = new Map(subs.map((s) => [s.id, s]));
    const unitOf = new Map(units.map((u) => [`${u.subscription_id}|${u.event_type}`, u.unit]));
    const newUnits: NewUnit[] = [];
    const byKey = new Map(existing.map((e) => [e.idempotency_key!, e]));

    // Each answer: an event stored before (by key), a row written now, or the same answer as an earlier event (same key).
    type Answer = { stored: EventRow } | { row: number } | { sameAs: number };
    const answers: Answer[] = [];
    const rows: (BatchRow & { index: number })[] = [];
    const keyAt = new Map<string, number>();
    drafts.forEach((d, i) => {
      const prefix = `events[${i}].`;
      if (d.key !== null) {
        const stored = byKey.get(d.key);
        if (stored) return void answers.push({ stored });
        const earlier = keyAt.get(d.key);
        if (earlier !== undefined) return void answers.push({ sameAs: earlier });
        keyAt.set(d.key, i);
      }
      const sub = subById.get(d.subscriptionId);
      if (!sub) throw notFound('subscription', d.subscriptionId, `${prefix}subscription_id`);
      const at = d.timestamp ?? sub.merchant_now;
      const pair = `${d.subscriptionId}|${d.eventType}`;
      const known = unitOf.get(pair) ?? null;
      const p = this.placeEvent(sub, at, d, prefix, known);
      if (known === null) {
        unitOf.set(pair, d.unit);
        newUnits.push({ subscriptionId: d.subscriptionId, eventType: d.eventType, unit: d.unit });
      }
      answers.push({ row: rows.length });
      rows.push({
        index: i,
        id: uuidv7(),
        timestamp: at,
        subscriptionId: d.subscriptionId,
        periodStart: p.start,
        periodEnd: p.end,
        eventType: d.eventType,
        unit: d.unit,
        quantity: d.quantity,
        metadata: d.metadata,
        key: d.key,
      });
    });

    let createdAt = new Date();
    let skipped: EventRow[] = [];
    if (rows.length) {
      await this.partitions.ensure(rows.map((r) => r.timestamp));
      const slot = crypto.randomInt(SLOTS);
      for (let round = 0; ; round++) {
        try {
          const out = await writeBatch(this.pool, tenant, rows, newUnits, slot);
          if (out.conflicts.length) {
            // Units registered meanwhile by other requests: the first event naming such a pair is at fault.
            const c = out.conflicts[0];
            const row = rows.find((r) => r.subscriptionId === c.subscription_id && r.eventType === c.event_type)!;
            throw unitConflict(`events[${row.index}].unit`, drafts[row.index], c.unit);
          }
          createdAt = out.createdAt;
          skipped = await eventsByKeys(ctx.em, out.skippedKeys);
          if (skipped.length !== out.skippedKeys.length) throw new Error('usage: an event taken by its key meanwhile was not found');
          break;
        } catch (err) {
          if (round >= MAX_ROUNDS) throw err;
          if (isMissingPartition(err)) {
            for (const r of rows) await this.partitions.repair(r.timestamp);
            continue;
          }
          if (retryable(err)) continue;
          throw err;
        }
      }
    }

    const skippedByKey = new Map(skipped.map((e) => [e.idempotency_key!, e]));
    const livemode = tenant.mode === Mode.LIVE;
    const data: UsageEvent[] = [];
    answers.forEach((a) => {
      if ('stored' in a) return void data.push(eventOf(a.stored));
      if ('sameAs' in a) return void data.push(data[a.sameAs]);
      const r = rows[a.row];
      const taken = r.key !== null ? skippedByKey.get(r.key) : undefined;
      if (taken) return void data.push(eventOf(taken));
      data.push({
        id: r.id,
        object: 'usage_event',
        subscriptionId: r.subscriptionId,
        eventType: r.eventType,
        quantity: Number(r.quantity),
        unit: r.unit,
        metadata: r.metadata,
        timestamp: r.timestamp,
        billingPeriodStart: r.periodStart,
        billingPeriodEnd: r.periodEnd,
        idempotencyKey: r.key,
        livemode,
        createdAt,
      });
    });
    return { object: 'list', data };
  }

  /** `GET /usage/summary`: the sums per billing period and event type, from the aggregates only. */
  async summary(ctx: Ctx, subscriptionId: string): Promise<UsageSummary> {
    tenantOf(ctx);
    if (typeof subscriptionId !== 'string' || !isUuid(subscriptionId)) throw notFound('subscription', String(subscriptionId), 'subscription_id');
    const id = subscriptionId.toLowerCase();
    const rows = await summaryRows(ctx.em, id);
    if (!rows.length) throw notFound('subscription', subscriptionId, 'subscription_id');
    const aggregations: UsageAggregation[] = [];
    for (const r of rows) {
      if (r.period_start === null) continue; // the subscription has no usage yet
      aggregations.push({
        id: aggregationId(id, r.period_start, r.event_type),
        object: 'usage_aggregation',
        billingPeriodStart: r.period_start,
        billingPeriodEnd: r.period_end,
        eventType: r.event_type,
        totalQuantity: Number(r.total),
        totalQuantityDecimal: r.total,
        unit: r.unit,
        eventCount: Number(r.events),
      });
    }
    return { object: 'usage_summary', subscriptionId: id, aggregations };
  }
}

/** The same (subscription, billing period, event type) always has the same id. */
export function aggregationId(subscriptionId: string, periodStart: Date, eventType: string): string {
  return uuidv5(`${subscriptionId}/${periodStart.toISOString()}/${eventType}`, AGGREGATION_NAMESPACE);
}

function periodsOf(s: SubscriptionRow): SubscriptionPeriods {
  return {
    status: s.status,
    currentPeriodStart: s.current_period_start,
    currentPeriodEnd: s.current_period_end,
    billingAnchor: s.billing_anchor,
    trialStart: s.trial_start,
    trialEnd: s.trial_end,
    billingFrequency: s.billing_frequency,
    billingInterval: s.billing_interval,
  };
}

function unitConflict(param: string, d: EventDraft, known: string): DomainError {
  return invalid(
    param,
    `${param} '${d.unit}' differs from '${known}', the unit of event type '${d.eventType}' on subscription '${d.subscriptionId}' (fixed by its first event).`,
  );
}

/** A stored event as the API answers it. */
function eventOf(e: EventRow): UsageEvent {
  return {
    id: e.id,
    object: 'usage_event',
    subscriptionId: e.subscription_id,
    eventType: e.event_type,
    quantity: Number(e.quantity),
    unit: e.unit,
    metadata: e.metadata ?? {},
    timestamp: e.timestamp,
    billingPeriodStart: e.period_start,
    billingPeriodEnd: e.period_end,
    idempotencyKey: e.idempotency_key,
    livemode: e.mode === Mode.LIVE,
    createdAt: e.created_at,
  };
}
