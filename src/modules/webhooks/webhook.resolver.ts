import {
  Arg,
  Args,
  ArgsType,
  Ctx as C,
  Field,
  FieldResolver,
  ID,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
  Subscription,
} from 'type-graphql';
import type { StreamItem } from '../../core/bounded-stream';
import type { Ctx } from '../../core/context';
import type { Change } from '../../core/events';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { DeletedObject } from '../providers';
import { WebhookDelivery, WebhookDeliveryAttempt, WebhookDeliveryStatus, WebhookEndpoint } from './webhook.entities';
import { LiveEvent } from './live-events';
import { TEST_EVENT_TYPES } from './test-events';
import { CreateWebhookEndpointInput } from './webhook.inputs';

export const WebhookEndpointConnection = ConnectionType(WebhookEndpoint);
export const WebhookDeliveryConnection = ConnectionType(WebhookDelivery);

@ObjectType({ description: 'A webhook endpoint with its signing secret, shown this once (create and roll-secret).' })
export class CreatedWebhookEndpoint extends WebhookEndpoint {
  @Field({ description: 'whsec_...: verify signatures with it (Standard Webhooks).' })
  secret!: string;
}

@ObjectType({ description: 'The simulated event sent by triggerTestWebhook and its deliveries.' })
export class WebhookTestEvent {
  @Field(() => ID) eventId!: string;
  @Field() type!: string;
  @Field(() => [WebhookDelivery]) deliveries!: WebhookDelivery[];
}

@ArgsType()
class WebhookDeliveriesArgs extends PageArgs {
  @Field(() => ID, { nullable: true }) endpointId?: string | null;
  @Field(() => WebhookDeliveryStatus, { nullable: true }) status?: WebhookDeliveryStatus | null;
}

const withSecret = (r: { endpoint: WebhookEndpoint; secret: string }): CreatedWebhookEndpoint =>
  Object.assign(Object.create(CreatedWebhookEndpoint.prototype), r.endpoint, { secret: r.secret });

@Resolver(() => WebhookEndpoint)
export class WebhookEndpointResolver {
  @Query(() => WebhookEndpointConnection, { description: "This mode's webhook endpoints, newest first." })
  webhookEndpoints(@C() ctx: Ctx, @Args() args: PageArgs) {
    return services(ctx).webhooks.endpoints(ctx, args);
  }

  @Query(() => WebhookEndpoint)
  webhookEndpoint(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).webhooks.endpoint(ctx, id);
  }

  @Mutation(() => CreatedWebhookEndpoint, {
    description: 'Registers a receiver of events; the answer shows its signing secret this once.',
  })
  async createWebhookEndpoint(
    @C() ctx: Ctx,
    @Arg('input') input: CreateWebhookEndpointInput,
  ): Promise<CreatedWebhookEndpoint> {
    return withSecret(await services(ctx).webhooks.createEndpoint(ctx, input));
  }

  @Mutation(() => DeletedObject)
  async deleteWebhookEndpoint(@C() ctx: Ctx, @Arg('id', () => ID) id: string): Promise<DeletedObject> {
    await services(ctx).webhooks.deleteEndpoint(ctx, id);
    return { id, object: 'webhook_endpoint', deleted: true };
  }

  @Mutation(() => WebhookEndpoint, { description: 'Enables or disables an endpoint (enabled omitted: flips it).' })
  toggleWebhookEndpoint(
    @C() ctx: Ctx,
    @Arg('id', () => ID) id: string,
    @Arg('enabled', () => Boolean, { nullable: true }) enabled?: boolean | null,
  ) {
    return services(ctx).webhooks.toggle(ctx, id, enabled);
  }

  @Mutation(() => CreatedWebhookEndpoint, {
    description:
      'Issues a new signing secret (shown this once); the previous one keeps signing, beside it, for 24 hours.',
  })
  async rollWebhookEndpointSecret(@C() ctx: Ctx, @Arg('id', () => ID) id: string): Promise<CreatedWebhookEndpoint> {
    return withSecret(await services(ctx).webhooks.rollSecret(ctx, id));
  }
}

@Resolver(() => WebhookDelivery)
export class WebhookDeliveryResolver {
  @Query(() => WebhookDeliveryConnection, { description: 'The delivery log, newest first.' })
  webhookDeliveries(@C() ctx: Ctx, @Args() args: WebhookDeliveriesArgs) {
    return services(ctx).webhooks.deliveries(ctx, args);
  }

  @Query(() => WebhookDelivery)
  webhookDelivery(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).webhooks.delivery(ctx, id);
  }

  @Mutation(() => WebhookDelivery, { description: 'Sends a delivery again now.' })
  retryWebhookDelivery(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).webhooks.retryDelivery(ctx, id);
  }

  @Query(() => [String], {
    description:
      "Every event kind Cadence sends, in the documented order: the choices for an endpoint's enabledEvents (besides * and family.*) and for triggerTestWebhook.",
  })
  webhookEventTypes(): string[] {
    return [...TEST_EVENT_TYPES];
  }

  @Mutation(() => WebhookTestEvent, {
    description:
      "Sends a simulated event (type: default payment.succeeded) to the merchant's enabled test endpoints that take it (or the one given). Test mode only.",
  })
  triggerTestWebhook(
    @C() ctx: Ctx,
    @Arg('endpointId', () => ID, { nullable: true }) endpointId?: string | null,
    @Arg('type', () => String, {
      nullable: true,
      description: `The event kind: ${TEST_EVENT_TYPES.join(', ')}. Default payment.succeeded.`,
    })
    type?: string | null,
  ) {
    return services(ctx).webhooks.triggerTest(ctx, endpointId, type);
  }

  @FieldResolver(() => [WebhookDeliveryAttempt], {
    description: 'Every attempt: status code, latency, error, start of the answer.',
  })
  attemptLog(@Root() delivery: WebhookDelivery): WebhookDeliveryAttempt[] {
    return (delivery.attemptLog ?? []).map((a) =>
      Object.assign(new WebhookDeliveryAttempt(), a, { attemptedAt: new Date(a.attemptedAt) }),
    );
  }
}

@Resolver(() => LiveEvent)
export class LiveEventResolver {
  @Subscription(() => LiveEvent, {
    description:
      "The merchant's outbound events in this mode as they are recorded (the same bodies webhook endpoints are sent), " +
      'optionally only some types ("payment.succeeded", "subscription.*"). Live only: nothing recorded before the ' +
      'subscription started is replayed.',
    subscribe: ({ args, context }) => services(context as Ctx).liveEvents.subscribe(context as Ctx, args.types),
  })
  events(
    @Root() item: StreamItem<Change>,
    @C() ctx: Ctx,
    @Arg('types', () => [String], { nullable: true }) _types?: string[] | null,
  ): Promise<LiveEvent> {
    return services(ctx).liveEvents.read(ctx, item);
  }
}

export const webhookResolvers = [WebhookEndpointResolver, WebhookDeliveryResolver, LiveEventResolver] as const;
