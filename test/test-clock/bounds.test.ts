import { Mode } from '../../src/core/entity';
import { MAX_ADVANCE_SECONDS } from '../../src/modules/test-clock/test-clock.service';
import { eventually, request, sleep, TestMerchant, useHarness } from '../harness';
import { useWsClients } from '../harness/ws';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan, startSecondApp } from '../subscriptions/helpers';

/**
 * Bounded test-clock advances (docs/sandbox.md): at most 366 days a call, and an advance
 * that stops when its client leaves or the service stops, at a consistent point, reported and resumed by the next call.
 */

const h = useHarness();
const wsClient = useWsClients(h);
jest.setTimeout(180_000);

const DAY_MS = 86_400_000;
const BOUND_MS = MAX_ADVANCE_SECONDS * 1000;

/** The merchant's test-clock offset as stored (no row: 0): "unchanged" means this did not move. */
async function offsetOf(m: TestMerchant): Promise<number> {
  const rows = await h.app.orm.em
    .getConnection()
    .execute<{ offset_ms: string }[]>('select offset_ms from test_clocks where merchant_id = ?', [m.id]);
  return rows.length ? Number(rows[0].offset_ms) : 0;
}

/** Renewal invoices recorded for the merchant's test mode. */
async function renewals(m: TestMerchant): Promise<number> {
  const rows = await h.app.orm.em
    .getConnection()
    .execute<{ n: number }[]>(
      `select count(*)::int as n from invoices where merchant_id = ? and mode = 'test' and billing_reason = 'subscription_cycle'`,
      [m.id],
    );
  return rows[0].n;
}

/** A merchant with one active subscription on a daily plan: a day of test time is one renewal. */
async function dailySubscriber(): Promise<{ m: TestMerchant; sub: any }> {
  const m = await h.merchant();
  await connect(m.test, 'stripe');
  const { plan } = await recurringPlan(m.test, { billing_frequency: 'daily' }, { amount: 1000 });
  const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
  expect(subscription.status).toBe('active');
  return { m, sub: subscription };
}

