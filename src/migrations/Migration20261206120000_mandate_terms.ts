import { Migration } from '@mikro-orm/migrations';

/** The terms an INR subscription's mandate is registered with (docs/india.md, "Mandates"), fixed at creation. */
export class Migration20261206120000_mandate_terms extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "subscriptions" add column "mandate_max_amount" bigint null, add column "mandate_frequency" text null, add column "mandate_valid_until" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "subscriptions" drop column "mandate_max_amount", drop column "mandate_frequency", drop column "mandate_valid_until";`);
  }

}
