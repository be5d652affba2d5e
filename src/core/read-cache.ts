import type { EntityManager } from '@mikro-orm/postgresql';
import { Pool } from 'pg';
import { Entity, PrimaryKey, Property } from '@mikro-orm/core';
import { Mode, TENANT_FILTER, TenantParams } from './entity';

/**
 * The catalog's version per merchant and mode, bumped in the same transaction as every catalog write. A cached
 * read is served only while the version it was computed at is still current, so every process sees a write as
 * soon as it commits; no invalidation messages are needed.
 */
@Entity({ tableName: 'catalog_versions' })
export class CatalogVersion {
  @PrimaryKey({ type: 'uuid' }) merchantId!: string;
  @PrimaryKey({ type: 'text' }) mode!: Mode;
  @Property({ type: 'bigint' }) version!: string;
}

/** Call inside the transaction of any write to products, plans, prices or product families. */
export async function bumpCatalogVersion(em: EntityManager): Promise<void> {
  const t = em.getFilterParams<TenantParams>(TENANT_FILTER);
  await em.getConnection().execute(
    `insert into catalog_versions (merchant_id, mode, version) values (?, ?, 1)
     on conflict (merchant_id, mode) do update set version = catalog_versions.version + 1`,
    [t.merchantId, t.mode],
    'run',
    em.getTransactionContext(),
  );
}

interface Entry {
  version: string;
  value: unknown;
}

/**
 * Answers of catalog reads (a REST body, a GraphQL result), per merchant, mode, operation and variables; the least
 * recently used go first. Keys always start with the merchant and mode, so no tenant is served another's answer.
 */
export class CatalogReadCache {
  private entries = new Map<string, Entry>();
  /** Version lookups not yet sent, per merchant and mode: requests arriving meanwhile share one query. */
  private batches = new Map<string, Promise<string>>();
  /** A few plain connections: this lookup runs on every cached read, so it skips the ORM. */
  private readonly pool: Pool;

  constructor(databaseUrl: string, private readonly maxEntries = 2000) {
    this.pool = new Pool({ connectionString: databaseUrl, max: 4 });
    this.pool.on('error', () => undefined); // a broken idle connection is replaced on the next query
  }

  /**
   * The catalog version now. A lookup joins a batch only if that batch's query has not been sent yet, so the answer
   * always reflects every write committed before the request arrived.
   */
  version(merchantId: string, mode: Mode): Promise<string> {
    const key = `${merchantId}:${mode}`;
    let batch = this.batches.get(key);
    if (!batch) {
      batch = new Promise<string>((resolve, reject) =>
        setImmediate(() => {
          this.batches.delete(key);
          this.pool
            .query<{ version: string }>({
              name: 'catalog_version',
              text: 'select version from catalog_versions where merchant_id = $1 and mode = $2',
              values: [merchantId, mode],
            })
            .then((r) => resolve(r.rows[0]?.version ?? '0'), reject);
        }),
      );
      this.batches.set(key, batch);
    }
    return batch;
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  /** Whether anything is stored under `key` (of any version): spares the version lookup for reads never cached. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  get<T>(key: string, version: string): T | undefined {
    const hit = this.entries.get(key);
    if (!hit || hit.version !== version) return undefined;
    this.entries.delete(key); // refresh its place in the LRU order
    this.entries.set(key, hit);
    return hit.value as T;
  }

  set(key: string, version: string, value: unknown): void {
    this.entries.delete(key);
    this.entries.set(key, { version, value });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
