import crypto from 'node:crypto';
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { logger } from '../core/logger';

/**
 * GET /metrics with API_PROCESSES > 1 (docs/production.md, "Metrics"): the processes share one port, so a scrape lands
 * on any one of them and must answer for the whole group. The API process that got it asks the supervisor (node:cluster
 * IPC); the supervisor asks every API process for its own metrics, adds them up with its own (background work, its
 * pool) and the queue depths it reads once (prom-client's AggregatorRegistry: counters and histograms summed, as are
 * the pools' gauges), and the API process answers with the text.
 */

type Metrics = MetricObjectWithValues<MetricValue<string>>[];

/** Member → supervisor: a scrape; supervisor → member: its answer. */
interface Scrape {
  cadence: 'metrics?';
  id: string;
}
interface ScrapeAnswer {
  cadence: 'metrics';
  id: string;
  text?: string;
  error?: string;
}
/** Supervisor → member: your own metrics, please; member → supervisor: them. */
interface PartRequest {
  cadence: 'metrics-part?';
  id: string;
}
interface Part {
  cadence: 'metrics-part';
  id: string;
  metrics?: Metrics;
  error?: string;
}

type Message = Scrape | ScrapeAnswer | PartRequest | Part;
const kind = (m: unknown): Message['cadence'] | undefined => (m as { cadence?: Message['cadence'] } | null)?.cadence;

/** How long a scrape waits for the supervisor, and the supervisor for each API process. */
const SCRAPE_MS = 10_000;
const PART_MS = 5_000;

/** In an API process of a group: answers the supervisor with `local`'s metrics, and sends scrapes to it. */
export function memberMetrics(local: () => Promise<Metrics>): { scrape(): Promise<string>; stop(): void } {
  const waiting = new Map<string, (answer: ScrapeAnswer) => void>();
  const send = (m: Message) => void process.send?.(m, undefined, undefined, () => undefined);
  const onMessage = (m: unknown) => {
    const k = kind(m);
    if (k === 'metrics-part?') {
      const { id } = m as PartRequest;
      local().then(
        (metrics) => send({ cadence: 'metrics-part', id, metrics }),
        (err: unknown) => send({ cadence: 'metrics-part', id, error: String(err) }),
      );
    } else if (k === 'metrics') {
      const answer = m as ScrapeAnswer;
      waiting.get(answer.id)?.(answer);
    }
  };
  process.on('message', onMessage);
  return {
    scrape: () =>
      new Promise<string>((resolve, reject) => {
        const id = crypto.randomUUID();
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error('the supervisor did not answer the metrics scrape'));
        }, SCRAPE_MS);
        waiting.set(id, (answer) => {
          clearTimeout(timer);
          waiting.delete(id);
          if (answer.text !== undefined) resolve(answer.text);
          else reject(new Error(answer.error ?? 'no metrics'));
        });
        send({ cadence: 'metrics?', id });
      }),
    stop: () => void process.off('message', onMessage),
  };
}

/**
 * In the supervisor: answers scrapes from its API processes. `own`: the supervisor's metrics (its process, pool and
 * the queue depths); `members`: the API processes listening now. Give it every message a member sends (`onMessage`).
 */
export class GroupMetrics {
  private readonly parts = new Map<string, (part: Part) => void>();

  constructor(
    private readonly own: () => Promise<Metrics[]>,
    private readonly members: () => Worker[],
  ) {}

  onMessage(worker: Worker, message: unknown): void {
    const k = kind(message);
    if (k === 'metrics-part') this.parts.get((message as Part).id)?.(message as Part);
    else if (k === 'metrics?') {
      const { id } = message as Scrape;
      const reply = (m: ScrapeAnswer) => {
        if (worker.isConnected()) worker.send(m, undefined, () => undefined);
      };
      this.aggregate().then(
        (text) => reply({ cadence: 'metrics', id, text }),
        (err: unknown) => {
          logger.warn({ err }, 'metrics scrape failed');
          reply({ cadence: 'metrics', id, error: String(err) });
        },
      );
    }
  }

  private async aggregate(): Promise<string> {
    const fromMembers = await Promise.all(this.members().map((w) => this.part(w)));
    const all = [...fromMembers.filter((m): m is Metrics => m !== null), ...(await this.own())];
    return AggregatorRegistry.aggregate(all).metrics();
  }

  /** One API process's metrics; null when it does not answer in time (it is dying, say): the scrape goes on without. */
  private part(worker: Worker): Promise<Metrics | null> {
    return new Promise((resolve) => {
      const id = crypto.randomUUID();
      const done = (metrics: Metrics | null) => {
        clearTimeout(timer);
        this.parts.delete(id);
        resolve(metrics);
      };
      const timer = setTimeout(() => {
        logger.warn({ memberPid: worker.process.pid }, 'an API process did not answer for its metrics');
        done(null);
      }, PART_MS);
      this.parts.set(id, (p) => done(p.metrics ?? null));
      if (!worker.isConnected()) return done(null);
      worker.send({ cadence: 'metrics-part?', id } satisfies PartRequest, undefined, (err) => err && done(null));
    });
  }
}
