import autocannon from 'autocannon';
import http from 'node:http';

export interface LoadRequest {
  url: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  /** Per-request hook (autocannon's setupRequest), e.g. a fresh Idempotency-Key for each POST. */
  setupRequest?: autocannon.Request['setupRequest'];
  /**
   * Offered load in requests per second, sent at evenly spaced instants (open loop, see runPaced); unset: as fast as
   * the connections are answered (closed loop, autocannon).
   */
  rate?: number;
}

export interface LoadResult {
  seconds: number;
  requests: number;
  ok2xx: number;
  /** Successful (2xx) responses per second: what the ratios compare. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /**
   * Paced runs: the slowest moments, as `+<seconds into the run>: <requests due in that 100 ms> due, max <ms>`, worst
   * first (where a tail comes from: one stall, or spread out).
   */
  slowest?: string[];
}

/**
 * One run of `seconds` over up to `connections` keep-alive connections, no pipelining: closed loop with autocannon
 * (each connection sends its next request when the last is answered), or paced at `req.rate` (runPaced).
 */
export async function runLoad(req: LoadRequest, connections: number, seconds: number): Promise<LoadResult> {
  if (req.rate) return runPaced(req, req.rate, connections, seconds);
  const opts: autocannon.Options = {
    url: req.url,
    method: req.method,
    headers: req.headers,
    body: req.body,
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 30,
  };
  if (req.setupRequest) opts.requests = [{ setupRequest: req.setupRequest }];
  const r = await autocannon(opts);
  const statusCodes: Record<string, number> = {};
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = s?.count ?? 0;
  const ok2xx = r['2xx'];
  return {
    seconds: r.duration,
    requests: r.requests.total,
    ok2xx,
    rps: r.duration > 0 ? ok2xx / r.duration : 0,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    mean: r.latency.average,
    max: r.latency.max,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    statusCodes,
  };
}

const percentile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : 0);

/**
 * Open-loop load: requests start at evenly spaced instants (`rate` per second) whatever the answers, over a pool of
 * up to `connections` keep-alive sockets, and each latency counts from the instant the request was due, so a server
 * that falls behind is charged for the wait (no coordinated omission, as in wrk2). autocannon's own rate limit
 * releases every connection's request on one common tick, which makes bursts of `connections` requests instead.
 */
export async function runPaced(req: LoadRequest, rate: number, connections: number, seconds: number): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL(req.url);
  const latencies: number[] = [];
  /** Per 100 ms of due time: requests and their worst latency. */
  const windows = new Map<number, { n: number; max: number }>();
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let ok2xx = 0;
  let non2xx = 0;
  const send = (due: number) =>
    new Promise<void>((resolve) => {
      const base = { method: req.method, path: url.pathname + url.search, headers: req.headers, body: req.body };
      const setup = req.setupRequest as ((r: typeof base) => typeof base) | undefined;
      const r = setup ? setup(base) : base;
      const headers: Record<string, string> = { ...r.headers };
      if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
      const out = http.request({ agent, host: url.hostname, port: url.port, method: r.method, path: r.path, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          const code = String(res.statusCode);
          statusCodes[code] = (statusCodes[code] ?? 0) + 1;
          if (code.startsWith('2')) ok2xx++;
          else non2xx++;
          const latency = performance.now() - due;
          latencies.push(latency);
          const w = Math.floor((due - start) / 100);
          const slot = windows.get(w) ?? { n: 0, max: 0 };
          slot.n++;
          slot.max = Math.max(slot.max, latency);
          windows.set(w, slot);
          resolve();
        });
      });
      out.on('error', () => {
        errors++;
        resolve();
      });
      out.end(r.body);
    });
  const start = performance.now();
  const startedAt = Date.now();
  const total = Math.round(rate * seconds);
  // A count of answers, not an array of every request's promise: the generator's own GC pauses delay sends, and
  // this run charges them to the service (latency counts from the due time), so it keeps little alive.
  let answered = 0;
  let allAnswered: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allAnswered = resolve));
  const counted = () => {
    if (++answered === total) allAnswered();
  };
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    void send(due).then(counted);
  }
  if (total > 0) await finished;
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    seconds: elapsed,
    requests: total,
    ok2xx,
    rps: ok2xx / elapsed,
    p50: round(percentile(latencies, 0.5)),
    p90: round(percentile(latencies, 0.9)),
    p99: round(percentile(latencies, 0.99)),
    mean: round(latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1)),
    max: round(latencies[latencies.length - 1] ?? 0),
    errors,
    timeouts: 0,
    non2xx,
    statusCodes,
    slowest: [...windows]
      .sort((a, b) => b[1].max - a[1].max)
      .slice(0, 5)
      .map(([w, x]) => `+${(w / 10).toFixed(1)} s (${new Date(startedAt + w * 100).toISOString().slice(11, 23)}): ${x.n} due, max ${Math.round(x.max)} ms`),
  };
}
