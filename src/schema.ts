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
import { PORTAL_ROOT_FIELDS, portalResolvers } from './modules/portal';
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

/**
 * Root fields open to the operator token, and those of the customer portal (a portal session's token reaches those and
 * nothing else: docs/portal.md); every other root field needs a merchant key.
 */
const OPERATOR_FIELDS = new Set(['createMerchant', 'rollMerchantApiKey']);

/** Who may call a root field: `null` when `principal` may, else the refusal. */
function rootFieldRefusal(field: string, principal: Ctx['principal'] | undefined): DomainError | null {
  if (PORTAL_ROOT_FIELDS.has(field)) {
    return principal?.kind === 'portal'
      ? null
      : new DomainError('invalid_api_key', "This field is the customer portal's: it needs a portal session's token.");
  }
  if (principal?.kind === 'portal')
    return new DomainError(
      'invalid_api_key',
      `A customer portal session reaches only the portal's fields, not ${field}.`,
    );
  // The operator's fields check for the operator token themselves (merchant.resolver.ts).
  if (OPERATOR_FIELDS.has(field) || principal?.kind === 'merchant') return null;
  return new DomainError(
    'invalid_api_key',
    'Invalid API key provided. Use a secret key: Bearer sk_test_... or sk_live_...',
  );
}

/**
 * Checks every operation passes through, in one place: the arguments (size and depth, NUL characters and lone
 * surrogates, empty ids), then who may call the field (rootFieldRefusal), before its resolver runs. They wrap the root
 * fields only: a type-graphql global middleware would run on each of the thousands of fields of a list answer.
 */
function guardRootFields(schema: GraphQLSchema): GraphQLSchema {
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      wrapFieldResolver(field, (resolve) => (source, args, context: Ctx, info) => {
        refuseOversizeArguments(field, args); // first: bounds the depth the text and id checks walk
        refuseInvalidText(field, args);
        refuseEmptyIds(field, args);
        // Then who may call it: the checks above read nothing, so malformed input answers 400 whoever sends it.
        const refused = rootFieldRefusal(field.name, context.principal);
        if (refused) throw refused;
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
  ...portalResolvers,
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
