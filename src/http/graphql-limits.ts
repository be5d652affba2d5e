import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import type { Ctx } from '../core/context';
import { operationCostError } from '../core/operation-cost';
import { formatGraphQLError } from '../core/errors';

const SUBSCRIPTION_OVER_HTTP =
  'Subscriptions are served over WebSocket (graphql-ws) at /graphql; over HTTP, send a query or a mutation.';

const subscriptionRefused = () =>
  new GraphQLError(SUBSCRIPTION_OVER_HTTP, { extensions: { code: 'parameter_invalid', http: { status: 400 } } });

/**
 * What GraphQL over HTTP refuses beyond Apollo's own checks: an operation over the cost limit
 * (src/core/operation-cost.ts) answers 400 `query_too_complex`; a `subscription` operation answers 400
 * `parameter_invalid` instead of running its root field as a query (which failed inside with an internal error).
 * POST is stopped before execution; GET, which Apollo already refuses with a 405 before plugins see the operation,
 * gets the same 400 answer.
 */
export function graphqlHttpLimits(): ApolloServerPlugin<Ctx> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, document, request, schema }) {
          if (operation?.operation === 'subscription') throw subscriptionRefused();
          const tooCostly = operationCostError(schema, document, request.operationName, request.variables);
          if (tooCostly) throw tooCostly;
        },
        async willSendResponse({ operation, response, contextValue }) {
          if (operation?.operation !== 'subscription' || response.body.kind !== 'single') return;
          const formatted = formatGraphQLError(subscriptionRefused());
          response.body.singleResult = {
            errors: [{ ...formatted, extensions: { ...formatted.extensions, requestId: contextValue.requestId } }],
          };
          response.http.status = 400;
          response.http.headers.delete('allow');
        },
      };
    },
  };
}
