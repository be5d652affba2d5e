import { Migration } from '@mikro-orm/migrations';

/**
 * Issued documents are final (docs/invoices-and-gst.md): every invoice and credit note carries its parties as
 * they were at issue, `supplier {name, gstin, stateCode, address}` and `recipient {name, email, gstin, stateCode,
 * address}` (jsonb, camelCase keys as the ORM writes them), and every line its `hsnSac`; the PDF is rendered from the
 * invoice's row alone.
 *
 * Documents issued before this migration did not keep their parties: they are filled in as best effort from what the
 * document itself recorded (its `supplier_gstin` and `customer_gstin`, whose first two digits are the state) and,
 * for the rest, from the merchant's and customer's data as they are when the migration runs (names, e-mail, address,
 * the state of a party without a GSTIN). Lines without an `hsnSac` take the merchant's `sac_code` as it is now (the
 * SAC their PDF already printed), or an explicit null when it has none. A customer has no address yet: null.
 */
export class Migration20261130100000_invoice_parties extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "invoices" add column "supplier" jsonb null, add column "recipient" jsonb null;`);
    this.addSql(`update "invoices" i set "supplier" = jsonb_build_object(
        'name', m."name",
        'gstin', i."supplier_gstin",
        'stateCode', coalesce(left(i."supplier_gstin", 2), m."state_code"),
        'address', m."address")
      from "merchants" m where m."id" = i."merchant_id";`);
    this.addSql(`update "invoices" i set "recipient" = jsonb_build_object(
        'name', c."name",
        'email', c."email",
        'gstin', i."customer_gstin",
        'stateCode', coalesce(left(i."customer_gstin", 2), c."state_code"),
        'address', null)
      from "customers" c where c."id" = i."customer_id" and c."merchant_id" = i."merchant_id" and c."mode" = i."mode";`);
    // A document whose customer record is missing keeps what it recorded itself.
    this.addSql(`update "invoices" i set "recipient" = jsonb_build_object(
        'name', null, 'email', null, 'gstin', i."customer_gstin", 'stateCode', left(i."customer_gstin", 2), 'address', null)
      where i."recipient" is null;`);
    this.addSql(`update "invoices" i set "line_items" = (
        select coalesce(jsonb_agg(
                 case when l.item->>'hsnSac' is null then l.item || jsonb_build_object('hsnSac', m."sac_code") else l.item end
                 order by l.ord), '[]'::jsonb)
          from jsonb_array_elements(i."line_items") with ordinality as l(item, ord))
      from "merchants" m
      where m."id" = i."merchant_id"
        and exists (select 1 from jsonb_array_elements(i."line_items") e where e->>'hsnSac' is null);`);
    this.addSql(`alter table "invoices" alter column "supplier" set not null, alter column "recipient" set not null;`);
  }

  override async down(): Promise<void> {
    // The lines keep their hsnSac (the field existed before; only null ones were filled in).
    this.addSql(`alter table "invoices" drop column if exists "supplier", drop column if exists "recipient";`);
  }

}
