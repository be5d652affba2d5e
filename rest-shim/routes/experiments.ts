import type { Route } from '../routes';

const PAGE = 'pageInfo { hasNextPage endCursor }';
const EXPERIMENT = '...ExperimentFields variants { ...ExperimentVariantFields }';
const RESULTS = `...ExperimentResultsFields sampleRatioMismatch { ...SampleRatioMismatchFields }
  variants { ...ExperimentVariantResultFields mrrLift { ...MrrLiftResultFields } }`;
const TAG = 'Experiments';

/** Experiments (src/modules/experiments): create, list, read, edit, start, stop, results. */
export const EXPERIMENT_ROUTES: Route[] = [
  {
    method: 'post',
    path: '/experiments',
    tag: TAG,
    status: 201,
    summary:
      'Create a draft experiment: name, targeting, and 2+ variants (key, name, offering_id, whole traffic_percent summing to 100, exactly one is_control).',
    document: `mutation($input: CreateExperimentInput!) { createExperiment(input: $input) { ${EXPERIMENT} } }`,
  },
  {
    method: 'get',
    path: '/experiments',
    tag: TAG,
    summary: 'List experiments, newest first (filter: status).',
    document: `query($first: Int, $after: String, $status: ExperimentStatus) {
      experiments(first: $first, after: $after, status: $status) { edges { node { ${EXPERIMENT} } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/experiments/{id}',
    tag: TAG,
    summary: 'Retrieve an experiment with its variants.',
    document: `query($id: ID!) { experiment(id: $id) { ${EXPERIMENT} } }`,
  },
  {
    method: 'post',
    path: '/experiments/{id}',
    tag: TAG,
    conflicts: ['invalid_state_transition'],
    summary:
      "Edit a draft or running experiment: name, targeting, variants' names and traffic split (by key); offerings while draft. Enrolled customers keep their variant.",
    document: `mutation($id: ID!, $input: UpdateExperimentInput!) { updateExperiment(id: $id, input: $input) { ${EXPERIMENT} } }`,
  },
  {
    method: 'post',
    path: '/experiments/{id}/start',
    tag: TAG,
    conflicts: ['experiment_not_draft'],
    summary:
      'Start a draft experiment: resolve enrols matching customers from now on. Not a draft: 409 experiment_not_draft.',
    document: `mutation($id: ID!) { startExperiment(id: $id) { ${EXPERIMENT} } }`,
  },
  {
    method: 'post',
    path: '/experiments/{id}/stop',
    tag: TAG,
    conflicts: ['experiment_not_running'],
    summary:
      'Stop a running experiment: nobody is served it any more; its enrolments and results stay. Not running: 409 experiment_not_running.',
    document: `mutation($id: ID!) { stopExperiment(id: $id) { ${EXPERIMENT} } }`,
  },
  {
    method: 'get',
    path: '/experiments/{id}/results',
    tag: TAG,
    summary:
      'Per variant: visitors, conversions, trial starts, revenue, MRR, exact Bayesian chance to win, MRR lift (95% interval), winner; and a sample-ratio-mismatch check.',
    document: `query($id: ID!) { experimentResults(id: $id) { ${RESULTS} } }`,
  },
];
