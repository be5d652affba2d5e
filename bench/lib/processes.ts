import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';

/**
 * Child processes of the bench and their cleanup. Each child runs in its own process group (detached), so the
 * group can be killed as a whole: the service's embedded PostgreSQL is a grandchild and must not outlive it.
 * Whatever happens (error, Ctrl-C, uncaught exception), `runCleanup` stops what was started, newest first, and
 * a last synchronous `exit` hook SIGKILLs any group still alive.
 */

type CleanupFn = () => Promise<void> | void;
const cleanups: { label: string; fn: CleanupFn }[] = [];
const liveGroups = new Set<number>();
let cleaning: Promise<void> | undefined;

export function onCleanup(label: string, fn: CleanupFn): void {
  cleanups.push({ label, fn });
}

export function runCleanup(): Promise<void> {
  cleaning ??= (async () => {
    while (cleanups.length) {
      const { label, fn } = cleanups.pop()!;
      try {
        await fn();
      } catch (err) {
        process.stderr.write(`bench: cleanup "${label}" failed: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
  })();
  return cleaning;
}

process.on('exit', () => {
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

/**
 * What the bench measures of a child (CPU, RSS): its own process, or with `group` every process of its process group
 * summed (the service with BENCH_API_PROCESSES > 1: the supervisor and its API processes).
 */
export interface Measured {
  pid: number;
  group: boolean;
}

export interface Child extends Measured {
  name: string;
  process: ChildProcess;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<string>;
  hasExited(): boolean;
  /** The last lines the process wrote (stdout and stderr interleaved). */
  tail(lines?: number): string;
  /** SIGTERM, then after `graceMs` SIGKILL to the whole process group; resolves when nothing of it is left. */
  stop(graceMs?: number): Promise<void>;
}

const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
  opts: { group?: boolean } = {},
): Child {
  const log = fs.openSync(logFile, 'a');
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', log, log], detached: true });
  fs.closeSync(log);
  if (proc.pid === undefined) throw new Error(`could not start ${name}`);
  const pid = proc.pid;
  liveGroups.add(pid);
  let done = false;
  const exited = new Promise<string>((resolve) => {
    proc.once('exit', (code, signal) => {
      done = true;
      resolve(signal ?? String(code));
    });
    proc.once('error', (err) => {
      done = true;
      resolve(`spawn error: ${err.message}`);
    });
  });
  let stopping: Promise<void> | undefined;
  const child: Child = {
    name,
    pid,
    group: opts.group ?? false,
    process: proc,
    exited,
    hasExited: () => done,
    tail(lines = 40) {
      try {
        return fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      } catch {
        return '';
      }
    },
    stop(graceMs = 20_000) {
      stopping ??= (async () => {
        const started = Date.now();
        if (!done) {
          try {
            proc.kill('SIGTERM');
          } catch {
            /* gone */
          }
          await Promise.race([exited, sleep(graceMs)]);
        }
        // Anything left in the group (the process itself after the grace period, or an orphaned grandchild).
        if (groupAlive(pid)) {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {
            /* gone */
          }
          for (let i = 0; i < 50 && groupAlive(pid); i++) await sleep(100);
        }
        liveGroups.delete(pid);
        const ms = Date.now() - started;
        if (ms > 3_000) process.stderr.write(`bench: ${name} took ${(ms / 1000).toFixed(1)}s to stop\n`);
      })();
      return stopping;
    },
  };
  onCleanup(`stop ${name}`, () => child.stop());
  return child;
}

export { freePort } from '../../src/core/embedded-postgres';

/** Polls `url` until it answers 200; fails early when the child exits, and after `timeoutMs`. */
export async function waitForHttp(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child.hasExited()) {
      throw new Error(
        `${child.name} exited (${await child.exited}) before ${url} answered.\n--- ${child.name} output ---\n${child.tail()}`,
      );
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(200);
  }
  throw new Error(
    `${url} did not answer 200 within ${timeoutMs / 1000}s (last: ${last}).\n--- ${child.name} output ---\n${child.tail()}`,
  );
}

/** Polls the child's output until it matches `pattern`; fails early when the child exits, and after `timeoutMs`. */
export async function waitForOutput(child: Child, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(child.tail(Infinity))) {
    if (child.hasExited())
      throw new Error(`${child.name} exited (${await child.exited}).\n--- ${child.name} output ---\n${child.tail()}`);
    if (Date.now() > deadline)
      throw new Error(
        `${child.name} did not print ${pattern} within ${timeoutMs / 1000}s.\n--- ${child.name} output ---\n${child.tail()}`,
      );
    await sleep(200);
  }
}

let clockTicks: number | undefined;

/** CPU time (user + system, all threads) a process has used so far, in ms, or null when it cannot be read. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (clockTicks === undefined) {
      try {
        clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
      } catch {
        clockTicks = 100;
      }
    }
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return null;
  }
}

/** The processes in process group `pgid` now (the pgrp field of each /proc/<pid>/stat). */
export function groupPids(pgid: number): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [pgid];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name (which may hold spaces): state, ppid, pgrp.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) pids.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return pids;
}

const measuredPids = (m: Measured) => (m.group ? groupPids(m.pid) : [m.pid]);

/** `read` summed over the processes `m` stands for; null when none can be read. */
function sumOver(m: Measured, read: (pid: number) => number | null): number | null {
  let sum: number | null = null;
  for (const pid of measuredPids(m)) {
    const v = read(pid);
    if (v !== null) sum = (sum ?? 0) + v;
  }
  return sum;
}

/**
 * CPU time so far of what `m` stands for (its process or its whole group), in ms. Over a group, the difference of two
 * readings misses the CPU of a process that exited between them.
 */
export const cpuMsOf = (m: Measured): number | null => sumOver(m, cpuMs);

/** Resident set size of what `m` stands for (its process, or the sum over its group), in MB. */
export const rssMbOf = (m: Measured): number | null => sumOver(m, rssMb);

/** Busy CPU time of the whole machine so far (all CPUs, everything but idle and iowait), in ms, or null. */
export function machineBusyMs(): number | null {
  try {
    const first = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const [user, nice, system, , , irq, softirq, steal] = first.trim().split(/\s+/).slice(1).map(Number);
    cpuMs(process.pid); // sets clockTicks
    return ((user + nice + system + irq + softirq + (steal || 0)) * 1000) / (clockTicks ?? 100);
  } catch {
    return null;
  }
}

/** Resident set size of a process in MB (VmRSS in /proc/<pid>/status), or null when it cannot be read. */
export function rssMb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Samples the RSS of some children (each its process, or the sum over its group) every `intervalMs`. `peak()` is the
 * maximum since start; `mark()` starts a window whose maximum `peakSinceMark()` returns (one window per measured
 * scenario).
 */
export class RssSampler {
  private timer: NodeJS.Timeout;
  private overall = new Map<number, number>();
  private window = new Map<number, number>();

  constructor(
    private readonly children: Measured[],
    intervalMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  private sample() {
    for (const child of this.children) {
      const mb = rssMbOf(child);
      if (mb === null) continue;
      this.overall.set(child.pid, Math.max(this.overall.get(child.pid) ?? 0, mb));
      this.window.set(child.pid, Math.max(this.window.get(child.pid) ?? 0, mb));
    }
  }

  mark() {
    this.window.clear();
    this.sample();
  }

  peakSinceMark(child: Measured): number | null {
    this.sample();
    return this.window.get(child.pid) ?? null;
  }

  peak(child: Measured): number | null {
    this.sample();
    return this.overall.get(child.pid) ?? null;
  }

  stop() {
    clearInterval(this.timer);
  }
}

/**
 * Runs a bench's `main` as the process's whole life: its exit code is main's (1 when it throws or something escapes
 * it, 130 on a signal), and whatever was started is cleaned up first in every case. `note` writes progress to stderr.
 */
export function runBench(main: () => Promise<number>, note: (line: string) => void): void {
  let finishing = false;
  const finish = async (code: number): Promise<never> => {
    if (!finishing) {
      finishing = true;
      await runCleanup();
    }
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      note(`${signal}: stopping`);
      void finish(130);
    });
  }
  process.on('uncaughtException', (err) => {
    note(`uncaught: ${err.stack ?? err.message}`);
    void finish(1);
  });
  process.on('unhandledRejection', (err) => {
    note(`unhandled rejection: ${err instanceof Error ? err.stack : String(err)}`);
    void finish(1);
  });
  main().then(
    (code) => finish(code),
    (err) => {
      note(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      return finish(1);
    },
  );
}
