import { toSnake } from './case';
import { DomainError } from './errors';

/**
 * Limits on the shape of client input, checked before anything walks it recursively (NUL checks, idempotency
 * fingerprints, GraphQL coercion, MikroORM's criteria builder), so no input can exhaust the stack or the CPU.
 */

/** Deepest nesting of objects and arrays in a JSON body (the body object counts as 1) or in a GraphQL variable. */
export const MAX_JSON_DEPTH = 32;

/**
 * Deepest nesting of `{`, `[` and `(` in a GraphQL document's text. graphql-js's parser is recursive and overflows
 * the stack near 2,000 levels of list literals (the 5,000-token limit allows 2,500); this keeps a wide margin and
 * still lets the depth and introspection-depth rules answer over-deep selections with their own messages.
 */
export const MAX_QUERY_NESTING = 500;

/**
 * Longest String or ID argument of a root field (filters, ids, cursors) unless the field declares its own limit
 * (`@Extensions({ maxArgumentLength })`). Input objects have per-field limits (class-validator MaxLength, no
 * longer than their columns).
 */
export const MAX_ARGUMENT_LENGTH = 1000;

/**
 * The path (keys and indexes) to the first container nested deeper than `max` levels in `value`, or null.
 * Iterative: it is what makes the recursive walks after it safe, so it must not recurse itself. It runs over every
 * request's input (twice for REST: the body, then the operation's arguments), so the pass allocates nothing per value
 * (a stack of containers and one of depths); only a hit is walked again to name its path, down at most `max` levels.
 */
export function pathDeeperThan(value: unknown, max: number): (string | number)[] | null {
  if (value === null || typeof value !== 'object') return null;
  const stack: object[] = [value];
  const depths: number[] = [1];
  while (stack.length) {
    const v = stack.pop()!;
    const depth = depths.pop()!;
    if (depth > max) return pathTo(value, max);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const x: unknown = v[i];
        if (x !== null && typeof x === 'object') {
          stack.push(x);
          depths.push(depth + 1);
        }
      }
    } else if (!(v instanceof Date)) {
      // Pushed in key order and popped in reverse: which deep container is found first does not matter, only that
      // one is. pathTo decides and names the first in document order, over own keys only (for-in here may also
      // visit inherited ones: then it answers null, as before).
      for (const k in v) {
        const x: unknown = (v as Record<string, unknown>)[k];
        if (x !== null && typeof x === 'object') {
          stack.push(x);
          depths.push(depth + 1);
        }
      }
    }
  }
  return null;
}

/** The path to the first container (document order) deeper than `max` levels; recursion stops at `max` + 1. */
function pathTo(value: unknown, max: number, depth = 1): (string | number)[] | null {
  if (value === null || typeof value !== 'object') return null;
  if (depth > max) return [];
  if (value instanceof Date) return null;
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((x, i) => [i, x])
    : Object.entries(value);
  for (const [k, x] of entries) {
    const rest = pathTo(x, max, depth + 1);
    if (rest) return [k, ...rest];
  }
  return null;
}

/**
 * The deepest nesting of brackets in JSON text or a GraphQL document, ignoring strings ("..." and """...""") and
 * `#` comments. Reads the text once, without parsing it.
 */
export function textNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b || c === 0x28) {
      // { [ (
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d || c === 0x29) {
      if (depth > 0) depth--;
    } else if (c === 0x23) {
      // # comment (GraphQL) to the end of the line
      while (i < n && text.charCodeAt(i) !== 0x0a && text.charCodeAt(i) !== 0x0d) i++;
    } else if (c === 0x22) {
      if (text.startsWith('"""', i)) {
        const end = text.indexOf('"""', i + 3);
        // Inside a block string only \""" escapes; skip those.
        let j = end;
        while (j > 0 && text.charCodeAt(j - 1) === 0x5c) j = text.indexOf('"""', j + 3);
        i = j < 0 ? n : j + 2;
      } else {
        i++;
        while (i < n && text.charCodeAt(i) !== 0x22) {
          if (text.charCodeAt(i) === 0x5c) i++;
          i++;
        }
      }
    }
  }
  return deepest;
}

/** The answer to input nested past MAX_JSON_DEPTH; `param` names the field or variable, null for the whole body. */
export const nestedTooDeep = (param: string | null) =>
  new DomainError(
    'parameter_invalid',
    `${param ?? 'The request body'} is nested too deeply: JSON may nest objects and arrays at most ${MAX_JSON_DEPTH} levels deep.`,
    param,
  );

/** The answer to a GraphQL document whose brackets nest past MAX_QUERY_NESTING. */
export const queryTooDeep = () =>
  new DomainError(
    'query_too_complex',
    `The query nests brackets deeper than the limit of ${MAX_QUERY_NESTING} levels.`,
  );

/**
 * A GraphQL operation's document and variables against the limits (each variable's value is level 1), for every
 * transport (HTTP bodies, GET query strings, WebSocket subscribe messages); null when within them.
 */
export function operationTooDeep(query: unknown, variables: unknown): DomainError | null {
  if (typeof query === 'string' && textNesting(query) > MAX_QUERY_NESTING) return queryTooDeep();
  const at = pathDeeperThan(variables ?? null, MAX_JSON_DEPTH + 1);
  if (!at) return null;
  return nestedTooDeep(typeof at[0] === 'string' ? toSnake(at[0]) : null);
}
