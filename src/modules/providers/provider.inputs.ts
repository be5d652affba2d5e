import { IsOptional, MaxLength, ValidateNested } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { Provider } from './provider-connection.entities';

@InputType({ description: 'Stripe: secretKey + webhookSecret. Razorpay: keyId + keySecret + webhookSecret.' })
export class ProviderCredentialsInput {
  // Sealed together into one text column; 255 is far above any gateway's key length.
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) secretKey?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) webhookSecret?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) keyId?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) keySecret?: string | null;
}

@InputType()
export class ConnectProviderInput {
  @Field(() => Provider) provider!: Provider;
  @Field(() => ProviderCredentialsInput) @ValidateNested() credentials!: ProviderCredentialsInput;
  @Field(() => Boolean, { nullable: true, description: 'Default: true for the first connection of the mode' })
  isDefault?: boolean | null;
}
