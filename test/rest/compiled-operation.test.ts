import {
  execute,
  GraphQLEnumType,
  GraphQLError,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
} from 'graphql';
import { compileOperation } from '../../rest-shim/compiled-operation';
import { DomainError } from '../../src/core/errors';

/**
 * The REST shim runs its operations compiled (rest-shim/compiled-operation.ts). Whatever a route's operation answers
 * through graphql-js's `execute` it must answer the same way compiled: data, error messages (the shim turns them into
 * the contract's `param`), error paths and the original errors. Each case runs both and compares.
 */
const Status = new GraphQLEnumType({ name: 'Status', values: { ACTIVE: { value: 'active' }, PAUSED: { value: 'paused' } } });
const Line = new GraphQLInputObjectType({
  name: 'LineInput',
  fields: { sku: { type: new GraphQLNonNull(GraphQLString) }, quantity: { type: GraphQLInt, defaultValue: 1 } },
});
const Input = new GraphQLInputObjectType({
  name: 'OrderInput',
  fields: { status: { type: Status }, lines: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Line))) }, note: { type: GraphQLString } },
});
const Echo = new GraphQLObjectType({
  name: 'Echo',
  fields: {
    status: { type: Status },
    lines: { type: new GraphQLList(new GraphQLObjectType({ name: 'Line', fields: { sku: { type: GraphQLString }, quantity: { type: GraphQLInt } } })) },
    note: { type: GraphQLString },
    limit: { type: GraphQLInt },
    seenBy: { type: GraphQLString, resolve: (_s, _a, ctx: { who: string }) => ctx.who },
    failing: { type: GraphQLString, resolve: () => { throw new DomainError('resource_not_found', 'No such thing.', 'id'); } },
    required: { type: new GraphQLNonNull(GraphQLString), resolve: () => null },
  },
});
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: {
      echo: {
        type: Echo,
        args: { input: { type: new GraphQLNonNull(Input) }, limit: { type: GraphQLInt, defaultValue: 10 } },
        resolve: async (_s, args: { input: Record<string, unknown>; limit: number }) => {
          // The resolver sees graphql-js's coerced values: internal enum values, defaults filled in.
          return { ...args.input, limit: args.limit };
        },
      },
    },
  }),
});

const document = parse(`query Echo($input: OrderInput!, $limit: Int = 5) {
  echo(input: $input, limit: $limit) { status note limit seenBy lines { sku quantity } }
}`);
const withFailure = parse('query ($input: OrderInput!) { echo(input: $input) { note failing } }');
const withNullViolation = parse('query ($input: OrderInput!) { echo(input: $input) { note required } }');

async function both(doc: typeof document, variableValues: Record<string, unknown>) {
  const contextValue = { who: 'merchant_1' };
  const interpreted = await execute({ schema, document: doc, variableValues, contextValue });
  const compiled = await compileOperation(schema, doc)(contextValue, variableValues);
  return { interpreted: JSON.parse(JSON.stringify(interpreted)), compiled: JSON.parse(JSON.stringify(compiled)), raw: compiled };
}

describe('REST operations run compiled, answering as graphql-js does', () => {
  it('takes variables coerced by graphql-js: enums, defaults of variables and of input fields, the context', async () => {
    const { interpreted, compiled } = await both(document, { input: { status: 'PAUSED', lines: [{ sku: 'a' }, { sku: 'b', quantity: 3 }] } });
    expect(compiled).toEqual(interpreted);
    expect(compiled.data.echo).toEqual({
      status: 'PAUSED', note: null, limit: 5, seenBy: 'merchant_1', lines: [{ sku: 'a', quantity: 1 }, { sku: 'b', quantity: 3 }],
    });
  });

  it.each([
    ['an unknown input field', { input: { lines: [], colour: 'red' } }],
    ['a missing required field deep in a list', { input: { lines: [{ sku: 'a' }, { quantity: 2 }] } }],
    ['a wrong scalar', { input: { lines: [{ sku: 'a', quantity: 'two' }] } }],
    ['a wrong enum value', { input: { status: 'active', lines: [] } }],
    ['a missing variable', {}],
    ['a null for a non-null variable', { input: null }],
  ])('refuses %s with graphql-js\'s own message', async (_name, variables) => {
    const { interpreted, compiled } = await both(document, variables);
    expect(interpreted.errors?.length).toBeGreaterThan(0);
    expect(compiled).toEqual(interpreted);
  });

  it('reports a resolver\'s error with its path and the error it threw', async () => {
    const { interpreted, compiled, raw } = await both(withFailure, { input: { lines: [], note: 'n' } });
    expect(compiled).toEqual(interpreted);
    expect(compiled.data).toEqual({ echo: { note: 'n', failing: null } });
    const err = raw.errors![0] as GraphQLError;
    expect(err.path).toEqual(['echo', 'failing']);
    expect(err.originalError).toBeInstanceOf(DomainError);
  });

  it('nulls the parent of a non-null field that resolved to null', async () => {
    const { interpreted, compiled } = await both(withNullViolation, { input: { lines: [] } });
    expect(compiled).toEqual(interpreted);
    expect(compiled.data).toEqual({ echo: null });
  });

  it('leaves the service\'s schema as it was', () => {
    compileOperation(schema, document);
    expect(schema.getType('RestShimCoercedValue')).toBeUndefined();
  });
});

describe('an operation graphql-jit cannot compile', () => {
  it('runs interpreted by graphql-js, with the same answer, and says so once', async () => {
    // A required argument left out: graphql-jit refuses to compile it; graphql-js answers that field's error (the shim
    // validates its documents, so no route has one: this only stands in for what graphql-jit may not handle).
    const doc = parse('query ($input: OrderInput!) { echo(input: $input) { note } again: echo { note } }');
    const fallbacks: Error[] = [];
    const run = compileOperation(schema, doc, (e) => fallbacks.push(e));
    const variables = { input: { status: 'ACTIVE', lines: [], note: 'n' } };
    const json = (x: unknown) => JSON.parse(JSON.stringify(x));
    const interpreted = json(await execute({ schema, document: doc, variableValues: variables }));
    expect(json(await run(undefined, variables))).toEqual(interpreted);
    expect(json(await run(undefined, variables))).toEqual(interpreted);
    expect(interpreted.data).toEqual({ echo: { note: 'n' }, again: null });
    expect(fallbacks).toHaveLength(1);
    expect(fallbacks[0].message).toMatch(/cannot compile/);
  });
});
