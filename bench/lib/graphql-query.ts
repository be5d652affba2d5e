import fs from 'node:fs';
import path from 'node:path';
import {
  buildClientSchema,
  buildSchema,
  FieldNode,
  FragmentDefinitionNode,
  getIntrospectionQuery,
  GraphQLSchema,
  IntrospectionQuery,
  Kind,
  OperationDefinitionNode,
  parse,
  print,
  SelectionNode,
  validate,
} from 'graphql';
import { compileRoute } from '../../rest-shim/compile';
import { routes } from '../../rest-shim/routes';
import { requestJson } from './http';

/**
 * The schema the running service serves (introspection), or, when introspection is refused, the emitted SDL in
 * schema/schema.graphql. Either way the REST route's document is expanded exactly as the shim expands it.
 */
export async function serviceSchema(
  baseUrl: string,
  key: string,
  repoRoot: string,
): Promise<{ schema: GraphQLSchema; source: string }> {
  const r = await requestJson<{ data?: IntrospectionQuery; errors?: unknown[] }>(`${baseUrl}/graphql`, {
    headers: { authorization: `Bearer ${key}` },
    body: { query: getIntrospectionQuery() },
  });
  if (r.status === 200 && r.body?.data && !r.body.errors)
    return { schema: buildClientSchema(r.body.data), source: 'introspection' };
  const sdl = path.join(repoRoot, 'schema', 'schema.graphql');
  return {
    schema: buildSchema(fs.readFileSync(sdl, 'utf8')),
    source: `${path.relative(repoRoot, sdl)} (introspection answered ${r.status})`,
  };
}

function selectionText(selections: readonly SelectionNode[], fragments: Map<string, FragmentDefinitionNode>): string[] {
  const out: string[] = [];
  for (const s of selections) {
    if (s.kind === Kind.FRAGMENT_SPREAD) {
      const f = fragments.get(s.name.value);
      if (!f) throw new Error(`unknown fragment ${s.name.value}`);
      out.push(...selectionText(f.selectionSet.selections, fragments));
    } else if (s.kind === Kind.INLINE_FRAGMENT) {
      out.push(...selectionText(s.selectionSet.selections, fragments));
    } else {
      const args = s.arguments?.length ? `(${s.arguments.map((a) => print(a)).join(', ')})` : '';
      const alias = s.alias ? `${s.alias.value}: ` : '';
      const sub = s.selectionSet ? ` { ${selectionText(s.selectionSet.selections, fragments).join(' ')} }` : '';
      out.push(`${alias}${s.name.value}${args}${sub}`);
    }
  }
  return out;
}

/**
 * The GraphQL query a client would send for the same read as the REST route `method path`: the route's document
 * with its `...XFields` fragments expanded into plain fields, and the root field called with `rootArgs` literal
 * arguments instead of the route's variables. The result is validated against `schema`.
 */
export function graphqlEquivalentOf(
  schema: GraphQLSchema,
  method: 'get' | 'post' | 'delete',
  routePath: string,
  rootArgs: string,
  operationName: string,
): string {
  const route = routes.find((r) => r.method === method && r.path === routePath);
  if (!route) throw new Error(`REST route ${method.toUpperCase()} ${routePath} not found in rest-shim/routes.ts`);
  const compiled = compileRoute(schema, route);
  const fragments = new Map<string, FragmentDefinitionNode>();
  let op: OperationDefinitionNode | undefined;
  for (const d of compiled.documentNode.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    else if (d.kind === Kind.OPERATION_DEFINITION) op = d;
  }
  if (!op) throw new Error(`route ${routePath}: no operation`);
  const root = op.selectionSet.selections[0] as FieldNode;
  const body = selectionText(root.selectionSet?.selections ?? [], fragments).join(' ');
  const query = `${op.operation} ${operationName} { ${root.name.value}${rootArgs ? `(${rootArgs})` : ''} { ${body} } }`;
  const errors = validate(schema, parse(query));
  if (errors.length)
    throw new Error(`generated GraphQL query is invalid: ${errors.map((e) => e.message).join('; ')}\n${query}`);
  return query;
}
