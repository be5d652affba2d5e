import { IsOptional, MaxLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { JSONObject } from '../../core/scalars';

// String limits are the columns' (customers); formats are checked by the service (customer.service.ts).

/** The fields a customer is made or updated with, besides its e-mail (inherited by both inputs). */
@InputType()
abstract class CustomerDetailsInput {
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) name?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) phone?: string | null;
  @Field(() => String, { nullable: true, description: '2-digit GST state code (01 to 38, 97 or 99): place of supply' })
  @IsOptional()
  @MaxLength(2)
  stateCode?: string | null;
  @Field(() => String, { nullable: true, description: '15-character GSTIN, any case; kept upper case' })
  @IsOptional()
  @MaxLength(15)
  gstin?: string | null;
  @Field(() => String, { nullable: true, description: 'Postal address, at most 500 characters' })
  @IsOptional()
  @MaxLength(500)
  address?: string | null;
}

/** `createCustomer` (POST /v1/customers): a customer before any purchase. */
@InputType()
export class CreateCustomerInput extends CustomerDetailsInput {
  @Field({ description: 'Unique per merchant and mode; matched without regard to case' })
  @MaxLength(254)
  email!: string;
  @Field(() => JSONObject, { nullable: true }) metadata?: Record<string, unknown> | null;
}

/** `updateCustomer` (POST /v1/customers/{id}): an omitted field is kept, null clears it (not `email`). */
@InputType()
export class UpdateCustomerInput extends CustomerDetailsInput {
  @Field(() => String, { nullable: true, description: 'Unique per merchant and mode; cannot be cleared' })
  @IsOptional()
  @MaxLength(254)
  email?: string | null;
  @Field(() => JSONObject, { nullable: true, description: 'Replaces the metadata as a whole; null clears it' })
  metadata?: Record<string, unknown> | null;
}
