import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { validate as isUuid } from 'uuid';
import type { Clock } from '../test-clock';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { make, Mode } from '../../core/entity';
import { DomainError, invalid, notFound } from '../../core/errors';
import { recordEvent } from '../../core/events';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import type { SecretBox } from '../../core/secrets';
import type { Serializer } from '../../core/serialize';
import { LookupAll, resolvedUrlProblem, systemLookupAll } from './address';
import { acceptsEvent } from './delivery.policy';
import { notifyDeliveryDue } from './delivery.store';
import { newWebhookSecret } from './signing';
import { isTestEventType, sampleObject, TEST_EVENT_TYPES } from './test-events';
import { WebhookDelivery, WebhookDeliveryStatus, WebhookEndpoint } from './webhook.entities';
import type { CreateWebhookEndpointInput } from './webhook.inputs';

/** After a roll, the previous secret keeps signing this long. */
export const SECRET_OVERLAP_MS = 24 * 3600_000;
const EVENT_PATTERN = /^(\*|[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*(\.\*)?)$/;

export interface TestEventResult {
  eventId: string;
  type: string;
  deliveries: WebhookDelivery[];
}

/**
 * Webhook endpoints, the delivery log and the test trigger. Sending is the dispatcher's (dispatcher.ts), the delivery
 * statements delivery.store.ts's.
 */
export class WebhookService {
  constructor(
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly serializer: () => Serializer,
    /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: endpoints may be on loopback, private and link-local addresses. */
    private readonly allowPrivateNetworks = false,
    private readonly lookupAll: LookupAll = systemLookupAll,
  ) {}

  async createEndpoint(
    ctx: Ctx,
    input: CreateWebhookEndpointInput,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const { mode } = tenantOf(ctx);
    if (input.mode !== mode) {
      throw new DomainError(
        'mode_mismatch',
        `mode is ${input.mode} but this is a ${mode}-mode key; use the ${input.mode} key.`,
        'mode',
      );
    }
    const url = await this.checkUrl(input.url, mode);
    const enabledEvents = validateEnabledEvents(input.enabledEvents);
    if (input.description != null && input.description.length > 500)
      throw invalid('description', 'description is longer than 500 characters.');
    const secret = newWebhookSecret();
    const endpoint = make(WebhookEndpoint, {
      url,
      enabledEvents,
      description: input.description ?? null,
      secretSealed: this.secrets.seal(secret),
    });
    await ctx.em.persistAndFlush(endpoint);
    return { endpoint, secret };
  }

  endpoints(ctx: Ctx, args: PageArgs) {
    tenantOf(ctx);
    return paginate(ctx.em, WebhookEndpoint, { deletedAt: null }, args);
  }

  async endpoint(ctx: Ctx, id: string, em: EntityManager = ctx.em, lock = false): Promise<WebhookEndpoint> {
    const ep = await findOr404(
      em,
      WebhookEndpoint,
      id,
      'webhook endpoint',
      lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
    );
    if (ep.deletedAt) throw notFound('webhook endpoint', id);
    return ep;
  }

  /** Deletes an endpoint: it receives nothing more; its pending deliveries fail; its delivery log stays readable. */
  async deleteEndpoint(ctx: Ctx, id: string): Promise<void> {
    tenantOf(ctx);
    await ctx.em.transactional(async (em) => {
      const ep = await this.endpoint(ctx, id, em, true);
      ep.deletedAt = new Date();
      ep.enabled = false;
      await em.flush();
      await em.nativeUpdate(
        WebhookDelivery,
        { endpointId: ep.id, status: WebhookDeliveryStatus.PENDING },
        { status: WebhookDeliveryStatus.FAILED, error: 'endpoint deleted', nextAttemptAt: null },
      );
    });
  }

  /** Sets `enabled` (or flips it when omitted). Enabling clears an automatic disable and its failure streak. */
  async toggle(ctx: Ctx, id: string, enabled?: boolean | null): Promise<WebhookEndpoint> {
    tenantOf(ctx);
    return ctx.em.transactional(async (em) => {
      const ep = await this.endpoint(ctx, id, em, true);
      ep.enabled = enabled ?? !ep.enabled;
      if (ep.enabled) {
        ep.disabledReason = null;
        ep.failingSince = null;
      }
      return ep;
    });
  }

  /** A new signing secret, shown this once; the previous one also signs for 24 hours (merchant clock). */
  async rollSecret(ctx: Ctx, id: string): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const { merchantId, mode } = tenantOf(ctx);
    const now = await this.clock.now(merchantId, mode);
    const secret = newWebhookSecret();
    const endpoint = await ctx.em.transactional(async (em) => {
      const ep = await this.endpoint(ctx, id, em, true);
      ep.previousSecretSealed = ep.secretSealed;
      ep.previousSecretExpiresAt = new Date(now.getTime() + SECRET_OVERLAP_MS);
      ep.secretSealed = this.secrets.seal(secret);
      return ep;
    });
    return { endpoint, secret };
  }

  deliveries(ctx: Ctx, args: PageArgs & { endpointId?: string | null; status?: WebhookDeliveryStatus | null }) {
    tenantOf(ctx);
    const where: Record<string, unknown> = {};
    if (args.status) where.status = args.status;
    if (args.endpointId) {
      if (!isUuid(args.endpointId)) return paginate(ctx.em, WebhookDelivery, { id: null }, args);
      where.endpointId = args.endpointId;
    }
    return paginate(ctx.em, WebhookDelivery, where, args);
  }

  delivery(ctx: Ctx, id: string) {
    tenantOf(ctx);
    return findOr404(ctx.em, WebhookDelivery, id, 'webhook delivery');
  }

  /** Sends the delivery again now (whatever its status); the worker picks it up at once. */
  async retryDelivery(ctx: Ctx, id: string): Promise<WebhookDelivery> {
    const { merchantId, mode } = tenantOf(ctx);
    const now = await this.clock.now(merchantId, mode);
    return ctx.em.transactional(async (em) => {
      const d = await findOr404(em, WebhookDelivery, id, 'webhook delivery', { lockMode: LockMode.PESSIMISTIC_WRITE });
      const ep = await em.findOneOrFail(WebhookEndpoint, { id: d.endpointId });
      if (ep.deletedAt || !ep.enabled) {
        throw new DomainError(
          'invalid_state_transition',
          `Cannot retry a delivery to a ${ep.deletedAt ? 'deleted' : 'disabled'} endpoint; enable the endpoint first.`,
        );
      }
      d.status = WebhookDeliveryStatus.PENDING;
      d.nextAttemptAt = now;
      await em.flush();
      await notifyDeliveryDue(em, 'retry');
      return d;
    });
  }

  /**
   * A realistic simulated event of the kind asked for (default payment.succeeded; test-events.ts lists the kinds),
   * sent to the merchant's enabled test endpoints that take it (or to the one named). The event goes through the
   * outbox and the worker like any other; the answer lists the deliveries.
   */
  async triggerTest(ctx: Ctx, endpointId?: string | null, eventType?: string | null): Promise<TestEventResult> {
    const { merchantId, mode } = tenantOf(ctx);
    if (mode !== Mode.TEST) {
      throw new DomainError(
        'test_mode_only',
        'Test events are sent to test endpoints only: use your test secret key (sk_test_...).',
      );
    }
    const type = eventType ?? 'payment.succeeded';
    if (!isTestEventType(type)) {
      throw invalid(
        'type',
        `"${type.slice(0, 64)}" is not an event type the test trigger sends; one of: ${TEST_EVENT_TYPES.join(', ')}.`,
      );
    }
    const now = await this.clock.now(merchantId, mode);
    return ctx.em.transactional(async (em) => {
      const candidates = endpointId
        ? [await this.endpoint(ctx, endpointId, em)]
        : await em.find(WebhookEndpoint, { enabled: true, deletedAt: null }, { orderBy: { id: 'asc' } });
      const targets = candidates.filter((ep) => ep.enabled && !ep.deletedAt && acceptsEvent(ep.enabledEvents, type));
      const event = recordEvent(em, type, sampleObject(type, merchantId, now, this.serializer()), mode);
      event.dispatchedAt = new Date(); // fanned out here, to the targets only
      const deliveries = targets.map((ep) =>
        make(WebhookDelivery, { endpointId: ep.id, eventId: event.id, eventType: type, nextAttemptAt: now }),
      );
      em.persist(deliveries);
      await em.flush();
      if (deliveries.length) {
        await notifyDeliveryDue(em, 'test');
      }
      return { eventId: event.id, type, deliveries };
    });
  }

  private async checkUrl(raw: string, mode: Mode): Promise<string> {
    const url = raw.trim();
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw invalid('url', 'url must be an absolute http or https URL.');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw invalid('url', 'url must be an absolute http or https URL.');
    if (url.length > 2048) throw invalid('url', 'url is longer than 2048 characters.');
    if (u.username || u.password) throw invalid('url', 'url must not carry credentials.');
    const rules = { live: mode === Mode.LIVE, allowPrivateNetworks: this.allowPrivateNetworks };
    const problem = await resolvedUrlProblem(u, rules, this.lookupAll);
    if (problem) throw invalid('url', problem);
    return url;
  }
}

export function validateEnabledEvents(events: string[] | null | undefined, param = 'enabled_events'): string[] {
  if (events == null) return ['*'];
  if (events.length === 0) throw invalid(param, `${param} must list at least one event type (or "*").`);
  if (events.length > 100) throw invalid(param, `${param} can list at most 100 event types.`);
  events.forEach((e, i) => {
    if (typeof e !== 'string' || e.length > 64 || !EVENT_PATTERN.test(e)) {
      throw invalid(
        `${param}[${i}]`,
        `"${String(e).slice(0, 64)}" is not an event type (e.g. "payment.succeeded", "subscription.*" or "*").`,
      );
    }
  });
  return [...new Set(events)];
}
