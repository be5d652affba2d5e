import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { validate as isUuid } from 'uuid';
import type { Ctx } from '../../core/context';
import { defineLoader, groupBy, tenantOf } from '../../core/context';
import { make } from '../../core/entity';
import { DomainError, invalid, notFound } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import { currentMerchant } from '../merchants';
import type { Clock } from '../test-clock';
import { bucketOf, variantForBucket } from './experiment.bucketing';
import { Experiment, ExperimentStatus, ExperimentVariant } from './experiment.entities';
import { ExperimentEvent, EXPERIMENTS } from './experiment.machine';
import {
  CreateExperimentInput,
  ExperimentVariantInput,
  MAX_VARIANTS,
  UpdateExperimentInput,
  UpdateExperimentVariantInput,
} from './experiment.inputs';
import { buildResults, ExperimentResults } from './experiment.results';
import { Candidate, enrol, runningCandidates, variantCounts, variantsOf } from './experiment.store';
import { matchesTargeting, validateAttributes, validateTargeting } from './experiment.targeting';

/**
 * What resolve serves a customer from an experiment (docs/growth.md resolve `experiment`, plus the offering to show).
 */
export interface Assignment {
  experimentId: string;
  variantId: string;
  variantKey: string;
  offeringId: string;
}

const KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/** An experiment's variants, ordered by id, one statement per page of experiments. */
export const variantsByExperiment = defineLoader<string, ExperimentVariant[]>(
  'variantsByExperiment',
  async (ctx, ids) => groupBy(ids, await variantsOf(ctx.em, ids), (v) => v.experimentId),
);

/**
 * Experiments (docs/growth.md): create, edit, start, stop, results, and the assignment engine resolve serves
 * offerings through.
 *
 * Edits: name and targeting while draft or running; variants' names and traffic split while draft or running (the
 * split must still sum to 100); a variant's offering only while draft (a running arm keeps showing what its
 * visitors saw); keys, the control and the set of variants never (create another experiment). Enrolled customers
 * keep their variant through every edit: only customers not yet enrolled are bucketed with the new split or
 * targeting. A stopped experiment is final and serves nobody; its enrolments stay, for its results.
 */
export type OfferingsExist = (em: EntityManager, ids: readonly string[]) => Promise<Set<string>>;

export class ExperimentService {
  constructor(
    private readonly clock: Clock,
    /** Which of `ids` are offerings of the tenant: the offerings module answers (it sits above experiments). */
    private readonly existingOfferingIds: OfferingsExist,
  ) {}

