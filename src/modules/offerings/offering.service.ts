import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { validate as isUuid } from 'uuid';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { make } from '../../core/entity';
import { DomainError, invalid, notFound } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { Connection, PageArgs, paginate } from '../../core/pagination';
import { validateMetadata } from '../../core/validate';
import { services } from '../../services';
import { Product, bumpCatalogVersion } from '../catalog';
import { OfferingTreeCache } from './offering.cache';
import { Offering, OfferingResolution, Package, Paywall, ResolvedExperiment } from './offering.entities';
import {
  AttachPackageInput,
  CreateOfferingInput,
  CreatePackageInput,
  CreatePaywallInput,
  LinkPackageProductsInput,
  MAX_PACKAGES_PER_OFFERING,
  MAX_PRODUCTS_PER_PACKAGE,
  ResolveOfferingInput,
} from './offering.inputs';
import { offeringProductsByPackage, packagesByOffering, productIdsByPackage } from './offering.loaders';
import { validateAttributes } from '../experiments';
import { hasLoneSurrogate, validateConfig, validateLookupKey } from './offering.rules';
import {
  clearCurrentOffering,
  insertOfferingLink,
  linkProducts,
  lockCurrentOffering,
  moveOfferingLink,
  offeringLinks,
  packageProductCount,
  shiftPositions,
} from './offering.store';

/** A unique index's answer in the API's error terms (the constraint names are the migration's). */
function conflictOf(err: unknown, lookupKey?: string): DomainError | null {
  if (!(err instanceof UniqueConstraintViolationException)) return null;
  switch ((err as { constraint?: string }).constraint) {
    case 'offerings_merchant_id_mode_lookup_key_unique':
      return new DomainError(
        'lookup_key_exists',
        `An offering with lookup_key '${lookupKey}' already exists.`,
        'lookup_key',
      );
    case 'packages_merchant_id_mode_lookup_key_unique':
      return new DomainError(
        'lookup_key_exists',
        `A package with lookup_key '${lookupKey}' already exists.`,
        'lookup_key',
      );
    case 'paywalls_merchant_id_mode_offering_id_unique':
      return paywallExists();
    default:
      return null;
  }
}

const paywallExists = () =>
  new DomainError('paywall_exists', 'This offering already has a paywall (one per offering).', 'offering_id');

function checkedMetadata(metadata: unknown): Record<string, string> {
  const m = validateMetadata(metadata);
  if (hasLoneSurrogate(m))
    throw invalid('metadata', 'metadata holds a string that is not valid Unicode (a lone surrogate).');
  return m;
}

/** Ids listed by a request: each a UUID of a record of the tenant, else 404 naming its place (`product_ids[2]`). */
function distinctIds(ids: string[], param: string, what: string): string[] {
  ids.forEach((id, i) => {
    if (!isUuid(id)) throw notFound(what, id, `${param}[${i}]`);
  });
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}

export class OfferingService {
  /** Resolve's offering trees, per process (bounded; see offering.cache.ts). */
  readonly trees = new OfferingTreeCache();

  // --- offerings ---------------------------------------------------------------------------------------------------

  /** Creates an offering; `is_current` makes it the current one and clears the previous one in the same transaction. */
  async createOffering(ctx: Ctx, input: CreateOfferingInput): Promise<Offering> {
    const lookupKey = validateLookupKey(input.lookupKey);
    const metadata = checkedMetadata(input.metadata);
    const isCurrent = input.isCurrent ?? false;
    return this.write(ctx, lookupKey, async (em) => {
      if (isCurrent) {
        await lockCurrentOffering(em, tenantOf(ctx));
        await clearCurrentOffering(em, null);
      }
      const offering = make(Offering, {
        lookupKey,
        name: input.name,
        description: input.description ?? null,
        metadata,
        isCurrent,
      });
      em.persist(offering);
      return offering;
    });
  }

  /** Makes an offering the current one (the previous one stops being current); already current: nothing changes. */
  async makeOfferingCurrent(ctx: Ctx, id: string): Promise<Offering> {
    await this.write(ctx, undefined, async (em) => {
      await lockCurrentOffering(em, tenantOf(ctx));
      // Read under the lock: a concurrent switch that committed meanwhile is seen.
      const offering = await findOr404(em, Offering, id, 'offering', {
        lockMode: LockMode.PESSIMISTIC_WRITE,
        refresh: true,
      });
      if (offering.isCurrent) return;
      await clearCurrentOffering(em, offering.id); // first: the index allows one current offering at any moment
      offering.isCurrent = true;
    });
    return findOr404(ctx.em.fork({ clear: true }), Offering, id, 'offering'); // as committed, past the request's identity map
  }

