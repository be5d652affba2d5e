import autocannon from 'autocannon';
import net from 'node:net';

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

const percentile = (sorted: ArrayLike<number>, q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : 0;

/** One keep-alive connection of the paced sender, with the response it is reading. */
interface RawConn {
  socket: net.Socket;
  /** Bytes of the current response read so far (headers not yet complete, or a body not yet whole). */
  pending: Buffer | null;
  /** Where the body starts in `pending` (-1: headers not parsed yet) and how long it is (-2: chunked, read to its end). */
  bodyAt: number;
  bodyLength: number;
  status: number;
  close: boolean;
  /** The request being answered: when it was due, and the instant its latency counts from. */
  due: number;
  from: number;
  busy: boolean;
  dead: boolean;
}

/**
 * Open-loop load: requests start at evenly spaced instants (`rate` per second) whatever the answers, over
 * `connections` keep-alive sockets, and each latency counts from the instant the request was due (or from its
 * send, when the timer let it go early), so a server that falls behind is charged for the wait (no coordinated
 * omission, as in wrk2). autocannon's own rate limit releases every connection's request on one common tick, which
 * makes bursts of `connections` requests instead.
 *
 * Requests go out as raw HTTP/1.1 bytes on `net` sockets and answers are read with a minimal parser (status line,
 * Content-Length or chunked bodies): this process shares the machine's cores with the service, and with node's HTTP
 * client it took 17-21% of a core at 3,000 requests/s (now 11%), and its own collections (5-13 ms) were charged to the
 * service as latency.
 */
export async function runPaced(
  req: LoadRequest,
  rate: number,
  connections: number,
  seconds: number,
): Promise<LoadResult> {
  const url = new URL(req.url);
  const host = url.hostname;
  const port = Number(url.port || 80);
  const latencies = new Float64Array(Math.round(rate * seconds));
  let latencyCount = 0;
  /** Per 100 ms of due time: requests and their worst latency. */
  const windowN = new Float64Array(Math.ceil(seconds * 10) + 1);
  const windowMax = new Float64Array(windowN.length);
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let ok2xx = 0;
  let non2xx = 0;
  let answered = 0;
  const total = latencies.length;
  let allAnswered: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allAnswered = resolve));

  const base = { method: req.method, path: url.pathname + url.search, headers: req.headers, body: req.body };
  const setup = req.setupRequest as ((r: typeof base) => typeof base) | undefined;
  const hostHeader = `${host}:${port}`;
  const requestBytes = (): Buffer => {
    const r = setup ? setup(base) : base;
    let head = `${r.method} ${r.path} HTTP/1.1\r\nhost: ${hostHeader}\r\nconnection: keep-alive\r\n`;
    for (const k in r.headers) head += `${k}: ${r.headers[k]}\r\n`;
    if (r.body !== undefined) head += `content-length: ${Buffer.byteLength(r.body)}\r\n`;
    return Buffer.from(`${head}\r\n${r.body ?? ''}`);
  };
  // Without a per-request hook every request is the same bytes.
  const fixed = setup ? null : requestBytes();

  const settle = (status: number, due: number, from: number) => {
    const latency = performance.now() - from;
    if (status === 0) errors++;
    else {
      const code = String(status);
      statusCodes[code] = (statusCodes[code] ?? 0) + 1;
      if (status >= 200 && status < 300) ok2xx++;
      else non2xx++;
    }
    latencies[latencyCount++] = latency;
    const w = Math.min(windowN.length - 1, Math.floor((due - start) / 100));
    windowN[w]++;
    if (latency > windowMax[w]) windowMax[w] = latency;
    if (++answered === total) allAnswered();
  };

  const idle: RawConn[] = [];
  let open = 0;
  /** Requests due while every connection was busy: their due instants, oldest first. */
  const queue: number[] = [];
  let queueHead = 0;

  const connect = (): RawConn => {
    open++;
    const socket = net.connect({ host, port, noDelay: true });
    const c: RawConn = {
      socket,
      pending: null,
      bodyAt: -1,
      bodyLength: 0,
      status: 0,
      close: false,
      due: 0,
      from: 0,
      busy: false,
      dead: false,
    };
    socket.on('data', (chunk: Buffer) => onData(c, chunk));
    // A connection lost mid-request counts that request as an error; the next due request opens another.
    const lost = () => {
      if (c.dead) return;
      kill(c);
      if (c.busy) {
        c.busy = false;
        settle(0, c.due, c.from);
      }
      drain();
    };
    socket.on('error', lost);
    socket.on('close', lost);
    return c;
  };

  const kill = (c: RawConn) => {
    c.dead = true;
    open--;
    const i = idle.indexOf(c);
    if (i >= 0) idle.splice(i, 1);
    c.socket.destroy();
  };

  const send = (c: RawConn, due: number) => {
    c.busy = true;
    c.pending = null;
    c.bodyAt = -1;
    c.due = due;
    c.from = Math.min(due, performance.now());
    c.socket.write(fixed ?? requestBytes());
  };

  /**
   * Sends what waited for a connection, oldest first, on the connection idle longest: every connection stays in use,
   * as wrk's do (taking the last one freed left the others idle until the server's keep-alive timeout closed them,
   * and a burst then paid for new connections).
   */
  const drain = () => {
    while (queueHead < queue.length) {
      const c = idle.shift() ?? (open < connections ? connect() : undefined);
      if (!c) return;
      send(c, queue[queueHead++]);
    }
  };

  const onData = (c: RawConn, chunk: Buffer) => {
    const buf = c.pending ? Buffer.concat([c.pending, chunk]) : chunk;
    c.pending = buf;
    if (c.bodyAt === -1) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.toString('latin1', 0, end);
      c.status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      c.close = /\r\nconnection:\s*close/i.test(head);
      c.bodyAt = end + 4;
      if (length) c.bodyLength = Number(length[1]);
      else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) c.bodyLength = -2;
      else c.bodyLength = 0;
    }
    if (c.bodyLength >= 0 ? buf.length - c.bodyAt < c.bodyLength : !chunkedComplete(buf, c.bodyAt)) return;
    c.pending = null;
    c.busy = false;
    settle(c.status, c.due, c.from);
    if (c.close) kill(c);
    else idle.push(c);
    drain();
  };

  // Every connection is open before the first request is due (wrk2 connects first, too): a run measures requests,
  // not TCP handshakes and the server's accepts.
  await Promise.all(
    Array.from({ length: connections }, () => {
      const c = connect();
      return new Promise<void>((resolve) => {
        c.socket.once('connect', () => {
          idle.push(c);
          resolve();
        });
        c.socket.once('error', () => resolve());
      });
    }),
  );
  const start = performance.now();
  const startedAt = Date.now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    queue.push(due);
    drain();
  }
  if (total > 0) await finished;
  const elapsed = (performance.now() - start) / 1000;
  for (const c of [...idle]) kill(c);
  const sorted = latencies.subarray(0, latencyCount).sort();
  const round = (x: number) => Math.round(x * 100) / 100;
  const windows = [...windowN.keys()].filter((w) => windowN[w] > 0);
  return {
    seconds: elapsed,
    requests: total,
    ok2xx,
    rps: ok2xx / elapsed,
    p50: round(percentile(sorted, 0.5)),
    p90: round(percentile(sorted, 0.9)),
    p99: round(percentile(sorted, 0.99)),
    mean: round(sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1)),
    max: round(sorted[sorted.length - 1] ?? 0),
    errors,
    timeouts: 0,
    non2xx,
    statusCodes,
    slowest: windows
      .sort((a, b) => windowMax[b] - windowMax[a])
      .slice(0, 5)
      .map(
        (w) =>
          `+${(w / 10).toFixed(1)} s (${new Date(startedAt + w * 100).toISOString().slice(11, 23)}): ${windowN[w]} due, max ${Math.round(windowMax[w])} ms`,
      ),
  };
}

/** Whether a chunked body starting at `at` is complete (its zero-length last chunk and final CRLF are in). */
function chunkedComplete(buf: Buffer, at: number): boolean {
  let i = at;
  for (;;) {
    const eol = buf.indexOf('\r\n', i);
    if (eol < 0) return false;
    const size = parseInt(buf.toString('latin1', i, eol), 16);
    if (Number.isNaN(size)) throw new Error('paced load: bad chunk size');
    // The last chunk, then optional trailers, then an empty line.
    if (size === 0) return buf.indexOf('\r\n\r\n', eol) >= 0;
    i = eol + 2 + size + 2;
    if (i > buf.length) return false;
  }
}
