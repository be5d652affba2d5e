import { ArrayMaxSize, ArrayMinSize, IsOptional, MaxLength, ValidateNested } from 'class-validator';
import { Field, Float, ID, InputType } from 'type-graphql';
import { DateTime, JSONObject } from '../../core/scalars';
import { EVENT_TYPE, MAX_EVENT_TYPE } from '../catalog';

/** Metric names follow the catalog's rule: a usage rate names the metric it prices. */
export { EVENT_TYPE, MAX_EVENT_TYPE };
/** Units are free text (`GB-hours`, `API calls`): 1 to 50 characters, not blank, no control characters. */
export const MAX_UNIT = 50;
/** The largest quantity one event may carry (sums are unbounded `numeric`). */
export const MAX_QUANTITY = 1e15;
/** Digits after the decimal point one quantity may have (its shortest decimal form). */
export const MAX_FRACTION_DIGITS = 12;
/** Events one batch may carry. */
export const MAX_BATCH = 1000;
export const MAX_KEY = 255;

@InputType({ description: 'One usage event: quantity of event_type consumed by a subscription.' })
export class ReportUsageInput {
  @Field(() => ID, { description: 'The subscription to attribute usage to: active, trialing, past_due or paused.' })
  subscriptionId!: string;

  @Field({ description: `The metric: 1 to ${MAX_EVENT_TYPE} letters, digits, "_", ".", ":" or "-".` })
  @MaxLength(MAX_EVENT_TYPE)
  eventType!: string;

  @Field(() => Float, {
    description: `Units consumed: finite, 0 to ${MAX_QUANTITY}, at most ${MAX_FRACTION_DIGITS} decimal places; summed exactly (PostgreSQL numeric).`,
  })
  quantity!: number;

  @Field({
    description: `The unit (1 to ${MAX_UNIT} characters). One subscription's event type keeps the unit of its first event.`,
  })
  @MaxLength(MAX_UNIT)
  unit!: string;

  @Field(() => JSONObject, {
    nullable: true,
    description: 'At most 50 keys of up to 40 characters, string values up to 500 characters.',
  })
  metadata?: Record<string, unknown> | null;

  @Field(() => DateTime, {
    nullable: true,
    description:
      "When it happened; default: now on the merchant's clock (the test clock in test mode). At most 5 minutes ahead, and inside one of the subscription's billing periods.",
  })
  timestamp?: Date | null;

  @Field(() => String, {
    nullable: true,
    description: `1 to ${MAX_KEY} printable ASCII characters, unique per merchant and mode: an event reported again with a key already used is not counted again; the answer is the first event.`,
  })
  @IsOptional()
  @MaxLength(MAX_KEY)
  idempotencyKey?: string | null;
}

/** The limits are declared here; the service checks them (the batch argument skips class-validator: usage.resolver.ts). */
@InputType({ description: `Up to ${MAX_BATCH} usage events, stored all or nothing.` })
export class ReportUsageBatchInput {
  @Field(() => [ReportUsageInput], {
    description: `1 to ${MAX_BATCH} events; one invalid event refuses the whole batch (param events[i].field).`,
  })
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BATCH)
  @ValidateNested({ each: true })
  events!: ReportUsageInput[];
}
