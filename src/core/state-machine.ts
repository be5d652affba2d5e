/**
 * A lifecycle as one declarative table, in the manner of Vendure's order state machine: the states, the transitions
 * (a named event moves the subject from one of some states to one state) and the hooks (side effects a transition
 * declares, such as the outbound event it records). A move the table does not list is refused with the error the
 * table declares, so each module keeps its own error codes and messages. Pure: the subject, its state field and the
 * side effects are the module's, reached through the context given to `apply`.
 */

/** One move as it happens: the state it left, the state it reached, the event, and the table's row for it. */
export interface Move<S extends string, E extends string, T> {
  readonly from: S;
  readonly to: S;
  readonly on: E;
  readonly transition: T;
}

/**
 * A side effect of a move, run once the subject's state has changed. Hooks run in the order declared; one that answers
 * a promise is awaited before the next runs (the machine's `R` says which kind its hooks are).
 */
export type Hook<C, M, R extends HookResult = void> = (ctx: C, move: M) => R | void;
export type HookResult = void | Promise<void>;

/** A row of the table: `on` moves a subject in any of `from` to `to`. Modules add their own columns. */
export interface Transition<S extends string, E extends string> {
  readonly on: E;
  readonly from: readonly S[];
  readonly to: S;
}

/** A row with the hooks it declares. */
export type Row<S extends string, E extends string, T extends Transition<S, E>, C, R extends HookResult> = T & {
  readonly hooks?: readonly Hook<C, Move<S, E, T>, R>[];
};

export interface MachineSpec<S extends string, E extends string, T extends Transition<S, E>, C, R extends HookResult> {
  /** Every state. A row from or to a state not listed here is refused when the machine is defined. */
  readonly states: readonly S[];
  readonly transitions: readonly Row<S, E, T, C, R>[];
  /** The error a move the table does not list is refused with (or one `allow` turns down): the module's own. */
  readonly refused: (from: S, on: E) => Error;
  /** The subject's state, read and written through the machine only. Needed by `apply`. */
  readonly state?: { get(ctx: C): S; set(ctx: C, to: S): void };
  /** Hooks of every move, run before the row's own. */
  readonly onTransition?: readonly Hook<C, Move<S, E, T>, R>[];
}

/** What `apply` answers: the move, or a promise of it for a machine whose hooks are asynchronous. */
export type Applied<M, R extends HookResult> = R extends Promise<void> ? Promise<M> : M;

export class StateMachine<
  S extends string,
  E extends string,
  T extends Transition<S, E>,
  C = void,
  R extends HookResult = void,
> {
  readonly states: readonly S[];
  private readonly rows = new Map<string, Row<S, E, T, C, R>>();

  constructor(private readonly spec: MachineSpec<S, E, T, C, R>) {
    this.states = spec.states;
    const known = new Set<string>(spec.states);
    if (known.size !== spec.states.length) throw new Error('state machine: a state is listed twice');
    for (const row of spec.transitions) {
      for (const s of [...row.from, row.to]) {
        if (!known.has(s)) throw new Error(`state machine: '${row.on}' names the undeclared state '${s}'`);
      }
      if (!row.from.length) throw new Error(`state machine: '${row.on}' moves from no state`);
      for (const from of row.from) {
        const key = this.key(from, row.on);
        // One row per (state, event): which move an event makes is never a matter of order in the table.
        if (this.rows.has(key)) throw new Error(`state machine: '${row.on}' from '${from}' is listed twice`);
        this.rows.set(key, row);
      }
    }
  }

  /** The row `on` moves by from `from`, or null when the table has none. */
  find(from: S, on: E): Row<S, E, T, C, R> | null {
    return this.rows.get(this.key(from, on)) ?? null;
  }

  can(from: S, on: E): boolean {
    return this.rows.has(this.key(from, on));
  }

  /** The row `on` moves by from `from`; otherwise (or when `allow` turns it down) the table's refusal is thrown. */
  check(from: S, on: E, allow?: (t: T) => boolean): Row<S, E, T, C, R> {
    const row = this.find(from, on);
    if (!row || (allow && !allow(row))) throw this.spec.refused(from, on);
    return row;
  }

  /**
   * Moves the subject of `ctx` by `on`: checked against the table (the refusal thrown, nothing changed), the state
   * set, then the machine's hooks and the row's, in order. Answers the move (a promise of it when hooks are async).
   */
  apply(ctx: C, on: E, allow?: (t: T) => boolean): Applied<Move<S, E, T>, R> {
    const state = this.spec.state;
    if (!state) throw new Error('state machine: apply needs the table to say how the state is read and written');
    const from = state.get(ctx);
    const row = this.check(from, on, allow);
    state.set(ctx, row.to);
    const move: Move<S, E, T> = { from, to: row.to, on, transition: row };
    const hooks = [...(this.spec.onTransition ?? []), ...(row.hooks ?? [])];
    return runInOrder(hooks, ctx, move) as Applied<Move<S, E, T>, R>;
  }

  /** The states `on` moves from. */
  sources(on: E): S[] {
    return this.states.filter((s) => this.can(s, on));
  }

  /** The states `on` moves to. */
  targets(on: E): S[] {
    return [...new Set(this.spec.transitions.filter((t) => t.on === on).map((t) => t.to))];
  }

  /** The events the table lists from `from`. */
  events(from: S): E[] {
    return this.spec.transitions.filter((t) => t.from.includes(from)).map((t) => t.on);
  }

  /** A state no event leaves. */
  isTerminal(state: S): boolean {
    return !this.spec.transitions.some((t) => t.from.includes(state));
  }

  private key(from: S, on: E): string {
    return `${from}\u0000${on}`;
  }
}

export function defineMachine<
  S extends string,
  E extends string,
  T extends Transition<S, E>,
  C = void,
  R extends HookResult = void,
>(spec: MachineSpec<S, E, T, C, R>): StateMachine<S, E, T, C, R> {
  return new StateMachine(spec);
}

/** Runs `hooks` one after the other; from the first that answers a promise on, each waits for the one before. */
function runInOrder<C, M>(hooks: readonly Hook<C, M, HookResult>[], ctx: C, move: M): M | Promise<M> {
  for (let i = 0; i < hooks.length; i++) {
    const result = hooks[i](ctx, move);
    if (result && typeof (result as Promise<void>).then === 'function') {
      return (async () => {
        await result;
        for (const hook of hooks.slice(i + 1)) await hook(ctx, move);
        return move;
      })();
    }
  }
  return move;
}
