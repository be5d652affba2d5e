import { Migration } from '@mikro-orm/migrations';

/**
 * A gateway command may be held until a time on the merchant's clock (docs/india.md: a mandate debit announced 24 hours
 * ahead is not asked for earlier): `not_before`. The test clock runs a merchant's held commands as it passes them. A
 * pre-debit notice may announce such a collection (kind `collection`).
 */
export class Migration20261206110000_held_commands extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "gateway_commands" add column "not_before" timestamptz null;`);
    this.addSql(`create index "gateway_commands_held_index" on "gateway_commands" ("merchant_id", "mode", "not_before") where "status" = 'pending' and "not_before" is not null;`);
    this.addSql(`alter table "pre_debit_notices" drop constraint if exists "pre_debit_notices_kind_check";`);
    this.addSql(`alter table "pre_debit_notices" add constraint "pre_debit_notices_kind_check" check ("kind" in ('renewal', 'retry', 'collection'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "pre_debit_notices" where "kind" = 'collection';`);
    this.addSql(`alter table "pre_debit_notices" drop constraint if exists "pre_debit_notices_kind_check";`);
    this.addSql(`alter table "pre_debit_notices" add constraint "pre_debit_notices_kind_check" check ("kind" in ('renewal', 'retry'));`);
    this.addSql(`drop index if exists "gateway_commands_held_index";`);
    this.addSql(`alter table "gateway_commands" drop column "not_before";`);
  }

}
