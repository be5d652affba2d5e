import { boundHeapGrowth } from './heap';
import { logger } from './logger';

/**
 * The process entry points (`npm start`, `npm run worker`) share one life cycle: run `main`, report a failed start
 * clearly, and on SIGINT/SIGTERM run the `stop` steps once, in order, exiting 1 if they outlast `forceAfterMs`.
 */
export function runProcess(
  name: string,
  main: () => Promise<{ stop: () => Promise<void>; forceAfterMs: number }>,
): void {
  boundHeapGrowth(); // memory stays near the live data (src/core/heap.ts)
  // Node ends the process on a rejection nobody handled. Every background task catches its own failures; one that
  // slips through (a query of a dropped connection, say) is logged as the bug it is instead of taking every request
  // in flight down with it.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));
  main()
    .then(({ stop, forceAfterMs }) => {
      let stopping = false;
      const shutdown = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger.info({ signal }, `${name} shutting down`);
        setTimeout(() => process.exit(1), forceAfterMs).unref();
        try {
          await stop();
        } catch (err) {
          logger.error({ err }, 'error during shutdown');
        }
        process.exit(0);
      };
      process.on('SIGINT', () => void shutdown('SIGINT'));
      process.on('SIGTERM', () => void shutdown('SIGTERM'));
    })
    .catch((err) => {
      logger.fatal({ err }, `${name} failed to start`);
      process.stderr.write(`${name} failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    });
}