  offering(ctx: Ctx, id: string): Promise<Offering> {
    return findOr404(ctx.em, Offering, id, 'offering');
  }

  offerings(ctx: Ctx, page: PageArgs & { lookupKey?: string | null }): Promise<Connection<Offering>> {
    tenantOf(ctx);
    return paginate(ctx.em, Offering, page.lookupKey != null ? { lookupKey: page.lookupKey } : {}, page);
  }

  /**
   * Puts a package in an offering at `position` (0 first): a new package is inserted there (default, or past the end:
   * last) and the ones from there on move down one; a package already in the offering moves there (past the end: last)
   * and the ones between shift, or stays where it is when no position is given. Positions stay 0..n-1. The offering's
   * row is locked, so concurrent attaches to one offering apply one after the other.
   */
  async attachPackage(ctx: Ctx, offeringId: string, input: AttachPackageInput): Promise<Offering> {
    const position = input.position ?? null;
    await this.write(ctx, undefined, async (em) => {
      const offering = await findOr404(em, Offering, offeringId, 'offering', { lockMode: LockMode.PESSIMISTIC_WRITE });
      const pkg = await findOr404(em, Package, input.packageId, 'package', { param: 'package_id' });
      const links = await offeringLinks(em, offering.id);
      const n = links.length;
      const current = links.find((l) => l.packageId === pkg.id);
      if (current) {
        if (position === null) return;
        const to = Math.min(position, n - 1);
        if (to < current.position) await shiftPositions(em, offering.id, to, current.position - 1, 1);
        else if (to > current.position) await shiftPositions(em, offering.id, current.position + 1, to, -1);
        if (to !== current.position) await moveOfferingLink(em, offering.id, pkg.id, to);
        return;
      }
      if (n >= MAX_PACKAGES_PER_OFFERING) {
        throw invalid('package_id', `An offering holds at most ${MAX_PACKAGES_PER_OFFERING} packages.`);
      }
      const to = Math.min(position ?? n, n);
      await shiftPositions(em, offering.id, to, n - 1, 1);
      await insertOfferingLink(em, offering.id, pkg.id, to);
    });
    // A later field of the same operation must read the new order, not what this request's loader saw before.
    packagesByOffering(ctx).clear(offeringId);
    return this.offering(ctx, offeringId);
  }

  // --- packages ----------------------------------------------------------------------------------------------------

  createPackage(ctx: Ctx, input: CreatePackageInput): Promise<Package> {
    const lookupKey = validateLookupKey(input.lookupKey);
    return this.write(ctx, lookupKey, async (em) => {
      const pkg = make(Package, { lookupKey, name: input.name, description: input.description ?? null });
      em.persist(pkg);
      return pkg;
    });
  }

  package(ctx: Ctx, id: string): Promise<Package> {
    return findOr404(ctx.em, Package, id, 'package');
  }

  packages(ctx: Ctx, page: PageArgs & { lookupKey?: string | null }): Promise<Connection<Package>> {
    tenantOf(ctx);
    return paginate(ctx.em, Package, page.lookupKey != null ? { lookupKey: page.lookupKey } : {}, page);
  }

  /**
   * Links products (of this merchant and mode) to a package. Idempotent: a product already linked stays linked once.
   * The package's row is locked, so the limit of MAX_PRODUCTS_PER_PACKAGE holds under concurrent links.
   */
  async linkPackageProducts(ctx: Ctx, packageId: string, input: LinkPackageProductsInput): Promise<Package> {
    const ids = distinctIds(input.productIds, 'product_ids', 'product');
    await this.write(ctx, undefined, async (em) => {
      const pkg = await findOr404(em, Package, packageId, 'package', { lockMode: LockMode.PESSIMISTIC_WRITE });
      const found = new Set((await em.find(Product, { id: { $in: ids } })).map((p) => p.id));
      const missing = input.productIds.findIndex((id) => !found.has(id.toLowerCase()));
      if (missing >= 0) throw notFound('product', input.productIds[missing], `product_ids[${missing}]`);
      const have = await packageProductCount(em, pkg.id);
      const added = await linkProducts(em, pkg.id, ids);
      if (have + added > MAX_PRODUCTS_PER_PACKAGE) {
        throw invalid('product_ids', `A package holds at most ${MAX_PRODUCTS_PER_PACKAGE} products; it has ${have}.`);
      }
    });
    productIdsByPackage(ctx).clear(packageId);
    offeringProductsByPackage(ctx).clear(packageId);
    return this.package(ctx, packageId);
  }

