import {
  FieldNode,
  FragmentDefinitionNode,
  getNamedType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInputType,
  GraphQLObjectType,
  GraphQLOutputType,
  GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  SelectionSetNode,
} from 'graphql';
import { ERROR_CODES, ErrorCode } from '../src/core/errors';
import { CompiledRoute, compileRoute } from './compile';
import { restEnumValue, restName } from './mapping';
import { routes } from './routes';
import { BODY_EXAMPLES, EXAMPLE_VALUES, fillExamples, PARAM_EXAMPLES } from './examples';

/**
 * OpenAPI 3.1 document of the REST API, generated from the route table and the GraphQL types.
 *
 * Every answer, request body and enum is a named component (`#/components/schemas/...`), so generated clients get a
 * `Payment` or `ProductList` type. An answer's component is the route's selection set over a GraphQL type in REST
 * names; when one type is answered in two shapes (a plan alone carries its prices, a plan inside a product does
 * not), the fullest shape takes the type's name and the other is prefixed by its parent (`ProductPlan`).
 */

type Schema = Record<string, unknown>;

const SCALARS: Record<string, Schema> = {
  String: { type: 'string' },
  ID: { type: 'string', format: 'uuid' },
  Int: { type: 'integer' },
  SafeInt: { type: 'integer', description: 'Integer amount in the smallest currency subunit' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTimeISO: { type: 'string', format: 'date-time' },
  JSONObject: { type: 'object', additionalProperties: true },
};

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** `x` or null: a type list for plain schemas, `anyOf` for a reference. */
function orNull(s: Schema): Schema {
  if (s.$ref) return { anyOf: [s, { type: 'null' }] };
  return { ...s, type: [s.type, 'null'].flat() };
}

function scalarSchema(name: string): Schema {
  return SCALARS[name] ?? { type: 'string' };
}

function selectedFields(selection: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>): FieldNode[] {
  return selection.selections.flatMap((sel) => {
    if (sel.kind === Kind.FIELD) return [sel];
    if (sel.kind === Kind.FRAGMENT_SPREAD)
      return selectedFields(fragments.get(sel.name.value)!.selectionSet, fragments);
    return selectedFields(sel.selectionSet, fragments);
  });
}

const withDescription = (s: Schema, description?: string | null): Schema => (description ? { ...s, description } : s);

/** One shape of an answered object type; `schema` points at child shapes through placeholders until names are chosen. */
interface Shape {
  type: GraphQLObjectType;
  schema: Schema;
  /** Answered by a route directly (or as its list items). */
  root: boolean;
  parents: Set<string>;
  size: number;
}

const PLACEHOLDER = 'shape:';

/** Builds the components: enums and inputs by GraphQL name, answer shapes named once all routes are seen. */
class Components {
  readonly schemas: Record<string, Schema> = {};
  private readonly shapes = new Map<string, Shape>();
  private names = new Map<string, string>();

  enumRef(type: GraphQLEnumType): Schema {
    this.schemas[type.name] ??= withDescription(
      { type: 'string', enum: type.getValues().map((v) => restEnumValue(v.name)) },
      type.description,
    );
    return ref(type.name);
  }

  /** JSON Schema of a REST request value, from the GraphQL input type it maps to. */
  input(type: GraphQLInputType, nullable = true): Schema {
    if (isNonNullType(type)) return this.input(type.ofType, false);
    if (isInputObjectType(type)) return this.inputObjectRef(type); // an omitted object is absent, not null
    let s: Schema;
    if (isListType(type)) s = { type: 'array', items: this.input(type.ofType) };
    else if (isEnumType(type)) s = this.enumRef(type);
    else s = scalarSchema(type.name);
    return nullable ? orNull(s) : s;
  }

  private inputObjectRef(type: GraphQLInputObjectType): Schema {
    if (!this.schemas[type.name]) {
      this.schemas[type.name] = {}; // reserved first: input types may refer to themselves
      const fields = Object.values(type.getFields());
      const s: Schema = {
        type: 'object',
        additionalProperties: false,
        properties: Object.fromEntries(
          fields.map((f) => [restName(f.name), withDescription(this.input(f.type), f.description)]),
        ),
      };
      const required = fields.filter((f) => isNonNullType(f.type)).map((f) => restName(f.name));
      if (required.length) s.required = required;
      this.schemas[type.name] = withDescription(s, type.description);
    }
    return ref(type.name);
  }

  /** The request body of a POST whose variables are plain arguments rather than `$input`. */
  argumentBody(route: CompiledRoute): Schema {
    const name = `${route.rootField[0].toUpperCase()}${route.rootField.slice(1)}Request`;
    this.schemas[name] = {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries([...route.argParams].map(([param, spec]) => [param, this.input(spec.type)])),
    };
    return ref(name);
  }

  /** JSON Schema of a REST answer value: the selection set over the schema's output types. */
  output(
    type: GraphQLOutputType,
    selection: SelectionSetNode | undefined,
    fragments: Map<string, FragmentDefinitionNode>,
    parent: string | null,
    nullable = true,
  ): Schema {
    if (isNonNullType(type)) return this.output(type.ofType, selection, fragments, parent, false);
    let s: Schema;
    if (isListType(type)) s = { type: 'array', items: this.output(type.ofType, selection, fragments, parent) };
    else if (isEnumType(type)) s = this.enumRef(type);
    else if (isScalarType(type)) s = scalarSchema(type.name);
    else if (isObjectType(type)) s = { $ref: PLACEHOLDER + this.shape(type, selection!, fragments, parent) };
    else s = {};
    return nullable ? orNull(s) : s;
  }

  /** Registers the shape of `type` under `selection`; answers its key (equal shapes share one). */
  shape(
    type: GraphQLObjectType,
    selection: SelectionSetNode,
    fragments: Map<string, FragmentDefinitionNode>,
    parent: string | null,
  ): string {
    const fields = type.getFields();
    const properties: Record<string, Schema> = {};
    for (const node of selectedFields(selection, fragments)) {
      const field = fields[node.name.value];
      properties[restName(field.name)] = withDescription(
        this.output(field.type, node.selectionSet, fragments, type.name),
        field.description,
      );
    }
    const schema = withDescription({ type: 'object', properties, required: Object.keys(properties) }, type.description);
    const key = `${type.name}:${JSON.stringify(schema)}`;
    let shape = this.shapes.get(key);
    if (!shape) this.shapes.set(key, (shape = { type, schema, root: false, parents: new Set(), size: key.length }));
    if (parent === null) shape.root = true;
    else shape.parents.add(parent);
    return key;
  }

  /** Names every shape (call once all routes are seen) and answers a function from shape key to `$ref`. */
  nameShapes(): (key: string) => Schema {
    const byType = new Map<string, [string, Shape][]>();
    for (const entry of this.shapes) byType.set(entry[1].type.name, [...(byType.get(entry[1].type.name) ?? []), entry]);
    const taken = new Set(['Error', ...Object.keys(this.schemas)]);
    const claim = (wanted: string) => {
      let name = wanted;
      for (let i = 2; taken.has(name); i++) name = `${wanted}${i}`;
      taken.add(name);
      return name;
    };
    for (const [typeName, shapes] of [...byType].sort(([a], [b]) => a.localeCompare(b))) {
      shapes.sort(([ka, a], [kb, b]) => Number(b.root) - Number(a.root) || b.size - a.size || ka.localeCompare(kb));
      shapes.forEach(([key, shape], i) => {
        this.names.set(key, claim(i === 0 ? typeName : `${[...shape.parents].sort()[0] ?? ''}${typeName}`));
      });
    }
    const resolve = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(resolve);
      if (!value || typeof value !== 'object') return value;
      const o = value as Schema;
      if (typeof o.$ref === 'string' && o.$ref.startsWith(PLACEHOLDER))
        return ref(this.names.get(o.$ref.slice(PLACEHOLDER.length))!);
      return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, resolve(v)]));
    };
    for (const [key, shape] of this.shapes) this.schemas[this.names.get(key)!] = resolve(shape.schema) as Schema;
    return (key) => ref(this.names.get(key)!);
  }

  /** A bare JSON array of `item` (a root field answering a GraphQL list), as a component called `name`. */
  arrayAnswer(name: string, item: Schema): Schema {
    this.schemas[name] = { type: 'array', items: item };
    return ref(name);
  }

  listEnvelope(itemName: string): Schema {
    const name = `${itemName}List`;
    this.schemas[name] = {
      type: 'object',
      description: `A page of ${itemName} objects, newest first.`,
      required: ['object', 'data', 'has_more', 'next_cursor'],
      properties: {
        object: { type: 'string', const: 'list' },
        data: { type: 'array', items: ref(itemName) },
        has_more: { type: 'boolean' },
        next_cursor: {
          type: ['string', 'null'],
          description: 'Pass as `cursor` for the next page; null on the last page.',
        },
      },
    };
    return ref(name);
  }
}

