/**
 * When a gateway command is tried again (docs/durable-work.md): GATEWAY_COMMAND_FIRST_RETRY_MS (30 s) after the first
 * failed attempt, doubling to at most an hour between attempts, until GATEWAY_COMMAND_RETRY_SECONDS (3 days by
 * default, as long as Stripe retries its own webhooks) have passed since it was written; then it is given up.
 */
export const MAX_RETRY_GAP_MS = 3_600_000;

/** The wait after failed attempt number `attempts` (1-based). */
export function retryDelayMs(attempts: number, firstRetryMs: number): number {
  return Math.min(MAX_RETRY_GAP_MS, firstRetryMs * 2 ** Math.min(Math.max(attempts - 1, 0), 20));
}

/**
 * After a failed attempt: the next attempt's time, or null when the command is given up (a refusal by the gateway is
 * final; anything else is tried again until `giveUpAt`).
 */
export function nextAttempt(
  attempts: number,
  refused: boolean,
  now: Date,
  giveUpAt: Date,
  firstRetryMs: number,
): Date | null {
  if (refused) return null;
  const next = new Date(now.getTime() + retryDelayMs(attempts, firstRetryMs));
  return next.getTime() > giveUpAt.getTime() ? null : next;
}

/**
 * A run holds its command this long: beyond every gateway call a handler makes in sequence (each bounded by
 * GATEWAY_TIMEOUT_MS), so a live run is never claimed twice.
 */
export function commandLeaseMs(gatewayTimeoutMs: number): number {
  return 4 * gatewayTimeoutMs + 5_000;
}
