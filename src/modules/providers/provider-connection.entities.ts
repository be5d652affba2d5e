import { Entity, Enum, Property, Unique } from '@mikro-orm/core';
import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { Mode, TenantEntity } from '../../core/entity';

export enum Provider {
  STRIPE = 'stripe',
  RAZORPAY = 'razorpay',
}
registerEnumType(Provider, { name: 'Provider', description: 'A supported payment gateway.' });

/** A merchant's account at one gateway in one mode; credentials are stored sealed (AES-256-GCM), never returned. */
@Entity({ tableName: 'provider_connections' })
@Unique({ properties: ['merchantId', 'mode', 'provider'] })
@ObjectType()
export class ProviderConnection extends TenantEntity {
  @Field()
  get object(): string {
    return 'provider_connection';
  }

  @Field(() => Provider)
  @Enum({ items: () => Provider })
  provider!: Provider;

  @Field(() => Mode, { name: 'mode' })
  get connectionMode(): Mode {
    return this.mode;
  }

  @Field()
  @Property({ length: 16 })
  status: string = 'active';

  @Field()
  @Property()
  isDefault: boolean = false;

  /** Enough of the credentials to recognise them (e.g. `sk_test_...a1b2`). */
  @Field()
  @Property()
  credentialsHint!: string;

  @Property({ type: 'text', lazy: true })
  credentialsSealed!: string;

  /** Where the gateway must send its events for this connection. */
  @Field()
  @Property({ type: 'text' })
  webhookUrl!: string;
}
