import { Webhook } from 'standardwebhooks';
import { tenantEntityManager } from '../../src/core/context';
import type { Mode } from '../../src/core/entity';
import { recordEvent } from '../../src/core/events';
import type { Received } from '../harness/receiver';

/** Verifies a request with the standardwebhooks verifier; returns the parsed event or throws. */
export function verify(secret: string, r: Received): any {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id'],
    'webhook-timestamp': r.headers['webhook-timestamp'],
    'webhook-signature': r.headers['webhook-signature'],
  });
}

/** Writes an outbox event for a merchant and mode, as any feature does in the transaction of its change. */
export async function emitEvent(
  t: { orm: import('@mikro-orm/postgresql').MikroORM },
  merchantId: string,
  mode: 'test' | 'live',
  type: string,
  object: Record<string, unknown> = { id: 'obj_1', object: 'thing' },
): Promise<string> {
  const em = tenantEntityManager(t.orm.em as never, { merchantId, mode: mode as Mode });
  const ev = recordEvent(em as never, type, object, mode as never);
  await em.flush();
  return ev.id;
}

/** Writes `n` outbox events in one transaction. Returns their ids. */
export async function emitMany(
  t: { orm: import('@mikro-orm/postgresql').MikroORM },
  merchantId: string,
  mode: 'test' | 'live',
  n: number,
  type = 'payment.succeeded',
): Promise<string[]> {
  const em = tenantEntityManager(t.orm.em as never, { merchantId, mode: mode as Mode });
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(recordEvent(em as never, type, { id: `obj_${i}`, object: 'thing', n: i }, mode as never).id);
  await em.flush();
  return ids;
}
