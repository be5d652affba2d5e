import {
  DocumentNode,
  FieldNode,
  GraphQLInputType,
  GraphQLOutputType,
  GraphQLSchema,
  isLeafType,
  getNamedType,
  Kind,
  OperationDefinitionNode,
  parse,
  typeFromAST,
  validate,
} from 'graphql';
import type { Route } from './routes';
import { toSnake } from '../src/core/case';

export interface CompiledRoute extends Route {
  /** express path (`/products/:id`) */
  expressPath: string;
  documentNode: DocumentNode;
  rootField: string;
  resultType: GraphQLOutputType;
  isList: boolean;
  pathParams: string[];
  /** REST argument name -> GraphQL variable; read from the query string (and, for a POST without `$input`, the body). */
  argParams: Map<string, { variable: string; type: GraphQLInputType }>;
  inputType: GraphQLInputType | null;
  /** A `binary` route: the field names from the root field's value down to its `{ filename contentType base64 }`. */
  filePath: string[] | null;
}

/** The variable an idempotent route's `Idempotency-Key` header fills. */
export const IDEMPOTENCY_KEY_VARIABLE = 'idempotencyKey';

/** Query-string names of the pagination variables; everything else is the variable's snake_case. */
export const QUERY_NAMES: Record<string, string> = { first: 'limit', after: 'cursor' };

/** `fragment XFields on X { every field without required arguments whose type is a scalar or enum }` */
function leafFragment(schema: GraphQLSchema, typeName: string): string {
  const type = schema.getType(typeName);
  if (!type || !('getFields' in type)) throw new Error(`REST shim: unknown type ${typeName}`);
  const fields = Object.values(type.getFields())
    .filter((f) => isLeafType(getNamedType(f.type)) && !('args' in f && f.args.some((a: { type: { toString(): string } }) => a.type.toString().endsWith('!'))))
    .map((f) => f.name);
  return `fragment ${typeName}Fields on ${typeName} { ${fields.join(' ')} }`;
}

/** The one-field chain below `root` that ends in a selection of exactly `filename contentType base64`. */
function fileSelectionPath(route: Route, root: FieldNode): string[] {
  const names: string[] = [];
  let node = root;
  for (;;) {
    const fields = (node.selectionSet?.selections ?? []).map((s) => (s.kind === Kind.FIELD ? s.name.value : null));
    if ([...fields].sort().join(' ') === 'base64 contentType filename') return names;
    if (fields.length !== 1 || !fields[0]) {
      throw new Error(`REST shim: ${route.method} ${route.path}: a binary route selects one { filename contentType base64 } object`);
    }
    node = node.selectionSet!.selections[0] as FieldNode;
    names.push(node.alias?.value ?? node.name.value); // the key in the answer
  }
}

export function compileRoute(schema: GraphQLSchema, route: Route): CompiledRoute {
  const spreads = new Set([...route.document.matchAll(/\.\.\.(\w+)Fields\b/g)].map((m) => m[1]));
  const source = [route.document, ...[...spreads].map((t) => leafFragment(schema, t))].join('\n');
  const documentNode = parse(source);
  const errors = validate(schema, documentNode);
  if (errors.length) throw new Error(`REST shim: ${route.method} ${route.path}: ${errors.map((e) => e.message).join('; ')}`);
  const op = documentNode.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const rootNode = op.selectionSet.selections[0] as FieldNode;
  const rootType = op.operation === 'mutation' ? schema.getMutationType()! : schema.getQueryType()!;
  const resultType = rootType.getFields()[rootNode.name.value].type;
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const argParams = new Map<string, { variable: string; type: GraphQLInputType }>();
  let inputType: GraphQLInputType | null = null;
  for (const def of op.variableDefinitions ?? []) {
    const name = def.variable.name.value;
    const type = typeFromAST(schema, def.type as never) as GraphQLInputType;
    if (name === 'input') inputType = type;
    else if (name === IDEMPOTENCY_KEY_VARIABLE) continue; // from the Idempotency-Key header (router.ts), never the query
    else if (!pathParams.includes(name)) argParams.set(QUERY_NAMES[name] ?? toSnake(name), { variable: name, type });
  }
  const named = getNamedType(resultType);
  const isList = 'getFields' in named && 'edges' in named.getFields() && 'pageInfo' in named.getFields();
  return {
    ...route,
    expressPath: route.path.replace(/\{(\w+)\}/g, ':$1'),
    documentNode,
    rootField: rootNode.name.value,
    resultType,
    isList,
    pathParams,
    argParams,
    inputType,
    filePath: route.binary ? fileSelectionPath(route, rootNode) : null,
  };
}
