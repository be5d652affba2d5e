import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { SandboxObject, SandboxProvider } from './sandbox.entities';

/** Small helpers over SandboxObject: the sandbox keeps every gateway object as the JSON the gateway answers. */

export interface Account {
  provider: SandboxProvider;
  accountKey: string;
  livemode: boolean;
}

export function createObject(
  em: EntityManager,
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
    { id, provider: account.provider, accountKey: account.accountKey, type: Array.isArray(type) ? { $in: type } : type },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  return obj;
}

