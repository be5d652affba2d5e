import { spawn, ChildProcess } from 'node:child_process';
import path from 'node:path';

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
export function spawnTs(script: string, env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, ['-r', path.join(root, 'test/harness/swc-register.js'), path.join(root, script)], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
export async function startProcessServer(databaseUrl: string, env: Record<string, string> = {}): Promise<ProcessServer> {
  const { child, match } = await spawnTs('test/harness/serve.ts', { WORKER: 'off', ...env, DATABASE_URL: databaseUrl }, /LISTENING (\S+)/);
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
