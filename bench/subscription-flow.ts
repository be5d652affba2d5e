import { performance } from 'node:perf_hooks';
import { requestJson } from './lib/http';
import { cpuMsOf, machineBusyMs } from './lib/processes';
import type { Stack } from './lib/stack';
import { completeCheckout, createSubscription } from './lib/subscriptions';
import { envNumber } from './lib/env';

/**
 * A subscription as a merchant's back end and its customer make one (bench/README.md): `POST /v1/subscriptions`
 * with a fresh Idempotency-Key and customer, the customer completing the hosted mandate checkout (the sandbox then
 * delivers the authorisation and first-charge webhooks to the service before it answers), and the back end reading
 * the subscription, which must be active with its first cycle paid. Closed loop: `BENCH_SUBSCRIPTION_FLOW_CONCURRENCY`
 * (default 8) flows at a time for `BENCH_SECONDS`, after a warm-up. Target: 200 flows a second.
 */

export const SUBSCRIPTION_FLOW = 'subscription create + checkout + read';
export const SUBSCRIPTION_FLOW_TARGET = 200;

export interface FlowFigures {
  concurrency: number;
  seconds: number;
  flows: number;
  flowsPerSecond: number;
  /** Whole flow, create to read answered (ms). */
  p50: number;
  p99: number;
  /** The three steps' medians (ms). */
  stepP50: { create: number; checkout: number; read: number };
  failures: number;
  firstFailure: string | null;
  /** CPU per flow (ms): the service, the sandbox, everything else on the machine (PostgreSQL and the rest). */
  serviceCpuMsPerFlow: number | null;
  sandboxCpuMsPerFlow: number | null;
  otherCpuMsPerFlow: number | null;
}

const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0;

async function oneFlow(stack: Stack, key: string, planId: string, times: number[][]): Promise<void> {
  const t0 = performance.now();
  const sub = await createSubscription(stack.serviceUrl, key, planId);
  const t1 = performance.now();
  await completeCheckout(sub.checkout_url);
  const t2 = performance.now();
  const read = await requestJson(`${stack.serviceUrl}/v1/subscriptions/${sub.id}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const t3 = performance.now();
  if (read.status !== 200 || read.body?.status !== 'active' || read.body?.cycles_completed !== 1)
    throw new Error(`subscription ${sub.id} after checkout: ${read.status} ${read.text.slice(0, 300)}`);
  times.push([t3 - t0, t1 - t0, t2 - t1, t3 - t2]);
}

/** Runs flows closed-loop for `seconds`; answers the flow times ([total, create, checkout, read] each). */
async function runFlows(stack: Stack, key: string, planId: string, concurrency: number, seconds: number) {
  const times: number[][] = [];
  const errors: string[] = [];
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        await oneFlow(stack, key, planId, times).catch((err: unknown) =>
          errors.push(err instanceof Error ? err.message : String(err)),
        );
      }
    }),
  );
  return { times, errors };
}

export async function measureSubscriptionFlow(
  stack: Stack,
  merchant: { key: string; planId: string },
  note: (line: string) => void,
): Promise<FlowFigures> {
  const concurrency = envNumber('BENCH_SUBSCRIPTION_FLOW_CONCURRENCY', 8, 1);
  const seconds = envNumber('BENCH_SECONDS', 10, 1);
  const warmup = envNumber('BENCH_WARMUP_SECONDS', 3, 0);
  if (warmup > 0) {
    note(`${SUBSCRIPTION_FLOW}: warm-up ${warmup}s`);
    await runFlows(stack, merchant.key, merchant.planId, concurrency, warmup);
  }
  note(`${SUBSCRIPTION_FLOW}: measuring ${seconds}s at concurrency ${concurrency}`);
  const svc0 = cpuMsOf(stack.service);
  const sb0 = cpuMsOf(stack.sandbox);
  const busy0 = machineBusyMs();
  const gen0 = process.cpuUsage();
  const started = performance.now();
  const { times, errors } = await runFlows(stack, merchant.key, merchant.planId, concurrency, seconds);
  const elapsed = (performance.now() - started) / 1000;
  const svc1 = cpuMsOf(stack.service);
  const sb1 = cpuMsOf(stack.sandbox);
  const busy1 = machineBusyMs();
  const gen = process.cpuUsage(gen0);
  const flows = times.length;
  const per = (ms: number | null) => (ms === null || !flows ? null : ms / flows);
  const serviceCpu = svc0 === null || svc1 === null ? null : svc1 - svc0;
  const sandboxCpu = sb0 === null || sb1 === null ? null : sb1 - sb0;
  const other =
    busy0 === null || busy1 === null || serviceCpu === null || sandboxCpu === null
      ? null
      : Math.max(0, busy1 - busy0 - serviceCpu - sandboxCpu - (gen.user + gen.system) / 1000);
  const col = (i: number) => times.map((t) => t[i]).sort((a, b) => a - b);
  const total = col(0);
  return {
    concurrency,
    seconds: elapsed,
    flows,
    flowsPerSecond: flows / elapsed,
    p50: quantile(total, 0.5),
    p99: quantile(total, 0.99),
    stepP50: { create: quantile(col(1), 0.5), checkout: quantile(col(2), 0.5), read: quantile(col(3), 0.5) },
    failures: errors.length,
    firstFailure: errors[0] ?? null,
    serviceCpuMsPerFlow: per(serviceCpu),
    sandboxCpuMsPerFlow: per(sandboxCpu),
    otherCpuMsPerFlow: per(other),
  };
}

export function describeSubscriptionFlow(f: FlowFigures): string[] {
  const ms = (x: number | null) => (x === null ? 'n/a' : `${x.toFixed(1)} ms`);
  return [
    `${f.flows} flows in ${f.seconds.toFixed(1)} s at concurrency ${f.concurrency}: ${f.flowsPerSecond.toFixed(1)}/s ` +
      `(target >= ${SUBSCRIPTION_FLOW_TARGET}/s: ${f.flowsPerSecond >= SUBSCRIPTION_FLOW_TARGET ? 'PASS' : 'MISS'})`,
    `flow p50 ${ms(f.p50)}, p99 ${ms(f.p99)}; step medians: create ${ms(f.stepP50.create)}, checkout ${ms(f.stepP50.checkout)}, read ${ms(f.stepP50.read)}`,
    `CPU per flow: service ${ms(f.serviceCpuMsPerFlow)}, sandbox ${ms(f.sandboxCpuMsPerFlow)}, everything else (PostgreSQL, other programs) ${ms(f.otherCpuMsPerFlow)}`,
    `failures: ${f.failures}${f.firstFailure ? ` (first: ${f.firstFailure})` : ''}`,
  ];
}