/** The key of the shape a route answers (its list items for a list route). */
function answerShape(c: Components, route: CompiledRoute): string {
  const fragments = new Map(
    route.documentNode.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
  const op = route.documentNode.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!;
  const root = (op as { selectionSet: SelectionSetNode }).selectionSet.selections[0] as FieldNode;
  if (!route.isList)
    return c.shape(getNamedType(route.resultType) as GraphQLObjectType, root.selectionSet!, fragments, null);
  const conn = getNamedType(route.resultType) as GraphQLObjectType;
  const edges = selectedFields(root.selectionSet!, fragments).find((f) => f.name.value === 'edges')!;
  const nodeSel = selectedFields(edges.selectionSet!, fragments).find((f) => f.name.value === 'node')!;
  const edgeType = getNamedType(conn.getFields().edges.type) as GraphQLObjectType;
  return c.shape(
    getNamedType(edgeType.getFields().node.type) as GraphQLObjectType,
    nodeSel.selectionSet!,
    fragments,
    null,
  );
}

const ERROR_SCHEMA: Schema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message', 'param', 'request_id'],
      properties: {
        type: { type: 'string', enum: [...new Set(Object.values(ERROR_CODES).map((v) => v[1]))] },
        code: { type: 'string', enum: Object.keys(ERROR_CODES) },
        message: { type: 'string' },
        param: { type: ['string', 'null'] },
        request_id: { type: 'string' },
      },
    },
  },
};

