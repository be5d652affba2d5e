import {
  getNamedType,
  GraphQLField,
  GraphQLInputField,
  GraphQLInputObjectType,
  GraphQLInputType,
  isInputObjectType,
  isListType,
  isNonNullType,
} from 'graphql';
import { DomainError, invalid, paramFromPath } from './errors';

/**
 * The REST conventions (docs/api.md): at most 50 keys, keys up to 40 characters, string values up to 500 characters.
 */
export function validateMetadata(metadata: unknown, param = 'metadata'): Record<string, string> {
  if (metadata == null) return {};
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw invalid(param, 'metadata must be an object.');
  // Keys, not entries: this runs for every event of a usage batch, and entries makes an array per key.
  const keys = Object.keys(metadata);
  if (keys.length > 50) throw invalid(param, 'metadata can have at most 50 keys.');
  for (const k of keys) {
    const v = (metadata as Record<string, unknown>)[k];
    if (k.length === 0 || k.length > 40) throw invalid(`${param}.${k}`, 'metadata keys must be 1 to 40 characters.');
    if (typeof v !== 'string') throw invalid(`${param}.${k}`, 'metadata values must be strings.');
    if (v.length > 500) throw invalid(`${param}.${k}`, 'metadata values can be at most 500 characters.');
  }
  return metadata as Record<string, string>;
}

/** An absolute http(s) URL (placeholders such as {PAYMENT_ID} allowed). */
export function validateUrl(value: string, param: string): string {
  try {
    const u = new URL(value.replace(/\{[A-Z_]+\}/g, 'x'));
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw invalid(param, `${param} must be an absolute http or https URL.`);
  }
  if (value.length > 2048) throw invalid(param, `${param} is longer than 2048 characters.`);
  return value;
}

export function requireInteger(value: number, param: string, min: number): void {
  if (!Number.isSafeInteger(value)) throw invalid(param, `${param} must be an integer.`);
  if (value < min) throw new DomainError('parameter_invalid', `${param} must be at least ${min}.`, param);
}

/**
 * An empty string is never an id. Wherever a root field takes one (an argument, an input object's field, a list's
 * element), on both transports, it is refused before the resolver runs: 400 `parameter_invalid` naming the field
 * (`product_family_id`, `events[3].subscription_id`, `product_ids[0]`). A service would otherwise read "" as "not
 * given" (a truthiness test) and then store it: MikroORM's change set computer recurses without end on a falsy,
 * non-null relation value (a stack overflow, answered 500). A non-empty id that names nothing (malformed, unknown,
 * another tenant's) is the service's to answer: 404 `resource_not_found`, as before.
 */
export function refuseEmptyIds(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>): void {
  for (const def of field.args) {
    if (!holdsIds(def.type)) continue;
    const at = emptyIdAt(args[def.name], def.type);
    if (at) {
      const param = paramFromPath([def.name, ...at]) ?? def.name;
      throw invalid(param, `Invalid value for ${param}: expected an id, not an empty string.`);
    }
  }
}

/** The path below `value` (of `type`, already coerced) to an empty-string ID, or null. Walks only where ids can be. */
function emptyIdAt(value: unknown, type: GraphQLInputType): (string | number)[] | null {
  if (value === null || value === undefined) return null;
  if (isNonNullType(type)) return emptyIdAt(value, type.ofType);
  if (isListType(type)) {
    if (!Array.isArray(value)) return emptyIdAt(value, type.ofType);
    for (let i = 0; i < value.length; i++) {
      const at = emptyIdAt(value[i], type.ofType);
      if (at) return [i, ...at];
    }
    return null;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object') return null;
    for (const f of idFieldsOf(type)) {
      const at = emptyIdAt((value as Record<string, unknown>)[f.name], f.type);
      if (at) return [f.name, ...at];
    }
    return null;
  }
  return type.name === 'ID' && value === '' ? [] : null;
}

/** Whether values of `type` can be or hold ids (an input type being computed may: it is walked). */
const holdsIds = (type: GraphQLInputType): boolean => {
  const named = getNamedType(type);
  if (named.name === 'ID') return true;
  if (!isInputObjectType(named)) return false;
  return computing.has(named) || idFieldsOf(named).length > 0;
};

/** Per input object type: its fields that can be or hold ids, computed once. */
const idFields = new WeakMap<GraphQLInputObjectType, GraphQLInputField[]>();
const computing = new Set<GraphQLInputObjectType>();

function idFieldsOf(type: GraphQLInputObjectType): GraphQLInputField[] {
  let fields = idFields.get(type);
  if (!fields) {
    computing.add(type); // an input type that holds itself
    try {
      fields = Object.values(type.getFields()).filter((f) => holdsIds(f.type));
    } finally {
      computing.delete(type);
    }
    idFields.set(type, fields);
  }
  return fields;
}
