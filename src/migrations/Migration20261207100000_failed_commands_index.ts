import { Migration } from '@mikro-orm/migrations';

/**
 * GET /metrics reports the gateway commands given up (docs/production.md) at every scrape: a partial index on the failed
 * ones (few) keeps that count from reading the whole table.
 */
export class Migration20261207100000_failed_commands_index extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "gateway_commands_failed_index" on "gateway_commands" ("completed_at") where "status" = 'failed';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "gateway_commands_failed_index";`);
  }

}
