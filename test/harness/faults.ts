import type { Harness } from './index';

/**
 * The sandbox's injected faults (src/gateways/sandbox/faults.ts; the harness turns SANDBOX_FAULTS on): `fault(rule)`
 * adds a rule, `clear()` removes them all, and every rule is removed after each test of the file.
 */
export function useSandboxFaults(h: Harness): {
  fault(rule: Record<string, unknown>): Promise<void>;
  clear(): Promise<void>;
} {
  const clear = async () => {
    await fetch(`${h.app.app.sandboxUrl}/_faults`, { method: 'DELETE' });
  };
  afterEach(clear);
  return {
    async fault(rule) {
      const res = await fetch(`${h.app.app.sandboxUrl}/_faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(rule),
      });
      if (res.status !== 201) throw new Error(`POST /_faults answered ${res.status}: ${await res.text()}`);
    },
    clear,
  };
}
