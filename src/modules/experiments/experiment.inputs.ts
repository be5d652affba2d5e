import { ArrayMaxSize, IsOptional, Length, MaxLength, ValidateNested } from 'class-validator';
import { Field, ID, InputType, Int } from 'type-graphql';
import { JSONObject } from '../../core/scalars';

/** Most variants an experiment can have. */
export const MAX_VARIANTS = 20;

@InputType()
export class ExperimentVariantInput {
  @Field({ description: 'Unique in the experiment: letters, digits, "_", "-" and ".", up to 64 characters.' })
  @MaxLength(64)
  key!: string;
  @Field(() => String, { nullable: true, description: 'Default: the key.' }) @IsOptional() @MaxLength(255) name?:
    string | null;
  @Field(() => ID, { description: 'The offering shown to customers bucketed here.' })
  @MaxLength(64)
  offeringId!: string;
  @Field(() => Int, { description: 'Whole percent, 0 to 100; the variants sum to 100.' }) trafficPercent!: number;
  @Field(() => Boolean, { nullable: true, description: 'Exactly one variant is the control. Default false.' })
  isControl?: boolean | null;
}

@InputType()
export class CreateExperimentInput {
  @Field() @Length(1, 255) name!: string;
  @Field(() => JSONObject, {
    nullable: true,
    description:
      'Conditions on resolve attributes: {"country": "IN", "platform": ["ios", "android"]}. Default {}: everyone.',
  })
  targeting?: Record<string, unknown> | null;
  @Field(() => [ExperimentVariantInput], { description: `2 to ${MAX_VARIANTS} variants.` })
  @ArrayMaxSize(MAX_VARIANTS)
  @ValidateNested({ each: true })
  variants!: ExperimentVariantInput[];
}

@InputType()
export class UpdateExperimentVariantInput {
  @Field({ description: 'Which variant (keys do not change).' }) @MaxLength(64) key!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) name?: string | null;
  @Field(() => ID, { nullable: true, description: 'Only while the experiment is a draft.' })
  @IsOptional()
  @MaxLength(64)
  offeringId?: string | null;
  @Field(() => Int, { nullable: true }) trafficPercent?: number | null;
}

@InputType()
export class UpdateExperimentInput {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 255) name?: string | null;
  @Field(() => JSONObject, { nullable: true, description: 'Replaces the targeting; {} targets everyone.' })
  targeting?: Record<string, unknown> | null;
  @Field(() => [UpdateExperimentVariantInput], {
    nullable: true,
    description: 'Changes of the variants named by key; the others stay. The split must still sum to 100.',
  })
  @IsOptional()
  @ArrayMaxSize(MAX_VARIANTS)
  @ValidateNested({ each: true })
  variants?: UpdateExperimentVariantInput[] | null;
}
