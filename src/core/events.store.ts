import type { EntityManager } from '@mikro-orm/postgresql';
import type { OutboxEvent } from './events';
import { tenantQuery } from './sql';

/**
 * Outbox events (outboxEvent) written by one statement of the EntityManager's transaction rather than by its flush,
 * for a batch of a hundred (pre-debit notices), where the unit of work's bookkeeping costs more than the statement.
 * Their uuidv7 ids keep the order they were made in; the table's trigger announces each, as for any insert.
 */
export async function writeEvents(em: EntityManager, events: readonly OutboxEvent[]): Promise<void> {
  if (!events.length) return;
  await tenantQuery(
    em,
    `insert into outbox_events (id, created_at, merchant_id, mode, type, payload)
     select x.id, x.created_at, {tenant_values}, x.type, x.payload
     from jsonb_to_recordset(?::jsonb) as x(id uuid, created_at timestamptz, type text, payload jsonb)`,
    [JSON.stringify(events.map((e) => ({ id: e.id, created_at: e.createdAt, type: e.type, payload: e.payload })))],
  );
}
