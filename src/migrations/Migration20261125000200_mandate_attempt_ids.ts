import { Migration } from '@mikro-orm/migrations';

/**
 * Autopay analytics count the gateway's authorisation attempts, not checkouts (src/modules/analytics/autopay.*): a
 * checkout declined once and then completed is two attempts, failed and authorized.
 * - `gateway_attempt_id` names the attempt at the gateway (Razorpay's payment, Stripe's setup attempt or charge, else
 *   its intent; the event id when the event names none) and is unique per provider: the several events that report
 *   one attempt (Razorpay's payment.failed, then the subscription.cancelled carrying the same payment) record it once.
 *   Rows written before have their event's id.
 * - A subscription's mandate is authorised once: at most one `authorized` row per subscription (the unique index
 *   on the subscription becomes partial), any number of `failed` ones.
 */
export class Migration20261125000200_mandate_attempt_ids extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "mandate_attempts" add column "gateway_attempt_id" varchar(255) null;`);
    this.addSql(`update "mandate_attempts" set "gateway_attempt_id" = "gateway_event_id";`);
    this.addSql(`alter table "mandate_attempts" alter column "gateway_attempt_id" set not null;`);
    this.addSql(`create unique index "mandate_attempts_provider_attempt_unique" on "mandate_attempts" ("provider", "gateway_attempt_id");`);
    this.addSql(`drop index if exists "mandate_attempts_subscription_unique";`);
    this.addSql(`create unique index "mandate_attempts_authorized_unique" on "mandate_attempts" ("subscription_id") where "status" = 'authorized';`);
  }

  override async down(): Promise<void> {
    // Back to one attempt per subscription: its authorisation if it has one, else its first failure.
    this.addSql(`delete from "mandate_attempts" a where exists (
      select from "mandate_attempts" b where b.subscription_id = a.subscription_id and b.id <> a.id
        and ((b.status = 'authorized' and a.status = 'failed') or (b.status = a.status and b.id < a.id)));`);
    this.addSql(`drop index if exists "mandate_attempts_authorized_unique";`);
    this.addSql(`create unique index "mandate_attempts_subscription_unique" on "mandate_attempts" ("subscription_id");`);
    this.addSql(`drop index if exists "mandate_attempts_provider_attempt_unique";`);
    this.addSql(`alter table "mandate_attempts" drop column "gateway_attempt_id";`);
  }

}
