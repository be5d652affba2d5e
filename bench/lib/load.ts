import autocannon from 'autocannon';

export interface LoadRequest {
  url: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  /** Per-request hook (autocannon's setupRequest), e.g. a fresh Idempotency-Key for each POST. */
  setupRequest?: autocannon.Request['setupRequest'];
  /** Offered load in requests per second across all connections; unset: as fast as the server answers. */
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
}

/**
 * One autocannon run of `seconds` with `connections` concurrent keep-alive connections, no pipelining: closed loop
 * (each connection sends its next request when the last is answered), or at a fixed offered `rate`.
 */
export async function runLoad(req: LoadRequest, connections: number, seconds: number): Promise<LoadResult> {
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
  if (req.rate) opts.overallRate = req.rate;
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
