import { GraphQLJSONObject, GraphQLSafeInt } from 'graphql-scalars';
import { GraphQLISODateTime } from 'type-graphql';

/** Integer amounts in the currency's smallest subunit; GraphQL's Int stops at 2^31, money may not. */
export const Money = GraphQLSafeInt;
export const JSONObject = GraphQLJSONObject;
export const DateTime = GraphQLISODateTime;
