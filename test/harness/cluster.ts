import { spawn, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { eventually } from './wait';

const MAIN = path.join(__dirname, '..', '..', 'dist', 'src', 'main.js'); // built by `npm test`

/** The JSON log lines and the rest of what a process group writes to its shared stdout. */
export class GroupOutput {
  text = '';
  lines: Record<string, unknown>[] = [];
  private partial = '';

  add(chunk: string) {
    this.text += chunk;
    const parts = (this.partial + chunk).split('\n');
    this.partial = parts.pop()!;
    for (const p of parts) {
      if (!p.startsWith('{')) continue;
      try {
        this.lines.push(JSON.parse(p));
      } catch {
        /* not a log line */
      }
    }
  }

  /** The pid of the process whose request log line carries `requestId`. */
  servedBy(requestId: string): number | undefined {
    return this.lines.find((l) => l.msg === 'request' && l.request_id === requestId)?.pid as number | undefined;
  }
}

/**
 * A request on a connection of its own (the cluster hands each new connection to the next API process): its status,
 * body text and Request-Id.
 */
export function freshRequest(
  url: string,
  opts: { method?: string; token?: string } = {},
): Promise<{ status: number; text: string; requestId: string }> {
  return new Promise((resolve, reject) => {
    const headers = opts.token ? { authorization: `Bearer ${opts.token}` } : undefined;
    http
      .request(url, { agent: false, method: opts.method ?? 'GET', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text, requestId: String(res.headers['request-id']) }));
      })
      .on('error', reject)
      .end();
  });
}

export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** `npm start` with API_PROCESSES=2: a supervisor and two API processes on one port. */
export interface ProcessGroup {
  child: ChildProcess;
  exited: Promise<number | null>;
  out: GroupOutput;
  url: string;
  supervisor: number;
  apiPids: number[];
  /** Kills whatever is left of the group and removes its data folder. */
  kill(): Promise<void>;
}

/** Starts the service as a supervisor with two API processes on `env` (DATABASE_URL and the rest) and a fresh DATA_DIR. */
export async function startProcessGroup(env: NodeJS.ProcessEnv): Promise<ProcessGroup> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-cluster-'));
  const full: NodeJS.ProcessEnv = {
    ...process.env,
    API_PROCESSES: '2',
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info', // each request's log line names the process that served it
    ...env,
  };
  delete full.NODE_ENV; // as users run it
  const child = spawn(process.execPath, [MAIN], { env: full, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = new GroupOutput();
  child.stdout!.setEncoding('utf8').on('data', (d: string) => out.add(d));
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const group: ProcessGroup = {
    child,
    exited,
    out,
    url: '',
    supervisor: 0,
    apiPids: [],
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      for (const pid of group.apiPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    const banner = await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${err}`);
        return /Cadence is running at (\S+)[\s\S]*Processes +2 API processes \(pids (\d+), (\d+)\) under supervisor (\d+)/.exec(
          out.text,
        );
      },
      40_000,
      'the banner',
    );
    group.url = banner[1];
    group.apiPids = [Number(banner[2]), Number(banner[3])];
    group.supervisor = Number(banner[4]);
  } catch (e) {
    await group.kill();
    throw e;
  }
  return group;
}