const errorAnswer = (description: string, extra: Schema = {}): Schema => ({
  description,
  ...extra,
  content: { 'application/json': { schema: ref('Error') } },
});

const codes = (list: readonly ErrorCode[]) => list.map((c) => `\`${c}\``).join(', ');

/** The 4xx and 502 answers an operation can give (docs/api.md), each with the codes behind it. */
function errorAnswers(route: CompiledRoute, hasBody: boolean): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  // Every route refuses unknown query parameters, so every operation can answer 400.
  const invalid: ErrorCode[] = ['parameter_missing', 'parameter_invalid', 'parameter_unknown'];
  if (hasBody) invalid.push('invalid_json');
  if (route.idempotent) invalid.push('idempotency_key_reused');
  out['400'] = errorAnswer(
    `Invalid request: ${codes(invalid)}, or a rule of this operation (see \`message\` and \`param\`).`,
  );
  out['401'] =
    route.auth === 'admin'
      ? errorAnswer('Missing or wrong operator token: `invalid_api_key`.')
      : errorAnswer('Missing, malformed or unknown secret key: `invalid_api_key`.');
  if (route.pathParams.length) out['404'] = errorAnswer('No such object in this mode: `resource_not_found`.');
  else if (route.auth === 'admin')
    out['404'] = errorAnswer('The operator API is off (no ADMIN_TOKEN): `resource_not_found`.');
  const conflicts: ErrorCode[] = [
    ...(route.conflicts ?? []),
    ...(route.idempotent ? (['idempotency_key_in_use'] as const) : []),
  ];
  if (conflicts.length) out['409'] = errorAnswer(`Conflict with the current state: ${codes(conflicts)}.`);
  if (hasBody) out['413'] = errorAnswer('Request body over 1 MiB: `request_too_large`.');
  if (route.auth !== 'admin') {
    out['429'] = errorAnswer('Rate limit of this key reached: `rate_limited`.', {
      headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
    });
  }
  if (route.gateway)
    out['502'] = errorAnswer('The payment gateway failed or refused: `gateway_unavailable`, `gateway_rejected`.');
  return out;
}

/** The root field answers a GraphQL list (not a connection): the REST answer is a bare JSON array of the shape. */
function answersArray(route: CompiledRoute): boolean {
  return isListType(isNonNullType(route.resultType) ? route.resultType.ofType : route.resultType);
}

/** The JSON answer: the named shape, its list envelope, or a bare array of it named after the root field. */
function success(c: Components, route: CompiledRoute, item: Schema): Schema {
  if (route.isList) return c.listEnvelope(String(item.$ref).split('/').pop()!);
  if (answersArray(route)) return c.arrayAnswer(route.rootField[0].toUpperCase() + route.rootField.slice(1), item);
  return item;
}

