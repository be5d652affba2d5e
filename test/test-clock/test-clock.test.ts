import { Mode } from '../../src/core/entity';
import { TestMerchant, useHarness } from '../harness';

const h = useHarness();
let m: TestMerchant;
beforeAll(async () => {
  m = await h.merchant();
});

const near = (iso: string, ms: number, slack = 5_000) => Math.abs(Date.parse(iso) - ms) < slack;

describe('GET /test-clock and POST /test-clock/advance', () => {
  it('starts at the wall clock and moves forward by seconds or to a time', async () => {
    const now = await m.test.get('/test-clock');
    expect(now.status).toBe(200);
    expect(now.body).toEqual({
      object: 'test_clock',
      now: expect.stringMatching(/Z$/),
      advance_target: null,
      advance_interrupted_at: null,
    });
    expect(near(now.body.now, Date.now())).toBe(true);

    const a = await m.test.post('/test-clock/advance', { seconds: 3600 });
    expect(a.status).toBe(200);
    expect(near(a.body.now, Date.now() + 3600_000)).toBe(true);
    expect(near((await m.test.get('/test-clock')).body.now, Date.now() + 3600_000)).toBe(true);

    const to = new Date(Date.now() + 40 * 86400_000).toISOString();
    const b = await m.test.post('/test-clock/advance', { to });
    expect([b.status, b.body.now]).toEqual([200, to]);

    // other merchants and the live mode keep the wall clock
    const other = await h.merchant();
    expect(near((await other.test.get('/test-clock')).body.now, Date.now())).toBe(true);
    expect(near((await h.app.app.services.clock.now(m.id, Mode.LIVE)).toISOString(), Date.now())).toBe(true);
  });

  it('refuses going back, bad input, and live keys', async () => {
    const cases: [Record<string, unknown> | undefined, string, string | null][] = [
      [{ to: '2001-01-01T00:00:00Z' }, 'parameter_invalid', 'to'],
      [{ seconds: -5 }, 'parameter_invalid', 'seconds'],
      [{ seconds: 1.5 }, 'parameter_invalid', 'seconds'],
      [{ to: 'tomorrow' }, 'parameter_invalid', 'to'],
      [{ seconds: 5, to: new Date(Date.now() + 864e8).toISOString() }, 'parameter_invalid', 'to'],
      [{}, 'parameter_missing', 'seconds'],
      [{ days: 1 }, 'parameter_unknown', 'days'],
    ];
    for (const [body, code, param] of cases) {
      const r = await m.test.post('/test-clock/advance', body);
      expect([JSON.stringify(body), r.status, r.body.error?.code, r.body.error?.param]).toEqual([
        JSON.stringify(body),
        400,
        code,
        param,
      ]);
    }
    for (const r of [await m.live.get('/test-clock'), await m.live.post('/test-clock/advance', { seconds: 1 })]) {
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'test_mode_only' });
    }
  });

  it('runs registered due work in time order, each at its own time, before answering', async () => {
    const fresh = await h.merchant();
    const start = Date.parse((await fresh.test.get('/test-clock')).body.now);
    const due = [start + 20_000, start + 5_000, start + 90_000, start + 10_000]; // 90 s is beyond the advance
    const ran: { at: number; clock: number }[] = [];
    h.app.app.services.clock.register({
      name: 'test work',
      nextDue: async (merchantId, until) => {
        if (merchantId !== fresh.id) return null;
        const next = due.filter((d) => d <= until.getTime()).sort((x, y) => x - y)[0];
        return next === undefined ? null : new Date(next);
      },
      runDue: async (merchantId, at) => {
        const clock = (await h.app.app.services.clock.now(merchantId, Mode.TEST)).getTime();
        for (let i = due.length - 1; i >= 0; i--) if (due[i] <= at.getTime()) due.splice(i, 1);
        ran.push({ at: at.getTime() - start, clock: clock - start });
      },
    });
    const r = await fresh.test.post('/test-clock/advance', { seconds: 60 });
    expect(r.status).toBe(200);
    expect(ran.map((x) => x.at)).toEqual([5_000, 10_000, 20_000]);
    for (const x of ran) expect(x.clock - x.at).toBeLessThan(1_000); // the clock read the work's own time
    const moved = Date.parse(r.body.now) - start; // 60 s from the clock's reading when the advance began
    expect(moved >= 60_000 && moved < 61_000).toBe(true);
    expect(due).toEqual([start + 90_000]);
  });

  it('has GraphQL equivalents', async () => {
    const q = await m.test.gql('{ testClock { object now } }');
    expect(q.data.testClock.object).toBe('test_clock');
    const before = Date.parse(q.data.testClock.now);
    const a = await m.test.gql('mutation { advanceTestClock(seconds: 120) { now } }');
    expect(Date.parse(a.data.advanceTestClock.now) - before).toBeGreaterThanOrEqual(120_000);
    const live = await m.live.gql('{ testClock { now } }');
    expect(live.errors![0].extensions).toMatchObject({ code: 'test_mode_only', http: { status: 400 } });
  });
});