/** POST /v1/test-clock/advance on `baseUrl` that the caller can abort (the harness's client cannot). */
function advanceCall(baseUrl: string, m: TestMerchant, body: unknown, signal?: AbortSignal) {
  return fetch(`${baseUrl}/v1/test-clock/advance`, {
    method: 'POST',
    headers: { authorization: `Bearer ${m.keys.test}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  }).then(
    async (r) => ({ status: r.status, body: (await r.json()) as any }),
    (err: Error) => ({ status: 0, error: err }),
  );
}

/**
 * The subscription reached exactly `at`: every renewal due up to it is recorded and none after it (the period holding
 * `at` is the current one), and the renewals count the whole days from its first period's start.
 */
async function consistentAt(m: TestMerchant, sub: any, at: Date): Promise<void> {
  const now = await ok(m.test.get(`/subscriptions/${sub.id}`));
  const [start, end] = [Date.parse(now.current_period_start), Date.parse(now.current_period_end)];
  expect([start <= at.getTime(), at.getTime() < end]).toEqual([true, true]);
  expect(await renewals(m)).toBe(Math.floor((at.getTime() - Date.parse(sub.current_period_start)) / DAY_MS));
}

/** The stop of an advance whose client left is recorded (GraphQL reads it), nothing more renews, and the clock is consistent. */
async function expectStoppedConsistently(m: TestMerchant, sub: any): Promise<void> {
  const stopped = await eventually(
    async () => {
      const q = await m.test.gql('{ testClock { advanceTarget advanceInterruptedAt } }');
      return q.data.testClock.advanceInterruptedAt ? q.data.testClock : null;
    },
    10_000,
    'the interrupted advance recorded',
  );
  expect(await stillAfterASecond(m)).toBeLessThan(360);
  await consistentAt(m, sub, new Date(stopped.advanceInterruptedAt));
}

const r400Message = (body: any): string => body?.error?.message ?? '';

/** Samples the renewal count twice, a second apart: a stopped advance adds none in between. */
async function stillAfterASecond(m: TestMerchant): Promise<number> {
  const a = await renewals(m);
  await sleep(1_000);
  expect(await renewals(m)).toBe(a);
  return a;
}

describe('366 days a call', () => {
  it('REST: more seconds, or a `to` further ahead, is 400 parameter_invalid naming the parameter, and the clock does not move', async () => {
    const m = await h.merchant();
    await ok(m.test.post('/test-clock/advance', { seconds: 60 })); // a row to compare
    const offset = await offsetOf(m);
    const now = (await h.clock.now(m)).getTime();
    const cases: [unknown, string][] = [
      [{ seconds: MAX_ADVANCE_SECONDS + 1 }, 'seconds'],
      [{ seconds: 2_147_483_647 }, 'seconds'], // past the bound (docs/sandbox.md): 24,800 renewals of a daily plan
      [{ seconds: 1e10 }, 'seconds'], // not an Int
      [{ to: new Date(now + BOUND_MS + 60_000).toISOString() }, 'to'],
      [{ to: '9999-12-31T23:59:59Z' }, 'to'],
    ];
    for (const [body, param] of cases) {
      const r = await m.test.post('/test-clock/advance', body);
      expect([JSON.stringify(body), r.status, r.body.error?.code, r.body.error?.param]).toEqual([
        JSON.stringify(body),
        400,
        'parameter_invalid',
        param,
      ]);
    }
    // Numbers JSON can write but no clock can move by: 1e400 reads as Infinity.
    for (const raw of ['{"seconds":1e400}', '{"seconds":-1e400}', '{"seconds":0.5}']) {
      const r = await request(`${h.app.url}/v1/test-clock/advance`, {
        method: 'POST',
        key: m.keys.test,
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expect([raw, r.status, r.body.error?.code, r.body.error?.param]).toEqual([
        raw,
        400,
        'parameter_invalid',
        'seconds',
      ]);
    }
    expect(r400Message((await m.test.post('/test-clock/advance', { seconds: MAX_ADVANCE_SECONDS + 1 })).body)).toMatch(
      /366 days/,
    );
    expect(await offsetOf(m)).toBe(offset);
    const got = await ok(m.test.get('/test-clock'));
    expect(got).toMatchObject({ advance_target: null, advance_interrupted_at: null });
  });

  it('GraphQL: the same bound on advanceTestClock', async () => {
    const m = await h.merchant();
    const now = (await h.clock.now(m)).getTime();
    const over = await m.test.gql(`mutation { advanceTestClock(seconds: ${MAX_ADVANCE_SECONDS + 1}) { now } }`);
    expect(over.errors?.[0].extensions).toMatchObject({
      code: 'parameter_invalid',
      param: 'seconds',
      http: { status: 400 },
    });
    const far = await m.test.gql('mutation($to: DateTimeISO) { advanceTestClock(to: $to) { now } }', {
      to: new Date(now + BOUND_MS + 60_000).toISOString(),
    });
    expect(far.errors?.[0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'to', http: { status: 400 } });
    expect(await offsetOf(m)).toBe(0);
    const q = await m.test.gql('{ testClock { now advanceTarget advanceInterruptedAt } }');
    expect(q.data.testClock).toMatchObject({ advanceTarget: null, advanceInterruptedAt: null });
  });

  it('exactly 366 days is accepted, by seconds and by to (REST and GraphQL)', async () => {
    const m = await h.merchant();
    const t0 = (await h.clock.now(m)).getTime();
    const a = await ok(m.test.post('/test-clock/advance', { seconds: MAX_ADVANCE_SECONDS }));
    expect(a).toMatchObject({ object: 'test_clock', advance_target: null, advance_interrupted_at: null });
    const moved = Date.parse(a.now) - t0;
    expect(moved >= BOUND_MS && moved < BOUND_MS + 5_000).toBe(true);

    const t1 = (await h.clock.now(m)).getTime();
    const to = new Date(t1 + BOUND_MS).toISOString(); // 366 days after the clock read here: less after the server's read
    expect(await ok(m.test.post('/test-clock/advance', { to }))).toMatchObject({ now: to, advance_target: null });

    const g = await m.test.gql(
      `mutation { advanceTestClock(seconds: ${MAX_ADVANCE_SECONDS}) { now advanceTarget advanceInterruptedAt } }`,
    );
    expect(g.errors).toBeUndefined();
    expect(Date.parse(g.data.advanceTestClock.now) - Date.parse(to)).toBeGreaterThanOrEqual(BOUND_MS);
  });
});

describe('an advance stops when its client leaves or the service stops', () => {
  it('a client that leaves mid-advance: the advance stops soon, consistent; GET reports it; the next advance resumes to its target', async () => {
    const { m, sub } = await dailySubscriber();
    const t0 = (await h.clock.now(m)).getTime();
    const leave = new AbortController();
    const call = advanceCall(h.app.url, m, { seconds: MAX_ADVANCE_SECONDS }, leave.signal);
    await eventually(async () => (await renewals(m)) >= 5, 60_000, 'renewals during the advance');
    leave.abort();
    const left = Date.now();
    expect(await call).toMatchObject({ status: 0, error: { name: 'AbortError' } });

    // The server notices and stops: the record shows where, within a few seconds.
    const stopped = await eventually(
      async () => {
        const s = await ok(m.test.get('/test-clock'));
        return s.advance_interrupted_at ? s : null;
      },
      10_000,
      'the interrupted advance recorded',
    );
    expect(Date.now() - left).toBeLessThan(10_000);
    const count = await stillAfterASecond(m);
    expect(count).toBeLessThan(360); // far from the 366 renewals a finished advance makes
    const target = Date.parse(stopped.advance_target);
    expect(target - t0 >= BOUND_MS && target - t0 < BOUND_MS + 5_000).toBe(true);
    const at = new Date(stopped.advance_interrupted_at);
    expect(at.getTime()).toBeLessThan(target);
    await consistentAt(m, sub, at);
    // The clock stayed where the advance stopped (plus the wall time since).
    expect(Date.parse(stopped.now) - at.getTime()).toBeLessThan(15_000);
    // GraphQL reads the same record.
    const q = await m.test.gql('{ testClock { advanceTarget advanceInterruptedAt } }');
    expect(q.data.testClock).toEqual({
      advanceTarget: stopped.advance_target,
      advanceInterruptedAt: stopped.advance_interrupted_at,
    });

    // The next advance (a short one) resumes to the old target: the later of the two.
    const next = await ok(m.test.post('/test-clock/advance', { seconds: 60 }));
    expect(next).toEqual({
      object: 'test_clock',
      now: stopped.advance_target,
      advance_target: null,
      advance_interrupted_at: null,
    });
    await consistentAt(m, sub, new Date(target));
    expect(await ok(m.test.get('/test-clock'))).toMatchObject({ advance_target: null, advance_interrupted_at: null });
  });

  it('GraphQL over HTTP: a client that leaves mid-advanceTestClock stops it too', async () => {
    const { m, sub } = await dailySubscriber();
    const leave = new AbortController();
    const call = fetch(`${h.app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.keys.test}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: `mutation { advanceTestClock(seconds: ${MAX_ADVANCE_SECONDS}) { now } }` }),
      signal: leave.signal,
    }).catch((err: Error) => err);
    await eventually(async () => (await renewals(m)) >= 3, 60_000, 'renewals during the advance');
    leave.abort();
    expect(await call).toMatchObject({ name: 'AbortError' });
    await expectStoppedConsistently(m, sub);
  });

  it('GraphQL over WebSocket: a socket that closes mid-advanceTestClock stops it too', async () => {
    const { m, sub } = await dailySubscriber();
    const client = wsClient(m.keys.test);
    client.subscribe(
      { query: `mutation { advanceTestClock(seconds: ${MAX_ADVANCE_SECONDS}) { now } }` },
      { next: () => undefined, error: () => undefined, complete: () => undefined },
    );
    await eventually(async () => (await renewals(m)) >= 3, 60_000, 'renewals during the advance');
    await client.dispose();
    await expectStoppedConsistently(m, sub);
  });

  it('the service stopping mid-advance: the advance answers where it stopped, the app closes promptly, the next advance resumes', async () => {
    const { m, sub } = await dailySubscriber();
    const other = await startSecondApp(h.app);
    let closed = false;
    try {
      const call = advanceCall(other.url, m, { seconds: MAX_ADVANCE_SECONDS });
      await eventually(async () => (await renewals(m)) >= 5, 60_000, 'renewals during the advance');
      const closing = Date.now();
      const close = other.close().then(() => (closed = true));
      const answer = await call;
      await close;
      expect(Date.now() - closing).toBeLessThan(8_000); // well inside the drain's 10 s: the advance did not run on
      // The client was still there: it is told where the advance stopped.
      expect(answer.status).toBe(200);
      const { body } = answer as { body: any };
      expect(body.advance_interrupted_at).toEqual(body.now);
      expect(Date.parse(body.advance_target)).toBeGreaterThan(Date.parse(body.now));
      expect(await stillAfterASecond(m)).toBeLessThan(360);
      await consistentAt(m, sub, new Date(body.now));

      const got = await ok(m.test.get('/test-clock'));
      expect(got).toMatchObject({
        advance_target: body.advance_target,
        advance_interrupted_at: body.advance_interrupted_at,
      });
      const g = await m.test.gql(
        'mutation { advanceTestClock(seconds: 0) { now advanceTarget advanceInterruptedAt } }',
      );
      expect(g.data.advanceTestClock).toEqual({
        now: body.advance_target,
        advanceTarget: null,
        advanceInterruptedAt: null,
      });
      await consistentAt(m, sub, new Date(body.advance_target));
    } finally {
      if (!closed) await other.close();
    }
  });

  it('stops between two steps of due work, never inside one (the Clock, with a signal that aborts during a step)', async () => {
    const m = await h.merchant();
    const clock = h.app.app.services.clock;
    const start = (await clock.now(m.id, Mode.TEST)).getTime();
    const due = [10_000, 20_000, 30_000, 40_000].map((d) => start + d);
    const ran: { at: number; finished: boolean }[] = [];
    const stop = new AbortController();
    clock.register({
      name: 'bounds test work',
      nextDue: async (merchantId, until) => {
        if (merchantId !== m.id) return null;
        const next = due.filter((d) => d <= until.getTime()).sort((x, y) => x - y)[0];
        return next === undefined ? null : new Date(next);
      },
      runDue: async (merchantId, at) => {
        const step = { at: at.getTime() - start, finished: false };
        ran.push(step);
        if (step.at === 20_000) stop.abort(new Error('stop now')); // mid-step: this step still finishes
        await sleep(200);
        for (let i = due.length - 1; i >= 0; i--) if (due[i] <= at.getTime()) due.splice(i, 1);
        step.finished = true;
      },
    });
    const s = await clock.advance(m.id, { seconds: 3600 }, stop.signal);
    expect(ran).toEqual([
      { at: 10_000, finished: true },
      { at: 20_000, finished: true },
    ]);
    expect(due).toEqual([start + 30_000, start + 40_000]);
    const stoppedAt = s.advanceInterruptedAt!.getTime() - start;
    expect(stoppedAt >= 20_000 && stoppedAt < 30_000).toBe(true);
    expect(s.now).toEqual(s.advanceInterruptedAt);
    const target = s.advanceTarget!.getTime() - start; // an hour after the clock's reading when the advance began
    expect(target >= 3600_000 && target < 3605_000).toBe(true);

    // An aborted signal from the start: nothing runs, the target is recorded for the next call.
    const again = await clock.advance(m.id, { seconds: 0 }, AbortSignal.abort());
    expect(ran).toHaveLength(2);
    expect(again.advanceTarget).toEqual(s.advanceTarget);
    expect(again.advanceInterruptedAt).not.toBeNull();

    // Resumed without a signal: the rest of the work, in order, up to the first target.
    const done = await clock.advance(m.id, { seconds: 0 });
    expect(ran.map((r) => r.at)).toEqual([10_000, 20_000, 30_000, 40_000]);
    expect(done).toEqual({ now: s.advanceTarget, advanceTarget: null, advanceInterruptedAt: null });
  });
});
