import { validate as isUuid, v5 as uuidv5, v7 as uuidv7 } from 'uuid';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { Mode, TenantParams } from '../../core/entity';
import { DomainError, invalid, notFound } from '../../core/errors';
import { KeyedBatches } from '../../core/keyed-batches';
import { logger } from '../../core/logger';
import type { ServicePool } from '../../core/orm-pool';
import type { Clock } from '../test-clock';
import { MAX_BATCH, ReportUsageBatchInput, ReportUsageInput } from './usage.inputs';
import { isMissingPartition, UsagePartitions } from './usage.partitions';
import {
  checkEvent,
  EventDraft,
  firstPeriodStart,
  isBillable,
  MAX_FUTURE_MS,
  periodFor,
  SubscriptionPeriods,
} from './usage.rules';
import {
  BatchRow,
  EventRow,
  GroupWritten,
  NewUnit,
  eventsByKeys,
  reportGroup,
  reportOne,
  SingleEvent,
  subscriptionsFor,
  SubscriptionPeriodsSql,
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

/** Single events one group statement writes at most (its JSON stays small). */
const MAX_GROUP = 200;

/** A single event waiting for its tenant's group statement: answered with what the statement wrote of it, or null. */
interface GroupAsk {
  tenant: TenantParams;
  event: SingleEvent;
  done: (written: GroupWritten | null) => void;
}

/** The aggregate row an event adds to: spreads concurrent events over the slots (no secret, so no crypto RNG). */
const randomSlot = () => Math.floor(Math.random() * SLOTS);

/** A deadlock or serialization failure: the statement changed nothing and may run again. */
const retryable = (err: unknown) => ['40P01', '40001'].includes((err as { code?: string })?.code ?? '');

/**
 * Metered usage (docs/usage.md): report events one by one or in batches, read the sums per billing period.
 * A single event that fits is written with the other single events of its tenant that arrive meanwhile, by one
 * statement (usage.store.ts reportGroup); one that does not runs on its own (reportOne), which says why. A batch is
 * one INSERT of all its events (one JSON array) with its sums. Quantities stay decimal text end to end.
 */
export class UsageService {
  readonly partitions: UsagePartitions;
  /**
   * Single events per tenant, written together (usage.store.ts reportGroupSql): the events that arrive while the
   * tenant's last group statement runs go in the next one (core/keyed-batches.ts), so under load one statement and one
   * commit serve many requests; alone, an event waits one turn of the event loop.
   */
  private readonly groups = new KeyedBatches<GroupAsk>((asks) => this.writeGroups(asks));

  /** `subs`: the subscriptions module's SQL piece the statements read subscriptions through (usage.store.ts). */
  constructor(
    private readonly pool: ServicePool,
    private readonly clock: Clock,
    private readonly subs: SubscriptionPeriodsSql,
  ) {
    this.partitions = new UsagePartitions(pool);
  }

  /** `POST /usage/events`: stores one event (or answers the event its idempotency_key already made). */
  async report(ctx: Ctx, input: ReportUsageInput): Promise<UsageEvent> {
    const { merchantId, mode } = tenantOf(ctx);
    const d = checkEvent(input);
    const id = uuidv7();
    const slot = randomSlot();
    // The common case: the event fits as it is, and its tenant's group statement writes it.
    const grouped = await new Promise<GroupWritten | null>((done) =>
      this.groups.add(`${merchantId}:${mode}`, {
        tenant: { merchantId, mode },
        event: { ...d, id, period: null, slot },
        done,
      }),
    );
    if (grouped) return this.written(id, d, mode, grouped);
    // Not written by the group: on its own, one round at a time, which also explains why not.
    let period: { start: Date; end: Date } | null = null;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      let out;
      try {
        out = await reportOne(this.pool, this.subs, { merchantId, mode }, { ...d, id, period, slot });
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
      if (out.inserted) return this.written(id, d, mode, out);
      // Not written. A key used before answers its event, whatever else this request says (a retry after success).
      if (d.key) {
        const [first] = await eventsByKeys(ctx.em, [d.key]);
        if (first) return eventOf(first);
      }
      const at = d.timestamp ?? out.ts;
      const p = this.placeEvent(out, at, d, '', out.known_unit);
      if (
        !period ||
        period.start.getTime() !== p.start.getTime() ||
        period.end.getTime() !== p.end.getTime() ||
        !d.timestamp
      ) {
        // Outside the current period: the statement again with the period worked out (and the timestamp it was for).
        period = p;
        d.timestamp = at;
        continue;
      }
      // Everything fits: a concurrent event registered this event type's unit after the statement's snapshot. Again.
    }
    throw new Error('usage: the event could not be stored (too many rounds)');
  }

  /** The answer for an event just written. */
  private written(id: string, d: EventDraft, mode: string, w: GroupWritten): UsageEvent {
    return {
      id,
      object: 'usage_event',
      subscriptionId: d.subscriptionId,
      eventType: d.eventType,
      quantity: Number(d.quantity),
      unit: d.unit,
      metadata: d.metadata,
      timestamp: w.ts,
      billingPeriodStart: w.period_start,
      billingPeriodEnd: w.period_end,
      idempotencyKey: d.key,
      livemode: mode === Mode.LIVE,
      createdAt: w.created_at,
    };
  }

  /**
   * Runs a tenant's waiting single events through the group statement, MAX_GROUP at a time. A failed statement wrote
   * nothing: its events go their own way (report's rounds), which repairs a missing month, retries a deadlock and
   * answers any other error per request.
   */
  private async writeGroups(asks: GroupAsk[]): Promise<void> {
    for (let i = 0; i < asks.length; i += MAX_GROUP) {
      const slice = asks.slice(i, i + MAX_GROUP);
      let written: Map<string, GroupWritten> | null = null;
      try {
        written = await reportGroup(
          this.pool,
          this.subs,
          slice[0].tenant,
          slice.map((a) => a.event),
        );
      } catch (err) {
        if (!isMissingPartition(err) && !retryable(err))
          logger.warn({ err, events: slice.length }, 'usage: group statement failed; events written one by one');
      }
      for (const a of slice) a.done(written?.get(a.event.id) ?? null);
    }
  }

  /**
   * The checks of one event against its subscription (billable, timestamp, unit), in the order a client fixes them;
   * answers the billing period holding the event.
   */
  private placeEvent(
    sub: SubscriptionRow,
    at: Date,
    d: EventDraft,
    prefix: string,
    knownUnit: string | null,
  ): { start: Date; end: Date } {
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
      throw invalid(
        param('timestamp'),
        `${param('timestamp')} may be at most 5 minutes ahead of the merchant's clock (now ${new Date(now).toISOString()}).`,
      );
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
    const [subs, units] = await Promise.all([subscriptionsFor(ctx.em, this.subs, subIds), unitsFor(ctx.em, subIds)]);
    const subById = new Map(subs.map((s) => [s.id, s]));

    // Each answer: an event stored before (by key), a row written now, or the same answer as an earlier event (same key).
    type Answer = { stored: EventRow } | { row: number } | { sameAs: number };
    /**
     * The batch's answers and rows. Keys are not read first: the write leaves out the events whose key was taken and
     * names them (their events are read then). Only when an event fails a check are the keys read, and the batch
     * planned again without the events they already answer: a key used before answers its event whatever else this
     * request says (a retry after success, the subscription cancelled since), as a single event's key does.
     */
    const plan = (byKey: Map<string, EventRow>) => {
      // Units by subscription, then event type (no key string made per event).
      const unitOf = new Map<string, Map<string, string>>();
      const unitsOf = (sub: string) => {
        let m = unitOf.get(sub);
        if (!m) unitOf.set(sub, (m = new Map()));
        return m;
      };
      for (const u of units) unitsOf(u.subscription_id).set(u.event_type, u.unit);
      const newUnits: NewUnit[] = [];
      const answers: Answer[] = [];
      const rows: (BatchRow & { index: number })[] = [];
      const keyAt = new Map<string, number>();
      // A subscription's events without a timestamp share one instant (the merchant's now) and one period.
      const nowPeriod = new Map<string, { start: Date; end: Date }>();
      for (let i = 0; i < drafts.length; i++) {
        const d = drafts[i];
        if (d.key !== null) {
          const stored = byKey.get(d.key);
          if (stored) {
            answers.push({ stored });
            continue;
          }
          const earlier = keyAt.get(d.key);
          if (earlier !== undefined) {
            answers.push({ sameAs: earlier });
            continue;
          }
          keyAt.set(d.key, i);
        }
        const sub = subById.get(d.subscriptionId);
        if (!sub) throw notFound('subscription', d.subscriptionId, `events[${i}].subscription_id`);
        const at = d.timestamp ?? sub.merchant_now;
        const subUnits = unitsOf(d.subscriptionId);
        const known = subUnits.get(d.eventType) ?? null;
        let p = d.timestamp === null ? nowPeriod.get(d.subscriptionId) : undefined;
        if (p && known !== null && known !== d.unit) p = undefined; // placeEvent names the unit's error
        if (!p) {
          p = this.placeEvent(sub, at, d, `events[${i}].`, known);
          if (d.timestamp === null) nowPeriod.set(d.subscriptionId, p);
        }
        if (known === null) {
          subUnits.set(d.eventType, d.unit);
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
      }
      return { answers, rows, newUnits };
    };
    let planned: ReturnType<typeof plan>;
    try {
      planned = plan(new Map());
    } catch (err) {
      const keys = [...new Set(drafts.flatMap((d) => (d.key !== null ? [d.key] : [])))];
      if (!(err instanceof DomainError) || !keys.length) throw err;
      const stored = await eventsByKeys(ctx.em, keys);
      if (!stored.length) throw err;
      planned = plan(new Map(stored.map((e) => [e.idempotency_key!, e])));
    }
    const { answers, rows, newUnits } = planned;

    let createdAt = new Date();
    let skipped: EventRow[] = [];
    if (rows.length) {
      await this.partitions.ensure(rows.map((r) => r.timestamp));
      const slot = randomSlot();
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
          if (skipped.length !== out.skippedKeys.length)
            throw new Error('usage: an event taken by its key meanwhile was not found');
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
    if (typeof subscriptionId !== 'string' || !isUuid(subscriptionId))
      throw notFound('subscription', String(subscriptionId), 'subscription_id');
    const id = subscriptionId.toLowerCase();
    const rows = await summaryRows(ctx.em, this.subs, id);
    if (!rows.length) throw notFound('subscription', subscriptionId, 'subscription_id');
    const aggregations: UsageAggregation[] = [];
    // Rows come period by period: one pair of Dates (and one ISO text for the ids) per period.
    let startMs = NaN;
    let start = new Date(NaN);
    let end = start;
    let startIso = '';
    for (const r of rows) {
      if (r.start_ms === null) continue; // the subscription has no usage yet
      if (r.start_ms !== startMs) {
        startMs = r.start_ms;
        start = new Date(startMs);
        end = new Date(r.end_ms);
        startIso = start.toISOString();
      }
      aggregations.push({
        id: aggregationIdOf(`${id}/${startIso}/${r.event_type}`),
        object: 'usage_aggregation',
        billingPeriodStart: start,
        billingPeriodEnd: r.end_ms === end.getTime() ? end : new Date(r.end_ms),
        eventType: r.event_type,
        totalQuantity: Number(r.total),
        totalQuantityDecimal: r.total,
        unit: r.unit,
        eventCount: r.events,
      });
    }
    return { object: 'usage_summary', subscriptionId: id, aggregations };
  }
}

/** The same (subscription, billing period, event type) always has the same id. */
export function aggregationId(subscriptionId: string, periodStart: Date, eventType: string): string {
  return aggregationIdOf(`${subscriptionId}/${periodStart.toISOString()}/${eventType}`);
}

const NAMESPACE_BYTES = Buffer.from(AGGREGATION_NAMESPACE.replace(/-/g, ''), 'hex');
/** Ids made lately, by name: a summary asks for the same ones again (the hot subscription's 75, 200 times a second). */
const aggregationIds = new Map<string, string>();
const MAX_KEPT_IDS = 20_000;

/**
 * UUID v5 of `subscription/periodStartISO/eventType`, kept for the next ask (a summary asks for the same ones again),
 * with the namespace given as bytes (the package would parse its text on every call).
 */
function aggregationIdOf(name: string): string {
  let id = aggregationIds.get(name);
  if (id !== undefined) return id;
  id = uuidv5(name, NAMESPACE_BYTES);
  if (aggregationIds.size >= MAX_KEPT_IDS) aggregationIds.clear();
  aggregationIds.set(name, id);
  return id;
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
