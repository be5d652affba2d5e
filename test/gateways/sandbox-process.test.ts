import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { closedPortUrl, sleep, useHarness } from '../harness';
import { connect, createPayment, PROVIDERS } from '../payments/helpers';

const SANDBOX_MAIN = path.join(__dirname, '..', '..', 'dist', 'src', 'sandbox-main.js'); // built by `npm test`

/** `npm run sandbox` next to an API started with SANDBOX_URL: the service starts no sandbox and pays through it. */
let child: ChildProcess;
let exited: Promise<number | null>;
let sandboxUrl: string;
// The service only calls the sandbox once a merchant connects, so it can start first and share its database.
const h = useHarness(async () => {
  sandboxUrl = await closedPortUrl(); // a free port on 127.0.0.1 for the sandbox process
  return { sandboxUrl };
});

beforeAll(async () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: h.app.databaseUrl,
    SANDBOX_PORT: new URL(sandboxUrl).port,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  };
  delete env.PORT;
  child = spawn(process.execPath, [SANDBOX_MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 30_000;
  while (!out.includes('sandbox running at') && child.exitCode === null && Date.now() < deadline) await sleep(50);
  if (!out.includes(`sandbox running at ${sandboxUrl}`))
    throw new Error(`npm run sandbox did not start (exit ${child.exitCode}):\n${out}`);
});

h.cleanup(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
});

it('pays through a sandbox running as its own process, which then stops gracefully', async () => {
  expect(h.app.app.sandbox).toBeNull();
  expect(h.app.app.sandboxUrl).toBe(sandboxUrl);
  const m = await h.merchant();
  for (const provider of PROVIDERS) {
    await connect(m.test, provider);
    const p = await createPayment(m.test, { provider });
    expect(p.checkout_url.startsWith(`${sandboxUrl}/checkout/`)).toBe(true);
    const done = await h.sandbox.submitCheckout(p.checkout_url, {
      outcome: 'success',
      method: 'card',
      card_number: '4242424242424242',
    });
    expect(done.status).toBe(303);
    // The sandbox delivered the signed webhook to the service before redirecting.
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({ id: p.id, status: 'succeeded', provider });
  }
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
});
