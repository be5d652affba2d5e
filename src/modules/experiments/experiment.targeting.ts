import { invalid } from '../../core/errors';
import type { Targeting, TargetingScalar } from './experiment.entities';

/** Limits on targeting conditions and resolve attributes (checked before anything walks them). */
export const MAX_CONDITIONS = 50;
export const MAX_ATTRIBUTES = 100;
export const MAX_NAME_LENGTH = 64;
export const MAX_LIST_VALUES = 100;
export const MAX_STRING_VALUE = 500;

const isScalar = (v: unknown): v is TargetingScalar =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

function checkScalar(v: unknown, param: string): void {
  if (!isScalar(v)) throw invalid(param, `${param} must be a string, a finite number or a boolean.`);
  if (typeof v === 'string' && v.length > MAX_STRING_VALUE)
    throw invalid(param, `${param} is longer than ${MAX_STRING_VALUE} characters.`);
}

function checkName(name: string, param: string): void {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH)
    throw invalid(param, `Attribute names are 1 to ${MAX_NAME_LENGTH} characters.`);
}

/**
 * An experiment's targeting (docs/growth.md): an object of at most 50 conditions, each naming an attribute and giving a
 * scalar (equality) or a non-empty list of scalars (membership). `{}` targets everyone.
 */
export function validateTargeting(value: unknown, param = 'targeting'): Targeting {
  if (value == null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalid(param, `${param} must be an object of conditions.`);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_CONDITIONS) throw invalid(param, `${param} can have at most ${MAX_CONDITIONS} conditions.`);
  for (const [name, condition] of entries) {
    const at = `${param}.${name.slice(0, MAX_NAME_LENGTH)}`;
    checkName(name, at);
    if (Array.isArray(condition)) {
      if (condition.length === 0) throw invalid(at, `${at} must list at least one value.`);
      if (condition.length > MAX_LIST_VALUES) throw invalid(at, `${at} can list at most ${MAX_LIST_VALUES} values.`);
      condition.forEach((v, i) => checkScalar(v, `${at}[${i}]`));
    } else {
      checkScalar(condition, at);
    }
  }
  return value as Targeting;
}

/**
 * The attributes of a resolve request: at most 100, each a scalar, a list of scalars, or null (the same as leaving it
 * out). Answers them without the nulls.
 */
export function validateAttributes(
  value: unknown,
  param = 'attributes',
): Record<string, TargetingScalar | TargetingScalar[]> {
  if (value == null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(param, `${param} must be an object.`);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_ATTRIBUTES) throw invalid(param, `${param} can have at most ${MAX_ATTRIBUTES} attributes.`);
  const out: Record<string, TargetingScalar | TargetingScalar[]> = {};
  for (const [name, v] of entries) {
    const at = `${param}.${name.slice(0, MAX_NAME_LENGTH)}`;
    checkName(name, at);
    if (v === null) continue;
    if (Array.isArray(v)) {
      if (v.length > MAX_LIST_VALUES) throw invalid(at, `${at} can list at most ${MAX_LIST_VALUES} values.`);
      v.forEach((x, i) => checkScalar(x, `${at}[${i}]`));
    } else {
      checkScalar(v, at);
    }
    out[name] = v as TargetingScalar | TargetingScalar[];
  }
  return out;
}

/**
 * Whether attributes satisfy every condition (docs/growth.md): a scalar condition needs an equal attribute, a
 * list condition an attribute equal to one of its values; an attribute given as a list matches a scalar condition
 * when it contains it, and a list condition when the two share a value. A condition on an attribute that is not
 * given does not match. Values compare as JSON values: "1" is not 1, "IN" is not "in".
 */
export function matchesTargeting(targeting: Targeting, attributes: Record<string, unknown>): boolean {
  for (const [name, condition] of Object.entries(targeting)) {
    if (!Object.prototype.hasOwnProperty.call(attributes, name)) return false;
    const given = attributes[name];
    if (given == null) return false;
    const wanted: readonly unknown[] = Array.isArray(condition) ? condition : [condition];
    const offered: readonly unknown[] = Array.isArray(given) ? given : [given];
    if (!offered.some((v) => wanted.includes(v))) return false;
  }
  return true;
}