  async create(ctx: Ctx, input: CreateExperimentInput): Promise<Experiment> {
    tenantOf(ctx);
    const name = validName(input.name, 'name');
    const targeting = validateTargeting(input.targeting);
    const variants = validateVariants(input.variants);
    await requireOfferings(
      ctx,
      this.existingOfferingIds,
      variants.map((v, i) => [v.offeringId, `variants[${i}].offering_id`]),
    );
    const { experiment, rows } = await ctx.em.transactional(async (em) => {
      const experiment = make(Experiment, { name, targeting });
      em.persist(experiment);
      const rows = variants.map((v) => make(ExperimentVariant, { ...v, experimentId: experiment.id }));
      em.persist(rows);
      await em.flush();
      return { experiment, rows };
    });
    variantsByExperiment(ctx).prime(
      experiment.id,
      [...rows].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    return experiment;
  }

  experiments(ctx: Ctx, args: PageArgs & { status?: ExperimentStatus | null }) {
    tenantOf(ctx);
    return paginate(ctx.em, Experiment, args.status ? { status: args.status } : {}, args);
  }

  experiment(ctx: Ctx, id: string): Promise<Experiment> {
    tenantOf(ctx);
    return findOr404(ctx.em, Experiment, id, 'experiment');
  }

  /** Edits a draft or running experiment (see the class comment for what can change); 409 once stopped. */
  async update(ctx: Ctx, id: string, input: UpdateExperimentInput): Promise<Experiment> {
    tenantOf(ctx);
    const name = input.name == null ? undefined : validName(input.name, 'name');
    const targeting = input.targeting == null ? undefined : validateTargeting(input.targeting);
    const changes = validateVariantChanges(input.variants ?? []);
    await requireOfferings(
      ctx,
      this.existingOfferingIds,
      changes.flatMap((c, i) =>
        c.offeringId == null ? [] : [[c.offeringId, `variants[${i}].offering_id`] as [string, string]],
      ),
    );
    const experiment = await ctx.em.transactional(async (em) => {
      const e = await findOr404(em, Experiment, id, 'experiment', { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (e.status === ExperimentStatus.STOPPED) {
        throw new DomainError(
          'invalid_state_transition',
          'Cannot update an experiment that is stopped: only draft and running experiments can change.',
        );
      }
      if (name !== undefined) e.name = name;
      if (targeting !== undefined) e.targeting = targeting;
      if (changes.length) {
        const variants = await em.find(ExperimentVariant, { experimentId: e.id }, { orderBy: { id: 'asc' } });
        const byKey = new Map(variants.map((v) => [v.key, v]));
        let splitChanged = false;
        changes.forEach((c, i) => {
          const v = byKey.get(c.key);
          if (!v)
            throw invalid(
              `variants[${i}].key`,
              `The experiment has no variant with key '${c.key}' (variants cannot be added or removed).`,
            );
          if (c.name != null) v.name = c.name;
          if (c.offeringId != null && c.offeringId !== v.offeringId) {
            if (e.status !== ExperimentStatus.DRAFT) {
              throw new DomainError(
                'invalid_state_transition',
                `Cannot change the offering of a variant of an experiment that is ${e.status}: only a draft's variants can change offering.`,
              );
            }
            v.offeringId = c.offeringId;
          }
          if (c.trafficPercent != null && c.trafficPercent !== v.trafficPercent) {
            v.trafficPercent = c.trafficPercent;
            splitChanged = true;
          }
        });
        requireFullSplit(variants);
        // Visitors bucketed from now on follow another split: the sample-ratio check starts over with them.
        if (splitChanged && e.status === ExperimentStatus.RUNNING) e.trafficVersion += 1;
        variantsByExperiment(ctx).clear(e.id).prime(e.id, variants);
      }
      await em.flush();
      return e;
    });
    return experiment;
  }

  /** draft -> running (409 experiment_not_draft from any other state, docs/api.md). */
  start(ctx: Ctx, id: string): Promise<Experiment> {
    return this.move(ctx, id, 'start');
  }

  /** running -> stopped (409 experiment_not_running from any other state, docs/api.md). */
  stop(ctx: Ctx, id: string): Promise<Experiment> {
    return this.move(ctx, id, 'stop');
  }

  /** Moves an experiment by its table (experiment.machine.ts), under its row lock. */
  private async move(ctx: Ctx, id: string, on: ExperimentEvent): Promise<Experiment> {
    const { merchantId, mode } = tenantOf(ctx);
    const now = await this.clock.now(merchantId, mode);
    return ctx.em.transactional(async (em) => {
      const experiment = await findOr404(em, Experiment, id, 'experiment', { lockMode: LockMode.PESSIMISTIC_WRITE });
      EXPERIMENTS.apply({ experiment, now }, on);
      return experiment;
    });
  }

  /**
   * The experiment a customer is served, for resolve: the customer's enrolment in a running experiment if any
   * (the oldest), else the first running experiment (by started_at, then id) whose targeting the attributes match,
   * bucketed by the formulas (docs/growth.md) and enrolled once (concurrent resolves of one customer meet on the
   * enrolment's unique key: one row, one variant for all). Null when no running experiment applies. Enrolments in
   * stopped experiments are not served (they stay, for results). One statement when enrolled or unmatched (it also
   * checks the customer); two or three on enrolment. A customer not of the tenant (or unknown) is 404, param
   * `customer_id`.
   */
  async assignment(
    ctx: Ctx,
    customerId: string,
    attributes: Record<string, unknown> | null | undefined,
  ): Promise<Assignment | null> {
    tenantOf(ctx);
    const attrs = validateAttributes(attributes);
    if (typeof customerId !== 'string' || !isUuid(customerId))
      throw notFound('customer', String(customerId), 'customer_id');
    const { customerFound, candidates } = await runningCandidates(ctx.em, customerId);
    if (!customerFound) throw notFound('customer', customerId, 'customer_id');
    const enrolled = candidates.find((c) => c.enrolled_variant_id);
    if (enrolled) return served(enrolled, enrolled.enrolled_variant_id!);
    for (const c of candidates) {
      if (!matchesTargeting(c.targeting ?? {}, attrs)) continue;
      const variants = (c.variants ?? []).map((v) => ({ ...v, trafficPercent: v.traffic_percent }));
      const variant = variantForBucket(variants, bucketOf(c.id, customerId));
      if (!variant) continue;
      const variantId = await enrol(ctx.em, {
        experimentId: c.id,
        variantId: variant.id,
        customerId,
        trafficVersion: c.traffic_version,
      });
      if (!variantId) throw notFound('customer', customerId, 'customer_id');
      return served(c, variantId);
    }
    return null;
  }

  /**
   * Results as docs/growth.md defines them, counted from billing data in the merchant's reporting currency.
   */
  async results(ctx: Ctx, id: string): Promise<ExperimentResults> {
    const e = await this.experiment(ctx, id);
    const currency = (await currentMerchant(ctx)).reportingCurrency;
    const variants = await variantsByExperiment(ctx).load(e.id);
    const counts = await variantCounts(ctx.em, e.id, currency, e.trafficVersion);
    return buildResults(e, variants, counts, currency);
  }
}

function served(c: Candidate, variantId: string): Assignment {
  const v = c.variants.find((x) => x.id === variantId)!;
  return { experimentId: c.id, variantId, variantKey: v.key, offeringId: v.offering_id };
}

function validName(value: string, param: string): string {
  const name = value.trim();
  if (name.length === 0 || name.length > 255) throw invalid(param, `${param} must be 1 to 255 characters.`);
  return name;
}

function validKey(value: string, param: string): string {
  if (!KEY.test(value)) throw invalid(param, `${param} must be 1 to 64 letters, digits, "_", "-" or ".".`);
  return value;
}

function validPercent(value: number, param: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 100)
    throw invalid(param, `${param} must be a whole number from 0 to 100.`);
  return value;
}

type NewVariant = Pick<ExperimentVariant, 'key' | 'name' | 'offeringId' | 'trafficPercent' | 'isControl'>;

/** A create's variants: 2 to 20, unique keys, whole percentages summing to 100, exactly one control. */
function validateVariants(input: ExperimentVariantInput[]): NewVariant[] {
  if (!Array.isArray(input) || input.length < 2) throw invalid('variants', 'An experiment needs at least 2 variants.');
  if (input.length > MAX_VARIANTS)
    throw invalid('variants', `An experiment can have at most ${MAX_VARIANTS} variants.`);
  const keys = new Set<string>();
  let control = -1;
  const out = input.map((v, i) => {
    const key = validKey(v.key, `variants[${i}].key`);
    if (keys.has(key)) throw invalid(`variants[${i}].key`, `Variant keys must be unique: '${key}' is used twice.`);
    keys.add(key);
    const name = v.name == null ? key : validName(v.name, `variants[${i}].name`);
    const trafficPercent = validPercent(v.trafficPercent, `variants[${i}].traffic_percent`);
    if (v.isControl) {
      if (control >= 0)
        throw invalid(
          `variants[${i}].is_control`,
          `Exactly one variant is the control: variants[${control}] already is.`,
        );
      control = i;
    }
    return { key, name, offeringId: v.offeringId, trafficPercent, isControl: v.isControl === true };
  });
  if (control < 0) throw invalid('variants', 'Exactly one variant must have is_control: true.');
  requireFullSplit(out);
  return out;
}

function requireFullSplit(variants: readonly { trafficPercent: number }[]): void {
  const sum = variants.reduce((n, v) => n + v.trafficPercent, 0);
  if (sum !== 100) throw invalid('variants', `The variants' traffic_percent must sum to 100; they sum to ${sum}.`);
}

/** An update's variant changes, checked on their own (keys are matched to the experiment's in the transaction). */
function validateVariantChanges(input: UpdateExperimentVariantInput[]): UpdateExperimentVariantInput[] {
  const keys = new Set<string>();
  return input.map((c, i) => {
    const key = validKey(c.key, `variants[${i}].key`);
    if (keys.has(key))
      throw invalid(`variants[${i}].key`, `Each variant can be listed once: '${key}' is listed twice.`);
    keys.add(key);
    return {
      key,
      name: c.name == null ? null : validName(c.name, `variants[${i}].name`),
      offeringId: c.offeringId ?? null,
      trafficPercent:
        c.trafficPercent == null ? null : validPercent(c.trafficPercent, `variants[${i}].traffic_percent`),
    };
  });
}

/** Every offering named exists in the merchant's mode; else 404 naming the first missing one's parameter. */
async function requireOfferings(
  ctx: Ctx,
  existingOfferingIds: OfferingsExist,
  refs: [string, string][],
): Promise<void> {
  for (const [id, param] of refs) if (!isUuid(id)) throw notFound('offering', id, param);
  if (refs.length === 0) return;
  const found = await existingOfferingIds(ctx.em, [...new Set(refs.map(([id]) => id))]);
  for (const [id, param] of refs) if (!found.has(id)) throw notFound('offering', id, param);
}
