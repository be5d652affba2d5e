import { Arg, Args, ArgsType, Ctx as C, Field, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { Experiment, ExperimentStatus, ExperimentVariant } from './experiment.entities';
import { CreateExperimentInput, UpdateExperimentInput } from './experiment.inputs';
import { ExperimentResults } from './experiment.results';
import { variantsByExperiment } from './experiment.service';

export const ExperimentConnection = ConnectionType(Experiment);

@ArgsType()
class ExperimentsArgs extends PageArgs {
  @Field(() => ExperimentStatus, { nullable: true }) status?: ExperimentStatus | null;
}

@Resolver(() => Experiment)
export class ExperimentResolver {
  @Query(() => Experiment)
  experiment(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).experiments.experiment(ctx, id);
  }

  @Query(() => ExperimentConnection, { description: 'Experiments, newest first (filter: status).' })
  experiments(@C() ctx: Ctx, @Args() args: ExperimentsArgs) {
    return services(ctx).experiments.experiments(ctx, args);
  }

  @Query(() => ExperimentResults, {
    description:
      'Per variant: visitors, conversions, trial starts, revenue, MRR, exact chance to win, MRR lift; the winner; the sample-ratio check.',
  })
  experimentResults(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).experiments.results(ctx, id);
  }

  @Mutation(() => Experiment, {
    description: 'Creates a draft experiment: 2+ variants, traffic summing to 100, exactly one control.',
  })
  createExperiment(@C() ctx: Ctx, @Arg('input') input: CreateExperimentInput) {
    return services(ctx).experiments.create(ctx, input);
  }

  @Mutation(() => Experiment, {
    description:
      "Edits a draft or running experiment (name, targeting, variants' names and split; offerings while draft). Enrolled customers keep their variant.",
  })
  updateExperiment(@C() ctx: Ctx, @Arg('id', () => ID) id: string, @Arg('input') input: UpdateExperimentInput) {
    return services(ctx).experiments.update(ctx, id, input);
  }

  @Mutation(() => Experiment, { description: 'draft -> running: resolve starts enrolling matching customers.' })
  startExperiment(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).experiments.start(ctx, id);
  }

  @Mutation(() => Experiment, { description: 'running -> stopped: nobody is served it any more; its results stay.' })
  stopExperiment(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).experiments.stop(ctx, id);
  }

  @FieldResolver(() => [ExperimentVariant], { description: 'Ordered by id (the bucketing order).' })
  variants(@C() ctx: Ctx, @Root() experiment: Experiment) {
    return variantsByExperiment(ctx).load(experiment.id);
  }
}

export const experimentResolvers = [ExperimentResolver] as const;
