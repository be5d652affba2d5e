import type { ApolloServerPlugin } from '@apollo/server';
import type { Ctx } from '../core/context';
import { idempotentReplay } from '../modules/idempotency';

/**
 * `POST /graphql` answers `Idempotent-Replayed: true` when a mutation of the operation answered its stored first
 * result (src/modules/idempotency/with-idempotency.ts), as the REST shim does.
 */
export function idempotencyReport(): ApolloServerPlugin<Ctx> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          if (idempotentReplay(contextValue)) response.http.headers.set('idempotent-replayed', 'true');
        },
      };
    },
  };
}
