import { Field, Float, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DateTime, Money } from '../../core/scalars';
import { AnalyticsInterval } from './analytics.window';

registerEnumType(AnalyticsInterval, {
  name: 'AnalyticsInterval',
  description:
    'Bucket size of an analytics series: calendar months (from the 1st, 00:00 UTC) or weeks (from Monday, 00:00 UTC).',
});

/**
 * The answers of the MRR, churn, LTV and quick ratio analytics (docs/analytics.md), shaped for charts:
 * every series point carries its own bounds. Amounts are integer subunits of `currency` (never converted,
 * docs/analytics.md); rates are fractions (0.05 for 5%). REST serves the same objects in snake_case.
 */

@ObjectType({
  description: 'MRR moved in a window by kind (subunits; contraction and churn as positive amounts lost).',
})
export class MrrMovements {
  @Field(() => Money) new!: number;
  @Field(() => Money) expansion!: number;
  @Field(() => Money) contraction!: number;
  @Field(() => Money) churn!: number;
  @Field(() => Money) reactivation!: number;
  @Field(() => Money, { description: 'new + expansion + reactivation - contraction - churn' }) netNew!: number;
}

@ObjectType({
  description: 'One bucket of the MRR series: (periodStart, periodEnd], MRR at its end and what moved inside it.',
})
export class MrrSeriesPoint {
  @Field(() => DateTime) periodStart!: Date;
  @Field(() => DateTime) periodEnd!: Date;
  @Field(() => Money, { description: 'MRR at periodEnd.' }) mrr!: number;
  @Field(() => Money) new!: number;
  @Field(() => Money) expansion!: number;
  @Field(() => Money) contraction!: number;
  @Field(() => Money) churn!: number;
  @Field(() => Money) reactivation!: number;
}

@ObjectType({ description: "MRR at `asOf` (the window's end) and its movements over the window." })
export class MrrAnalytics {
  @Field() currency!: string;
  @Field(() => DateTime) from!: Date;
  @Field(() => DateTime) asOf!: Date;
  @Field(() => AnalyticsInterval) interval!: AnalyticsInterval;
  @Field(() => Money) mrr!: number;
  @Field(() => Money, { description: '12 x mrr' }) arr!: number;
  @Field(() => Int, { description: 'Subscriptions counted in MRR (active or past_due) at asOf.' })
  activeSubscriptions!: number;
  @Field(() => Int, { description: 'Customers with a subscription counted in MRR in this currency at asOf.' })
  payingCustomers!: number;
  @Field(() => Money, { description: 'round(mrr / payingCustomers), half away from zero; 0 when there are none.' })
  arpu!: number;
  @Field(() => MrrMovements) movements!: MrrMovements;
  @Field(() => [MrrSeriesPoint]) series!: MrrSeriesPoint[];
}

@ObjectType({ description: 'Churn within one bucket of the window: its start state, and what was lost inside it.' })
export class ChurnSeriesPoint {
  @Field(() => DateTime) periodStart!: Date;
  @Field(() => DateTime) periodEnd!: Date;
  @Field(() => Int) subscriptionsAtStart!: number;
  @Field(() => Int) churnedSubscriptions!: number;
  @Field(() => Float, { nullable: true }) logoChurnRate!: number | null;
  @Field(() => Money) mrrAtStart!: number;
  @Field(() => Money) churnedMrr!: number;
  @Field(() => Money) contractionMrr!: number;
  @Field(() => Float, { nullable: true }) revenueChurnRate!: number | null;
}

@ObjectType({
  description:
    'Logo churn = churned subscriptions / subscriptions counted at `from`; revenue churn = (churned + contraction MRR) / MRR at `from`. A rate is 0 when nothing was there and nothing was lost, null when something was lost from nothing (undefined).',
})
export class ChurnAnalytics {
  @Field() currency!: string;
  @Field(() => DateTime) from!: Date;
  @Field(() => DateTime) to!: Date;
  @Field(() => Int) subscriptionsAtStart!: number;
  @Field(() => Int) churnedSubscriptions!: number;
  @Field(() => Float, { nullable: true }) logoChurnRate!: number | null;
  @Field(() => Money) mrrAtStart!: number;
  @Field(() => Money) churnedMrr!: number;
  @Field(() => Money) contractionMrr!: number;
  @Field(() => Float, { nullable: true }) revenueChurnRate!: number | null;
  @Field(() => AnalyticsInterval) interval!: AnalyticsInterval;
  @Field(() => [ChurnSeriesPoint], { description: 'The same figures per bucket of `interval`.' })
  series!: ChurnSeriesPoint[];
}

@ObjectType({
  description:
    "LTV = ARPU / monthly logo churn rate, the rate being the logo churn over (from, to] scaled to 30 days (x 30 days / the window's length; by default the 90 days ending at the merchant's now, so x 30 / 90); ltv and expectedLifetimeMonths are null when that rate is 0 (or undefined).",
})
export class LtvAnalytics {
  @Field() currency!: string;
  @Field(() => DateTime, { description: 'The start of the churn window (default: `to` less 90 days).' }) from!: Date;
  @Field(() => DateTime, {
    description: "The end of the churn window (default: the merchant's now); ARPU is read here.",
  })
  to!: Date;
  @Field(() => DateTime, { description: 'The same instant as `to`.' }) asOf!: Date;
  @Field(() => Money) arpu!: number;
  @Field(() => Float, { nullable: true }) monthlyLogoChurnRate!: number | null;
  @Field(() => Money, {
    nullable: true,
    description: 'MRR / paying customers / monthly churn rate, rounded once, half away from zero.',
  })
  ltv!: number | null;
  @Field(() => Float, { nullable: true, description: '1 / monthlyLogoChurnRate' }) expectedLifetimeMonths!:
    number | null;
}

@ObjectType({ description: 'Quick ratio within one bucket of the window.' })
export class QuickRatioSeriesPoint {
  @Field(() => DateTime) periodStart!: Date;
  @Field(() => DateTime) periodEnd!: Date;
  @Field(() => Money) newMrr!: number;
  @Field(() => Money) expansionMrr!: number;
  @Field(() => Money) contractionMrr!: number;
  @Field(() => Money) churnMrr!: number;
  @Field(() => Float, { nullable: true }) quickRatio!: number | null;
  @Field({ description: 'quickRatio > 4; false when quickRatio is null (nothing lost).' }) healthy!: boolean;
}

@ObjectType({
  description:
    'Quick ratio = (new + expansion MRR) / (contraction + churn MRR), null when nothing was lost; healthy when the ratio is above 4 (false when it is null).',
})
export class QuickRatioAnalytics {
  @Field() currency!: string;
  @Field(() => DateTime) from!: Date;
  @Field(() => DateTime) to!: Date;
  @Field(() => Money) newMrr!: number;
  @Field(() => Money) expansionMrr!: number;
  @Field(() => Money) contractionMrr!: number;
  @Field(() => Money) churnMrr!: number;
  @Field(() => Float, { nullable: true }) quickRatio!: number | null;
  @Field({ description: 'quickRatio > 4; false when quickRatio is null (nothing lost).' }) healthy!: boolean;
  @Field(() => AnalyticsInterval) interval!: AnalyticsInterval;
  @Field(() => [QuickRatioSeriesPoint], { description: 'The same figures per bucket of `interval`.' })
  series!: QuickRatioSeriesPoint[];
}
