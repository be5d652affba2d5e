import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import { validate as isUuid } from 'uuid';
import type { Ctx } from '../../core/context';
import { defineLoader, tenantOf } from '../../core/context';
import { make } from '../../core/entity';
import { DomainError, invalid, notFound } from '../../core/errors';
import { findOr404 } from '../../core/find';
import type { PgListener } from '../../core/listener';
import { PageArgs, paginate } from '../../core/pagination';
import type { EntitlementCache } from './entitlement.cache';
import type { EntitlementEvaluator } from './entitlement.evaluator';
import { CustomerEntitlements, Entitlement } from './entitlement.entities';
import {
  CreateEntitlementInput,
  LinkEntitlementProductsInput,
  LOOKUP_KEY,
  MAX_DESCRIPTION,
  MAX_LINK_PRODUCTS,
  MAX_NAME,
  MAX_PRODUCTS_PER_ENTITLEMENT,
} from './entitlement.inputs';
import { insertLinks, linkCount, linkedAmong, productIdsOf } from './entitlement.store';
import { existingProducts } from '../catalog';

/** Linked product ids per entitlement, one statement per page of entitlements. */
export const productIdsByEntitlement = defineLoader<string, string[]>('productIdsByEntitlement', async (ctx, ids) => {
  const byId = await productIdsOf(ctx.em, ids);
  return ids.map((id) => byId.get(id) ?? []);
});

const lookupKeyExists = (key: string) =>
  new DomainError(
    'lookup_key_exists',
    `An entitlement with lookup_key '${key}' already exists in this mode.`,
    'lookup_key',
  );

export class EntitlementService {
  constructor(private readonly evaluator: EntitlementEvaluator) {}

  get cache(): EntitlementCache {
    return this.evaluator.cache;
  }

  /** Creates a gate; its lookup_key is unique per merchant and mode (the unique index settles races: 409). */
  async create(ctx: Ctx, input: CreateEntitlementInput): Promise<Entitlement> {
    tenantOf(ctx);
    if (!LOOKUP_KEY.test(input.lookupKey)) {
      throw invalid('lookup_key', 'lookup_key must be 1 to 100 characters: letters, digits, _ - . or :');
    }
    const name = input.name.trim();
    if (!name || name.length > MAX_NAME) throw invalid('name', `name must be 1 to ${MAX_NAME} characters.`);
    if (input.description != null && input.description.length > MAX_DESCRIPTION) {
      throw invalid('description', `description must be at most ${MAX_DESCRIPTION} characters.`);
    }
    const entitlement = make(Entitlement, { lookupKey: input.lookupKey, name, description: input.description ?? null });
    try {
      await ctx.em.persistAndFlush(entitlement);
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw lookupKeyExists(input.lookupKey);
      throw err;
    }
    return entitlement;
  }

  entitlement(ctx: Ctx, id: string): Promise<Entitlement> {
    return findOr404(ctx.em, Entitlement, id, 'entitlement');
  }

  entitlements(ctx: Ctx, page: PageArgs) {
    tenantOf(ctx);
    return paginate(ctx.em, Entitlement, {}, page);
  }

  /**
   * Links products of the tenant to a gate. Linking a product already linked changes nothing (idempotent); the
   * entitlement's row is locked so concurrent links count against the per-entitlement limit one after the other.
   * Answers the entitlement (its `product_ids` read afresh).
   */
  async linkProducts(ctx: Ctx, id: string, input: LinkEntitlementProductsInput): Promise<Entitlement> {
    tenantOf(ctx);
    const ids = input.productIds;
    if (!ids.length) throw invalid('product_ids', 'product_ids must name at least one product.');
    if (ids.length > MAX_LINK_PRODUCTS)
      throw invalid('product_ids', `product_ids can name at most ${MAX_LINK_PRODUCTS} products.`);
    ids.forEach((p, i) => {
      if (!isUuid(p)) throw notFound('product', p, `product_ids[${i}]`);
    });
    const wanted = [...new Set(ids.map((p) => p.toLowerCase()))];
    await this.entitlement(ctx, id); // 404 for the entitlement before the products
    const found = await existingProducts(ctx.em, wanted);
    const missing = ids.findIndex((p) => !found.has(p.toLowerCase()));
    if (missing >= 0) throw notFound('product', ids[missing], `product_ids[${missing}]`);
    await ctx.em.transactional(async (em) => {
      await findOr404(em, Entitlement, id, 'entitlement', { lockMode: LockMode.PESSIMISTIC_WRITE });
      const already = await linkedAmong(em, id, wanted);
      const fresh = wanted.filter((p) => !already.has(p));
      if (!fresh.length) return;
      const total = (await linkCount(em, id)) + fresh.length;
      if (total > MAX_PRODUCTS_PER_ENTITLEMENT) {
        throw invalid(
          'product_ids',
          `An entitlement can be linked to at most ${MAX_PRODUCTS_PER_ENTITLEMENT} products.`,
        );
      }
      await insertLinks(em, id, fresh);
    });
    ctx.loaders.delete('productIdsByEntitlement'); // the answer shows the links as they are now
    return this.entitlement(ctx, id);
  }

  /**
   * Every gate the customer holds now (docs/growth.md): one statement (shared with the tenant's other requests of the
   * moment), which also tells whether the answer cached for this customer is still current (entitlement.cache.ts).
   * Another merchant's or mode's customer: 404, as an unknown one.
   */
  async customerEntitlements(ctx: Ctx, customerId: string): Promise<CustomerEntitlements> {
    const tenant = tenantOf(ctx);
    if (!isUuid(customerId)) throw notFound('customer', customerId, 'customer_id');
    const found = await this.evaluator.customerEntitlements(tenant, customerId.toLowerCase());
    if (!found) throw notFound('customer', customerId, 'customer_id');
    return found;
  }

  /** Cache evictions on the process's LISTEN connection (src/app.ts); answers the function that stops them. */
  async listen(listener: PgListener): Promise<() => Promise<void>> {
    await this.cache.listen(listener);
    return () => this.cache.stop();
  }
}
