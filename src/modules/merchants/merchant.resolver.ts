import { IsOptional, MaxLength } from 'class-validator';
import { Arg, Ctx as C, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { DomainError } from '../../core/errors';
import { Mode } from '../../core/entity';
import { DateTime } from '../../core/scalars';
import { services } from '../../services';
import { currentMerchant } from './current-merchant';
import { Merchant } from './merchant.entities';
import { UpdateTaxSettingsInput } from './merchant.inputs';

@InputType()
export class CreateMerchantInput {
  // String limits are the columns' (merchants.name varchar(255), ...); formats are checked by MerchantService.
  @Field() @MaxLength(255) name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) gstin?: string | null;
  @Field(() => String, { nullable: true, description: '2-digit GST state code' })
  @IsOptional()
  @MaxLength(2)
  stateCode?: string | null;
  @Field(() => String, { nullable: true, description: "Default 'INR'" })
  @IsOptional()
  @MaxLength(3)
  reportingCurrency?: string | null;
  @Field(() => Int, { nullable: true }) rateLimitPerSecond?: number | null;
  @Field(() => Int, { nullable: true, description: 'GST rate in basis points, 0 to 10000; default 1800 (18%)' })
  taxRateBps?: number | null;
  @Field(() => String, { nullable: true, description: 'SAC of invoice lines, 4 to 8 digits' })
  @IsOptional()
  @MaxLength(8)
  sacCode?: string | null;
  @Field(() => String, { nullable: true, description: 'Registered address, at most 500 characters' })
  @IsOptional()
  @MaxLength(500)
  address?: string | null;
  @Field(() => Int, {
    nullable: true,
    description: 'Dunning: failed retries before a past_due subscription is halted, 0 to 10; default 3',
  })
  maxRetries?: number | null;
}

@ObjectType({ description: "The merchant's billing settings (both modes)." })
export class BillingSettings {
  @Field() get object(): string {
    return 'billing_settings';
  }
  @Field(() => ID) merchantId!: string;
  @Field(() => Int, {
    description: 'Failed retries (1, 3 and 5 days after a failed renewal, then every 2 days) before halting',
  })
  maxRetries!: number;
  @Field(() => Int, {
    description:
      'The largest recurring INR mandate debit (paise) made without the customer authenticating it; default 1500000 (INR 15,000)',
  })
  mandateAfaLimit!: number;
}

@ObjectType({ description: "The GST settings the merchant's invoices are issued with." })
export class TaxSettings {
  @Field() get object(): string {
    return 'tax_settings';
  }
  @Field(() => ID) merchantId!: string;
  @Field(() => String, { nullable: true }) gstin!: string | null;
  @Field(() => String, { nullable: true }) stateCode!: string | null;
  @Field(() => Int) taxRateBps!: number;
  @Field(() => String, { nullable: true }) sacCode!: string | null;
  @Field(() => String, { nullable: true }) address!: string | null;
  @Field({ description: 'GST e-invoicing: documents to recipients with a GSTIN are registered at issue' })
  eInvoicing!: boolean;
}

@ObjectType()
export class ApiKeyPair {
  @Field() test!: string;
  @Field() live!: string;
}

@ObjectType({ description: 'A new merchant and its secret keys, shown this once.' })
export class CreatedMerchant extends Merchant {
  @Field(() => ApiKeyPair)
  apiKeys!: ApiKeyPair;
}

@ObjectType()
export class RolledApiKey {
  @Field() get object(): string {
    return 'api_key';
  }
  @Field({ description: 'The new secret key, shown this once.' }) secretKey!: string;
  @Field() mode!: string;
  @Field() last4!: string;
  @Field(() => DateTime, { description: 'When the previous key stops working.' }) previousKeyExpiresAt!: Date;
}

@InputType({ description: "Operator only: which of a merchant's keys to roll." })
export class RollMerchantApiKeyInput {
  @Field(() => Mode) mode!: Mode;
  @Field(() => Int, { nullable: true, description: 'Seconds the previous key keeps working (0 to 604800; default 0).' })
  graceSeconds?: number | null;
}

