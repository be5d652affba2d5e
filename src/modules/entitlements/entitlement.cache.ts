import { LRUCache } from 'lru-cache';
import { CHANGES_CHANNEL, type Change } from '../../core/events';
import type { PgListener } from '../../core/listener';
import { logger } from '../../core/logger';
import { ENTITLEMENTS_CHANNEL } from './entitlement.store';

/**
 * Evaluations of customers' entitlements (entitlement.store.ts `evaluate`), per merchant, mode and customer, as the
 * JSON text of the entries with the stamp they were computed at.
 *
 * Never stale: an entry is only ever answered after the evaluation statement, run for this request, found the
 * customer's stamp unchanged (the tenant's link version and the row versions of all the customer's subscriptions,
 * read in the request's own snapshot, so after any transition that committed before the request arrived, in this
 * process or another). On a match the statement skips the join and the answer is not rebuilt; on a mismatch it
 * answers the fresh evaluation in the same round trip. No NOTIFY can arrive "too late": notifications only evict.
 *
 * Evictions (LISTEN on the process's one connection, src/core/listener.ts): a subscription change (`cadence_changes`,
 * topic `subscription`) drops the entry of the customer it grants to; a link change (`cadence_entitlements`) drops
 * every entry of its merchant and mode; a lost LISTEN connection drops everything once it is back, since whatever was
 * NOTIFYed meanwhile is gone. So memory holds no answer known to be outdated.
 *
 * Bounded by bytes (ENTITLEMENT_CACHE_MB, default 16; 0 turns it off): each entry weighs its JSON, stamp and key, the
 * index entries of its granting subscriptions and a fixed overhead; the least recently used go first, and an answer
 * over 1/8 of the budget is served but not kept. A customer holding one gate through one subscription weighs about
 * 700 bytes (two gates through two subscriptions about 1,000): the default 16 MiB holds some 16,000 to 24,000
 * customers. The subscription -> entry index only holds ids of entries still cached (removed with them).
 */

/** Per entry beyond its strings: the entry object, the LRU's slots, the strings' headers. */
export const ENTRY_OVERHEAD_BYTES = 256;
/** Per granting subscription: its id in the subscription -> entry index (Map slot and key string). */
const INDEX_BYTES_PER_SUBSCRIPTION = 120;

interface Entry {
  stamp: string;
  /** The entries as the statement answered them (JSON text of an array). */
  json: string;
  /** Subscriptions granting an entitlement in this answer (index keys, for eviction on their changes). */
  subscriptionIds: string[];
}

export const cacheKey = (merchantId: string, mode: string, customerId: string) => `${merchantId}:${mode}:${customerId}`;

export class EntitlementCache {
  private readonly entries: LRUCache<string, Entry> | null;
  /** `<merchant>:<mode>:<subscription id>` -> the cache key of the customer it grants to. */
  private readonly bySubscription = new Map<string, string>();
  private unlisten: (() => Promise<void>)[] = [];
  /** Counters for tests and logs. */
  readonly stats = { hits: 0, misses: 0, evictions: 0, clears: 0 };

  constructor(readonly budgetBytes: number) {
    const maxEntrySize = Math.floor(budgetBytes / 8); // one huge answer must not flush everything else
    this.entries =
      budgetBytes > 0 && maxEntrySize > ENTRY_OVERHEAD_BYTES
        ? new LRUCache<string, Entry>({
            maxSize: budgetBytes,
            maxEntrySize,
            sizeCalculation: (e, key) => EntitlementCache.weigh(key, e),
            dispose: (e, key) => this.unindex(key, e),
          })
        : null;
  }

  /**
   * Keys and stamps are ASCII; the JSON is too unless a name holds a character beyond Latin-1, which makes V8 keep
   * the whole string at two bytes a character.
   */
  private static weigh(key: string, e: Entry): number {
    const json = e.json.length * (/[^\u0000-\u00ff]/.test(e.json) ? 2 : 1);
    return (
      key.length +
      e.stamp.length +
      json +
      e.subscriptionIds.length * INDEX_BYTES_PER_SUBSCRIPTION +
      ENTRY_OVERHEAD_BYTES
    );
  }

