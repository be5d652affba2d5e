import { Entity, Index, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { TenantEntity } from '../../core/entity';
import { DateTime } from '../../core/scalars';

/**
 * A customer portal session (docs/portal.md): the link a merchant hands one customer, good for an hour. Only the
 * token's SHA-256 is kept; the token itself is in the answer's `url` once and nowhere else.
 */
@Entity({ tableName: 'portal_sessions' })
@Index({ properties: ['tokenHash'] })
@ObjectType({ description: 'A link to the customer portal for one customer, valid for one hour.' })
export class PortalSession extends TenantEntity {
  @Field()
  get object(): string {
    return 'portal_session';
  }

  @Field(() => ID)
  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'text' })
  tokenHash!: string;

  @Field({ description: 'Where the portal sends the customer back to.' })
  @Property({ type: 'text' })
  returnUrl!: string;

  @Field(() => DateTime)
  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  /** The portal page with the session's token in its fragment; only in the answer that made the session. */
  @Field({ description: 'The portal page for this customer (its token in the fragment): hand it to the customer.' })
  url!: string;
}
