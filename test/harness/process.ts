import { spawn, ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { freshDatabase } from './database';

const root = path.resolve(__dirname, '../..');

export interface ProcessServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Runs a TypeScript entry point (path from the repository root) in a plain Node process and resolves once its
 * stdout matches `ready`, with the match; rejects with its stderr if it exits or stays silent for 45 s.
 */
export function spawnTs(
  script: string,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(
    process.execPath,
    ['-r', path.join(root, 'test/harness/swc-register.js'), path.join(root, script)],
    {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not start: ${err.slice(-2000)}`));
    }, 45_000);
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const match = ready.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}): ${err.slice(-2000)}`));
    });
  });
}

/**
 * The service in a plain Node process on an existing (migrated) database: for what jest's VM cannot run, such as
 * the dynamic imports the GraphQL IDE's asset server relies on.
 */
export async function startProcessServer(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ProcessServer> {
  const { child, match } = await spawnTs(
    'test/harness/serve.ts',
    { WORKER: 'off', ...env, DATABASE_URL: databaseUrl },
    /LISTENING (\S+)/,
  );
  return {
    url: match[1],
    child,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** The gateway sandbox in a process of its own (its own database), so a test can freeze it mid-call. */
export interface SandboxProcess {
  url: string;
  child: ChildProcess;
  /** Runs `fn` with the sandbox stopped (SIGSTOP): the kernel still accepts its connections, nothing answers. */
  frozen<T>(fn: () => Promise<T>): Promise<T>;
  freeze(): void;
  thaw(): void;
  /** A sandbox object's `data` (a gateway payment, subscription, ...) read from its database; null when absent. */
  object(id: string): Promise<any>;
  /** Kills it (resumed first) and drops its database. */
  stop(): Promise<void>;
}

/** Starts the sandbox on a fresh database of its own and a port it picks itself (no race for a port). */
export async function startSandboxProcess(prefix: string): Promise<SandboxProcess> {
  const db = await freshDatabase(prefix);
  const { child, match } = await spawnTs(
    'src/sandbox-main.ts',
    { DATABASE_URL: db.url, SANDBOX_PORT: '0', HOST: '127.0.0.1', PORT: '', LOG_LEVEL: 'warn' },
    /sandbox running at (http:\/\/\S+)/,
  );
  const freeze = () => void process.kill(child.pid!, 'SIGSTOP');
  const thaw = () => void process.kill(child.pid!, 'SIGCONT');
  return {
    url: match[1],
    child,
    freeze,
    thaw,
    async frozen(fn) {
      freeze();
      try {
        return await fn();
      } finally {
        thaw();
      }
    },
    async object(id) {
      const c = new Client({ connectionString: db.url });
      await c.connect();
      try {
        const { rows } = await c.query<{ data: unknown }>('select data from sandbox_objects where id = $1', [id]);
        return rows[0]?.data ?? null;
      } finally {
        await c.end();
      }
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
      }
      await db.drop();
    },
  };
}
