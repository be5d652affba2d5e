import {
  FieldNode,
  FragmentDefinitionNode,
  getNamedType,
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
import { ERROR_CODES } from '../src/core/errors';
import { CompiledRoute, compileRoute } from './compile';
import { toSnake } from '../src/core/case';
import { routes } from './routes';

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

function scalarSchema(name: string): Schema {
  return SCALARS[name] ?? { type: 'string' };
}

/** JSON Schema of a REST request value, from the GraphQL input type it maps to. */
function inputSchema(type: GraphQLInputType, nullable = true): Schema {
  if (isNonNullType(type)) return inputSchema(type.ofType, false);
  let s: Schema;
  if (isListType(type)) s = { type: 'array', items: inputSchema(type.ofType) };
  else if (isEnumType(type)) s = { type: 'string', enum: type.getValues().map((v) => v.name.toLowerCase()) };
  else if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    s = {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(
        fields.map((f) => [toSnake(f.name), { ...inputSchema(f.type), ...(f.description ? { description: f.description } : {}) }]),
      ),
      required: fields.filter((f) => isNonNullType(f.type)).map((f) => toSnake(f.name)),
    };
    if (!(s.required as string[]).length) delete s.required;
  } else s = scalarSchema(type.name);
  return nullable && !isInputObjectType(type) ? { ...s, type: [s.type, 'null'].flat() } : s;
}

/** JSON Schema of a REST answer: the selection set of the route's document over the schema's output types. */
function outputSchema(
  type: GraphQLOutputType,
  selection: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
  nullable = true,
): Schema {
  if (isNonNullType(type)) return outputSchema(type.ofType, selection, fragments, false);
  let s: Schema;
  if (isListType(type)) s = { type: 'array', items: outputSchema(type.ofType, selection, fragments) };
  else if (isEnumType(type)) s = { type: 'string', enum: type.getValues().map((v) => v.name.toLowerCase()) };
  else if (isScalarType(type)) s = scalarSchema(type.name);
  else if (isObjectType(type)) s = objectSchema(type, selection!, fragments);
  else s = {};
  if (nullable && s.type) return { ...s, type: [s.type, 'null'].flat() };
  return s;
}

function selectedFields(selection: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>): FieldNode[] {
  return selection.selections.flatMap((sel) => {
    if (sel.kind === Kind.FIELD) return [sel];
    if (sel.kind === Kind.FRAGMENT_SPREAD) return selectedFields(fragments.get(sel.name.value)!.selectionSet, fragments);
    return selectedFields(sel.selectionSet, fragments);
  });
}

function objectSchema(type: GraphQLObjectType, selection: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>): Schema {
  const fields = type.getFields();
  const props: Record<string, Schema> = {};
  for (const node of selectedFields(selection, fragments)) {
    const field = fields[node.name.value];
    props[toSnake(field.name)] = {
      ...outputSchema(field.type, node.selectionSet, fragments),
      ...(field.description ? { description: field.description } : {}),
    };
  }
  return { type: 'object', properties: props, required: Object.keys(props) };
}

function responseSchema(route: CompiledRoute): Schema {
  const fragments = new Map(
    route.documentNode.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
  const op = route.documentNode.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!;
  const root = (op as { selectionSet: SelectionSetNode }).selectionSet.selections[0] as FieldNode;
  if (!route.isList) return outputSchema(route.resultType, root.selectionSet, fragments, false);
  const conn = getNamedType(route.resultType) as GraphQLObjectType;
  const edges = selectedFields(root.selectionSet!, fragments).find((f) => f.name.value === 'edges')!;
  const nodeSel = selectedFields(edges.selectionSet!, fragments).find((f) => f.name.value === 'node')!;
  const edgeType = getNamedType(conn.getFields().edges.type) as GraphQLObjectType;
  return {
    type: 'object',
    required: ['object', 'data', 'has_more', 'next_cursor'],
    properties: {
      object: { type: 'string', const: 'list' },
      data: { type: 'array', items: outputSchema(edgeType.getFields().node.type, nodeSel.selectionSet, fragments, false) },
      has_more: { type: 'boolean' },
      next_cursor: { type: ['string', 'null'] },
    },
  };
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

/** OpenAPI 3.1 document of the REST API, generated from the route table and the GraphQL types. */
export function openApiDocument(schema: GraphQLSchema): Schema {
  const paths: Record<string, Record<string, Schema>> = {};
  for (const route of routes.map((r) => compileRoute(schema, r))) {
    const parameters: Schema[] = [
      ...route.pathParams.map((p) => ({ name: p, in: 'path', required: true, schema: { type: 'string' } })),
      ...(route.method === 'get' || route.inputType
        ? [...route.argParams].map(([name, spec]) => ({ name, in: 'query', required: isNonNullType(spec.type), schema: inputSchema(spec.type) }))
        : []),
    ];
    if (route.idempotent) {
      parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 } });
    }
    const argBody = route.method !== 'get' && !route.inputType && route.argParams.size > 0;
    const body = route.inputType
      ? inputSchema(route.inputType, false)
      : argBody
        ? {
            type: 'object',
            additionalProperties: false,
            properties: Object.fromEntries([...route.argParams].map(([name, spec]) => [name, inputSchema(spec.type)])),
          }
        : null;
    const status = String(route.status ?? 200);
    paths[route.path] ??= {};
    paths[route.path][route.method] = {
      summary: route.summary,
      tags: [route.tag],
      operationId: route.rootField,
      security: [{ [route.auth === 'admin' ? 'operatorToken' : 'secretKey']: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(body ? { requestBody: { required: !!route.inputType, content: { 'application/json': { schema: body } } } } : {}),
      responses: {
        [status]: { description: 'Success', content: { 'application/json': { schema: responseSchema(route) } } },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
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
    },
    servers: [{ url: '/v1' }],
    components: {
      securitySchemes: {
        secretKey: { type: 'http', scheme: 'bearer', description: 'sk_test_... or sk_live_...: decides merchant and mode' },
        operatorToken: { type: 'http', scheme: 'bearer', description: 'The server ADMIN_TOKEN' },
      },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}
