import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { request, sleep, useHarness } from '../harness';

const run = promisify(execFile);
const CLI = path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'merchant.js'); // built by `npm test`

const h = useHarness();

const cli = (...args: string[]) =>
  run(process.execPath, [CLI, ...args], {
    env: { ...process.env, DATABASE_URL: h.app.databaseUrl, LOG_LEVEL: 'silent' },
  });

describe('operator CLI', () => {
  it('creates a merchant whose keys work against the service, and rolls a key', async () => {
    const created = JSON.parse((await cli('create', '--name', 'CLI Co', '--state-code', '27')).stdout);
    expect(created).toMatchObject({ object: 'merchant', name: 'CLI Co' });
    expect(created.api_keys.test).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
    const ok = await request(`${h.app.url}/v1/products`, { key: created.api_keys.live });
    expect(ok.status).toBe(200);

    const rolled = JSON.parse((await cli('roll-key', '--merchant', created.id, '--mode', 'live')).stdout);
    expect(rolled.secret_key).toMatch(/^sk_live_/);
    expect((await request(`${h.app.url}/v1/products`, { key: rolled.secret_key })).status).toBe(200);
    // Another process rolled it: this server notices within its 5 s key cache.
    const deadline = Date.now() + 8000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      status = (await request(`${h.app.url}/v1/products`, { key: created.api_keys.live })).status;
      if (status === 200) await sleep(250);
    }
    expect(status).toBe(401);
    // The test key was not touched.
    expect((await request(`${h.app.url}/v1/products`, { key: created.api_keys.test })).status).toBe(200);
  });

  it('refuses bad input with a clear message and a non-zero exit', async () => {
    await expect(cli('create', '--name', 'X', '--state-code', '7')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('state_code'),
    });
    await expect(cli('frobnicate')).rejects.toMatchObject({ code: 2 });
  });
});
