import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import type { Mode } from '../../core/entity';
import { DomainError, invalid } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { make } from '../../core/entity';
import { Customer } from '../customers';
import { PortalSession } from './portal.entities';
import type { CreatePortalSessionInput } from './portal.inputs';

/** How long a portal link works (wall-clock time: a link's life is a security bound, not billing time). */
export const PORTAL_SESSION_SECONDS = 3600;
const TOKEN_PREFIX = 'pt_';

const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/** Who a portal token stands for: one customer of one merchant and mode, until `expiresAt`. */
export interface PortalHolder {
  merchantId: string;
  mode: Mode;
  customerId: string;
  sessionId: string;
  expiresAt: number;
}

/**
 * Customer portal sessions (docs/portal.md): made by the merchant's key for one of its customers; their token, in the
 * link's fragment, is the bearer of the portal page's GraphQL requests.
 */
export class PortalService {
  /** Tokens recently seen, by hash: a portal page makes a few requests a second at most; bounded (see authenticate). */
  private readonly cache = new Map<string, PortalHolder>();
  private static readonly CACHE_LIMIT = 10_000;

  constructor(
    private readonly root: EntityManager,
    /** The service's public base URL (PUBLIC_URL, else where it listens). */
    private readonly publicUrl: () => string,
  ) {}

  async create(ctx: Ctx, input: CreatePortalSessionInput): Promise<PortalSession> {
    const { merchantId, mode } = tenantOf(ctx);
    const returnUrl = input.returnUrl.trim();
    const parsed = URL.canParse(returnUrl) ? new URL(returnUrl) : null;
    if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
      throw invalid('return_url', 'return_url must be an absolute http or https URL.');
    // The tenant filter answers only this merchant's and mode's customers: another's id is not found.
    const customer = await findOr404(ctx.em, Customer, input.customerId, 'customer', { param: 'customer_id' });
    const token = `${TOKEN_PREFIX}${crypto.randomBytes(32).toString('base64url')}`;
    const session = make(PortalSession, {
      merchantId,
      mode,
      customerId: customer.id,
      tokenHash: hashToken(token),
      returnUrl,
      expiresAt: new Date(Date.now() + PORTAL_SESSION_SECONDS * 1000),
    });
    await ctx.em.persistAndFlush(session);
    session.url = `${this.publicUrl()}/portal#${token}`;
    return session;
  }

  /** The session a token stands for, or null when it is unknown, malformed or expired. */
  async authenticate(token: string): Promise<PortalHolder | null> {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 100) return null;
    const hash = hashToken(token);
    let hit = this.cache.get(hash);
    if (!hit) {
      const row = await this.root.fork().findOne(PortalSession, { tokenHash: hash }, { filters: false });
      if (!row) return null;
      hit = {
        merchantId: row.merchantId,
        mode: row.mode,
        customerId: row.customerId,
        sessionId: row.id,
        expiresAt: row.expiresAt.getTime(),
      };
      // Sessions never change once made, so a cached one is exact until it expires; the cache is cleared when full.
      if (this.cache.size >= PortalService.CACHE_LIMIT) this.cache.clear();
      this.cache.set(hash, hit);
    }
    if (hit.expiresAt <= Date.now()) {
      this.cache.delete(hash);
      return null;
    }
    return hit;
  }
}

/** The portal session of the request; any other caller is refused (portal fields are the customer's, not the merchant's). */
export function portalOf(ctx: Pick<Ctx, 'principal'>): Extract<Ctx['principal'], { kind: 'portal' }> {
  if (ctx.principal.kind !== 'portal')
    throw new DomainError('invalid_api_key', "This field is the customer portal's: it needs a portal session's token.");
  return ctx.principal;
}
