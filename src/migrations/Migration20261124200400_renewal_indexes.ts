import { Migration } from '@mikro-orm/migrations';

/**
 * Renewals at speed (bench/README.md, the renewal benchmark).
 *
 * Invoice numbers are given as the issuing transaction commits (src/modules/invoices/invoice.service.ts
 * numberInvoicesAtCommit): the invoice is inserted with a null number and numbered by the transaction's last
 * statement, sent with the COMMIT, so the sequence row is locked for the commit only. `number` is nullable for that;
 * a deferred constraint trigger, run at COMMIT, refuses a commit that would leave an invoice of the transaction
 * without a number (GST rule 46: every invoice has one), whatever code issued it.
 *
 * The numbering itself is the function `invoices_number` (called by invoice.store.ts numberInvoices): a statement
 * sent with a COMMIT cannot be a prepared one, and planning this one afresh for every renewal cost ~0.5 ms of server
 * CPU; PL/pgSQL keeps its plan per connection. Its number format is formatInvoiceNumber's
 * (src/modules/invoices/invoice.numbering.ts; test/invoices/numbering.test.ts checks they agree): the sequence padded
 * to 6 digits, and the dashes dropped, first the one after the prefix, when 16 characters would not hold it.
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
    this.addSql(`create function invoices_number(p_merchant uuid, p_mode text, p_invoices jsonb, p_events jsonb)
      returns table (invoice_id uuid, invoice_number text) language plpgsql as $$
      begin
        -- p_invoices: [{ord, id, type, fy, prefix, year}] in issue order; p_events: the invoices' outbox events
        -- [{id, created_at, invoice_id, type, payload}], written with data.object.number set. Each sequence row is
        -- bumped once by its count, in (type, year) order (two transactions never wait on each other crosswise), and
        -- stays locked until the commit; an invoice the transaction no longer holds (a rolled-back savepoint), or
        -- numbered already, takes no number.
        return query
        with x as (
          select x.* from jsonb_to_recordset(p_invoices) as x(ord int, id uuid, type text, fy int, prefix text, year text)
          join invoices i on i.id = x.id and i.merchant_id = p_merchant and i.mode = p_mode and i.number is null
        ),
        s as (
          insert into invoice_sequences as q (merchant_id, mode, type, financial_year, last_number)
          select p_merchant, p_mode, x.type, x.fy, count(*) from x group by x.type, x.fy order by x.type, x.fy
          on conflict (merchant_id, mode, type, financial_year) do update set last_number = q.last_number + excluded.last_number
          returning q.type, q.financial_year, q.last_number
        ),
        n as (
          select x.id, x.prefix, x.year,
            (s.last_number - count(*) over g + row_number() over (g order by x.ord))::bigint as seq
          from x join s on s.type = x.type and s.financial_year = x.fy
          window g as (partition by x.type, x.fy)
        ),
        f as (select n.id, n.prefix, n.year, case when n.seq < 1000000 then lpad(n.seq::text, 6, '0') else n.seq::text end as seq from n),
        u as (
          update invoices i set number = case
              when length(f.prefix || f.year || f.seq) + 2 <= 16 then f.prefix || '-' || f.year || '-' || f.seq
              when length(f.prefix || f.year || f.seq) + 1 <= 16 then f.prefix || f.year || '-' || f.seq
              else f.prefix || f.year || f.seq end
          from f where i.id = f.id and i.merchant_id = p_merchant and i.mode = p_mode
          returning i.id, i.number
        ),
        e as (
          insert into outbox_events (id, created_at, merchant_id, mode, type, payload)
          select v.id, v.created_at, p_merchant, p_mode, v.type, jsonb_set(v.payload, '{data,object,number}', to_jsonb(u.number))
          from jsonb_to_recordset(p_events) as v(id uuid, created_at timestamptz, invoice_id uuid, type text, payload jsonb)
          join u on u.id = v.invoice_id
        )
        select u.id, u.number::text from u;
      end $$;`);
    this.addSql(`create index "subscriptions_gateway_next_event_index" on "subscriptions"
      ("merchant_id", "mode", (case when "status" = 'trialing' then "trial_end" else "current_period_end" end))
      where "status" in ('trialing', 'active', 'paused') and "provider_subscription_id" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "subscriptions_gateway_next_event_index";`);
    this.addSql(`drop function invoices_number(uuid, text, jsonb, jsonb);`);
    this.addSql(`drop trigger "invoices_numbered_at_commit" on "invoices";`);
    this.addSql(`drop function invoices_numbered_at_commit();`);
    this.addSql(`alter table "invoices" alter column "number" set not null;`);
  }

}
