import { defaultFieldResolver, GraphQLField, GraphQLFieldResolver } from 'graphql';

/**
 * Wraps a field's resolver in the built schema itself: `wrap` gets the resolver the field had (graphql's default
 * when none) and answers the one it runs from now on, for every executor of the schema (graphql-js, graphql-jit,
 * Apollo, graphql-ws). It relies on what graphql documents only as types: field objects are mutable, `getFields()`
 * answers the same ones every time, and executors read `field.resolve` when they run (graphql-jit when it compiles,
 * after the wrap). The root-field checks (authentication among them) depend on it: test/core/adapters.test.ts runs a
 * wrapped field through graphql-js and graphql-jit.
 */
export function wrapFieldResolver<S, C>(
  field: GraphQLField<S, C>,
  wrap: (resolve: GraphQLFieldResolver<S, C>) => GraphQLFieldResolver<S, C>,
): void {
  field.resolve = wrap(field.resolve ?? (defaultFieldResolver as GraphQLFieldResolver<S, C>));
}
