/**
 * The rules of outbound delivery, apart from the SQL that applies them (delivery.store.ts) and the sending
 * (dispatcher.ts): which endpoints take an event, when a failed attempt is tried again, how long a claimed attempt
 * is someone's, when a failing endpoint is disabled, how much of the attempt history a delivery keeps.
 */

/** An endpoint whose attempts have all failed for this long is disabled (docs/webhooks.md: 5 days, merchant clock). */
export const FAILING_DISABLE_MS = 5 * 24 * 3600_000;

/** A delivery keeps the log of its last this-many attempts (older entries drop off the front). */
export const ATTEMPT_LOG_MAX = 50;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** Does `enabledEvents` ("*", exact types, "prefix.*") take `type`? */
export function acceptsEvent(enabledEvents: string[], type: string): boolean {
  return enabledEvents.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}

/** An event reaches an endpoint of its merchant and mode created no later than the event, that takes its type. */
export function endpointTakes(
  ep: { merchant_id: string; mode: string; enabled_events: string[]; created_at: Date },
  ev: { merchant_id: string; mode: string; type: string; created_at: Date },
): boolean {
  return (
    ep.merchant_id === ev.merchant_id &&
    ep.mode === ev.mode &&
    ep.created_at.getTime() <= ev.created_at.getTime() &&
    acceptsEvent(ep.enabled_events, ev.type)
  );
}

/**
 * The outcome of attempt number `attemptsBefore + 1`: succeeded; pending again after `schedule[attemptsBefore]`
 * seconds (merchant clock) while the schedule lasts; failed when it is exhausted.
 */
export function afterAttempt(
  ok: boolean,
  attemptsBefore: number,
  schedule: number[],
  clockNow: Date,
): { status: DeliveryStatus; nextAttemptAt: Date | null } {
  if (ok) return { status: 'succeeded', nextAttemptAt: null };
  if (attemptsBefore < schedule.length) {
    return { status: 'pending', nextAttemptAt: new Date(clockNow.getTime() + schedule[attemptsBefore] * 1000) };
  }
  return { status: 'failed', nextAttemptAt: null };
}

/** An attempt is abandoned after `timeoutMs`, so a lease this long is never held by two live senders. */
export function leaseMsFor(timeoutMs: number): number {
  return timeoutMs + Math.max(1000, Math.round(timeoutMs / 2));
}

/** Has an endpoint failing since `failingSince` failed long enough to be disabled? */
export function failingTooLong(failingSince: Date, clockNow: Date): boolean {
  return clockNow.getTime() - new Date(failingSince).getTime() >= FAILING_DISABLE_MS;
}
