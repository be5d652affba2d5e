import crypto from 'node:crypto';

/**
 * Bucketing exactly as the API document's steps (docs/growth.md): the SHA-256 digest of "<experiment_id>:<customer_id>"
 * read as one unsigned big-endian integer, modulo 100. Reduced byte by byte (Horner's rule: r = (r * 256 + byte) mod
 * 100), which is that integer's remainder exactly, without building a 256-bit BigInt on every resolve.
 */
export function bucketOf(experimentId: string, customerId: string): number {
  const digest = crypto.createHash('sha256').update(`${experimentId}:${customerId}`, 'utf8').digest();
  let r = 0;
  for (const byte of digest) r = (r * 256 + byte) % 100;
  return r;
}

/**
 * The variant whose range holds the bucket: variants sorted by id ascending (UUIDs in their canonical lower-case
 * text sort as their bytes), variant i holding [sum of the earlier traffic_percent, that + its own). Null only if
 * the percentages do not cover the bucket (they always sum to 100).
 */
export function variantForBucket<V extends { id: string; trafficPercent: number }>(
  variants: readonly V[],
  bucket: number,
): V | null {
  const sorted = [...variants].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let from = 0;
  for (const v of sorted) {
    const to = from + v.trafficPercent;
    if (bucket >= from && bucket < to) return v;
    from = to;
  }
  return null;
}