/** A file route's answer (Route.binary): the bytes in the route's media type, named by Content-Disposition. */
function fileAnswer(mediaType: string): Schema {
  return {
    description: 'The file',
    headers: { 'Content-Disposition': { description: '`inline; filename="..."`', schema: { type: 'string' } } },
    content: { [mediaType]: { schema: { type: 'string', format: 'binary' } } },
  };
}

/** The root field's name; a file route adds the file field's (`invoicePdf`), as the root field alone is taken. */
function operationId(route: CompiledRoute): string {
  return [route.rootField, ...(route.filePath ?? []).map((k) => k[0].toUpperCase() + k.slice(1))].join('');
}

/** `POST /products/{id}`: how rest-shim/examples.ts names an operation. */
const key = (route: { method: string; path: string }) => `${route.method.toUpperCase()} ${route.path}`;

/**
 * The document as JSON text whose examples still hold their tokens (rest-shim/examples.ts): the service fills them
 * per serve with `fillExamples` (the demo merchant's ids, a fresh unique token).
 */
export function openApiTemplate(schema: GraphQLSchema): string {
  return JSON.stringify(buildDocument(schema));
}

/** OpenAPI 3.1 document of the REST API, its examples showing fixed example ids (schema/openapi.json). */
export function openApiDocument(schema: GraphQLSchema): Schema {
  return JSON.parse(fillExamples(openApiTemplate(schema), EXAMPLE_VALUES, 'demo')) as Schema;
}

function buildDocument(schema: GraphQLSchema): Schema {
  const c = new Components();
  // Inputs and answers are all registered before answer shapes are named, so every name is chosen knowing the others.
  const operations = routes
    .map((r) => compileRoute(schema, r))
    .map((route) => {
      const parameters: Schema[] = [
        ...route.pathParams.map((p) => ({
          name: p,
          in: 'path',
          required: true,
          schema: { type: 'string' },
          ...(PARAM_EXAMPLES[route.path]?.[p] ? { example: PARAM_EXAMPLES[route.path][p] } : {}),
        })),
        ...(route.method === 'get' || route.inputType
          ? [...route.argParams].map(([name, spec]) => ({
              name,
              in: 'query',
              required: isNonNullType(spec.type),
              schema: c.input(spec.type),
            }))
          : []),
      ];
      if (route.idempotent) {
        parameters.push({
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        });
      }
      const argBody = route.method !== 'get' && !route.inputType && route.argParams.size > 0;
      const body = route.inputType ? c.input(route.inputType, false) : argBody ? c.argumentBody(route) : null;
      // A file answer has no JSON shape to name.
      return { route, parameters, body, answer: route.binary ? null : answerShape(c, route) };
    });
  const shapeRef = c.nameShapes();

  const paths: Record<string, Record<string, Schema>> = {};
  for (const { route, parameters, body, answer } of operations) {
    const status = String(route.status ?? 200);
    paths[route.path] ??= {};
    paths[route.path][route.method] = {
      summary: route.summary,
      tags: [route.tag],
      operationId: operationId(route),
      security: [{ [route.auth === 'admin' ? 'operatorToken' : 'secretKey']: [] }],
      ...(parameters.length ? { parameters } : {}),
      // A nullable `$input` (refund) may be left out: the body is optional.
      ...(body
        ? {
            requestBody: {
              required: !!route.inputType && isNonNullType(route.inputType),
              content: {
                'application/json': {
                  schema: body,
                  ...(BODY_EXAMPLES[key(route)] ? { example: BODY_EXAMPLES[key(route)] } : {}),
                },
              },
            },
          }
        : {}),
      responses: {
        [status]:
          answer === null
            ? fileAnswer(route.binary!)
            : {
                description: 'Success',
                content: { 'application/json': { schema: success(c, route, shapeRef(answer)) } },
              },
        ...errorAnswers(route, !!body),
        default: { description: 'Error', content: { 'application/json': { schema: ref('Error') } } },
      },
      'x-graphql-operation': route.document.replace(/\s+/g, ' ').trim(),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cadence API',
      version: '1.0.0',
      description: 'Subscription billing. Every REST path runs the GraphQL operation shown in x-graphql-operation.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/v1' }],
    components: {
      securitySchemes: {
        secretKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'sk_test_... or sk_live_...: decides merchant and mode',
        },
        operatorToken: { type: 'http', scheme: 'bearer', description: 'The server ADMIN_TOKEN' },
      },
      schemas: {
        Error: ERROR_SCHEMA,
        ...Object.fromEntries(Object.entries(c.schemas).sort(([a], [b]) => a.localeCompare(b))),
      },
    },
    paths,
  };
}
