import { LockMode } from '@mikro-orm/core';
import type { EntityManager, FilterQuery, FindOneOptions } from '@mikro-orm/postgresql';
import type { ClassType } from 'type-graphql';
import { validate as isUuid } from 'uuid';
import { notFound } from './errors';
import { canReadTenantRows, tenantRows } from './sql';

/**
 * Loads one record of the request's tenant by id, or answers 404 `resource_not_found`. An id of another merchant
 * or mode is filtered out by the tenant filter, so it answers exactly like an unknown id; a malformed id too.
 */
export async function findOr404<T extends object>(
  em: EntityManager,
  entity: ClassType<T>,
  id: string,
  what: string,
  opts: { param?: string | null } & FindOneOptions<T, never> = {},
): Promise<T> {
  const { param = null, ...findOpts } = opts;
  if (!isUuid(id)) throw notFound(what, id, param);
  let row: T | null;
  const keys = Object.keys(findOpts);
  const lock = findOpts.lockMode === LockMode.PESSIMISTIC_WRITE;
  const plain = keys.length === 0 || (keys.length === 1 && lock);
  // The common case (a tenant record by id, maybe locked, not loaded yet) skips the ORM's query building.
  if (plain && canReadTenantRows(em, entity) && !em.getUnitOfWork().getById(entity.name, id)) {
    [row = null] = (await tenantRows(em, entity, 'id = ?', [id], { forUpdate: lock })) as unknown as T[];
  } else {
    row = await em.findOne(entity, { id } as FilterQuery<T>, findOpts as FindOneOptions<T>);
  }
  if (!row) throw notFound(what, id, param);
  return row;
}
