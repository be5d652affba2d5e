import { Field, InputType } from 'type-graphql';
import { Provider } from './provider-connection.entity';

@InputType({ description: 'Stripe: secretKey + webhookSecret. Razorpay: keyId + keySecret + webhookSecret.' })
export class ProviderCredentialsInput {
  @Field(() => String, { nullable: true }) secretKey?: string | null;
  @Field(() => String, { nullable: true }) webhookSecret?: string | null;
  @Field(() => String, { nullable: true }) keyId?: string | null;
  @Field(() => String, { nullable: true }) keySecret?: string | null;
}

@InputType()
export class ConnectProviderInput {
  @Field(() => Provider) provider!: Provider;
  @Field(() => ProviderCredentialsInput) credentials!: ProviderCredentialsInput;
  @Field(() => Boolean, { nullable: true, description: 'Default: true for the first connection of the mode' })
  isDefault?: boolean | null;
}
