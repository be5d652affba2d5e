import pino from 'pino';

/** Structured JSON logs; request-scoped children carry `request_id`. */
export const logger = pino({
  level: process.env.LOG_LEVEL || (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
  base: { service: 'cadence' },
  timestamp: pino.stdTimeFunctions.isoTime,
});
export type Logger = pino.Logger;
