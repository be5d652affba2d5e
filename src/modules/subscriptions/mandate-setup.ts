import { IsOptional, MaxLength } from 'class-validator';
import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { v7 as uuidv7 } from 'uuid';
import type { Ctx } from '../../core/context';
import { DomainError } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { validateUrl } from '../../core/validate';
import { Customer } from '../customers';
import { fromGatewayError } from '../providers';
import { BillingSubscription } from './subscription.entities';
import { SubscriptionStatus, transitionFor } from './subscription.machine';
import type { SubscriptionService } from './subscription.service';

/**
 * Replacing a running subscription's mandate (docs/subscriptions.md "Replacing the mandate"): the gateway's hosted
 * page where the customer authorises a new payment method. Nothing changes here until the gateway reports the page
 * completed: then the subscription records `subscription.mandate_updated` and a durable command makes the new mandate
 * the one its later charges use (subscription.gateway-events.ts replaceMandate).
 */

@InputType()
export class MandateSetupInput {
  @Field({ description: 'Where the gateway sends the customer once the new mandate is authorised.' })
  @MaxLength(2048)
  successUrl!: string;
  @Field(() => String, {
    nullable: true,
    description: 'Where the customer goes on leaving the page; default successUrl.',
  })
  @IsOptional()
  @MaxLength(2048)
  cancelUrl?: string | null;
}

@ObjectType({ description: "The gateway's page where a subscription's customer authorises a new mandate." })
export class MandateSetup {
  @Field()
  get object(): string {
    return 'mandate_setup';
  }

  @Field(() => ID) subscriptionId!: string;
  @Field({ description: 'The hosted page: send the customer there.' }) url!: string;
  @Field({ description: "The gateway's checkout session." }) checkoutSessionId!: string;
}

/** Gateways whose API offers a page replacing a running subscription's mandate. */
const REPLACEABLE_AT = new Set(['stripe']);

/**
 * Opens the page: on a subscription whose mandate is authorised and still in use (trialing, active, past due or
 * paused). One still at its first checkout answers 409 (that checkout is the way to authorise it); so does a gateway
 * without such a page (`mandate_update_unsupported`).
 */
export async function createMandateSetup(
  service: SubscriptionService,
  ctx: Ctx,
  id: string,
  input: MandateSetupInput,
): Promise<MandateSetup> {
  validateUrl(input.successUrl, 'success_url');
  if (input.cancelUrl != null) validateUrl(input.cancelUrl, 'cancel_url');
  const sub = await findOr404(ctx.em, BillingSubscription, id, 'subscription');
  if (sub.status === SubscriptionStatus.CREATED)
    throw new DomainError(
      'invalid_state_transition',
      'This subscription has no mandate yet: its checkout_url authorises the first one.',
    );
  if (!transitionFor(sub.status, 'replace_mandate') || !sub.providerSubscriptionId)
    throw new DomainError(
      'invalid_state_transition',
      `Cannot replace the mandate of a subscription that is ${sub.status.replace(/_/g, ' ')}.`,
    );
  if (!REPLACEABLE_AT.has(sub.provider))
    throw new DomainError(
      'mandate_update_unsupported',
      `${sub.provider} offers no page to replace a running subscription's mandate: cancel it and subscribe again.`,
    );
  const customer = await ctx.em.findOne(Customer, { id: sub.customerId });
  const connection = await service.connectionOf(ctx.em, sub);
  try {
    const page = await service.providers.gatewayFor(connection).createMandateSetup({
      subscriptionId: sub.id,
      providerSubscriptionId: sub.providerSubscriptionId,
      providerCustomerId: sub.providerCustomerId ?? null,
      currency: sub.currency,
      customer: { email: customer?.email ?? '', name: customer?.name ?? null, phone: customer?.phone ?? null },
      successUrl: input.successUrl,
      cancelUrl: input.cancelUrl ?? input.successUrl,
      // A page per request: each call opens a new one (nothing is written here to repeat).
      idempotencyKey: `mandate-setup-${sub.id}-${uuidv7()}`,
    });
    return Object.assign(new MandateSetup(), {
      subscriptionId: sub.id,
      url: page.checkoutUrl,
      checkoutSessionId: page.checkoutSessionId,
    });
  } catch (err) {
    ctx.log.warn({ err, subscription_id: sub.id }, 'gateway mandate setup page failed');
    throw fromGatewayError(err);
  }
}
