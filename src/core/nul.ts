import { getNamedType, GraphQLField } from 'graphql';
import { DomainError, paramFromPath } from './errors';

/**
 * The path of the first string (value or object key) holding U+0000 inside `value`, or null. Iterative, depth-first
 * in document order, so no nesting can exhaust the stack. Every argument of every operation passes here, so the
 * common answer (no NUL anywhere) comes from a pass that allocates nothing per value; only a hit is walked again
 * to build its path.
 */
export function nulAt(value: unknown, root: string | number): (string | number)[] | null {
  return hasNul(value) ? nulPath(value, root) : null;
}

/** Whether a NUL may be there: for-in may also visit inherited keys, so nulPath (own keys only) has the last word. */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object') return false;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (v && typeof v === 'object' && !(v instanceof Date)) {
      for (const k in v) {
        if (k.includes('\u0000')) return true;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

function nulPath(value: unknown, root: string | number): (string | number)[] | null {
  type Entry = { value: unknown; key: string | number; parent: Entry | null };
  const pathOf = (e: Entry) => {
    const path: (string | number)[] = [];
    for (let at: Entry | null = e; at; at = at.parent) path.unshift(at.key);
    return path;
  };
  const stack: Entry[] = [{ value, key: root, parent: null }];
  while (stack.length) {
    const e = stack.pop()!;
    const v = e.value;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return pathOf(e);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: e });
    } else if (v && typeof v === 'object' && !(v instanceof Date)) {
      const keys = Object.keys(v);
      for (const k of keys) if (k.includes('\u0000')) return [...pathOf(e), k];
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (v as Record<string, unknown>)[keys[i]], key: keys[i], parent: e });
    }
  }
  return null;
}

/**
 * PostgreSQL cannot store U+0000 in text or jsonb, and the driver fails the whole statement: refuse it in any root
 * field argument as the client's error (400 parameter_invalid naming the field), on both transports. `ID` arguments
 * are left alone: a malformed id answers 404 like any unknown id.
 */
export function refuseNulCharacter(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>): void {
  for (const def of field.args) {
    if (getNamedType(def.type).name === 'ID') continue;
    const at = nulAt(args[def.name], def.name);
    if (at) {
      const param = paramFromPath(at);
      throw new DomainError('parameter_invalid', `${param ?? def.name} must not contain the NUL character (\\u0000).`, param);
    }
  }
}
