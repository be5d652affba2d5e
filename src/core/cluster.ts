import cluster, { Worker } from 'node:cluster';
import { logger } from './logger';
import type { ConnectionBudget } from './pool';

/**
 * A fixed number of processes forked from this one with node:cluster, sharing its listening ports (the primary
 * hands connections to them in turn). Each tells the primary when it listens (`groupMember().listening`); one that
 * dies is replaced after a backoff; `stop` lets every one drain (SIGTERM: its own graceful stop) before returning.
 */

/** What a member sends the primary once it listens. */
interface ListeningMessage {
  cadence: 'listening';
  url: string;
  connections: ConnectionBudget['byServer'];
}

const isListening = (m: unknown): m is ListeningMessage => (m as ListeningMessage | null)?.cadence === 'listening';

export interface GroupMember {
  pid: number;
  /** Where it answers. */
  url: string;
  /** The most database connections it opens, per server (src/core/pool.ts connectionBudget). */
  connections: ConnectionBudget['byServer'];
}

/** In a process forked by a ClusterGroup: its log lines carry its pid, and `listening` tells the primary. Null elsewhere. */
export function groupMember(): { listening(url: string, connections: ConnectionBudget['byServer']): void } | null {
  if (!cluster.isWorker) return null;
  logger.setBindings({ pid: process.pid }); // the group shares stdout: each line says whose it is
  return {
    // The callback takes a send error (the primary gone: the member exits on the disconnect anyway).
    listening: (url, connections) =>
      void process.send?.(
        { cadence: 'listening', url, connections } satisfies ListeningMessage,
        undefined,
        undefined,
        () => undefined,
      ),
  };
}

export interface ClusterGroupOptions {
  /** What a member is called in logs and errors ("API process"). */
  name: string;
  size: number;
  /** Added to this process's environment for every member. */
  env: Record<string, string>;
  /** A replacement waits `firstMs`, doubling on each death to `maxMs`; back to `firstMs` once one lived `resetAfterMs`. */
  backoff?: { firstMs: number; maxMs: number; resetAfterMs: number };
  /** Every other message a member sends (GET /metrics asks the supervisor through it: src/http/metrics-cluster.ts). */
  onMessage?: (worker: Worker, message: unknown) => void;
}

export class ClusterGroup {
  private readonly members = new Map<Worker, { forkedAt: number; info: GroupMember | null }>();
  private readonly backoff: { firstMs: number; maxMs: number; resetAfterMs: number };
  private delayMs: number;
  private readonly replacements = new Set<NodeJS.Timeout>();
  private stopping = false;
  /** Set while `start` waits for the first members to listen. */
  private starting: { resolve(): void; reject(err: Error): void } | null = null;

  constructor(private readonly opts: ClusterGroupOptions) {
    this.backoff = opts.backoff ?? { firstMs: 1_000, maxMs: 30_000, resetAfterMs: 60_000 };
    this.delayMs = this.backoff.firstMs;
  }

  /**
   * Forks the members and resolves once every one listens. One that exits first fails the start (a port in use, a
   * bad setting: replacing it would fail the same way): the others are stopped and it rejects.
   */
  async start(): Promise<void> {
    const ready = new Promise<void>((resolve, reject) => (this.starting = { resolve, reject }));
    for (let i = 0; i < this.opts.size; i++) this.fork();
    try {
      await ready;
    } catch (err) {
      await this.stop(5_000);
      throw err;
    }
  }

  /** The members listening now. */
  listening(): GroupMember[] {
    return [...this.members.values()].flatMap((m) => (m.info ? [m.info] : []));
  }

  /** The members listening now, as node:cluster's workers. */
  workers(): Worker[] {
    return [...this.members].flatMap(([worker, m]) => (m.info && !worker.isDead() ? [worker] : []));
  }

  /** SIGTERM to every member, SIGKILL to those still running after `drainMs`; resolves once all have exited. */
  async stop(drainMs: number): Promise<void> {
    this.stopping = true;
    for (const t of this.replacements) clearTimeout(t);
    this.replacements.clear();
    await Promise.all([...this.members.keys()].map((w) => this.end(w, drainMs)));
  }

  private end(worker: Worker, drainMs: number): Promise<void> {
    return new Promise((resolve) => {
      if (worker.isDead()) return resolve();
      const kill = setTimeout(() => {
        logger.warn({ memberPid: worker.process.pid, drainMs }, `${this.opts.name} still running: killed`);
        worker.process.kill('SIGKILL');
      }, drainMs);
      worker.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      worker.process.kill('SIGTERM');
    });
  }

  private fork(): void {
    let worker: Worker;
    try {
      worker = cluster.fork(this.opts.env);
    } catch (err) {
      // Out of processes or memory: try again later rather than take the primary down.
      logger.error({ err }, `${this.opts.name} could not be started`);
      this.replaceLater();
      return;
    }
    const member: { forkedAt: number; info: GroupMember | null } = { forkedAt: Date.now(), info: null };
    this.members.set(worker, member);
    worker.on('message', (message: unknown) => {
      if (!isListening(message)) return this.opts.onMessage?.(worker, message);
      member.info = { pid: worker.process.pid!, url: message.url, connections: message.connections };
      logger.info({ memberPid: member.info.pid, url: message.url }, `${this.opts.name} listening`);
      if (this.starting && this.listening().length === this.opts.size) {
        this.starting.resolve();
        this.starting = null;
      }
    });
    // A failed message to a dying member, say: the exit that follows is what counts.
    worker.on('error', (err) =>
      logger.warn({ err, memberPid: worker.process.pid }, `${this.opts.name}: channel error`),
    );
    worker.once('exit', (code, signal) => this.exited(worker, code, signal));
  }

  private exited(worker: Worker, code: number | null, signal: string | null): void {
    const member = this.members.get(worker);
    this.members.delete(worker);
    if (this.stopping) return;
    const pid = worker.process.pid;
    const how = signal ? `signal ${signal}` : `code ${code}`;
    if (this.starting) {
      this.starting.reject(new Error(`${this.opts.name} ${pid} exited during start-up (${how}); its output says why`));
      this.starting = null;
      return;
    }
    if (member && Date.now() - member.forkedAt >= this.backoff.resetAfterMs) this.delayMs = this.backoff.firstMs;
    logger.error(
      { memberPid: pid, code, signal, replaceInMs: this.delayMs },
      `${this.opts.name} died (${how}): replacing it`,
    );
    this.replaceLater();
  }

  private replaceLater(): void {
    const timer = setTimeout(() => {
      this.replacements.delete(timer);
      if (!this.stopping) this.fork();
    }, this.delayMs);
    this.replacements.add(timer);
    this.delayMs = Math.min(this.delayMs * 2, this.backoff.maxMs);
  }
}
