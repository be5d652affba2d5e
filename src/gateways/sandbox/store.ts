import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import type { Pool } from 'pg';
import { SandboxEvent, SandboxObject, SandboxProvider } from './sandbox.entities';

/** Small helpers over SandboxObject: the sandbox keeps every gateway object as the JSON the gateway answers. */

/** Where new objects and events go: an EntityManager (flushed by its transaction), or a Collector. */
export interface Persister {
  persist(entity: object): unknown;
}

/**
 * Collects the objects and events the billing functions create, for one set-based write of a whole batch (the
 * renewal path, src/gateways/sandbox/renewals.ts) instead of an ORM unit of work per subscription.
 */
export class Collector implements Persister {
  readonly objects: SandboxObject[] = [];
  readonly events: SandboxEvent[] = [];

  persist(entity: object): this {
    if (entity instanceof SandboxObject) this.objects.push(entity);
    else if (entity instanceof SandboxEvent) this.events.push(entity);
    else throw new Error(`sandbox collector: cannot write a ${entity.constructor.name}`);
    return this;
  }
}

export interface Account {
  provider: SandboxProvider;
  accountKey: string;
  livemode: boolean;
}

export function createObject(
  em: Persister,
  account: Account,
  type: string,
  data: Record<string, any>,
  internal: Record<string, any> = {},
  dueAt: Date | null = null,
): SandboxObject {
  const obj = Object.assign(new SandboxObject(), {
    id: data.id as string,
    provider: account.provider,
    accountKey: account.accountKey,
    type,
    data,
    internal,
    dueAt,
  });
  em.persist(obj);
  return obj;
}

/** Replaces JSON columns wholesale so the ORM always sees the change. */
export function patch(obj: SandboxObject, data: Record<string, any>, internal?: Record<string, any>): void {
  obj.data = { ...obj.data, ...data };
  if (internal) obj.internal = { ...obj.internal, ...internal };
}

/** An account's object of a type (another account's id answers as unknown, like the gateways do). */
export async function findObject(
  em: EntityManager,
  account: Pick<Account, 'provider' | 'accountKey'>,
  type: string | string[],
  id: string,
  lock = false,
): Promise<SandboxObject | null> {
  const obj = await em.findOne(
    SandboxObject,
    {
      id,
      provider: account.provider,
      accountKey: account.accountKey,
      type: Array.isArray(type) ? { $in: type } : type,
    },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  return obj;
}

/** A gateway object as the fast create path handles it: plain data, written by raw SQL (see runCreate). */
export interface StoredObject {
  id: string;
  type: string;
  data: Record<string, any>;
  internal: Record<string, any>;
  dueAt: Date | null;
}

/**
 * The objects one create call makes, built in memory and written by runCreate in the same statement as the
 * idempotency key. Lookups see the draft's own objects first, then committed ones through the raw pool (no lock:
 * creates only read objects that never change, such as prices and products).
 */
export class Draft {
  readonly created: StoredObject[] = [];

  constructor(
    private readonly pool: Pool,
    readonly account: Account,
  ) {}

  create(
    type: string,
    data: Record<string, any>,
    internal: Record<string, any> = {},
    dueAt: Date | null = null,
  ): StoredObject {
    const obj = { id: data.id as string, type, data, internal, dueAt };
    this.created.push(obj);
    return obj;
  }

  async find(type: string | string[], id: string): Promise<StoredObject | null> {
    const types = Array.isArray(type) ? type : [type];
    const mine = this.created.find((o) => o.id === id && types.includes(o.type));
    if (mine) return mine;
    const { rows } = await this.pool.query<{
      id: string;
      type: string;
      data: Record<string, any>;
      internal: Record<string, any>;
      due_at: Date | null;
    }>(
      'select id, type, data, internal, due_at from sandbox_objects where id = $1 and provider = $2 and account_key = $3 and type = any($4::text[])',
      [id, this.account.provider, this.account.accountKey, types],
    );
    const row = rows[0];
    return row ? { id: row.id, type: row.type, data: row.data, internal: row.internal, dueAt: row.due_at } : null;
  }
}
