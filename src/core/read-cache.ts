import { LRUCache } from 'lru-cache';
import type { Mode } from './entity';
import { KeyedBatches } from './keyed-batches';

/**
 * The catalog's version for a merchant and mode (src/modules/catalog/catalog.store.ts): bumped in the transaction of
 * every catalog write, so an answer computed at the current version is still right.
 */
export type VersionSource = (merchantId: string, mode: Mode) => Promise<string>;

/** What an entry costs beyond its body and key: the entry and Buffer objects, the backing store, lru-cache's slots. */
export const ENTRY_OVERHEAD_BYTES = 256;
/** An answer above this share of the budget is served but not kept: one huge page must not flush everything else. */
export const MAX_ENTRY_SHARE = 1 / 8;

interface Entry {
  version: string;
  body: Buffer;
}

/** A version lookup waiting for its batch's query. */
interface VersionAsk {
  merchantId: string;
  mode: Mode;
  resolve: (version: string) => void;
  reject: (err: unknown) => void;
}

/** A copy in memory of its own: a small Buffer.from() is a slice of an 8 KiB shared slab it would keep alive. */
function ownBytes(body: string | Buffer, length: number): Buffer {
  const out = Buffer.allocUnsafeSlow(length);
  if (typeof body === 'string') out.write(body, 'utf8');
  else body.copy(out);
  return out;
}

/**
 * Answers of catalog reads (a REST body, a GraphQL result) as the bytes sent, per merchant, mode and normalised
 * request (src/modules/catalog/catalog-cache.ts builds the keys). Bounded by bytes, not entries: each entry weighs
 * its body, its key and a fixed overhead, and the least recently used go first until the total is within
 * `budgetBytes` (READ_CACHE_MB; 0 turns the cache off). Keys always start with the merchant and mode, so no tenant
 * is served another's answer.
 */
export class CatalogReadCache {
  private readonly entries: LRUCache<string, Entry> | null;
  /** Version lookups per merchant and mode: the requests of a batch share one query (core/keyed-batches.ts). */
  private readonly lookups = new KeyedBatches<VersionAsk>(async (asks) => {
    try {
      const version = await this.versionOf(asks[0].merchantId, asks[0].mode);
      for (const a of asks) a.resolve(version);
    } catch (err) {
      for (const a of asks) a.reject(err);
    }
  });
  readonly maxEntryBytes: number;

  /** `versionOf` runs on every cached read: a prepared statement on the service pool, not the ORM. */
  constructor(
    private readonly versionOf: VersionSource,
    readonly budgetBytes: number,
  ) {
    this.maxEntryBytes = Math.floor(budgetBytes * MAX_ENTRY_SHARE);
    this.entries =
      budgetBytes > 0 && this.maxEntryBytes > ENTRY_OVERHEAD_BYTES
        ? new LRUCache<string, Entry>({
            maxSize: budgetBytes,
            maxEntrySize: this.maxEntryBytes,
            sizeCalculation: (entry, key) => CatalogReadCache.weigh(key, entry.body.length),
          })
        : null;
  }

  /** Keys are ASCII (ids and a hex digest): one byte per character. */
  private static weigh(key: string, bodyBytes: number): number {
    return bodyBytes + key.length + ENTRY_OVERHEAD_BYTES;
  }

  /** Off when READ_CACHE_MB is 0: every read is computed, and no version lookup is spent on it. */
  get enabled(): boolean {
    return this.entries !== null;
  }

  /** Bytes held, as weighed against the budget. */
  get bytes(): number {
    return this.entries?.calculatedSize ?? 0;
  }

  /**
   * Bytes of memory the entries keep alive: their Buffers' backing stores, each counted once. Equal to the bodies'
   * sizes because every body is copied into its own memory (a small Buffer cut from a shared 8 KiB pool would keep
   * the whole pool alive); weighed entries add their keys and overhead on top, so this stays within `bytes`.
   */
  get retainedBytes(): number {
    if (!this.entries) return 0;
    const stores = new Set<ArrayBufferLike>();
    for (const entry of this.entries.values()) stores.add(entry.body.buffer);
    let n = 0;
    for (const store of stores) n += store.byteLength;
    return n;
  }

  /** Entries held. */
  get size(): number {
    return this.entries?.size ?? 0;
  }

  /**
   * The catalog version now. A lookup joins a batch only if that batch's query has not been sent yet, so the answer
   * always reflects every write committed before the request arrived. One query per merchant and mode is in flight
   * at a time: lookups arriving meanwhile wait for it to return and share the next one (under load, one query serves
   * many requests instead of one each; a lookup waits at most one round trip more).
   */
  version(merchantId: string, mode: Mode): Promise<string> {
    return new Promise((resolve, reject) =>
      this.lookups.add(`${merchantId}:${mode}`, { merchantId, mode, resolve, reject }),
    );
  }

  /** Whether anything is stored under `key` (of any version): spares the version lookup for reads never cached. */
  has(key: string): boolean {
    return this.entries?.has(key) ?? false;
  }

  /** The answer stored under `key` if it was computed at `version` (the current one); it becomes the most recent. */
  get(key: string, version: string): Buffer | undefined {
    const hit = this.entries?.peek(key);
    if (!hit || hit.version !== version) return undefined;
    this.entries!.get(key); // refresh its place in the LRU order
    return hit.body;
  }

  /** Keeps an answer computed at `version`, unless it is too large or a newer one is already there. */
  set(key: string, version: string, body: string | Buffer): void {
    if (!this.entries) return;
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    if (CatalogReadCache.weigh(key, length) > this.maxEntryBytes) return; // not even copied
    const current = this.entries.peek(key);
    // A slow request that read an older version finishes after a faster one stored the newer answer.
    if (current && BigInt(current.version) > BigInt(version)) return;
    this.entries.set(key, { version, body: ownBytes(body, length) });
  }

  /**
   * Serves a catalog read: the stored answer while `key` holds one of the current version, else `compute()`'s, kept
   * when it is a 200. A null key (a request that cannot be keyed) is computed every time.
   */
  async serve(
    merchantId: string,
    mode: Mode,
    key: string | null,
    compute: () => Promise<readonly [number, string, ...unknown[]]>,
  ): Promise<[number, string | Buffer]> {
    if (key === null || !this.entries) {
      const [status, body] = await compute();
      return [status, body];
    }
    const version = await this.version(merchantId, mode);
    const hit = this.get(key, version);
    if (hit) return [200, hit];
    const [status, body] = await compute();
    if (status === 200) this.set(key, version, body);
    return [status, body];
  }
}

/**
 * Answers the service keeps in memory and hands to many requests unchanged (resolve's offering trees, a customer's
 * cached entitlements). Marking one promises that neither the object nor anything its GraphQL fields resolve to will
 * change while it is reachable, and that those fields resolve without the request's context: a transport may then
 * render it once per selection and reuse the text (the REST shim does, for a route's `shared` fields). Objects only
 * the shim ever renders again are never copied: the rendering lives as long as the object.
 */
const sharedAnswers = new WeakSet<object>();

export function shareAnswer<T extends object>(value: T): T {
  sharedAnswers.add(value);
  return value;
}

export const isSharedAnswer = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && sharedAnswers.has(value);
