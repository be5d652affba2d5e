/** Exact integer rounding of money: integer subunits, products taken in BigInt so no float touches money. */

/** round(numerator / denominator), half away from zero, exactly (BigInt); the denominator is positive. */
export function divRound(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new Error('divRound: the denominator must be positive');
  const sign = numerator < 0n ? -1n : 1n;
  const n = numerator * sign;
  return sign * ((2n * n + denominator) / (2n * denominator));
}

/** round(amount x part / whole) for integer subunits and whole seconds. */
export function share(amount: number, part: number, whole: number): number {
  return Number(divRound(BigInt(amount) * BigInt(part), BigInt(whole)));
}
