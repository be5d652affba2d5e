import type { EntityManager } from '@mikro-orm/postgresql';
import { createContext, Ctx } from '../core/context';
import type { Mode } from '../core/entity';
import type { Logger } from '../core/logger';
import { primeMerchant } from '../modules/merchants';
import type { Merchant } from '../modules/merchants';
import type { Services } from '../services';

/**
 * Who authenticated (src/http/auth.ts): the operator token, or a merchant's secret key with its merchant record
 * (the rate limit reads it). The request context gets the plain data (src/core/context.ts).
 */
export type AuthPrincipal = MerchantPrincipal | PortalPrincipal | { kind: 'admin' };
/** A customer portal session (docs/portal.md): GraphQL over HTTP only, and only the portal's root fields. */
export type PortalPrincipal = { kind: 'portal'; merchantId: string; mode: Mode; customerId: string; sessionId: string };
export type MerchantPrincipal = { kind: 'merchant'; merchant: Merchant; mode: Mode; apiKeyId: string };

/** A merchant's authenticated key (MerchantService.authenticate answers more: only these go into the principal). */
export const merchantPrincipal = (key: Omit<MerchantPrincipal, 'kind'>): MerchantPrincipal => ({
  kind: 'merchant',
  merchant: key.merchant,
  mode: key.mode,
  apiKeyId: key.apiKeyId,
});

/**
 * The per-request context of every transport (REST shim, GraphQL over HTTP and WebSocket). `signal`: the request's
 * Ctx.signal, made on first use (HTTP: RequestSignals in src/http/request.ts); without it the context's never aborts.
 */
export function operationContext(args: {
  em: EntityManager;
  principal: AuthPrincipal;
  requestId: string;
  log: Logger | (() => Logger);
  services: Services;
  signal?: () => AbortSignal;
}): Ctx {
  const p = args.principal;
  const ctx = createContext({
    ...args,
    principal:
      p.kind === 'merchant' ? { kind: 'merchant', merchantId: p.merchant.id, mode: p.mode, apiKeyId: p.apiKeyId } : p,
  });
  if (p.kind === 'merchant') primeMerchant(ctx, p.merchant);
  return ctx;
}
