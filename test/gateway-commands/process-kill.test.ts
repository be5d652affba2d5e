import os from 'node:os';
import path from 'node:path';
import { Client_, useHarness } from '../harness';
import { ProcessServer, SandboxProcess, startProcessServer, startSandboxProcess } from '../harness/process';
import { eventually, sleep } from '../harness/wait';
import { chargeOf, connect, createPayment, pay, PROVIDERS } from '../payments/helpers';

/**
 * A process killed between the commit of a change and its gateway call's answer loses nothing, and the gateway does
 * it once. The gateway sandbox runs as its own process, frozen (SIGSTOP) while a service process A has written a refund
 * and its command and is calling the gateway; A is then killed (SIGKILL) and the sandbox let go (SIGCONT), which may
 * still carry out A's request. If it does, its refund event (naming the refund) settles it; the command's lease runs
 * out and another process (the harness's, whose worker runs) runs it again with the same idempotency key, which finds
 * it settled or, if the gateway never did A's request, makes it: the refund is recorded once, and the gateway returned
 * its amount once.
 */
const TIMEOUT_MS = 1500;

let sandbox: SandboxProcess;
const h = useHarness(async () => {
  sandbox = await startSandboxProcess('cadence_test_kill');
  return { sandboxUrl: sandbox.url, gatewayTimeoutMs: TIMEOUT_MS, gatewayCommandFirstRetryMs: 200 };
});

let a: ProcessServer | null = null;
h.cleanup(async () => {
  if (a && a.child.exitCode === null) a.child.kill('SIGKILL');
  await sandbox?.stop();
});

const sql = <T>(text: string, params: unknown[]) => h.app.orm.em.getConnection().execute<T[]>(text, params);

describe.each(PROVIDERS)('%s', (provider) => {
  it('a refund whose process is killed mid-call is run again by another process and done once at the gateway', async () => {
    const m = await h.merchant();
    await connect(m.test, provider);
    const { payment } = await pay(m.test, await createPayment(m.test, { provider, amount: 49_900 }));
    expect(payment.status).toBe('succeeded');

    // Process A on the same database and gateway (the same key for sealed credentials), no worker of its own.
    a = await startProcessServer(h.app.databaseUrl, {
      SANDBOX_URL: sandbox.url,
      GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
      DATA_DIR: path.join(os.tmpdir(), 'cadence-test-data'),
      WORKER: 'off',
    });
    const viaA = new Client_(a.url, m.keys.test);
    sandbox.freeze();
    try {
      const answer = viaA.post(`/payments/${payment.id}/refund`, { amount: 10_000 }).catch(() => null);
      // A committed the refund and its command, and claimed it: it is at the gateway now.
      await eventually(
        async () => {
          const [row] = await sql<{ attempts: number }>(`select attempts from gateway_commands where payment_id = ?`, [
            payment.id,
          ]);
          return row?.attempts === 1;
        },
        5_000,
        'process A claimed the refund command',
      );
      a.child.kill('SIGKILL');
      await new Promise((r) => a!.child.once('exit', r));
      void answer;
    } finally {
      sandbox.thaw();
    }
    const [pending] = await sql<{ status: string }>(`select status from refunds where payment_id = ?`, [payment.id]);
    expect(pending.status).toBe('pending'); // not lost with A

    // The lease A took runs out (4 x the timeout + 5 s); the harness's worker runs the command again.
    await eventually(
      async () => {
        const [row] = await sql<{ status: string }>(`select status from gateway_commands where payment_id = ?`, [
          payment.id,
        ]);
        return row.status === 'succeeded';
      },
      40_000,
      'the refund command run again by another process',
    );
    await sleep(500);
    const [command] = await sql<{ status: string; attempts: number }>(
      `select status, attempts from gateway_commands where payment_id = ?`,
      [payment.id],
    );
    expect(command).toMatchObject({ status: 'succeeded', attempts: 2 });
    const refunds = await sql<{ status: string }>(`select status from refunds where payment_id = ?`, [payment.id]);
    expect(refunds).toEqual([{ status: 'succeeded' }]);
    expect(chargeOf(provider, await sandbox.object(payment.provider_payment_id))).toEqual({
      charged: payment.amount_total,
      refunded: 10_000,
    });
    expect((await m.test.get(`/payments/${payment.id}`)).body).toMatchObject({
      status: 'partially_refunded',
      amount_refunded: 10_000,
    });
  }, 90_000);
});
