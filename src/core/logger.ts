import pino from 'pino';

/**
 * Lines waiting for stdout, at most (bytes). Writes are asynchronous; if whatever reads stdout falls behind (one log
 * line per request at `info`), lines beyond this are dropped instead of queueing without bound in memory.
 */
export const LOG_BUFFER_BYTES = 4 * 2 ** 20;

/** Structured JSON logs; request-scoped children carry `request_id`. */
export const logger = pino(
  {
    level: process.env.LOG_LEVEL || (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
    base: { service: 'cadence' },
    timestamp: pino.stdTimeFunctions.isoTime,
  },
  pino.destination({ dest: 1, sync: false, maxLength: LOG_BUFFER_BYTES }),
);
export type Logger = pino.Logger;
