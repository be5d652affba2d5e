import net from 'node:net';
import { GatewayError } from '../../src/gateways';
import { stripeError } from '../../src/gateways/stripe.adapter';
import { razorpayError } from '../../src/gateways/razorpay.adapter';
import { gatewayAgent, razorpayClient, stripeClient } from '../../src/gateways/transport';

/**
 * Connection setup counts against GATEWAY_TIMEOUT_MS (src/gateways/transport.ts). Node arms a request's socket timeout,
 * which is what the SDKs' `timeout` options set, only once TCP is connected; a SYN nobody answers would otherwise
 * wait for the kernel (~2 min on Linux). The agents' sockets here never connect (a name lookup that never answers).
 */
const TIMEOUT_MS = 321; // an agent of its own (agents are shared per bound)
/**
 * Well under what an unbounded connection setup waits (the kernel's ~2 min, the SDKs' 80 s / none), and loose enough
 * for a loaded CI machine, where a first call also loads the SDK's modules.
 */
const WITHIN_MS = TIMEOUT_MS + 10_000;

beforeAll(() => {
  // Every new connection of the 321 ms agents hangs in connection setup.
  for (const protocol of ['http', 'https'] as const) {
    const agent = gatewayAgent(protocol, TIMEOUT_MS) as unknown as { createConnection: () => net.Socket };
    agent.createConnection = () => net.connect({ host: 'gateway.invalid', port: 9, lookup: () => undefined });
  }
});

async function elapsed(call: () => Promise<unknown>): Promise<{ ms: number; err: unknown }> {
  const started = Date.now();
  try {
    await call();
    return { ms: Date.now() - started, err: null };
  } catch (err) {
    return { ms: Date.now() - started, err };
  }
}

it('a Stripe call whose connection never completes fails at the timeout: gateway_unavailable', async () => {
  const stripe = stripeClient('sk_test_x', { sandboxUrl: 'http://127.0.0.1:9', timeoutMs: TIMEOUT_MS });
  const r = await elapsed(() => stripe.balance.retrieve());
  expect(stripeError(r.err)).toMatchObject({ name: 'GatewayError', code: 'gateway_unavailable' });
  expect(r.err).toBeTruthy();
  expect(r.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
  expect(r.ms).toBeLessThan(WITHIN_MS);
});

it('a Razorpay call whose connection never completes fails at the timeout: gateway_unavailable', async () => {
  const rzp = razorpayClient(
    { key_id: 'rzp_test_x', key_secret: 'y' },
    { sandboxUrl: 'http://127.0.0.1:9', timeoutMs: TIMEOUT_MS },
  );
  const r = await elapsed(() => rzp.plans.all({ count: 1 }));
  expect(r.err).toBeTruthy();
  expect(razorpayError(r.err)).toBeInstanceOf(GatewayError);
  expect(razorpayError(r.err).code).toBe('gateway_unavailable');
  expect(r.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
  expect(r.ms).toBeLessThan(WITHIN_MS);
});
