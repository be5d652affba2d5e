import {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLInputType,
  GraphQLObjectType,
  GraphQLOutputType,
  GraphQLSchema,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  getNamedType,
  Kind,
  OperationDefinitionNode,
  OperationTypeNode,
  parse,
  SelectionSetNode,
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
  /**
   * What runs: `documentNode`, or for a route with `shared` fields the same document with each of those fields'
   * selections cut down to `__typename` (their values are rendered on their own, `shared`).
   */
  executed: DocumentNode;
  sharedFields: SharedField[];
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
    .filter(
      (f) =>
        isLeafType(getNamedType(f.type)) &&
        !('args' in f && f.args.some((a: { type: { toString(): string } }) => a.type.toString().endsWith('!'))),
    )
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
      throw new Error(
        `REST shim: ${route.method} ${route.path}: a binary route selects one { filename contentType base64 } object`,
      );
    }
    node = node.selectionSet!.selections[0] as FieldNode;
    names.push(node.alias?.value ?? node.name.value); // the key in the answer
  }
}

/**
 * A field of the root field's answer rendered on its own (Route.shared): its selection runs over the field's value
 * as the one field `value` of a root type of its own (`schema`, `document`), with the request's context. The same
 * resolvers and the same mapping as the whole document: only the work is split.
 */
export interface SharedField {
  /** Its key in the GraphQL answer and in the REST answer. */
  responseKey: string;
  restKey: string;
  /** The object type that owns the field (its values are captured there: router.ts), and the field's type. */
  parentType: GraphQLObjectType;
  fieldName: string;
  type: GraphQLOutputType;
  schema: GraphQLSchema;
  /** `{ value { <the field's selection> } }` and the fragments it uses. */
  document: DocumentNode;
}

/** Per service schema, per shared field (`Type.field`): a schema whose root field `value` answers its root value. */
const valueRoots = new WeakMap<GraphQLSchema, Map<string, GraphQLSchema>>();

function valueRootSchema(schema: GraphQLSchema, parentType: GraphQLObjectType, fieldName: string): GraphQLSchema {
  let byField = valueRoots.get(schema);
  if (!byField) valueRoots.set(schema, (byField = new Map()));
  const key = `${parentType.name}.${fieldName}`;
  let s = byField.get(key);
  if (!s) {
    const type = parentType.getFields()[fieldName].type;
    const root = new GraphQLObjectType({
      name: 'SharedAnswerRoot',
      fields: { value: { type, resolve: (value: unknown) => value } },
    });
    byField.set(key, (s = new GraphQLSchema({ query: root })));
  }
  return s;
}

/** The fragments a selection uses, and the ones those use. */
function fragmentsUsedBy(
  selectionSet: SelectionSetNode,
  all: Map<string, FragmentDefinitionNode>,
): FragmentDefinitionNode[] {
  const used = new Map<string, FragmentDefinitionNode>();
  const walk = (set: SelectionSetNode | undefined) => {
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FRAGMENT_SPREAD) {
        const f = all.get(s.name.value);
        if (f && !used.has(f.name.value)) {
          used.set(f.name.value, f);
          walk(f.selectionSet);
        }
      } else walk(s.selectionSet);
    }
  };
  walk(selectionSet);
  return [...used.values()];
}

const TYPENAME_ONLY: SelectionSetNode = {
  kind: Kind.SELECTION_SET,
  selections: [{ kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } }],
};

/** Route.shared: each named field's own document, and the route's document with their selections cut. */
function compileSharedFields(
  schema: GraphQLSchema,
  route: Route,
  documentNode: DocumentNode,
  op: OperationDefinitionNode,
  rootNode: FieldNode,
  resultType: GraphQLOutputType,
) {
  const names = route.shared ?? [];
  if (!names.length) return { executed: documentNode, sharedFields: [] as SharedField[] };
  const where = `REST shim: ${route.method} ${route.path}`;
  const parentType = getNamedType(resultType);
  if (
    !isObjectType(parentType) ||
    isListType(isNonNullType(resultType) ? resultType.ofType : resultType) ||
    op.selectionSet.selections.length !== 1
  ) {
    throw new Error(`${where}: shared fields need one root field answering one object`);
  }
  const fragments = new Map(
    documentNode.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  const sharedFields = names.map((name): SharedField => {
    const node = rootNode.selectionSet!.selections.find(
      (s): s is FieldNode => s.kind === Kind.FIELD && (s.alias ?? s.name).value === name,
    );
    if (!node?.selectionSet || node.alias || node.arguments?.length || node.directives?.length) {
      throw new Error(
        `${where}: shared field ${name} must be written in the root field's selection, with a selection, no alias, arguments or directives`,
      );
    }
    const ownSchema = valueRootSchema(schema, parentType, name);
    const valueField: FieldNode = {
      kind: Kind.FIELD,
      name: { kind: Kind.NAME, value: 'value' },
      selectionSet: node.selectionSet,
    };
    const document: DocumentNode = {
      kind: Kind.DOCUMENT,
      definitions: [
        {
          kind: Kind.OPERATION_DEFINITION,
          operation: OperationTypeNode.QUERY,
          selectionSet: { kind: Kind.SELECTION_SET, selections: [valueField] },
        },
        ...fragmentsUsedBy(node.selectionSet, fragments),
      ],
    };
    // A shared field's selection takes no variables: they would be undefined there.
    const errors = validate(ownSchema, document);
    if (errors.length) throw new Error(`${where}: shared field ${name}: ${errors.map((e) => e.message).join('; ')}`);
    return {
      responseKey: name,
      restKey: toSnake(name),
      parentType,
      fieldName: name,
      type: parentType.getFields()[name].type,
      schema: ownSchema,
      document,
    };
  });
  const cut = new Set(names);
  const root: FieldNode = {
    ...rootNode,
    selectionSet: {
      ...rootNode.selectionSet!,
      selections: rootNode.selectionSet!.selections.map((s) =>
        s.kind === Kind.FIELD && cut.has(s.name.value) ? { ...s, selectionSet: TYPENAME_ONLY } : s,
      ),
    },
  };
  const executed: DocumentNode = {
    ...documentNode,
    definitions: documentNode.definitions.map((d) =>
      d === op ? { ...op, selectionSet: { ...op.selectionSet, selections: [root] } } : d,
    ),
  };
  return { executed, sharedFields };
}

export function compileRoute(schema: GraphQLSchema, route: Route): CompiledRoute {
  const spreads = new Set([...route.document.matchAll(/\.\.\.(\w+)Fields\b/g)].map((m) => m[1]));
  const source = [route.document, ...[...spreads].map((t) => leafFragment(schema, t))].join('\n');
  const documentNode = parse(source);
  const errors = validate(schema, documentNode);
  if (errors.length)
    throw new Error(`REST shim: ${route.method} ${route.path}: ${errors.map((e) => e.message).join('; ')}`);
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
    else if (name === IDEMPOTENCY_KEY_VARIABLE)
      continue; // from the Idempotency-Key header (router.ts), never the query
    else if (!pathParams.includes(name)) argParams.set(QUERY_NAMES[name] ?? toSnake(name), { variable: name, type });
  }
  const named = getNamedType(resultType);
  const isList = 'getFields' in named && 'edges' in named.getFields() && 'pageInfo' in named.getFields();
  const { executed, sharedFields: shared } = compileSharedFields(schema, route, documentNode, op, rootNode, resultType);
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
    executed,
    sharedFields: shared,
  };
}
