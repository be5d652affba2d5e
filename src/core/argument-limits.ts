import { getNamedType, GraphQLField, isScalarType } from 'graphql';
import { toSnake } from './case';
import { DomainError, paramFromPath } from './errors';
import { MAX_ARGUMENT_LENGTH, MAX_JSON_DEPTH, nestedTooDeep, pathDeeperThan } from './input-limits';

/** The first string in `value` (a string or a list of them) longer than `max` characters. */
function longString(value: unknown, max: number): string | null {
  if (typeof value === 'string') return value.length > max ? value : null;
  if (Array.isArray(value)) {
    for (const v of value) {
      const hit = longString(v, max);
      if (hit !== null) return hit;
    }
  }
  return null;
}

/**
 * Shape limits on a root field's arguments, before its resolver (and anything recursive) sees them, whichever the
 * transport and however the value arrived (variables or inline literals):
 * - every argument nests at most MAX_JSON_DEPTH levels (the argument's value is level 1);
 * - a String argument (a filter such as `email`, a cursor) holds at most MAX_ARGUMENT_LENGTH characters, or the
 *   field's own `maxArgumentLength` extension: 400 `parameter_invalid`. Unbounded, a 900 KB filter cost 0.7 s of
 *   CPU in MikroORM's criteria builder, which walks a string value key by key;
 * - an ID argument that long names nothing: 404 `resource_not_found` (param null), as a malformed id does.
 * Strings inside input objects have per-field limits (class-validator MaxLength, no longer than their columns).
 */
export function refuseOversizeArguments(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>): void {
  const declared = field.extensions?.maxArgumentLength;
  const max = typeof declared === 'number' ? declared : MAX_ARGUMENT_LENGTH;
  for (const def of field.args) {
    const value = args[def.name];
    if (value === null || value === undefined) continue;
    const deep = pathDeeperThan(value, MAX_JSON_DEPTH);
    if (deep) throw nestedTooDeep(paramFromPath([def.name, ...deep.slice(0, 1)]) ?? toSnake(def.name));
    const named = getNamedType(def.type);
    if (!isScalarType(named) || longString(value, max) === null) continue;
    if (named.name === 'ID') {
      throw new DomainError('resource_not_found', `No such object: ids are at most ${max} characters.`);
    }
    const param = toSnake(def.name);
    throw new DomainError('parameter_invalid', `${param} must be at most ${max} characters.`, param);
  }
}
