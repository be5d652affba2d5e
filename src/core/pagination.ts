import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import { ClassType, Field, Int, ObjectType, ArgsType } from 'type-graphql';
import { validate as isUuid } from 'uuid';
import { DomainError } from './errors';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, description: `Page size, 1..${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).` })
  first?: number | null;

  @Field(() => String, { nullable: true, description: 'The endCursor of the previous page.' })
  after?: string | null;
}

@ObjectType()
export class PageInfo {
  @Field()
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: PageInfo;
  /** A getter: counted only when a client asks for it. */
  readonly totalCount: Promise<number>;
}

const encodeCursor = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!isUuid(id) || encodeCursor(id) !== cursor)
    throw new DomainError('parameter_invalid', 'Invalid cursor.', 'after');
  return id;
}

/** Relay connection type for a node class; the REST shim turns it into the list envelope. */
export function ConnectionType<T extends object>(node: ClassType<T>, name = `${node.name}Connection`) {
  @ObjectType(`${node.name}Edge`)
  class Edge {
    @Field()
    cursor!: string;

    @Field(() => node)
    node!: T;
  }
  @ObjectType(name)
  class ConnectionClass {
    @Field(() => [Edge])
    edges!: Edge[];

    @Field(() => PageInfo)
    pageInfo!: PageInfo;

    @Field(() => Int)
    totalCount!: number;
  }
  return ConnectionClass;
}

/**
 * Keyset pagination, newest first, on the time-ordered UUIDv7 id: `id < cursor` with an index, never OFFSET.
 * Fetches one extra row to know whether another page follows.
 */
export async function paginate<T extends { id: string }>(
  em: EntityManager,
  entity: ClassType<T>,
  where: FilterQuery<T>,
  args: PageArgs,
): Promise<Connection<T>> {
  const first = args.first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE) {
    throw new DomainError('parameter_invalid', `The page size must be between 1 and ${MAX_PAGE_SIZE}.`, 'first');
  }
  const cond = args.after ? { $and: [where, { id: { $lt: decodeCursor(args.after) } }] } : where;
  const rows = await em.find(entity, cond as FilterQuery<T>, { orderBy: { id: 'desc' } as never, limit: first + 1 });
  const hasNextPage = rows.length > first;
  const page = hasNextPage ? rows.slice(0, first) : rows;
  return {
    edges: page.map((node) => ({ cursor: encodeCursor(node.id), node })),
    pageInfo: { hasNextPage, endCursor: page.length ? encodeCursor(page[page.length - 1].id) : null },
    get totalCount() {
      return em.count(entity, where);
    },
  };
}

/**
 * The where clause of a list's id filters (`customerId`, `subscriptionId`, ...: those given), or, when one is not a
 * UUID, a clause that matches nothing, as an unknown id does (the columns are uuids: PostgreSQL would refuse the
 * comparison).
 */
export function idFilters<A extends object>(args: A, keys: readonly (keyof A & string)[]): Record<string, unknown> {
  const where: Record<string, unknown> = {};
  for (const key of keys) {
    const id = args[key];
    if (id == null) continue;
    if (typeof id !== 'string' || !isUuid(id)) return { id: null };
    where[key] = id;
  }
  return where;
}
