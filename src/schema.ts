import 'reflect-metadata';
import { GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { validateOrReject, ValidationError } from 'class-validator';
import { ArgumentValidationError, buildSchema, NonEmptyArray } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from './core/context';
import { DomainError } from './core/errors';
import { wrapFieldResolver } from './core/adapters/graphql-field-resolve';
import { DateTime } from './core/scalars';
import { refuseInvalidText } from './core/nul';
import { refuseOversizeArguments } from './core/argument-limits';
import { refuseEmptyIds } from './core/validate';
import { catalogResolvers } from './modules/catalog';
import { CustomerResolver } from './modules/customers';
import { MerchantResolver } from './modules/merchants';
import { paymentResolvers } from './modules/payments';
import { ProviderResolver } from './modules/providers';
import { invoiceResolvers } from './modules/invoices';
import { subscriptionResolvers } from './modules/subscriptions';
import { TestClockResolver } from './modules/test-clock';
import { webhookResolvers } from './modules/webhooks';
import { experimentResolvers } from './modules/experiments';
import { entitlementResolvers } from './modules/entitlements';
import { offeringResolvers } from './modules/offerings';
import { couponResolvers } from './modules/coupons';
import { usageResolvers } from './modules/usage';
import { analyticsResolvers, autopayResolvers, cohortsResolvers } from './modules/analytics';
import { gatewayCommandResolvers } from './modules/gateway-commands';
import { newPubSub, PubSub } from './core/pubsub';

/** Root fields open to the operator token; every other root field needs a merchant key. */
const OPERATOR_FIELDS = new Set(['createMerchant', 'rollMerchantApiKey']);

/**
 * Checks every operation passes through, in one place: authentication (a root field without a merchant principal
 * is refused before its resolver runs), then the arguments: size and depth, NUL characters and lone surrogates,
 * empty ids. They wrap the root fields only: a type-graphql global middleware would run on each of the thousands of
 * fields of a list answer.
 */
function guardRootFields(schema: GraphQLSchema): GraphQLSchema {
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      const operatorField = OPERATOR_FIELDS.has(field.name);
      wrapFieldResolver(field, (resolve) => (source, args, context: Ctx, info) => {
        if (!operatorField && context.principal?.kind !== 'merchant') {
          throw new DomainError(
            'invalid_api_key',
            'Invalid API key provided. Use a secret key: Bearer sk_test_... or sk_live_...',
          );
        }
        refuseOversizeArguments(field, args); // first: bounds the depth the text and id checks walk
        refuseInvalidText(field, args);
        refuseEmptyIds(field, args);
        return resolve(source, args, context, info);
      });
    }
  }
  return schema;
}

export const resolvers = [
  ...catalogResolvers,
  MerchantResolver,
  CustomerResolver,
  ProviderResolver,
  ...paymentResolvers,
  ...webhookResolvers,
  TestClockResolver,
  ...subscriptionResolvers,
  ...invoiceResolvers,
  ...entitlementResolvers,
  ...experimentResolvers,
  ...offeringResolvers,
  ...couponResolvers,
  ...usageResolvers,
  ...analyticsResolvers,
  ...autopayResolvers,
  ...cohortsResolvers,
  ...gatewayCommandResolvers,
] as unknown as NonEmptyArray<ClassType>;

/**
 * type-graphql's own argument validation, exactly (objects and arrays of objects, class-validator with
 * skipMissingProperties and forbidUnknownValues off), with class-validator imported once: type-graphql's default
 * resolves `require('class-validator')` again for every validated argument, ~20 µs a request.
 */
const VALIDATOR_OPTIONS = { forbidUnknownValues: false, skipMissingProperties: true };
const validated = (v: unknown): v is object => v !== null && typeof v === 'object';
async function validateArgument(value: unknown): Promise<void> {
  if (!validated(value)) return;
  try {
    if (Array.isArray(value))
      await Promise.all(value.filter(validated).map((v) => validateOrReject(v, VALIDATOR_OPTIONS)));
    else await validateOrReject(value, VALIDATOR_OPTIONS);
  } catch (err) {
    throw new ArgumentValidationError(err as ValidationError[]);
  }
}

export async function createSchema(pubSub: PubSub = newPubSub()): Promise<GraphQLSchema> {
  return guardRootFields(
    await buildSchema({
      resolvers,
      scalarsMap: [{ type: Date, scalar: DateTime }], // fields typed Date without a scalar named: ours too
      validate: { forbidUnknownValues: false },
      validateFn: validateArgument,
      pubSub,
    }),
  );
}

/** The schema as checked in at schema/schema.graphql: sorted, so the file only changes when the API does. */
export function printSortedSchema(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}
