import type { EntityManager } from '@mikro-orm/postgresql';
import { tenantRows } from '../../core/sql';
import { Provider, ProviderConnection } from './provider-connection.entities';

/** Statements on provider_connections beyond the ORM's. */

/**
 * The tenant's connection to `provider`, else its default one. Every payment asks: a prepared statement rather than
 * the ORM's query building.
 */
export async function connectionFor(em: EntityManager, provider?: Provider | null): Promise<ProviderConnection | undefined> {
  const [connection] = provider
    ? await tenantRows(em, ProviderConnection, 'provider = ?', [provider])
    : await tenantRows(em, ProviderConnection, 'is_default', []);
  return connection;
}
