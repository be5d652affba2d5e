import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInputType,
  GraphQLObjectType,
  GraphQLOutputType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';
import { toSnake } from '../src/core/case';
import { DomainError } from '../src/core/errors';

/**
 * The shim's whole job on data: REST's snake_case and lower-case enums to GraphQL's camelCase and upper-case
 * enums and back, guided by the schema's types (so free-form JSON such as `metadata` passes through untouched).
 * The OpenAPI document (openapi.ts) and REST error messages name things through the same two functions.
 */

/** A GraphQL field or argument name as REST spells it (`customerId` -> `customer_id`). */
export const restName = (graphqlName: string): string => toSnake(graphqlName);

/** A GraphQL enum value as REST spells it (`PAST_DUE` -> `past_due`). */
export const restEnumValue = (graphqlValue: string): string => graphqlValue.toLowerCase();

/** REST enum value -> GraphQL's. */
const graphQLEnumValue = (restValue: string): string => restValue.toUpperCase();

/**
 * A REST enum value as GraphQL's, or a 400 naming the REST parameter and REST's lower-case values (graphql-js would
 * name the enum type and its upper-case values).
 */
export function enumToGraphQL(value: unknown, type: GraphQLEnumType, param: string): string {
  const known = typeof value === 'string' ? type.getValue(graphQLEnumValue(value)) : undefined;
  if (!known) {
    const allowed = type
      .getValues()
      .map((v) => restEnumValue(v.name))
      .join(', ');
    throw new DomainError('parameter_invalid', `Invalid value for ${param}: expected one of ${allowed}`, param);
  }
  return known.name;
}

/**
 * REST value (JSON) -> GraphQL variable value. Unknown keys are refused (400 `parameter_unknown`, `param` = that key).
 * A list takes an array only: GraphQL's input coercion would make `"enabled_events": "abc"` the list `["abc"]`
 * (standard for GraphQL clients, which keep it), but a REST body says what it means (400 `parameter_invalid`).
 */
export function toGraphQL(value: unknown, type: GraphQLInputType, path: string): unknown {
  if (value === null || value === undefined) return value;
  if (isNonNullType(type)) return toGraphQL(value, type.ofType, path);
  if (isListType(type)) {
    if (!Array.isArray(value))
      throw new DomainError(
        'parameter_invalid',
        `Invalid value for ${path || 'the request body'}: expected an array`,
        path || null,
      );
    return value.map((v, i) => toGraphQL(v, type.ofType, `${path}[${i}]`));
  }
  if (isEnumType(type)) return enumToGraphQL(value, type, path);
  if (isInputObjectType(type)) {
    if (typeof value !== 'object' || Array.isArray(value)) return value; // GraphQL answers parameter_invalid
    const fields = inputFieldsOf(type);
    const out: Record<string, unknown> = {};
    for (const key in value as Record<string, unknown>) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      // Only snake_case spellings are accepted; `billingInterval` is as unknown as `bogus_field`.
      const field = fields.get(key);
      if (!field) {
        throw new DomainError(
          'parameter_unknown',
          `Received unknown parameter: ${path ? `${path}.` : ''}${key}`,
          `${path ? `${path}.` : ''}${key}`,
        );
      }
      const v = (value as Record<string, unknown>)[key];
      // A scalar passes as it is (GraphQL checks it): no recursion, and no path written for each field of each event.
      out[field.name] = field.scalar ? v : toGraphQL(v, field.type, path ? `${path}.${key}` : key);
    }
    return out;
  }
  return value;
}

/** A field whose values are a scalar's (nullable or not): they map to themselves, in both directions. */
const isScalarField = (type: GraphQLInputType | GraphQLOutputType): boolean =>
  isScalarType(isNonNullType(type) ? type.ofType : type);

/**
 * Per input type: its fields by REST name (`customer_id` -> customerId), computed once. A key is known exactly when it
 * is a field's snake_case spelling (a batch of 1,000 events would otherwise convert every key twice).
 */
const inputFields = new WeakMap<
  GraphQLInputObjectType,
  Map<string, { name: string; type: GraphQLInputType; scalar: boolean }>
>();

function inputFieldsOf(type: GraphQLInputObjectType) {
  let fields = inputFields.get(type);
  if (!fields) {
    fields = new Map(
      Object.values(type.getFields()).map((f) => [
        restName(f.name),
        { name: f.name, type: f.type, scalar: isScalarField(f.type) },
      ]),
    );
    inputFields.set(type, fields);
  }
  return fields;
}

/**
 * Per object type: each field's REST name and type, and whether its values pass unchanged (scalars, nullable or not),
 * computed once: this runs for every field of every answer (13,000 in a usage batch's).
 */
const outputFields = new WeakMap<
  GraphQLObjectType,
  Map<string, { key: string; type: GraphQLOutputType; scalar: boolean }>
>();

function fieldsOf(type: GraphQLObjectType) {
  let fields = outputFields.get(type);
  if (!fields) {
    fields = new Map(
      Object.values(type.getFields()).map((f) => [
        f.name,
        { key: restName(f.name), type: f.type, scalar: isScalarField(f.type) },
      ]),
    );
    outputFields.set(type, fields);
  }
  return fields;
}

/** GraphQL result value -> REST value. */
export function fromGraphQL(value: unknown, type: GraphQLOutputType): unknown {
  if (value === null || value === undefined) return null;
  if (isNonNullType(type)) return fromGraphQL(value, type.ofType);
  if (isListType(type)) return (value as unknown[]).map((v) => fromGraphQL(v, type.ofType));
  if (isEnumType(type)) return typeof value === 'string' ? restEnumValue(value) : value;
  if (isScalarType(type)) return value;
  if (isObjectType(type)) {
    const fields = fieldsOf(type);
    const out: Record<string, unknown> = {};
    for (const key in value as Record<string, unknown>) {
      const v = (value as Record<string, unknown>)[key];
      const field = fields.get(key);
      if (field === undefined) out[restName(key)] = v;
      else out[field.key] = field.scalar ? (v ?? null) : fromGraphQL(v, field.type);
    }
    return out;
  }
  return value;
}
