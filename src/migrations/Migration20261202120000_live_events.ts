import { Migration } from '@mikro-orm/migrations';

/**
 * Live events (docs/cli.md, `cadence listen`): every outbound event written to the outbox is announced on the changes
 * channel, the one GraphQL subscriptions already follow, with its merchant, mode, id and type (never its body: NOTIFY
 * payloads are small). NOTIFY is delivered at commit, so a rolled-back event is never announced. A row trigger catches
 * every writer (the ORM's inserts and the invoice numbering statement alike).
 */
export class Migration20261202120000_live_events extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create or replace function "cadence_outbox_event_announce"() returns trigger language plpgsql as $$ begin perform pg_notify('cadence_changes', json_build_object('topic', 'event', 'merchantId', new.merchant_id, 'mode', new.mode, 'id', new.id, 'eventType', new.type)::text); return null; end $$;`);
    this.addSql(`create trigger "outbox_events_announce" after insert on "outbox_events" for each row execute function "cadence_outbox_event_announce"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "outbox_events_announce" on "outbox_events";`);
    this.addSql(`drop function if exists "cadence_outbox_event_announce"();`);
  }

}
