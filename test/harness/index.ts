/**
 * One harness for the end-to-end tests, in the manner of Vendure's `createTestEnvironment`: one call at the top of
 * a test file (or describe block) starts the service on a fresh database before its tests and stops it after, and
 * hands back everything a test talks to.
 *
 *   const h = useHarness();                    // or useHarness({ workerPollMs: 60_000 }) for config overrides
 *   let m: TestMerchant;
 *   beforeAll(async () => { m = await h.merchant(); });
 *   it('...', async () => { await m.test.post('/payments', ...); await h.clock.advance(m, 3600); });
 */
import type { Config } from '../../src/config';
import { MAX_ADVANCE_SECONDS } from '../../src/modules/test-clock/test-clock.service';
import { request, HttpResult, TestApp, TestMerchant, startTestApp } from './app';
import { CheckoutAnswer, submitCheckout } from './checkout';
import { gqlRequest } from './http';
import { Receiver } from './receiver';

export interface Harness {
  /** The running service (URL, ORM, SQL counter, RunningApp); readable from the first beforeAll on. */
  readonly app: TestApp;
  /** Any path on the service, e.g. `h.rest('/v1/admin/merchants', { key: ADMIN_TOKEN, body })`. */
  rest<T = any>(path: string, init?: Parameters<typeof request>[1]): Promise<HttpResult<T>>;
  /** POST /graphql with any key (or none), answering the whole HTTP result. */
  graphql(key: string | undefined, query: string, variables?: Record<string, unknown>): Promise<HttpResult<any>>;
  /** A new merchant (admin API) with a REST and GraphQL client for each mode. */
  merchant(body?: Record<string, unknown>): Promise<TestMerchant>;
  /** The gateway sandbox the service talks to: take it down, bring it back, pay its hosted checkouts. */
  readonly sandbox: {
    stop(): Promise<void>;
    start(): Promise<void>;
    submitCheckout(checkoutUrl: string, form?: Record<string, string>, as?: 'form' | 'json'): Promise<CheckoutAnswer>;
  };
  /** A merchant's test clock (test mode only), through the API. */
  readonly clock: {
    now(m: TestMerchant): Promise<Date>;
    /**
     * Moves it forward by `seconds`, or to an instant; runs the work that falls due. Answers the new time. A move
     * over the service's bound of 366 days a call is made of several calls.
     */
    advance(m: TestMerchant, by: number | Date): Promise<Date>;
  };
  /** A webhook receiver on 127.0.0.1, closed with the harness. */
  receiver(): Promise<Receiver>;
  /** Runs `fn` after the file's tests, before the service stops (last registered, first run). */
  cleanup(fn: () => unknown): void;
}

/** Config on top of the test defaults; a function when it is known only once the file's setup runs (a free port). */
export type HarnessOverrides = Partial<Config> | (() => Partial<Config> | Promise<Partial<Config>>);

/** Starts the service (with `overrides` on the test config) in beforeAll and stops it, and what it made, in afterAll. */
export function useHarness(overrides: HarnessOverrides = {}): Harness {
  let started: TestApp | null = null;
  const cleanups: (() => unknown)[] = [];
  const app = () => {
    if (!started) throw new Error('useHarness: the service is read before its beforeAll ran');
    return started;
  };

  beforeAll(async () => {
    started = await startTestApp(typeof overrides === 'function' ? await overrides() : overrides);
  });
  afterAll(async () => {
    try {
      for (const fn of cleanups.splice(0).reverse()) await fn();
    } finally {
      await started?.close();
      started = null;
    }
  });

  const clockNow = async (m: TestMerchant): Promise<Date> => {
    const r = await m.test.get('/test-clock');
    if (r.status !== 200) throw new Error(`GET /test-clock answered ${r.status}: ${r.text}`);
    return new Date(r.body.now);
  };

  return {
    get app() {
      return app();
    },
    rest: (path, init) => request(`${app().url}${path}`, init),
    graphql: (key, query, variables) => gqlRequest(app().url, key, query, variables),
    merchant: (body) => app().createMerchant(body),
    sandbox: {
      stop: () => app().sandbox.stop(),
      start: () => app().sandbox.start(),
      submitCheckout,
    },
    clock: {
      now: clockNow,
      async advance(m, by) {
        // One call moves the clock at most 366 days (docs/sandbox.md): a longer move is made of several calls.
        const step = async (body: { seconds: number } | { to: string }) => {
          const r = await m.test.post('/test-clock/advance', body);
          if (r.status !== 200) throw new Error(`POST /test-clock/advance answered ${r.status}: ${r.text}`);
          return new Date(r.body.now);
        };
        if (typeof by === 'number') {
          for (; by > MAX_ADVANCE_SECONDS; by -= MAX_ADVANCE_SECONDS) await step({ seconds: MAX_ADVANCE_SECONDS });
          return step({ seconds: by });
        }
        // The test clock never reads less than the wall clock: within the bound of the wall clock, one call does.
        if (by.getTime() - Date.now() > MAX_ADVANCE_SECONDS * 1000) {
          while (by.getTime() - (await clockNow(m)).getTime() > MAX_ADVANCE_SECONDS * 1000)
            await step({ seconds: MAX_ADVANCE_SECONDS });
        }
        return step({ to: by.toISOString() });
      },
    },
    async receiver() {
      const rx = await Receiver.start();
      cleanups.push(() => rx.close());
      return rx;
    },
    cleanup(fn) {
      cleanups.push(fn);
    },
  };
}

export { ADMIN_TOKEN, Client_, request, startTestApp } from './app';
export type { HttpResult, TestApp, TestMerchant } from './app';
export { submitCheckout, redirectOf } from './checkout';
export type { CheckoutAnswer } from './checkout';
export { Receiver, closedPortUrl } from './receiver';
export type { Received } from './receiver';
export { sleep, eventually } from './wait';
export { freshDatabase } from './database';
