import { IsInt, IsOptional, Length, Max, MaxLength, Min } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';
import { Money } from '../../core/scalars';
import { BillingFrequency, ProductStatus, ProductType, TaxBehavior, TrialEndAction } from './catalog.entities';

@InputType()
export class CreateProductFamilyInput {
  @Field() @Length(1, 255) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(5000) description?: string | null;
}

@InputType()
export class CreateProductInput {
  @Field({ description: 'Marketing name displayed at checkout' }) @Length(1, 255) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(5000) description?: string | null;
  @Field(() => ProductType) type!: ProductType;
  @Field(() => ProductStatus, { nullable: true, description: 'Default ACTIVE' }) status?: ProductStatus | null;
  @Field(() => ID, { nullable: true }) productFamilyId?: string | null;
}

@InputType()
export class UpdateProductInput {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 255) name?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(5000) description?: string | null;
  @Field(() => ProductStatus, { nullable: true }) status?: ProductStatus | null;
}

@InputType()
export class CreatePlanInput {
  @Field() @Length(1, 255) name!: string;
  @Field(() => BillingFrequency, {
    nullable: true,
    description: 'Required for a subscription product; none for one_time',
  })
  billingFrequency?: BillingFrequency | null;
  @Field(() => Int, { nullable: true, description: 'Cadence units between charges; default 1' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(365)
  billingInterval?: number | null;
  @Field(() => Int, { nullable: true, description: 'Default 0' })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(730)
  trialPeriodDays?: number | null;
  @Field(() => TrialEndAction, { nullable: true, description: 'Default START_SUBSCRIPTION' })
  trialEndAction?: TrialEndAction | null;
  @Field(() => Int, { nullable: true, description: 'Billed periods, first included; none: until cancelled' })
  @IsOptional()
  @IsInt()
  @Min(1)
  maxCycles?: number | null;
}

@InputType()
export class CreatePriceInput {
  @Field({ description: '3-letter ISO 4217 code, any case' }) @MaxLength(3) currency!: string;
  @Field(() => Money, { description: 'Smallest currency subunit' }) @Min(0) amount!: number;
  @Field(() => Money, { nullable: true, description: 'One-time fee in subunits; default 0' })
  @IsOptional()
  @Min(0)
  setupFee?: number | null;
  @Field(() => TaxBehavior, {
    nullable: true,
    description: 'Whether the amount (and setup fee) contains the GST; default exclusive (docs/catalog.md)',
  })
  taxBehavior?: TaxBehavior | null;
  @Field(() => Boolean, {
    nullable: true,
    description: 'Default: true when the plan has no default price in this currency yet',
  })
  isDefault?: boolean | null;
}

@InputType()
export class CreateUsageRateInput {
  @Field({ description: 'The usage event type it prices, as usage events name it (1 to 100 characters).' })
  @Length(1, 100)
  eventType!: string;
  @Field({ description: '3-letter ISO 4217 code, any case' }) @MaxLength(3) currency!: string;
  @Field({
    description: 'Subunits per unit: a decimal string >= 0, at most 9 integer and 12 fractional digits (e.g. "0.25")',
  })
  @MaxLength(32)
  unitAmountDecimal!: string;
}
