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
  GraphQLInputType,
  getVariableValues,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  OperationDefinitionNode,
  parse,
  typeFromAST,
} from 'graphql';
import fc from 'fast-check';
import { compileOperation, variableCoercion } from '../../rest-shim/compiled-operation';
import { compileRoute } from '../../rest-shim/compile';
import { routes } from '../../rest-shim/routes';
import { createSchema } from '../../src/schema';
import { DomainError } from '../../src/core/errors';

/**
 * The REST shim runs its operations compiled (rest-shim/compiled-operation.ts). Whatever a route's operation answers
 * through graphql-js's `execute` it must answer the same way compiled: data, error messages (the shim turns them into
 * the API's `param`), error paths and the original errors. Each case runs both and compares.
 */
const Status = new GraphQLEnumType({
  name: 'Status',
  values: { ACTIVE: { value: 'active' }, PAUSED: { value: 'paused' } },
});
const Line = new GraphQLInputObjectType({
  name: 'LineInput',
  fields: { sku: { type: new GraphQLNonNull(GraphQLString) }, quantity: { type: GraphQLInt, defaultValue: 1 } },
});
const Input = new GraphQLInputObjectType({
  name: 'OrderInput',
  fields: {
    status: { type: Status },
    lines: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Line))) },
    note: { type: GraphQLString },
  },
});
const Echo = new GraphQLObjectType({
  name: 'Echo',
  fields: {
    status: { type: Status },
    lines: {
      type: new GraphQLList(
        new GraphQLObjectType({
          name: 'Line',
          fields: { sku: { type: GraphQLString }, quantity: { type: GraphQLInt } },
        }),
      ),
    },
    note: { type: GraphQLString },
    limit: { type: GraphQLInt },
    seenBy: { type: GraphQLString, resolve: (_s, _a, ctx: { who: string }) => ctx.who },
    failing: {
      type: GraphQLString,
      resolve: () => {
        throw new DomainError('resource_not_found', 'No such thing.', 'id');
      },
    },
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
  return {
    interpreted: JSON.parse(JSON.stringify(interpreted)),
    compiled: JSON.parse(JSON.stringify(compiled)),
    raw: compiled,
  };
}

describe('REST operations run compiled, answering as graphql-js does', () => {
  it('takes variables coerced by graphql-js: enums, defaults of variables and of input fields, the context', async () => {
    const { interpreted, compiled } = await both(document, {
      input: { status: 'PAUSED', lines: [{ sku: 'a' }, { sku: 'b', quantity: 3 }] },
    });
    expect(compiled).toEqual(interpreted);
    expect(compiled.data.echo).toEqual({
      status: 'PAUSED',
      note: null,
      limit: 5,
      seenBy: 'merchant_1',
      lines: [
        { sku: 'a', quantity: 1 },
        { sku: 'b', quantity: 3 },
      ],
    });
  });

  it.each([
    ['an unknown input field', { input: { lines: [], colour: 'red' } }],
    ['a missing required field deep in a list', { input: { lines: [{ sku: 'a' }, { quantity: 2 }] } }],
    ['a wrong scalar', { input: { lines: [{ sku: 'a', quantity: 'two' }] } }],
    ['a wrong enum value', { input: { status: 'active', lines: [] } }],
    ['a missing variable', {}],
    ['a null for a non-null variable', { input: null }],
  ])("refuses %s with graphql-js's own message", async (_name, variables) => {
    const { interpreted, compiled } = await both(document, variables);
    expect(interpreted.errors?.length).toBeGreaterThan(0);
    expect(compiled).toEqual(interpreted);
  });

  it("reports a resolver's error with its path and the error it threw", async () => {
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

  it("leaves the service's schema as it was", () => {
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

/**
 * The compiled coercion (graphql-jit) decides alone for input it accepts: graphql-js only sees what it refuses. So on
 * every REST route's variables, for input generated from their types (valid, and mixed with wrong scalars, nulls,
 * arrays, unknown fields), the shim's coercion must answer what graphql-js's does: the same errors or equal values.
 */
describe("the compiled coercion of every REST route's variables agrees with graphql-js", () => {
  const junk = fc.constantFrom<unknown>(
    null,
    'x',
    '',
    1,
    -1,
    1.5,
    2 ** 31,
    true,
    [],
    {},
    [1],
    { bogus: 1 },
    '2026-11-24T10:00:00.000Z',
    'ACTIVE',
    'active',
    NaN,
  );
  const scalar = (name: string): fc.Arbitrary<unknown> => {
    switch (name) {
      case 'String':
        return fc.string({ maxLength: 5 });
      case 'ID':
        return fc.oneof(fc.uuid(), fc.integer());
      case 'Int':
      case 'SafeInt':
        return fc.oneof(fc.integer(), fc.maxSafeInteger());
      case 'Float':
        return fc.double();
      case 'Boolean':
        return fc.boolean();
      case 'DateTime':
      case 'DateTimeISO':
        return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
      default:
        return fc.oneof(
          fc.string({ maxLength: 5 }),
          fc.integer(),
          fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
        );
    }
  };
  const valueOf = (type: GraphQLInputType, depth: number): fc.Arbitrary<unknown> => {
    if (isNonNullType(type))
      return fc.oneof({ arbitrary: valueOf(type.ofType, depth), weight: 8 }, { arbitrary: junk, weight: 1 });
    const good = ((): fc.Arbitrary<unknown> => {
      if (isListType(type))
        return fc.oneof(fc.array(valueOf(type.ofType, depth), { maxLength: 3 }), valueOf(type.ofType, depth));
      if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((v) => v.name));
      if (isInputObjectType(type)) {
        if (depth > 3) return fc.constant({});
        const fields = Object.values(type.getFields());
        const record = fc.record(Object.fromEntries(fields.map((f) => [f.name, valueOf(f.type, depth + 1)])), {
          requiredKeys: [],
        });
        return fc.oneof(
          { arbitrary: record, weight: 6 },
          { arbitrary: record.map((r) => ({ ...r, notAField: 1 })), weight: 1 },
        );
      }
      return scalar(type.name);
    })();
    return fc.oneof({ arbitrary: good, weight: 6 }, { arbitrary: junk, weight: 1 });
  };

  it('for every route: the same input accepted, coerced to the same values', async () => {
    const schema = await createSchema();
    let routesChecked = 0;
    for (const route of routes) {
      const op = compileRoute(schema, route).executed.definitions.find(
        (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
      )!;
      const definitions = op.variableDefinitions ?? [];
      if (!definitions.length) continue;
      routesChecked++;
      const coerce = variableCoercion(schema, definitions);
      const variables = fc.record(
        Object.fromEntries(
          definitions.map((d) => [
            d.variable.name.value,
            valueOf(typeFromAST(schema, d.type as never) as GraphQLInputType, 0),
          ]),
        ),
        { requiredKeys: [] },
      );
      fc.assert(
        fc.property(variables, (raw) => {
          const byJs = getVariableValues(schema, definitions, raw as Record<string, unknown>);
          const byShim = coerce(raw as Record<string, unknown>);
          const label = `${route.method} ${route.path} ${JSON.stringify(raw)}`;
          expect({ label, errors: byShim.errors?.map((e) => e.message) }).toEqual({
            label,
            errors: byJs.errors?.map((e) => e.message),
          });
          expect({ label, coerced: byShim.coerced }).toEqual({ label, coerced: byJs.coerced });
          // toEqual takes an undefined property for an absent one; the compiled query would not (it would pass null).
          if (byJs.coerced)
            expect({ label, variables: Object.keys(byShim.coerced!) }).toEqual({
              label,
              variables: Object.keys(byJs.coerced),
            });
        }),
        { numRuns: 60, seed: 20261124 },
      );
    }
    expect(routesChecked).toBeGreaterThan(50);
  });
});
