import express, { Request, Response, Router } from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { tenantEntityManager } from '../core/context';
import { DomainError } from '../core/errors';
import { GatewayError } from '../gateways/port';
import type { Services } from '../services';
import { sendError } from './request';

/**
 * Inbound gateway events at `/v1/providers/{provider}/webhooks/{connection_id}`: the raw body is verified with the
 * connection's webhook secret, then applied once, in one transaction, under the connection's merchant and mode.
 * These answer the gateway directly; they are not part of the merchant API, so they do not go through GraphQL.
 */
export function providerWebhooks(orm: MikroORM, services: Services): Router {
  const router = Router();
  router.post(
    '/v1/providers/:provider/webhooks/:connectionId',
    express.raw({ type: () => true, limit: '1mb' }),
    async (req: Request, res: Response) => {
      const { provider, connectionId } = req.params as { provider: string; connectionId: string };
      try {
        const connection = await services.providers.findForWebhook(orm.em as never, provider, connectionId);
        if (!connection)
          throw new DomainError('resource_not_found', `No such ${provider} connection: '${connectionId}'`);
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        let event;
        try {
          event = services.providers.gatewayFor(connection).parseEvent(raw, req.headers);
        } catch (err) {
          if (err instanceof GatewayError && err.code === 'signature_invalid') {
            throw new DomainError('signature_invalid', 'The webhook signature does not match.');
          }
          throw new DomainError('parameter_invalid', 'The webhook body is not a valid event.');
        }
        const em = tenantEntityManager(orm.em, connection);
        const applied = event.kind.startsWith('subscription.')
          ? await services.subscriptions.applyGatewayEvent(em as never, connection, event)
          : await services.payments.applyGatewayEvent(em as never, connection, event);
        req.log.info({ provider, event_id: event.eventId, type: event.rawType, applied }, 'gateway event');
        res.json({ received: true, duplicate: !applied });
      } catch (err) {
        if (err instanceof DomainError) return sendError(req, res, err);
        req.log.error({ err }, 'gateway webhook failed');
        sendError(req, res, new DomainError('internal_error', 'An internal error occurred.'));
      }
    },
  );
  return router;
}
