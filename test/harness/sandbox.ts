import crypto from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { openDatabase } from '../../src/core/db';
import { entities } from '../../src/entities';
import { SecretBox } from '../../src/core/secrets';
import { startSandbox, RunningSandbox } from '../../src/gateways/sandbox';
import { freshDatabase } from './database';
import { Receiver } from './receiver';

/** The key the adapter tests' sandboxes seal registered webhook secrets with (one per test process). */
export const SANDBOX_SECRETS = SecretBox.fromEnv('', { ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64') });

/** The gateway sandbox alone (no service) on a fresh migrated database, with a receiver for its events. */
export interface GatewaySandbox {
  orm: MikroORM;
  sandbox: RunningSandbox;
  receiver: Receiver;
}

/**
 * Registers beforeAll/afterAll for the adapter tests: the sandbox starts once for the file (or describe block)
 * and every member is readable from the first beforeAll/test on.
 */
export function useGatewaySandbox(): GatewaySandbox {
  let state: { orm: MikroORM; sandbox: RunningSandbox; receiver: Receiver; drop(): Promise<void> } | null = null;
  const get = () => {
    if (!state) throw new Error('useGatewaySandbox: read before its beforeAll ran');
    return state;
  };
  beforeAll(async () => {
    const db = await freshDatabase('cadence_test_gw');
    const orm = await openDatabase(db.url, entities, 5);
    const sandbox = await startSandbox({ orm, port: 0, delivery: { retryDelaysMs: [20, 50], timeoutMs: 5000 }, secrets: SANDBOX_SECRETS });
    const receiver = await Receiver.start();
    state = { orm, sandbox, receiver, drop: db.drop };
  });
  afterAll(async () => {
    if (!state) return;
    await state.sandbox.close();
    await state.receiver.close();
    await state.orm.close(true);
    await state.drop();
  });
  return {
    get orm() {
      return get().orm;
    },
    get sandbox() {
      return get().sandbox;
    },
    get receiver() {
      return get().receiver;
    },
  };
}
