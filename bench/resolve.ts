import { resolveBody, ResolveBench } from './lib/offerings';
import type { BenchContext, Check, Scenario } from './scenarios';

/**
 * Offering resolution (bench/README.md): `POST /v1/offerings/resolve` over the 10,000 customers of the merchant that
 * has 20,000 subscriptions stored, each in turn, with attributes of which two in three match a running 50/50
 * experiment. A customer's first matching resolve enrols it (one insert), later ones read its sticky enrolment; the
 * offering tree comes from the service's version-checked cache. Closed loop for throughput (as a ratio to bare
 * express), then paced at the target rate for latency: p99 < 25 ms at 500/s.
 */
export const RESOLVE = 'REST POST /v1/offerings/resolve';
export const RESOLVE_RATE = Number(process.env.BENCH_RESOLVE_RATE) || 500;
export const RESOLVE_AT_RATE = `${RESOLVE} at ${RESOLVE_RATE}/s`;

function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}

/** What every answer must hold: the customer, an offering of the storefront with its whole tree, its paywall. */
function verifyResolution(bench: ResolveBench, body: any): void {
  const show = () => JSON.stringify(body).slice(0, 300);
  check(body?.customer_id === bench.customerIds[0], `not customer 0's resolution: ${show()}`);
  const o = body.offering;
  check(o && [bench.currentOfferingId, ...bench.armOfferingIds].includes(o.id), `not a storefront offering: ${show()}`);
  check(body.paywall?.offering_id === o.id, `no paywall of the offering: ${show()}`);
  check(Array.isArray(o.packages) && o.packages.length >= 2, `no packages: ${show()}`);
  for (const p of o.packages) {
    check(Array.isArray(p.products) && p.products.length > 0, `package ${p.id} without products`);
    for (const product of p.products) {
      check(product.plans?.length === 2, `product ${product.id}: expected 2 plans`);
      for (const plan of product.plans)
        check(plan.prices?.length === 2 && plan.default_price?.currency === 'INR', `plan ${plan.id}: prices`);
    }
  }
  // Request 0 carries country IN, which the experiment targets: customer 0 is in one of its arms.
  check(
    body.experiment?.experiment_id === bench.experimentId && bench.armOfferingIds.includes(o.id),
    `not served by the experiment: ${show()}`,
  );
}

export function resolveScenarios(ctx: BenchContext): Scenario[] {
  const bench = ctx.resolve;
  let i = 0;
  const closed: Scenario = {
    name: RESOLVE,
    process: 'service',
    method: 'POST',
    url: `${ctx.serviceUrl}/v1/offerings/resolve`,
    headers: { authorization: `Bearer ${bench.key}`, 'content-type': 'application/json' },
    body: resolveBody(bench, 0),
    // One sequence for both scenarios (and the check before them): the customers in turn, never the same twice in a row.
    setupRequest: (req) => ({ ...req, body: JSON.stringify(resolveBody(bench, ++i)) }),
    verify: (body) => verifyResolution(bench, body),
  };
  return [closed, { ...closed, name: RESOLVE_AT_RATE, rate: RESOLVE_RATE, verify: undefined }];
}

/** The targets; `bare` names the bare express scenario (passed in: scenarios.ts imports this file). */
export const resolveChecks = (bare: string): Check[] => [
  {
    name: `p99 latency, ${RESOLVE_AT_RATE}`,
    target: '< 25 ms',
    evaluate: ({ byName }) => {
      const s = byName.get(RESOLVE_AT_RATE);
      return s ? { value: `${s.result.p99} ms`, pass: s.result.p99 < 25 } : null;
    },
  },
  {
    name: 'resolve throughput / bare express',
    target: 'ratio',
    evaluate: ({ byName }) => {
      const s = byName.get(RESOLVE);
      const base = byName.get(bare);
      return s && base?.result.rps
        ? {
            value: `${((s.result.rps / base.result.rps) * 100).toFixed(1)}% (${s.result.rps.toFixed(0)}/s)`,
            pass: true,
          }
        : null;
    },
  },
];