  // --- paywalls ----------------------------------------------------------------------------------------------------

  /** Creates an offering's paywall; a second one for the same offering answers 409 paywall_exists (the index decides races). */
  async createPaywall(ctx: Ctx, input: CreatePaywallInput): Promise<Paywall> {
    const config = validateConfig(input.config);
    const offering = await findOr404(ctx.em, Offering, input.offeringId, 'offering', { param: 'offering_id' });
    if (await ctx.em.count(Paywall, { offeringId: offering.id })) throw paywallExists();
    return this.write(ctx, undefined, async (em) => {
      const paywall = make(Paywall, { name: input.name, offeringId: offering.id, template: input.template, config });
      em.persist(paywall);
      return paywall;
    });
  }

  paywall(ctx: Ctx, id: string): Promise<Paywall> {
    return findOr404(ctx.em, Paywall, id, 'paywall');
  }

  paywalls(ctx: Ctx, page: PageArgs & { offeringId?: string | null }): Promise<Connection<Paywall>> {
    tenantOf(ctx);
    if (page.offeringId == null) return paginate(ctx.em, Paywall, {}, page);
    // A malformed id matches nothing (the column is a uuid: PostgreSQL would refuse the comparison).
    return paginate(ctx.em, Paywall, isUuid(page.offeringId) ? { offeringId: page.offeringId } : { id: null }, page);
  }

  // --- resolve -----------------------------------------------------------------------------------------------------

  /**
   * What to show one customer now (docs/growth.md, resolve): the offering of the experiment arm the customer is in (its
   * sticky enrolment, else the first running experiment whose targeting matches, bucketed and enrolled by the
   * experiments module), else the current offering, else none; with its paywall. The offering's tree comes from the
   * version-checked cache (offering.cache.ts), so a resolve runs the catalog version and the assignment's statements
   * (one, with the customer check, unless it enrols), and no more once the tree is cached; its fields then answer
   * from memory.
   */
  async resolve(ctx: Ctx, input: ResolveOfferingInput): Promise<OfferingResolution> {
    const { merchantId, mode } = tenantOf(ctx);
    const attributes = validateAttributes(input.attributes); // before any read: a bad body is a 400 whoever the customer
    // Bucketing hashes the id as text: the canonical (lower-case) spelling, whatever the request's.
    const customerId = String(input.customerId).toLowerCase();
    // Two reads at once: the catalog version (shared with the tenant's other requests of the moment) and the
    // assignment, whose statement also checks that the customer is the tenant's (404 otherwise).
    const [version, assignment] = await Promise.all([
      services(ctx).catalogCache.version(merchantId, mode),
      services(ctx).experiments.assignment(ctx, customerId, attributes),
    ]);
    let experiment: ResolvedExperiment | null = null;
    let tree = null;
    if (assignment) {
      tree = await this.trees.tree(ctx, assignment.offeringId, version);
      // An arm whose offering cannot be read serves the current offering, and is not reported as the reason.
      if (tree) {
        experiment = make(ResolvedExperiment, {
          experimentId: assignment.experimentId,
          variantId: assignment.variantId,
          variantKey: assignment.variantKey,
        });
      }
    }
    tree ??= await this.trees.tree(ctx, null, version);
    return make(OfferingResolution, {
      customerId,
      offering: tree?.offering ?? null,
      paywall: tree?.paywall ?? null,
      experiment,
    });
  }

  // -----------------------------------------------------------------------------------------------------------------

  /**
   * Every write of the module: one transaction that also bumps the catalog version, which retires the offering trees
   * resolve keeps (and the catalog's cached reads) in every process. Unique indexes answer in the API's error terms.
   */
  private async write<T>(ctx: Ctx, lookupKey: string | undefined, fn: (em: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await ctx.em.transactional(async (em) => {
        const result = await fn(em);
        await em.flush();
        await bumpCatalogVersion(em);
        return result;
      });
    } catch (err) {
      throw conflictOf(err, lookupKey) ?? err;
    }
  }
}
