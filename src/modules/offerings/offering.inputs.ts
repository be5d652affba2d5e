import { ArrayMaxSize, ArrayMinSize, IsInt, IsOptional, Length, Max, MaxLength, Min } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';
import { JSONObject } from '../../core/scalars';
import { PaywallTemplate } from './offering.entities';

/** Most packages an offering holds, and products a package holds: a resolve answer stays bounded. */
export const MAX_PACKAGES_PER_OFFERING = 50;
export const MAX_PRODUCTS_PER_PACKAGE = 50;

@InputType()
export class CreateOfferingInput {
  @Field({ description: '1 to 200 printable ASCII characters, no spaces; unique per merchant and mode' })
  @Length(1, 200)
  lookupKey!: string;
  @Field() @Length(1, 255) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(5000) description?: string | null;
  @Field(() => JSONObject, {
    nullable: true,
    description: 'Up to 50 keys of up to 40 characters, string values up to 500',
  })
  metadata?: Record<string, unknown> | null;
  @Field(() => Boolean, {
    nullable: true,
    description: 'Default false. True makes it the current offering (the previous one stops being current).',
  })
  isCurrent?: boolean | null;
}

@InputType()
export class AttachPackageInput {
  @Field(() => ID) packageId!: string;
  @Field(() => Int, {
    nullable: true,
    description: 'Place in the offering, 0 first. Default (or past the end): last. An attached package moves there.',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10_000)
  position?: number | null;
}

@InputType()
export class CreatePackageInput {
  @Field({ description: '1 to 200 printable ASCII characters, no spaces; unique per merchant and mode' })
  @Length(1, 200)
  lookupKey!: string;
  @Field() @Length(1, 255) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(5000) description?: string | null;
}

@InputType()
export class LinkPackageProductsInput {
  @Field(() => [ID], {
    description: `1 to ${MAX_PRODUCTS_PER_PACKAGE} products of this merchant and mode; linking one already linked changes nothing`,
  })
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PRODUCTS_PER_PACKAGE)
  productIds!: string[];
}

@InputType()
export class CreatePaywallInput {
  @Field() @Length(1, 255) name!: string;
  @Field(() => ID, { description: 'One paywall per offering' }) offeringId!: string;
  @Field(() => PaywallTemplate) template!: PaywallTemplate;
  @Field(() => JSONObject, {
    nullable: true,
    description: 'Free-form JSON object, at most 16 KiB serialized and 16 levels deep; default {}',
  })
  config?: Record<string, unknown> | null;
}

@InputType()
export class ResolveOfferingInput {
  @Field(() => ID) customerId!: string;
  @Field(() => JSONObject, {
    nullable: true,
    description:
      'Segment tags matched against experiment targeting: per name, a string, number or boolean, or a list of them (null: not given)',
  })
  attributes?: Record<string, unknown> | null;
}
