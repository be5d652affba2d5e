import { Migration } from '@mikro-orm/migrations';

/**
 * invoices_number (migration Migration20261124200400_renewal_indexes) without a scan of the merchant's invoices.
 *
 * PL/pgSQL keeps a generic plan of the function's statement after a few calls, planned without the merchant's value.
 * On a merchant whose invoices outgrew the table's last statistics (a month of renewals in one test-clock advance),
 * that plan read the tenant's invoices through (merchant_id, mode) and filtered by id: every renewal visited every
 * invoice of the merchant, and the renewal benchmark's server CPU grew with the count (33.8 ms per renewal at 10,000).
 * Here each invoice is found by its id only: the tenant check is a LATERAL subquery keyed by the id (LIMIT 1 keeps the
 * planner from flattening it into a join it could turn around), and the update joins the checked ids by primary key.
 * Same arguments, answer and number format as before.
 */
export class Migration20261125000100_invoice_number_lookups extends Migration {

  override async up(): Promise<void> {
    this.addSql(numberingFunction(`
        with x as (
          select x.* from jsonb_to_recordset(p_invoices) as x(ord int, id uuid, type text, fy int, prefix text, year text)
          cross join lateral (
            select 1 from invoices i where i.id = x.id and i.merchant_id = p_merchant and i.mode = p_mode and i.number is null limit 1
          ) mine
        ),`, `
          from f where i.id = f.id`));
  }

  override async down(): Promise<void> {
    this.addSql(numberingFunction(`
        with x as (
          select x.* from jsonb_to_recordset(p_invoices) as x(ord int, id uuid, type text, fy int, prefix text, year text)
          join invoices i on i.id = x.id and i.merchant_id = p_merchant and i.mode = p_mode and i.number is null
        ),`, `
          from f where i.id = f.id and i.merchant_id = p_merchant and i.mode = p_mode`));
  }

}

/** The function with its invoice lookup (`x`) and its update's join (`from f where ...`); the rest is unchanged. */
function numberingFunction(lookup: string, updateJoin: string): string {
  return `create or replace function invoices_number(p_merchant uuid, p_mode text, p_invoices jsonb, p_events jsonb)
      returns table (invoice_id uuid, invoice_number text) language plpgsql as $$
      begin
        -- p_invoices: [{ord, id, type, fy, prefix, year}] in issue order; p_events: the invoices' outbox events
        -- [{id, created_at, invoice_id, type, payload}], written with data.object.number set. Each sequence row is
        -- bumped once by its count, in (type, year) order (two transactions never wait on each other crosswise), and
        -- stays locked until the commit; an invoice the transaction no longer holds (a rolled-back savepoint), or
        -- numbered already, takes no number.
        return query${lookup}
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
              else f.prefix || f.year || f.seq end${updateJoin}
          returning i.id, i.number
        ),
        e as (
          insert into outbox_events (id, created_at, merchant_id, mode, type, payload)
          select v.id, v.created_at, p_merchant, p_mode, v.type, jsonb_set(v.payload, '{data,object,number}', to_jsonb(u.number))
          from jsonb_to_recordset(p_events) as v(id uuid, created_at timestamptz, invoice_id uuid, type text, payload jsonb)
          join u on u.id = v.invoice_id
        )
        select u.id, u.number::text from u;
      end $$;`;
}
