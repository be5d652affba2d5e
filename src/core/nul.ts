import { getNamedType, GraphQLField } from 'graphql';
import { DomainError, paramFromPath } from './errors';

/** The path of the first string (value or object key) holding U+0000 inside `value`, or null. */
function nulAt(value: unknown, path: (string | number)[]): (string | number)[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = nulAt(value[i], [...path, i]);
      if (at) return at;
    }
    return null;
  }
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) return [...path, k];
      const at = nulAt(v, [...path, k]);
      if (at) return at;
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
    const at = nulAt(args[def.name], [def.name]);
    if (at) {
      const param = paramFromPath(at);
      throw new DomainError('parameter_invalid', `${param ?? def.name} must not contain the NUL character (\\u0000).`, param);
    }
  }
}
