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
