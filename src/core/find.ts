import type { EntityManager, FilterQuery, FindOneOptions } from '@mikro-orm/postgresql';
import type { ClassType } from 'type-graphql';
import { validate as isUuid } from 'uuid';
import { notFound } from './errors';

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
  const row = isUuid(id) ? await em.findOne(entity, { id } as FilterQuery<T>, findOpts as FindOneOptions<T>) : null;
  if (!row) throw notFound(what, id, param);
  return row;
}
