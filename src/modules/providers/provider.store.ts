import type { EntityManager } from '@mikro-orm/postgresql';
import { systemQuery, tenantRows } from '../../core/sql';
import { Provider, ProviderConnection } from './provider-connection.entities';

/** Statements on provider_connections beyond the ORM's. */

/**
 * The tenant's connection to `provider`, else its default one. Every payment asks: a prepared statement rather than
 * the ORM's query building.
 */
export async function connectionFor(
  em: EntityManager,
  provider?: Provider | null,
): Promise<ProviderConnection | undefined> {
  const [connection] = provider
    ? await tenantRows(em, ProviderConnection, 'provider = ?', [provider])
    : await tenantRows(em, ProviderConnection, 'is_default', []);
  return connection;
}

/** `select` list of provider_connections (named: a column added later leaves the statement as it was). */
let connectionColumns: string | undefined;

/**
 * A connection by id and provider alone, whichever tenant (an inbound webhook's URL names it; the tenant comes from
 * the row), with its sealed credentials. A system statement: the caller has no tenant yet. Prepared, as every gateway
 * event asks.
 */
export async function connectionForWebhook(
  em: EntityManager,
  id: string,
  provider: Provider,
): Promise<ProviderConnection | null> {
  if (!connectionColumns) {
    const meta = em.getMetadata().get(ProviderConnection.name);
    connectionColumns = meta.props
      .filter((p) => p.persist !== false && !p.formula && p.fieldNames?.length)
      .flatMap((p) => p.fieldNames)
      .map((c) => `"${c}"`)
      .join(', ');
  }
  const [row] = await systemQuery(
    em,
    `select ${connectionColumns} from provider_connections where id = ? and provider = ?`,
    [id, provider],
  );
  return row ? em.map(ProviderConnection, row as never) : null;
}
