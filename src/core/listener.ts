import { Client, Notification } from 'pg';
import { logger } from './logger';

/** Called with a notification's payload (NOTIFY without one: undefined). */
export type NotificationHandler = (payload: string | undefined) => void;
/**
 * Called after every reconnection, once every channel is LISTENed again, with the last moment notifications were
 * surely received before the loss: whatever was NOTIFYed after it may have been missed, so catch up from there.
 */
export type ReconnectHandler = (since: Date) => void | Promise<void>;

export interface PgListenerOptions {
  /** Reconnection delays: full jitter over min * 2^attempt, capped (defaults 100 ms and 10 s). */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** How often an idle connection is checked (default 30 s); a check or a connect slower than timeoutMs fails it. */
  heartbeatMs?: number;
  timeoutMs?: number;
}

/** Capped exponential backoff with full jitter: a random delay in [0, min(maxMs, minMs * 2^attempt)). */
export function backoffDelay(attempt: number, minMs = 100, maxMs = 10_000, random = Math.random): number {
  return Math.floor(random() * Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30)));
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The process's one LISTEN connection, shared by every channel (live changes for GraphQL subscribers, webhook
 * work for the worker). When it is lost it is closed and opened again, with capped exponential backoff and jitter,
 * for as long as it takes; at most one connection is open or opening at any time. After each reconnection every
 * channel is LISTENed again and the reconnect handlers run, so users can catch up on what was NOTIFYed meanwhile
 * (PostgreSQL keeps no notifications for a listener that was not connected).
 */
export class PgListener {
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private readonly reconnectHandlers = new Set<ReconnectHandler>();
  private readonly opts: Required<PgListenerOptions>;
  private running = false;
  /** The connection, open or opening; null while waiting to reconnect. */
  private client: Client | null = null;
  /** Connected and LISTENing on `listening` (channels LISTENed on `client`). */
  private up = false;
  private listening = new Set<string>();
  private caughtUp = false;
  private failures = 0;
  /** Notifications were surely received up to here on the current connection (a heartbeat or one arrived). */
  private aliveAt = new Date();
  /** Set while down: catch up from here on the next connection. */
  private missedSince: Date | null = null;
  private retry: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  /** The lost connection being closed: the next one opens only after it (never two at once). */
  private closing: Promise<void> = Promise.resolve();
  private opening: Promise<void> = Promise.resolve();

  constructor(
    private readonly url: string,
    options: PgListenerOptions = {},
  ) {
    this.opts = { minDelayMs: 100, maxDelayMs: 10_000, heartbeatMs: 30_000, timeoutMs: 10_000, ...options };
  }

  /** Connected, LISTENing on every channel, and the reconnect handlers of the last reconnection have run. */
  get ready(): boolean {
    return this.up && this.caughtUp;
  }

  /**
   * Calls `handler` for every notification on `channel` (a plain lower-case identifier), and `onReconnect` (if given)
   * after every reconnection, to catch up on what was NOTIFYed meanwhile. Resolves once the channel is LISTENed when
   * connected (at once otherwise: the next connection LISTENs it). Answers the one function that stops both.
   */
  async listen(
    channel: string,
    handler: NotificationHandler,
    onReconnect?: ReconnectHandler,
  ): Promise<() => Promise<void>> {
    if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
    const offReconnect = onReconnect ? this.onReconnect(onReconnect) : () => undefined;
    let set = this.handlers.get(channel);
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
    const client = this.client;
    if (client && this.up && !this.listening.has(channel))
      await this.run(client, `listen ${channel}`).then(
        () => this.listening.add(channel),
        () => undefined,
      );
    return async () => {
      offReconnect();
      const handlers = this.handlers.get(channel);
      if (!handlers?.delete(handler) || handlers.size) return;
      this.handlers.delete(channel);
      const c = this.client;
      if (c && this.up && this.listening.delete(channel))
        await this.run(c, `unlisten ${channel}`).catch(() => undefined);
    };
  }

  /** Calls `fn` after every reconnection (not the first connection); answers the function that unregisters it. */
  private onReconnect(fn: ReconnectHandler): () => void {
    this.reconnectHandlers.add(fn);
    return () => void this.reconnectHandlers.delete(fn);
  }

