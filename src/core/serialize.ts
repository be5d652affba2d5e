import { getNamedType, GraphQLObjectType, GraphQLSchema, isEnumType, isLeafType } from 'graphql';

import { toSnake as snake } from './case';

/**
 * The REST shape of a record (docs/api.md) outside a request: every plain field its GraphQL type exposes,
 * snake_cased, as `GET /<resource>/{id}` shows it. Outbound events carry this, so webhook payloads and REST agree.
 */
export class Serializer {
  private cache = new Map<string, { name: string; key: string; isEnum: boolean }[]>();
  constructor(private readonly schema: GraphQLSchema) {}

  toRest(record: object, typeName = record.constructor.name): Record<string, unknown> {
    let fields = this.cache.get(typeName);
    if (!fields) {
      const type = this.schema.getType(typeName);
      if (!(type instanceof GraphQLObjectType)) throw new Error(`No GraphQL object type ${typeName}`);
      fields = Object.values(type.getFields())
        .filter((f) => isLeafType(getNamedType(f.type)) && f.args.length === 0)
        .map((f) => ({ name: f.name, key: snake(f.name), isEnum: isEnumType(getNamedType(f.type)) }));
      this.cache.set(typeName, fields);
    }
    const out: Record<string, unknown> = {};
    for (const f of fields) {
      const v = (record as Record<string, unknown>)[f.name];
      out[f.key] = v instanceof Date ? v.toISOString() : v === undefined ? null : v;
    }
    return out;
  }
}
