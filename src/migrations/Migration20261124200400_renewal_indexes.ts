import { Migration } from '@mikro-orm/migrations';

/**
 * Renewals at speed (issue 10, the renewal benchmark).
 *
 * Invoice numbers are given as the issuing transaction commits (src/modules/invoices/invoice.service.ts
 * numberInvoicesAtCommit): the invoice is inserted with a null number and numbered by the transaction's last
 * statement, so the sequence row is locked for the commit only. `number` is nullable for that; a deferred constraint
 * trigger, run at COMMIT, refuses a commit that would leave an invoice of the transaction without a number (GST rule
 * 46: every invoice has one), whatever code issued it.
 *
 * The test clock asks, before every step of an advance, when the gateway next reports something for a merchant
 * (subscription.store.ts nextGatewayEventAt: the earliest trial end or period end after a moment). Without an index
 * that read visits every subscription of the merchant, once per step (~3 ms at 10,000 subscriptions, a few hundred
 * steps per advance, all on the advance's critical path); this partial index on exactly its expression answers it
 * from one index entry.
 */
export class Migration20261124200400_renewal_indexes extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "invoices" alter column "number" drop not null;`);
    this.addSql(`create function invoices_numbered_at_commit() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from invoices where id = new.id and number is null) then
          raise exception 'invoice % would be committed without a number', new.id using errcode = 'integrity_constraint_violation';
        end if;
        return null;
      end $$;`);
    this.addSql(`create constraint trigger "invoices_numbered_at_commit" after insert on "invoices"
      deferrable initially deferred for each row execute function invoices_numbered_at_commit();`);
    this.addSql(`create index "subscriptions_gateway_next_event_index" on "subscriptions"
      ("merchant_id", "mode", (case when "status" = 'trialing' then "trial_end" else "current_period_end" end))
      where "status" in ('trialing', 'active', 'paused') and "provider_subscription_id" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "subscriptions_gateway_next_event_index";`);
    this.addSql(`drop trigger "invoices_numbered_at_commit" on "invoices";`);
    this.addSql(`drop function invoices_numbered_at_commit();`);
    this.addSql(`alter table "invoices" alter column "number" set not null;`);
  }

}
