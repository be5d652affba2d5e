import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it collects again, in
 * percent. V8 picks up to 300 (4 times) on a machine with memory to spare, and under load the heap does fill: at a
 * young collection most in-flight requests' objects are still alive and get promoted, so the service's heap went
 * from ~45 MB of live data to ~190 MB between full collections (RSS 280-330 MB under the catalog benchmark). At
 * 100 (2 times) RSS stayed near 200 MB with no CPU cost we could measure; below ~50 full collections grow costly.
 */
export const HEAP_GROWING_PERCENT = 100;

/** Called first by every long-running process. A `--heap-growing-percent` given to node by the operator wins. */
export function boundHeapGrowth(): void {
  if (process.execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/**
 * Node flags of every API process (`npm start` passes them; the supervisor's processes inherit them; the bench starts
 * the service with them). `--no-concurrent-marking`: V8 marks the old generation in steps on the event loop's thread
 * instead of on helper threads. On the 2-core machines we measure on, the helpers take a core from the event loop and
 * PostgreSQL while a marking cycle runs, the likeliest stall behind the paced entitlement read's p99, which went from
 * 15.6 ms (median of 10 runs, 5.4-18.3) to 7.3 ms (6 runs, 6.8-7.9) with no throughput lost (bench/README.md, "The
 * latency tail and V8's concurrent marking"). Set at run time (v8.setFlagsFromString) it helped less reliably, so it
 * is a command-line flag. The worker keeps V8's default: it has no latency to keep.
 */
export const API_NODE_FLAGS: readonly string[] = ['--no-concurrent-marking'];

/** The API flags a process was started without (`execArgv`: process.execArgv). */
export function missingApiFlags(execArgv: readonly string[]): string[] {
  return API_NODE_FLAGS.filter((flag) => !execArgv.includes(flag));
}
