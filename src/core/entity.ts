import { Enum, EventArgs, EventSubscriber, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { DateTime } from './scalars';

export enum Mode {
  TEST = 'test',
  LIVE = 'live',
}
registerEnumType(Mode, { name: 'Mode', description: 'Test and live data never mix; the secret key decides the mode.' });

/** The smallest UUIDv7 of an instant: every id made before it sorts below (ids are time-ordered UUIDv7s). */
export function uuidv7Floor(at: Date): string {
  const hex = Math.max(0, at.getTime()).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

/** Every record: a time-ordered UUIDv7 id (keyset pagination sorts on it) and its creation time. */
@ObjectType()
export abstract class BaseEntity {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Field(() => DateTime)
  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}

/**
 * A record that belongs to one merchant and one mode. The `tenant` filter (mikro-orm.config.ts) scopes every read,
 * update and delete of these to the request's merchant and mode; `TenantStamp` fills both on insert.
 */
@Index({ properties: ['merchantId', 'mode', 'id'] })
@ObjectType()
export abstract class TenantEntity extends BaseEntity {
  @Property({ type: 'uuid' })
  merchantId!: string;

  @Enum({ items: () => Mode })
  mode!: Mode;

  @Field({ description: 'True for live-mode records, false for test mode.' })
  get livemode(): boolean {
    return this.mode === Mode.LIVE;
  }
}

export interface TenantParams {
  merchantId: string;
  mode: Mode;
}

export const TENANT_FILTER = 'tenant';

/** Stamps merchant and mode on insert from the EntityManager's tenant, and refuses a record of another tenant. */
export class TenantStamp implements EventSubscriber {
  beforeCreate(args: EventArgs<unknown>): void {
    const entity = args.entity;
    if (!(entity instanceof TenantEntity)) return;
    const params = args.em.getFilterParams<TenantParams>(TENANT_FILTER) as TenantParams | undefined;
    if (!params) {
      if (!entity.merchantId || !entity.mode) throw new Error(`${entity.constructor.name} inserted without a tenant`);
      return;
    }
    if (
      entity.merchantId &&
      (entity.merchantId !== params.merchantId || (entity.mode && entity.mode !== params.mode))
    ) {
      throw new Error(`${entity.constructor.name} belongs to another tenant`);
    }
    entity.merchantId = params.merchantId;
    entity.mode = params.mode;
  }
}

/** A new entity instance with its defaults, then `data` on top; persist it with `em.persist()`. */
export function make<T extends object>(cls: new () => T, data: Partial<T>): T {
  return Object.assign(new cls(), data);
}
