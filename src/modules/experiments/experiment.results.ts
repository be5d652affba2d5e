import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { DateTime, Money } from '../../core/scalars';
import { Experiment, ExperimentStatus, ExperimentVariant } from './experiment.entities';
import type { VariantCounts } from './experiment.store';
import { chanceToWin, mrrLift, sampleRatioMismatch, WIN_MIN_VISITORS, WIN_PROBABILITY } from './experiment.stats';

@ObjectType({
  description:
    "Treatment less control, in MRR per visitor (subunits of the results' currency), with a 95% normal (Welch) interval.",
})
export class MrrLiftResult {
  @Field(() => Float) expected!: number;
  @Field(() => Float) ciLow!: number;
  @Field(() => Float) ciHigh!: number;
}

@ObjectType({
  description:
    'Chi-square goodness of fit of the visitors per variant against the configured split (visitors enrolled under the current split). ' +
    '`warning` when p < 0.001: the assignment is not working as configured and the results should not be trusted.',
})
export class SampleRatioMismatch {
  @Field(() => Float) chiSquare!: number;
  @Field(() => Float) pValue!: number;
  @Field(() => Int) degreesOfFreedom!: number;
  @Field() warning!: boolean;
}

@ObjectType({ description: "One variant's results." })
export class ExperimentVariantResult {
  @Field(() => ID) variantId!: string;
  @Field() key!: string;
  @Field() name!: string;
  @Field(() => ID) offeringId!: string;
  @Field(() => Int) trafficPercent!: number;
  @Field() isControl!: boolean;
  @Field(() => Int, { description: 'Customers enrolled through resolve.' }) visitors!: number;
  @Field(() => Int, {
    description:
      'Visitors who, after enrolment, started a subscription that reached trialing or active, or paid a payment.',
  })
  conversions!: number;
  @Field(() => Float, { description: 'conversions / visitors (0 without visitors).' }) conversionRate!: number;
  @Field(() => Int, { description: 'Visitors who started a trial after enrolment.' }) trialStarts!: number;
  @Field(() => Money, { description: "Collected from the visitors after enrolment, in the results' currency." })
  revenue!: number;
  @Field(() => Money, { description: "The visitors' current MRR in the results' currency." }) mrr!: number;
  @Field(() => Float, {
    nullable: true,
    description: "P(this variant's conversion rate > the control's), exact; null for the control.",
  })
  chanceToWin!: number | null;
  @Field(() => MrrLiftResult, {
    nullable: true,
    description: 'Null for the control, and while an arm has fewer than 2 visitors.',
  })
  mrrLift!: MrrLiftResult | null;
  @Field() isWinner!: boolean;
}

@ObjectType({ description: "An experiment's results, shaped for a dashboard." })
export class ExperimentResults {
  @Field(() => ID) experimentId!: string;
  @Field() name!: string;
  @Field(() => ExperimentStatus) status!: ExperimentStatus;
  @Field(() => DateTime, { nullable: true }) startedAt!: Date | null;
  @Field(() => DateTime, { nullable: true }) stoppedAt!: Date | null;
  @Field({
    description: "The merchant's reporting currency: revenue and MRR count this currency only (no conversion).",
  })
  currency!: string;
  @Field(() => Int) totalVisitors!: number;
  @Field(() => ID, {
    nullable: true,
    description: `The treatment with chance to win >= ${WIN_PROBABILITY} and >= ${WIN_MIN_VISITORS} visitors in it and in the control (the likeliest, if several).`,
  })
  winnerVariantId!: string | null;
  @Field(() => SampleRatioMismatch) sampleRatioMismatch!: SampleRatioMismatch;
  @Field(() => [ExperimentVariantResult], { description: 'Ordered by variant id (the bucketing order).' })
  variants!: ExperimentVariantResult[];
}

const round = (x: number, places: number) => {
  const f = 10 ** places;
  return Math.round(x * f) / f;
};

/** Results from the database's counts: conversion rates, chance to win, MRR lift, the winner and the SRM check. */
export function buildResults(
  e: Experiment,
  variants: ExperimentVariant[],
  counts: VariantCounts[],
  currency: string,
): ExperimentResults {
  const byVariant = new Map(counts.map((c) => [c.variant_id, c]));
  const none: Omit<VariantCounts, 'variant_id'> = {
    visitors: 0,
    current_visitors: 0,
    conversions: 0,
    trial_starts: 0,
    revenue: 0,
    mrr: 0,
    mrr_mean: 0,
    mrr_variance: null,
  };
  const arms = variants.map((v) => ({ v, c: byVariant.get(v.id) ?? { ...none, variant_id: v.id } }));
  const control = arms.find((a) => a.v.isControl);
  const results = arms.map(({ v, c }) => {
    const r = Object.assign(new ExperimentVariantResult(), {
      variantId: v.id,
      key: v.key,
      name: v.name,
      offeringId: v.offeringId,
      trafficPercent: v.trafficPercent,
      isControl: v.isControl,
      visitors: c.visitors,
      conversions: c.conversions,
      conversionRate: c.visitors ? round(c.conversions / c.visitors, 6) : 0,
      trialStarts: c.trial_starts,
      revenue: c.revenue,
      mrr: c.mrr,
      chanceToWin: null as number | null,
      mrrLift: null as MrrLiftResult | null,
      isWinner: false,
    });
    if (!v.isControl && control) {
      const k = control.c;
      r.chanceToWin = round(chanceToWin(k, c), 6);
      const lift = mrrLift(
        { visitors: k.visitors, mean: k.mrr_mean, variance: k.mrr_variance ?? 0 },
        { visitors: c.visitors, mean: c.mrr_mean, variance: c.mrr_variance ?? 0 },
      );
      r.mrrLift =
        lift &&
        Object.assign(new MrrLiftResult(), {
          expected: round(lift.expected, 4),
          ciLow: round(lift.ciLow, 4),
          ciHigh: round(lift.ciHigh, 4),
        });
    }
    return r;
  });
  const controlVisitors = control?.c.visitors ?? 0;
  const winner = results
    .filter(
      (r) =>
        r.chanceToWin !== null &&
        r.chanceToWin >= WIN_PROBABILITY &&
        r.visitors >= WIN_MIN_VISITORS &&
        controlVisitors >= WIN_MIN_VISITORS,
    )
    .sort((a, b) => b.chanceToWin! - a.chanceToWin! || (a.variantId < b.variantId ? -1 : 1))[0];
  if (winner) winner.isWinner = true;
  const srm = sampleRatioMismatch(
    arms.map(({ v, c }) => ({ observed: c.current_visitors, percent: v.trafficPercent })),
  );
  return Object.assign(new ExperimentResults(), {
    experimentId: e.id,
    name: e.name,
    status: e.status,
    startedAt: e.startedAt ?? null,
    stoppedAt: e.stoppedAt ?? null,
    currency,
    totalVisitors: results.reduce((n, r) => n + r.visitors, 0),
    winnerVariantId: winner?.variantId ?? null,
    sampleRatioMismatch: Object.assign(new SampleRatioMismatch(), {
      chiSquare: round(srm.chiSquare, 6),
      pValue: srm.pValue,
      degreesOfFreedom: srm.degreesOfFreedom,
      warning: srm.warning,
    }),
    variants: results,
  });
}
