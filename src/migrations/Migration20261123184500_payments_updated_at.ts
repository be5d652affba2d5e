import { Migration } from '@mikro-orm/migrations';

export class Migration20261123184500_payments_updated_at extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "payments_updated_at_index" on "payments" ("updated_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "payments_updated_at_index";`);
  }

}
