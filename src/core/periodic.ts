/** A periodic run started by `repeatWithoutOverlap`. */
export interface Periodic {
  /** Ends the ticks; answers once a run in flight is over. */
  stop(): Promise<void>;
}

/**
 * Runs `work` every `everyMs`, never two at once: a tick that finds the last run still going is skipped, and the next
 * looks again. A failed run goes to `onError` and the ticks go on. The timer does not keep the process alive.
 */
export function repeatWithoutOverlap(
  everyMs: number,
  work: () => Promise<unknown>,
  onError: (err: unknown) => void,
): Periodic {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = work()
      .then(() => undefined, onError)
      .finally(() => {
        running = null;
      });
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