  /** Connects; resolves after the first attempt, whatever its outcome (a failed one is retried in the background). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.open();
    await this.opening;
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.retry) clearTimeout(this.retry);
    if (this.heartbeat) clearTimeout(this.heartbeat);
    this.retry = this.heartbeat = null;
    const c = this.client;
    this.client = null;
    this.up = false;
    if (c) this.close(c);
    await this.closing;
  }

  private open(): void {
    this.retry = null;
    if (!this.running || this.client) return;
    const client = new Client({
      connectionString: this.url,
      application_name: 'cadence-listener',
      // A peer that vanished without closing (host down, network cut) is noticed by the heartbeat's timeout and,
      // below it, by TCP keepalive; a connect that hangs fails after timeoutMs.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: this.opts.timeoutMs,
      query_timeout: this.opts.timeoutMs,
    });
    this.client = client;
    this.up = false;
    this.caughtUp = false;
    this.listening = new Set();
    let lastError: unknown;
    client.on('error', (err) => {
      lastError = err;
      this.lost(client, err);
    });
    client.on('end', () => this.lost(client, lastError));
    client.on('notification', (msg) => this.deliver(client, msg));
    this.opening = this.establish(client);
  }

  private async establish(client: Client): Promise<void> {
    try {
      await client.connect();
      // Channels added while this runs are picked up by the loop; once it ends, listen() LISTENs them itself.
      for (;;) {
        const next = [...this.handlers.keys()].find((c) => !this.listening.has(c));
        if (!next) break;
        await client.query(`listen ${next}`);
        this.listening.add(next);
      }
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.client !== client) return; // lost or stopped meanwhile
    this.up = true;
    this.failures = 0;
    this.aliveAt = new Date();
    this.beat(client);
    const since = this.missedSince;
    this.missedSince = null;
    logger.info({ channels: [...this.listening], reconnected: since !== null }, 'LISTEN connection open');
    if (since) {
      await Promise.all(
        [...this.reconnectHandlers].map(async (fn) => {
          try {
            await fn(since);
          } catch (err) {
            logger.warn({ err }, 'reconnect handler failed');
          }
        }),
      );
    }
    if (this.client === client) this.caughtUp = true;
  }

  /** The connection is gone (or failed to open): close it and open another after a backoff delay. */
  private lost(client: Client, err: unknown): void {
    try {
      if (this.client !== client) return; // already handled, or stopped
      const wasUp = this.up;
      this.client = null;
      this.up = false;
      this.caughtUp = false;
      if (this.heartbeat) clearTimeout(this.heartbeat);
      this.heartbeat = null;
      if (wasUp) {
        // A message from the server (it has a SQLSTATE, e.g. 57P01 on pg_terminate_backend) came after everything
        // sent before it; a silent loss leaves only the last sign of life.
        const said =
          typeof (err as { code?: unknown })?.code === 'string' && /^[0-9A-Z]{5}$/.test((err as { code: string }).code);
        this.missedSince = said ? new Date() : this.aliveAt;
      } else {
        this.missedSince ??= new Date(this.aliveAt);
      }
      this.close(client);
      if (!this.running) return;
      const delay = backoffDelay(this.failures++, this.opts.minDelayMs, this.opts.maxDelayMs);
      logger.warn(
        { err, attempt: this.failures, retry_in_ms: delay },
        wasUp ? 'LISTEN connection lost; reconnecting' : 'LISTEN connection failed; retrying',
      );
      const closing = this.closing;
      this.retry = setTimeout(() => void closing.then(() => this.open()), delay);
      this.retry.unref();
    } catch (e) {
      logger.error({ err: e }, 'LISTEN connection: handling a loss failed');
    }
  }

  /** Detaches and ends a connection; a late error from it is ignored. Never waits more than 2 s. */
  private close(client: Client): void {
    client.removeAllListeners('notification');
    client.removeAllListeners('error');
    client.removeAllListeners('end');
    client.on('error', () => undefined);
    const ended = client.end().catch(() => undefined);
    const capped = new Promise<void>((resolve) => setTimeout(resolve, 2000).unref());
    const previous = this.closing;
    this.closing = Promise.all([previous, Promise.race([ended, capped])]).then(() => undefined);
  }

  private deliver(client: Client, msg: Notification): void {
    if (this.client !== client) return;
    this.aliveAt = new Date();
    for (const handler of this.handlers.get(msg.channel) ?? []) {
      try {
        handler(msg.payload);
      } catch (err) {
        logger.warn({ err, channel: msg.channel }, 'notification handler failed');
      }
    }
  }

  /**
   * Checks the idle connection every heartbeatMs. The check LISTENs again on a channel it already LISTENs (a no-op
   * round trip), so pg_stat_activity keeps showing this connection by its LISTEN.
   */
  private beat(client: Client): void {
    this.heartbeat = setTimeout(() => {
      if (this.client !== client) return;
      const channel = [...this.listening][0];
      this.run(client, channel ? `listen ${channel}` : 'select 1').then(
        () => {
          this.aliveAt = new Date();
          if (this.client === client) this.beat(client);
        },
        () => undefined,
      );
    }, this.opts.heartbeatMs);
    this.heartbeat.unref();
  }

  /** A statement on the connection; a failure (a broken connection or a timeout) drops the connection. */
  private async run(client: Client, sql: string): Promise<void> {
    try {
      await client.query(sql);
    } catch (err) {
      this.lost(client, err);
      throw err;
    }
  }
}
