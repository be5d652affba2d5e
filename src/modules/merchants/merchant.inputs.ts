import { IsOptional, MaxLength } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';

/** `updateTaxSettings` (POST /v1/merchant/tax-settings): an omitted field is kept, null clears it. Formats: MerchantService. */
@InputType()
export class UpdateTaxSettingsInput {
  @Field(() => String, { nullable: true, description: '15-character GSTIN; its first two digits are the state code' })
  @IsOptional()
  @MaxLength(15)
  gstin?: string | null;
  @Field(() => String, {
    nullable: true,
    description: "2-digit GST state code (01 to 38, or 97); default: the GSTIN's",
  })
  @IsOptional()
  @MaxLength(2)
  stateCode?: string | null;
  @Field(() => Int, { nullable: true, description: 'GST rate in basis points, 0 to 10000 (1800 = 18%, the default)' })
  taxRateBps?: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'SAC (services accounting code) of every invoice line, 4 to 8 digits',
  })
  @IsOptional()
  @MaxLength(8)
  sacCode?: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'Registered address printed on tax invoices, at most 500 characters',
  })
  @IsOptional()
  @MaxLength(500)
  address?: string | null;
  @Field(() => Boolean, {
    nullable: true,
    description:
      'GST e-invoicing: register INR invoices and credit notes to recipients with a GSTIN at issue (needs the GSTIN); default false',
  })
  eInvoicing?: boolean | null;
}