@Resolver()
export class MerchantResolver {
  @Query(() => Merchant, { description: 'The merchant the secret key belongs to.' })
  merchant(@C() ctx: Ctx): Promise<Merchant> {
    return currentMerchant(ctx);
  }

  @Mutation(() => CreatedMerchant, { description: 'Operator only (ADMIN_TOKEN): onboard a merchant.' })
  async createMerchant(@C() ctx: Ctx, @Arg('input') input: CreateMerchantInput): Promise<CreatedMerchant> {
    if (ctx.principal.kind !== 'admin')
      throw new DomainError('invalid_api_key', 'This operation needs the operator token.');
    const { merchant, apiKeys } = await services(ctx).merchants.create(input);
    return Object.assign(Object.create(CreatedMerchant.prototype), merchant, { apiKeys });
  }

  @Mutation(() => TaxSettings, {
    description: "Update this merchant's GST settings (both modes); omitted fields are kept, null clears.",
  })
  async updateTaxSettings(@C() ctx: Ctx, @Arg('input') input: UpdateTaxSettingsInput): Promise<TaxSettings> {
    const { merchantId } = tenantOf(ctx);
    const m = await services(ctx).merchants.updateTaxSettings(merchantId, input);
    return Object.assign(new TaxSettings(), {
      merchantId: m.id,
      gstin: m.gstin ?? null,
      stateCode: m.stateCode ?? null,
      taxRateBps: m.taxRateBps,
      sacCode: m.sacCode ?? null,
      address: m.address ?? null,
      eInvoicing: m.eInvoicing,
    });
  }

  @Mutation(() => BillingSettings, {
    description:
      "Update this merchant's billing settings (max_retries of the dunning policy, mandate_afa_limit); omitted fields are kept.",
  })
  async updateBillingSettings(
    @C() ctx: Ctx,
    @Arg('maxRetries', () => Int, { nullable: true, description: '0 to 10; null: the default, 3' })
    maxRetries?: number | null,
    @Arg('mandateAfaLimit', () => Int, {
      nullable: true,
      description: 'Paise, 100 (INR 1) to 100000000 (INR 10 lakh); null: the default, 1500000 (INR 15,000)',
    })
    mandateAfaLimit?: number | null,
  ): Promise<BillingSettings> {
    const { merchantId } = tenantOf(ctx);
    const m = await services(ctx).merchants.updateBillingSettings(merchantId, { maxRetries, mandateAfaLimit });
    return Object.assign(new BillingSettings(), {
      merchantId: m.id,
      maxRetries: m.maxRetries,
      mandateAfaLimit: m.mandateAfaLimit,
    });
  }

  @Mutation(() => RolledApiKey, {
    description:
      "Operator only (ADMIN_TOKEN): issue a new secret key for a merchant's mode, e.g. when the merchant lost it; the old one stops after graceSeconds.",
  })
  async rollMerchantApiKey(
    @C() ctx: Ctx,
    @Arg('id', () => ID) id: string,
    @Arg('input') input: RollMerchantApiKeyInput,
  ): Promise<RolledApiKey> {
    if (ctx.principal.kind !== 'admin')
      throw new DomainError('invalid_api_key', 'This operation needs the operator token.');
    const r = await services(ctx).merchants.rollKeyOf(id, input.mode, { graceSeconds: input.graceSeconds ?? 0 });
    return Object.assign(new RolledApiKey(), {
      secretKey: r.secretKey,
      mode: input.mode,
      last4: r.apiKey.last4,
      previousKeyExpiresAt: r.previousKeyExpiresAt,
    });
  }

  @Mutation(() => RolledApiKey, {
    description: 'Issue a new secret key for this mode; the old one stops after graceSeconds.',
  })
  async rollApiKey(
    @C() ctx: Ctx,
    @Arg('graceSeconds', () => Int, { nullable: true, defaultValue: 0 }) graceSeconds: number,
  ): Promise<RolledApiKey> {
    const { merchantId, mode } = tenantOf(ctx);
    const r = await services(ctx).merchants.rollKey(merchantId, mode, { graceSeconds });
    return Object.assign(new RolledApiKey(), {
      secretKey: r.secretKey,
      mode,
      last4: r.apiKey.last4,
      previousKeyExpiresAt: r.previousKeyExpiresAt,
    });
  }
}