  get enabled(): boolean {
    return this.entries !== null;
  }

  /** Bytes held, as weighed against the budget. */
  get bytes(): number {
    return this.entries?.calculatedSize ?? 0;
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  /** The stamp of the answer held for `key` (to send with the evaluation), or null. */
  stampOf(key: string): string | null {
    return this.entries?.peek(key)?.stamp ?? null;
  }

  /** The answer held for `key` if it was computed at `stamp` (the one the database just reported). */
  take(key: string, stamp: string): string | undefined {
    const e = this.entries?.peek(key);
    if (!e || e.stamp !== stamp) return undefined;
    this.entries!.get(key); // most recently used now
    this.stats.hits++;
    return e.json;
  }

  /** Keeps an answer computed at `stamp`. */
  set(key: string, stamp: string, json: string, subscriptionIds: string[]): void {
    this.stats.misses++;
    if (!this.entries) return;
    const tenant = key.slice(0, key.lastIndexOf(':') + 1);
    const entry: Entry = { stamp, json, subscriptionIds };
    this.entries.set(key, entry);
    if (this.entries.peek(key) !== entry) return; // too large to keep
    for (const id of subscriptionIds) this.bySubscription.set(tenant + id, key);
  }

  private unindex(key: string, e: Entry): void {
    const tenant = key.slice(0, key.lastIndexOf(':') + 1);
    for (const id of e.subscriptionIds)
      if (this.bySubscription.get(tenant + id) === key) this.bySubscription.delete(tenant + id);
  }

  /** A subscription changed: the customer it grants to is evaluated afresh on the next read. */
  subscriptionChanged(merchantId: string, mode: string, subscriptionId: string): void {
    const key = this.bySubscription.get(`${merchantId}:${mode}:${subscriptionId}`);
    if (key && this.entries?.delete(key)) this.stats.evictions++;
  }

  /** Links of a merchant and mode changed: all their customers are evaluated afresh. */
  linksChanged(merchantId: string, mode: string): void {
    if (!this.entries) return;
    const prefix = `${merchantId}:${mode}:`;
    for (const key of [...this.entries.keys()]) {
      if (key.startsWith(prefix) && this.entries.delete(key)) this.stats.evictions++;
    }
  }

  clear(): void {
    this.entries?.clear();
    this.bySubscription.clear();
    this.stats.clears++;
  }

  /**
   * Evicts on the process's LISTEN connection: subscription changes (the live-update channel the subscriptions
   * module NOTIFYs on every change it commits) and link changes; everything after that connection was lost.
   */
  async listen(listener: PgListener): Promise<void> {
    if (!this.entries || this.unlisten.length) return;
    this.unlisten.push(
      await listener.listen(
        CHANGES_CHANNEL,
        (payload) => this.onChange(payload),
        () => this.clearAfterLoss(),
      ),
      await listener.listen(ENTITLEMENTS_CHANNEL, (payload) => this.onLinks(payload)),
    );
  }

  async stop(): Promise<void> {
    const fns = this.unlisten.splice(0);
    for (const fn of fns) await fn();
  }

  private clearAfterLoss(): void {
    logger.info({ entries: this.size }, 'entitlement cache cleared after the LISTEN connection came back');
    this.clear();
  }

  private onChange(payload: string | undefined): void {
    if (!payload) return;
    try {
      const change = JSON.parse(payload) as Change;
      if (change.topic === 'subscription') this.subscriptionChanged(change.merchantId, change.mode, change.id);
    } catch {
      /* ChangeListener logs bad payloads on this channel */
    }
  }

  private onLinks(payload: string | undefined): void {
    try {
      const { merchantId, mode } = JSON.parse(payload ?? '') as { merchantId: string; mode: string };
      this.linksChanged(merchantId, mode);
    } catch (err) {
      logger.warn({ err }, 'bad entitlement link notification');
    }
  }
}
