import { GraphQLScalarType } from 'graphql';
import { GraphQLJSONObject, GraphQLSafeInt } from 'graphql-scalars';
import { GraphQLISODateTime } from 'type-graphql';

/** Integer amounts in the currency's smallest subunit; GraphQL's Int stops at 2^31, money may not. */
export const Money = GraphQLSafeInt;
export const JSONObject = GraphQLJSONObject;

/** Instants already written out, by epoch milliseconds; cleared when it holds this many (~30 KB at most). */
const ISO_CACHE_SIZE = 256;
const isoOf = new Map<number, string>();

/**
 * type-graphql's DateTimeISO (graphql-scalars), the same name, description and input parsing, answering a valid Date
 * with its `toISOString()` at once, as the library ends up doing after two validation passes: every timestamp of
 * every answer goes through here (four per usage event, 4,000 in a batch answer). The text of an instant is kept
 * (ISO_CACHE_SIZE of them): an answer's rows mostly share a few instants (a batch's period bounds, creation time
 * and "now"). Keyed by the instant, not the Date object, which may change. Anything else is the library's.
 */
const iso = GraphQLISODateTime.toConfig();
export const DateTime = new GraphQLScalarType({
  ...iso,
  serialize(value: unknown) {
    if (value instanceof Date) {
      const ms = value.getTime();
      const known = isoOf.get(ms);
      if (known !== undefined) return known;
      if (!Number.isNaN(ms)) {
        if (isoOf.size >= ISO_CACHE_SIZE) isoOf.clear();
        const text = value.toISOString();
        isoOf.set(ms, text);
        return text;
      }
    }
    return iso.serialize(value);
  },
});
