import crypto from 'node:crypto';
import { SecretBox } from '../../src/core/secrets';
import { startSandbox, RunningSandbox } from '../../src/gateways/sandbox';
import { freshDatabase } from './database';
import { Receiver } from './receiver';

/** The key the adapter tests' sandboxes seal registered webhook secrets with (one per test process). */
export const SANDBOX_SECRETS = SecretBox.fromEnv('', { ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64') });

/** The gateway sandbox alone (no service) on a fresh database it migrates itself, with a receiver for its events. */
export interface GatewaySandbox {
  /** The sandbox's database (start another sandbox on it to test restarts); `sandbox.sandbox.orm` reads it. */
  databaseUrl: string;
  sandbox: RunningSandbox;
  receiver: Receiver;
}

/**
 * Registers beforeAll/afterAll for the adapter tests: the sandbox starts once for the file (or describe block)
 * and every member is readable from the first beforeAll/test on.
 */
export function useGatewaySandbox(): GatewaySandbox {
  let state: { databaseUrl: string; sandbox: RunningSandbox; receiver: Receiver; drop(): Promise<void> } | null = null;
  const get = () => {
    if (!state) throw new Error('useGatewaySandbox: read before its beforeAll ran');
    return state;
  };
  beforeAll(async () => {
    const db = await freshDatabase('cadence_test_gw');
    const sandbox = await startSandbox({
      databaseUrl: db.url,
      port: 0,
      delivery: { retryDelaysMs: [20, 50], timeoutMs: 5000 },
      secrets: SANDBOX_SECRETS,
    });
    const receiver = await Receiver.start();
    state = { databaseUrl: db.url, sandbox, receiver, drop: db.drop };
  });
  afterAll(async () => {
    if (!state) return;
    await state.sandbox.close();
    await state.receiver.close();
    await state.drop();
  });
  return {
    get databaseUrl() {
      return get().databaseUrl;
    },
    get sandbox() {
      return get().sandbox;
    },
    get receiver() {
      return get().receiver;
    },
  };
}
