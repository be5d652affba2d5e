import {
  FragmentDefinitionNode,
  GraphQLError,
  Kind,
  SelectionSetNode,
  ValidationContext,
  ValidationRule,
} from 'graphql';

/**
 * graphql-armor's depth limit skips `__schema`, so an `ofType` chain hundreds deep passed validation. Introspection gets
 * a limit of its own instead: graphql-js's full introspection query (what IDEs send) is 15 fields deep; 20 leaves room
 * for IDEs that ask a little more and still refuses the pathological chains.
 */
export const MAX_INTROSPECTION_DEPTH = 20;

/** Fields deep under `sel`, fragments flattened (a spread adds no level), each fragment measured once. */
function depthOf(sel: SelectionSetNode | undefined, ctx: ValidationContext, memo: Map<string, number>): number {
  if (!sel) return 0;
  let max = 0;
  for (const s of sel.selections) {
    let d: number;
    if (s.kind === Kind.FIELD) d = 1 + depthOf(s.selectionSet, ctx, memo);
    else if (s.kind === Kind.INLINE_FRAGMENT) d = depthOf(s.selectionSet, ctx, memo);
    else {
      const name = s.name.value;
      if (!memo.has(name)) {
        memo.set(name, 0); // a fragment cycle (refused by NoFragmentCycles anyway) ends here
        const fragment: FragmentDefinitionNode | null | undefined = ctx.getFragment(name);
        memo.set(name, depthOf(fragment?.selectionSet, ctx, memo));
      }
      d = memo.get(name)!;
    }
    if (d > max) max = d;
  }
  return max;
}

export function introspectionDepthRule(limit = MAX_INTROSPECTION_DEPTH): ValidationRule {
  return (ctx) => {
    const memo = new Map<string, number>();
    return {
      Field(node) {
        if (node.name.value !== '__schema' && node.name.value !== '__type') return;
        const depth = 1 + depthOf(node.selectionSet, ctx, memo);
        if (depth > limit) {
          ctx.reportError(
            new GraphQLError(`Syntax Error: Introspection depth limit of ${limit} exceeded, found ${depth}.`, {
              nodes: [node],
            }),
          );
        }
        return false; // measured as a whole: no need to visit (or re-measure) the fields inside
      },
    };
  };
}
