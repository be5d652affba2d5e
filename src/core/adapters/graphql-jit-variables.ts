import type { GraphQLError, GraphQLSchema, VariableDefinitionNode } from 'graphql';
// Not exported from graphql-jit's entry point: its compiled variable coercion, used by compileQuery.
import { compileVariableParsing } from 'graphql-jit/dist/variables';

/**
 * graphql-jit's compiled coercion of an operation's variables: `{ coerced }` when it accepts the input, else
 * `{ errors }`. Reached by a path graphql-jit does not document (its `dist/variables` module, which its `exports` map
 * lets through); rest-shim/compiled-operation.ts falls back to graphql-js wherever the two could differ.
 * test/core/adapters.test.ts checks the shape of its answers with the installed graphql-jit.
 */
export function compiledVariableCoercion(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
): (raw: Record<string, unknown>) => { coerced?: Record<string, unknown>; errors?: readonly GraphQLError[] } {
  return compileVariableParsing(schema, definitions) as (raw: Record<string, unknown>) => {
    coerced?: Record<string, unknown>;
    errors?: readonly GraphQLError[];
  };
}
