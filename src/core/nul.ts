import { getNamedType, GraphQLField, GraphQLInputType, isInputObjectType, isListType, isNonNullType } from 'graphql';
import { DomainError, invalid, paramFromPath } from './errors';

/**
 * Text the service refuses in client input, as bits of a mask: U+0000 (PostgreSQL cannot store it in text or jsonb,
 * and the driver fails the whole statement) and a lone UTF-16 surrogate (JSON can carry one, `"\ud800"`; it is not
 * Unicode text: jsonb refuses it, a text column or a gateway's form body would get U+FFFD or an encoding error).
 */
export const NUL = 1;
export const LONE_SURROGATE = 2;

type WellFormed = string & { isWellFormed(): boolean }; // ES2024; Node 20 has it (package.json engines)

/** Which of `mask`'s faults `s` has (NUL first), or 0. Two native scans, nothing allocated. */
function fault(s: string, mask: number): number {
  if ((mask & NUL) !== 0 && s.includes('\u0000')) return NUL;
  if ((mask & LONE_SURROGATE) !== 0 && !(s as WellFormed).isWellFormed()) return LONE_SURROGATE;
  return 0;
}

/** What textFaultAt found: the path to a string (a value or an object key), its fault, and whether it is a key. */
export interface TextFault {
  path: (string | number)[];
  fault: number;
  key: boolean;
}

/**
 * The path of the first string (value or object key) holding U+0000 inside `value`, or null. Iterative, depth-first
 * in document order, so no nesting can exhaust the stack.
 */
export function nulAt(value: unknown, root: string | number): (string | number)[] | null {
  return textFaultAt(value, root, NUL)?.path ?? null;
}

/**
 * The first string (value or object key) inside `value` with one of `mask`'s faults (NUL, LONE_SURROGATE), in
 * document order, or null. Iterative, so no nesting can exhaust the stack. Every argument of every operation passes
 * here, so the common answer (nothing wrong anywhere) comes from a pass that allocates nothing per value; only a hit
 * is walked again to build its path.
 */
export function textFaultAt(value: unknown, root: string | number, mask = NUL | LONE_SURROGATE): TextFault | null {
  return hasFault(value, mask) ? faultPath(value, root, mask) : null;
}

/** Whether a fault may be there: for-in may also visit inherited keys, so faultPath (own keys only) decides. */
function hasFault(value: unknown, mask: number): boolean {
  if (typeof value === 'string') return fault(value, mask) !== 0;
  if (value === null || typeof value !== 'object') return false;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (fault(v, mask) !== 0) return true;
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
    } else if (v && typeof v === 'object' && !(v instanceof Date)) {
      for (const k in v) {
        if (fault(k, mask) !== 0) return true;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

function faultPath(value: unknown, root: string | number, mask: number): TextFault | null {
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
      const f = fault(v, mask);
      if (f) return { path: pathOf(e), fault: f, key: false };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: e });
    } else if (v && typeof v === 'object' && !(v instanceof Date)) {
      const keys = Object.keys(v);
      for (const k of keys) {
        const f = fault(k, mask);
        if (f) return { path: [...pathOf(e), k], fault: f, key: true };
      }
      for (let i = keys.length - 1; i >= 0; i--)
        stack.push({ value: (v as Record<string, unknown>)[keys[i]], key: keys[i], parent: e });
    }
  }
  return null;
}

/**
 * Text no root field argument may hold, refused as the client's error (400 parameter_invalid naming the field) on
 * both transports, however the value arrived (REST body, query string, GraphQL variables or literals) and before
 * any resolver, gateway call or statement sees it:
 * - U+0000, which PostgreSQL cannot store. `ID` arguments are left alone: a malformed id answers 404 like any
 *   unknown id;
 * - a lone UTF-16 surrogate (not Unicode text: docs/operations.md), in any argument, ids included, in a
 *   string or a key. `param` names the input field that holds it: a free-form JSON field (`metadata`, `config`) as a
 *   whole, as the services' own checks of those fields do.
 */
export function refuseInvalidText(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>): void {
  for (const def of field.args) {
    const value = args[def.name];
    if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean') continue;
    const mask = getNamedType(def.type).name === 'ID' ? LONE_SURROGATE : NUL | LONE_SURROGATE;
    const hit = textFaultAt(value, def.name, mask);
    if (!hit) continue;
    if (hit.fault === NUL) {
      const param = paramFromPath(hit.path);
      throw new DomainError(
        'parameter_invalid',
        `${param ?? def.name} must not contain the NUL character (\\u0000).`,
        param,
      );
    }
    const param = paramFromPath(toInputField(hit.path, def.type)) ?? def.name;
    const what = hit.key ? 'a key' : 'a string';
    throw invalid(
      param,
      `${param} holds ${what} that is not valid Unicode: a lone UTF-16 surrogate (\\ud800-\\udfff without its pair).`,
    );
  }
}

/**
 * `path` (an argument's name, then keys and indexes) cut after the first value of a scalar type: what is inside a
 * JSONObject is that field's own.
 */
function toInputField(path: (string | number)[], type: GraphQLInputType): (string | number)[] {
  let t = type;
  for (let i = 1; i < path.length; i++) {
    if (isNonNullType(t)) t = t.ofType;
    if (isListType(t)) t = t.ofType;
    else if (isInputObjectType(t)) {
      const f = t.getFields()[String(path[i])];
      if (!f) return path.slice(0, i);
      t = f.type;
    } else return path.slice(0, i);
  }
  return path;
}
