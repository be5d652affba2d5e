import { Migration } from '@mikro-orm/migrations';

/**
 * Subscriptions collect GST through the gateway (docs/invoices-and-gst.md): the gateways collect what subscription invoices say, GST included.
 * - `gateway_prices`: a price registered at a gateway per gateway amount (a price's amount plus the GST of a tax
 *   treatment), once each. Prices registered before (at their tax-exclusive amount) are carried over, so a subscription
 *   whose gateway amount is that amount (no GST) reuses them.
 * - `subscriptions.tax_treatment` / `tax_rate_bps`: each subscription's tax, fixed at creation. Existing ones take the
 *   merchant's settings and the customer's state as they are now, which is what their invoices used until now.
 * - `subscriptions.gateway_addons`: Razorpay add-ons of adjustment invoices waiting for the charge that collects them.
 */
export class Migration20261124000100_gateway_prices extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "gateway_prices" ("price_id" uuid not null, "provider" text not null, "gateway_amount" bigint not null, "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "provider_price_id" varchar(255) not null, "created_at" timestamptz not null default now(), constraint "gateway_prices_pkey" primary key ("price_id", "provider", "gateway_amount"));`);
    this.addSql(`insert into "gateway_prices" ("price_id", "provider", "gateway_amount", "merchant_id", "mode", "provider_price_id", "created_at")
      select p."id", kv."key", p."amount", p."merchant_id", p."mode", kv."value", now()
      from "prices" p, jsonb_each_text(p."provider_price_ids") kv
      where kv."value" is not null
      on conflict do nothing;`);

    this.addSql(`alter table "subscriptions" add column "tax_treatment" text check ("tax_treatment" in ('none', 'intra', 'inter')) not null default 'none', add column "tax_rate_bps" int not null default 0, add column "gateway_addons" jsonb not null default '[]';`);
    this.addSql(`update "subscriptions" s set
        "tax_treatment" = t."treatment",
        "tax_rate_bps" = case when t."treatment" = 'none' then 0 else t."rate" end
      from (
        select s2."id",
          m."tax_rate_bps" as "rate",
          case
            when upper(s2."currency") <> 'INR' or coalesce(m."gstin", '') = '' then 'none'
            when coalesce(nullif(c."state_code", ''), nullif(left(c."gstin", 2), '')) is null
              or coalesce(nullif(c."state_code", ''), nullif(left(c."gstin", 2), '')) = coalesce(m."state_code", left(m."gstin", 2)) then 'intra'
            else 'inter'
          end as "treatment"
        from "subscriptions" s2
        join "merchants" m on m."id" = s2."merchant_id"
        left join "customers" c on c."id" = s2."customer_id"
      ) t
      where t."id" = s."id";`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "subscriptions" drop column "tax_treatment", drop column "tax_rate_bps", drop column "gateway_addons";`);
    this.addSql(`drop table if exists "gateway_prices" cascade;`);
  }

}
