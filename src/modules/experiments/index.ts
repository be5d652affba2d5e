/**
 * A/B tests of offerings: targeting, bucketing, enrolment and results.
 * The module's public surface: other modules import it only through this file.
 */
export { Experiment, ExperimentEnrolment, ExperimentVariant } from './experiment.entities';
export { experimentResolvers } from './experiment.resolver';
export { ExperimentService } from './experiment.service';
export { validateAttributes } from './experiment.targeting';
