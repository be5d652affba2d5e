/**
 * The OpenAPI document with every `#/components/schemas/...` reference replaced by the schema it names, and a
 * nullable reference (`anyOf: [X, {type: 'null'}]`) folded back into X with `null` among its types: the plain JSON
 * Schema tests walk (the fuzzer's value generators, assertions on a body's fields).
 */
export function inlineRefs<T>(doc: T): T {
  const schemas = (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {};
  const walk = (value: unknown, seen: string[]): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, seen));
    if (!value || typeof value !== 'object') return value;
    const o = value as Record<string, unknown>;
    if (typeof o.$ref === 'string') {
      const name = o.$ref.replace('#/components/schemas/', '');
      if (seen.includes(name)) throw new Error(`inlineRefs: ${name} refers to itself`);
      if (!(name in schemas)) throw new Error(`inlineRefs: no schema ${o.$ref}`);
      const { $ref: _ref, ...siblings } = o;
      return { ...(walk(schemas[name], [...seen, name]) as object), ...siblings };
    }
    const anyOf = o.anyOf as Record<string, unknown>[] | undefined;
    if (anyOf?.length === 2 && anyOf[1].type === 'null' && Object.keys(anyOf[1]).length === 1) {
      const { anyOf: _anyOf, ...siblings } = o;
      const inner = walk(anyOf[0], seen) as Record<string, unknown>;
      return { ...inner, type: [inner.type, 'null'].flat(), ...siblings };
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, walk(v, seen)]));
  };
  return walk(doc, []) as T;
}
