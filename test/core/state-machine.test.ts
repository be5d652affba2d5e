import { defineMachine, Move, Transition } from '../../src/core/state-machine';

/** The lifecycle helper on its own: a small door, its table, its refusals and its hooks. */

type State = 'closed' | 'open' | 'locked' | 'gone';
type Event = 'open' | 'close' | 'lock' | 'unlock' | 'remove';

interface DoorRow extends Transition<State, Event> {
  /** Who may do it (a module's own column). */
  by: readonly string[];
}

class Refused extends Error {
  constructor(
    readonly from: string,
    readonly on: string,
  ) {
    super(`Cannot ${on} a door that is ${from}.`);
  }
}

interface Door {
  status: State;
  log: string[];
}

const note = (what: string) => (d: Door, m: Move<State, Event, DoorRow>) => {
  d.log.push(`${what}:${m.from}>${m.to}`);
};

function door() {
  return defineMachine<State, Event, DoorRow, Door>({
    states: ['closed', 'open', 'locked', 'gone'],
    transitions: [
      { on: 'open', from: ['closed'], to: 'open', by: ['anyone'], hooks: [note('creak'), note('draught')] },
      { on: 'close', from: ['open'], to: 'closed', by: ['anyone'] },
      { on: 'lock', from: ['closed'], to: 'locked', by: ['owner'], hooks: [note('click')] },
      { on: 'unlock', from: ['locked'], to: 'closed', by: ['owner'] },
      { on: 'remove', from: ['closed', 'open', 'locked'], to: 'gone', by: ['owner'] },
    ],
    refused: (from, on) => new Refused(from, on),
    state: { get: (d) => d.status, set: (d, to) => void (d.status = to) },
    onTransition: [note('moved')],
  });
}

describe('state machine', () => {
  it('looks moves up in the table', () => {
    const m = door();
    expect(m.find('closed', 'open')).toMatchObject({ to: 'open', by: ['anyone'] });
    expect(m.find('open', 'lock')).toBeNull();
    expect(m.can('locked', 'unlock')).toBe(true);
    expect(m.sources('remove')).toEqual(['closed', 'open', 'locked']);
    expect(m.targets('unlock')).toEqual(['closed']);
    expect(m.events('closed')).toEqual(['open', 'lock', 'remove']);
    expect(m.isTerminal('gone')).toBe(true);
    expect(m.isTerminal('locked')).toBe(false);
  });

  it('applies an allowed move: the state changes and the move is answered', () => {
    const d: Door = { status: 'closed', log: [] };
    const move = door().apply(d, 'lock');
    expect(d.status).toBe('locked');
    expect(move).toMatchObject({ from: 'closed', to: 'locked', on: 'lock', transition: { by: ['owner'] } });
  });

  it("refuses a move the table does not list with the table's own error, changing nothing", () => {
    const d: Door = { status: 'open', log: [] };
    let err: unknown;
    try {
      door().apply(d, 'lock');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Refused);
    expect((err as Error).message).toBe('Cannot lock a door that is open.');
    expect(d).toEqual({ status: 'open', log: [] });
    expect(() => door().check('gone', 'open')).toThrow(Refused);
  });

  it('refuses a listed move that `allow` turns down, with the same error', () => {
    const m = door();
    const d: Door = { status: 'closed', log: [] };
    expect(() => m.apply(d, 'lock', (t) => t.by.includes('anyone'))).toThrow('Cannot lock a door that is closed.');
    expect(d.status).toBe('closed');
    expect(m.check('closed', 'lock', (t) => t.by.includes('owner')).to).toBe('locked');
  });

  it("runs the machine's hooks, then the row's, in order, after the state changed", () => {
    const d: Door = { status: 'closed', log: [] };
    const seen: State[] = [];
    const m = defineMachine<State, Event, DoorRow, Door>({
      states: ['closed', 'open', 'locked', 'gone'],
      transitions: [
        {
          on: 'open',
          from: ['closed'],
          to: 'open',
          by: [],
          hooks: [(x) => void seen.push(x.status), note('creak'), note('draught')],
        },
      ],
      refused: (from, on) => new Refused(from, on),
      state: { get: (x) => x.status, set: (x, to) => void (x.status = to) },
      onTransition: [note('moved')],
    });
    m.apply(d, 'open');
    expect(seen).toEqual(['open']);
    expect(d.log).toEqual(['moved:closed>open', 'creak:closed>open', 'draught:closed>open']);
  });

  it('waits for each asynchronous hook before the next one runs', async () => {
    const log: string[] = [];
    const later = (what: string, ms: number) => async () => {
      await new Promise((r) => setTimeout(r, ms));
      log.push(what);
    };
    const m = defineMachine<State, Event, DoorRow, Door, Promise<void>>({
      states: ['closed', 'open', 'locked', 'gone'],
      transitions: [{ on: 'open', from: ['closed'], to: 'open', by: [], hooks: [later('slow', 20), later('fast', 0)] }],
      refused: (from, on) => new Refused(from, on),
      state: { get: (x) => x.status, set: (x, to) => void (x.status = to) },
      onTransition: [later('first', 5)],
    });
    const d: Door = { status: 'closed', log: [] };
    const move = await m.apply(d, 'open');
    expect(move.to).toBe('open');
    expect(log).toEqual(['first', 'slow', 'fast']);
  });

  it('refuses, when defined, a table naming an undeclared state', () => {
    const define = (transitions: DoorRow[]) => () =>
      defineMachine<State, Event, DoorRow, Door>({
        states: ['closed', 'open'],
        transitions,
        refused: (f, o) => new Refused(f, o),
      });
    expect(define([{ on: 'lock', from: ['closed'], to: 'locked', by: [] }])).toThrow(
      "'lock' names the undeclared state 'locked'",
    );
    expect(define([{ on: 'unlock', from: ['locked'], to: 'closed', by: [] }])).toThrow(
      "'unlock' names the undeclared state 'locked'",
    );
  });

  it('refuses, when defined, a table with two moves for one state and event, or a move from no state', () => {
    const define = (transitions: DoorRow[]) => () =>
      defineMachine<State, Event, DoorRow, Door>({
        states: ['closed', 'open', 'gone'],
        transitions,
        refused: (f, o) => new Refused(f, o),
      });
    expect(
      define([
        { on: 'remove', from: ['closed', 'open'], to: 'gone', by: [] },
        { on: 'remove', from: ['open'], to: 'closed', by: [] },
      ]),
    ).toThrow("'remove' from 'open' is listed twice");
    expect(define([{ on: 'open', from: [], to: 'open', by: [] }])).toThrow("'open' moves from no state");
  });
});
