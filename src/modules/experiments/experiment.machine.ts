import { DomainError } from '../../core/errors';
import { defineMachine, Transition } from '../../core/state-machine';
import { Experiment, ExperimentStatus } from './experiment.entities';

/**
 * An experiment's lifecycle as one table (src/core/state-machine.ts): draft -> running -> stopped, nothing else. A
 * command from any other state is refused with the command's own code, naming the state it needs.
 */

export type ExperimentEvent = 'start' | 'stop';

export interface ExperimentMoveContext {
  readonly experiment: Experiment;
  /** Merchant time. */
  readonly now: Date;
}

const E = ExperimentStatus;

const REFUSAL: Record<
  ExperimentEvent,
  { code: 'experiment_not_draft' | 'experiment_not_running'; needs: ExperimentStatus }
> = {
  start: { code: 'experiment_not_draft', needs: E.DRAFT },
  stop: { code: 'experiment_not_running', needs: E.RUNNING },
};

export const EXPERIMENTS = defineMachine<
  ExperimentStatus,
  ExperimentEvent,
  Transition<ExperimentStatus, ExperimentEvent>,
  ExperimentMoveContext
>({
  states: Object.values(E),
  transitions: [
    {
      on: 'start',
      from: [E.DRAFT],
      to: E.RUNNING,
      hooks: [({ experiment, now }) => void (experiment.startedAt = now)],
    },
    {
      on: 'stop',
      from: [E.RUNNING],
      to: E.STOPPED,
      hooks: [({ experiment, now }) => void (experiment.stoppedAt = now)],
    },
  ],
  refused: (from, on) => {
    const { code, needs } = REFUSAL[on];
    return new DomainError(code, `Cannot ${on} an experiment that is ${from}: only a ${needs} experiment can ${on}.`);
  },
  state: {
    get: (c) => c.experiment.status,
    set: (c, to) => {
      c.experiment.status = to;
    },
  },
});
