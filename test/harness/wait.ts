/** Waiting in tests: one `sleep` and one `eventually` for every file. */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `fn` every 50 ms until it returns a truthy value and returns that value; throws after `timeoutMs`, naming
 * `what`, so a test waiting on something that never happens fails where it waited.
 */
export async function eventually<T>(
  fn: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}
