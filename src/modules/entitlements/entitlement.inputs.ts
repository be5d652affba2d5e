import { ArrayMaxSize, IsOptional, MaxLength } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';

/** Lookup keys: what an app's code names a gate by, so plain identifiers (RevenueCat's and Stripe's style). */
export const LOOKUP_KEY = /^[A-Za-z0-9_.:-]{1,100}$/;
export const MAX_NAME = 255;
export const MAX_DESCRIPTION = 5000;
/** Products one link request names. */
export const MAX_LINK_PRODUCTS = 100;
/** Products one entitlement may be linked to: its `product_ids` is answered whole. */
export const MAX_PRODUCTS_PER_ENTITLEMENT = 1000;

@InputType()
export class CreateEntitlementInput {
  @Field({ description: 'Unique per merchant and mode (case-sensitive): 1 to 100 letters, digits, _ - . or :' })
  @MaxLength(100)
  lookupKey!: string;

  @Field({ description: 'Shown to people (1 to 255 characters).' })
  @MaxLength(MAX_NAME)
  name!: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(MAX_DESCRIPTION)
  description?: string | null;
}

@InputType()
export class LinkEntitlementProductsInput {
  @Field(() => [ID], {
    description: `Products of this merchant and mode (1 to ${MAX_LINK_PRODUCTS}); already linked ones are left as they are.`,
  })
  @ArrayMaxSize(MAX_LINK_PRODUCTS)
  @MaxLength(100, { each: true })
  productIds!: string[];
}
