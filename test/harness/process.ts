import { spawn, ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

export interface ProcessServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The service in a plain Node process on an existing (migrated) database: for what jest's VM cannot run, such as
 * the dynamic imports the GraphQL IDE's asset server relies on.
 */
export function startProcessServer(databaseUrl: string, env: Record<string, string> = {}): Promise<ProcessServer> {
  const child = spawn(process.execPath, ['-r', path.join(root, 'test/harness/swc-register.js'), path.join(root, 'test/harness/serve.ts')], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', WORKER: 'off', ...env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server process did not start: ${err.slice(-2000)}`));
    }, 45_000);
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /LISTENING (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
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
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server process exited (${code}): ${err.slice(-2000)}`));
    });
  });
}
