/**
 * The statistics of experiment results, exact where docs/growth.md asks for it: no normal
 * approximation anywhere but the MRR lift's interval, which is a normal interval by design (see `mrrLift`).
 * Pure functions of counts; the counting itself is SQL (experiment.store.ts).
 */

/** Lanczos coefficients (g = 7, n = 9): ln Γ to about 15 significant digits for x > 0. */
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x); // reflection
  const z = x - 1;
  let a = LANCZOS[0];
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

export const logBeta = (a: number, b: number): number => logGamma(a) + logGamma(b) - logGamma(a + b);

export interface Arm {
  visitors: number;
  conversions: number;
}

/**
 * P(p_treatment > p_control) with p ~ Beta(1 + conversions, 1 + visitors - conversions) for each arm (uniform
 * priors), by Evan Miller's closed form
 *
 *   P(B > A) = sum_{i=0}^{αB-1} B(αA + i, βA + βB) / ((βB + i) B(1 + i, βB) B(αA, βA))
 *
 * Its terms are summed in log space (a running log-sum-exp) with each term got from the previous one by their exact
 * ratio, so only the first needs log-Beta values: min(αA, αB) cheap steps, using P(B > A) = 1 - P(A > B) (ties have
 * probability 0) to sum the shorter series. Accurate to far better than the 0.001 docs/growth.md asks.
 */
export function chanceToWin(control: Arm, treatment: Arm): number {
  const aA = 1 + control.conversions;
  const bA = 1 + control.visitors - control.conversions;
  const aB = 1 + treatment.conversions;
  const bB = 1 + treatment.visitors - treatment.conversions;
  const p = aB <= aA ? probabilityBBeatsA(aA, bA, aB, bB) : 1 - probabilityBBeatsA(aB, bB, aA, bA);
  return Math.min(1, Math.max(0, p));
}

/** Evan Miller's sum (integer αB terms). */
function probabilityBBeatsA(aA: number, bA: number, aB: number, bB: number): number {
  const s = bA + bB;
  // i = 0: B(αA, s) / (βB B(1, βB) B(αA, βA)), and βB B(1, βB) = 1.
  let logTerm = logBeta(aA, s) - logBeta(aA, bA);
  let max = logTerm;
  let scaled = 1; // the sum so far is exp(max) * scaled
  for (let i = 0; i < aB - 1; i++) {
    // term(i + 1) / term(i) = (αA + i)(βB + i) / ((αA + i + βA + βB)(1 + i))
    logTerm += Math.log(((aA + i) * (bB + i)) / ((aA + i + s) * (1 + i)));
    if (logTerm > max) {
      scaled = scaled * Math.exp(max - logTerm) + 1;
      max = logTerm;
    } else {
      scaled += Math.exp(logTerm - max);
    }
  }
  return Math.exp(max) * scaled;
}

/** Regularised lower incomplete gamma P(a, x) by its series (converges fast for x < a + 1). */
function gammaPSeries(a: number, x: number): number {
  let ap = a;
  let del = 1 / a;
  let sum = del;
  for (let n = 0; n < 100_000; n++) {
    ap += 1;
    del *= x / ap;
    sum += del;
    if (Math.abs(del) < Math.abs(sum) * 1e-16) break;
  }
  return sum * Math.exp(-x + a * Math.log(x) - logGamma(a));
}

/** Regularised upper incomplete gamma Q(a, x) by its continued fraction (modified Lentz; for x >= a + 1). */
function gammaQFraction(a: number, x: number): number {
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 100_000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-16) break;
  }
  return Math.exp(-x + a * Math.log(x) - logGamma(a)) * h;
}

/** Q(a, x) = Γ(a, x) / Γ(a). */
export function gammaQ(a: number, x: number): number {
  if (x <= 0) return 1;
  return x < a + 1 ? 1 - gammaPSeries(a, x) : gammaQFraction(a, x);
}

/** P(X >= x) for X chi-square with `df` degrees of freedom: Q(df / 2, x / 2). */
export const chiSquareSurvival = (x: number, df: number): number => gammaQ(df / 2, x / 2);

/** Below this p-value the observed split is reported as a sample-ratio mismatch. */
export const SRM_P_THRESHOLD = 0.001;

export interface SampleRatio {
  chiSquare: number;
  pValue: number;
  degreesOfFreedom: number;
  warning: boolean;
}

/**
 * Pearson's chi-square goodness of fit of the visitors observed per variant against the configured split. Variants
 * with 0% traffic get no new visitors and are left out (their expected count is 0); with fewer than two variants
 * left, or no visitors, there is nothing to test (chi-square 0, p-value 1).
 */
export function sampleRatioMismatch(arms: { observed: number; percent: number }[]): SampleRatio {
  const tested = arms.filter((a) => a.percent > 0);
  const total = tested.reduce((n, a) => n + a.observed, 0);
  const df = tested.length - 1;
  if (df < 1 || total === 0) return { chiSquare: 0, pValue: 1, degreesOfFreedom: Math.max(df, 0), warning: false };
  let chi = 0;
  for (const a of tested) {
    const expected = (total * a.percent) / 100;
    chi += (a.observed - expected) ** 2 / expected;
  }
  const p = chiSquareSurvival(chi, df);
  return { chiSquare: chi, pValue: p, degreesOfFreedom: df, warning: p < SRM_P_THRESHOLD };
}

/** An arm's MRR per visitor: count, mean and sample variance (subunits, and subunits squared). */
export interface MrrSample {
  visitors: number;
  mean: number;
  variance: number;
}

export interface MrrLift {
  expected: number;
  ciLow: number;
  ciHigh: number;
}

/** The 0.975 quantile of the standard normal. */
const Z_975 = 1.959963984540054;

/**
 * The lift of MRR per visitor, treatment less control, in subunits of MRR per visitor, with a 95% interval: the
 * difference of the two sample means, and a normal (Welch) interval from their standard errors,
 * diff ± 1.96 sqrt(s_t²/n_t + s_c²/n_c). Deterministic (no bootstrap), and sound for the sample sizes at which a
 * winner can be called (100 visitors per arm and up: the central limit theorem covers the mean of the skewed,
 * mostly-zero MRR per visitor). Null when either arm has fewer than 2 visitors (no variance to speak of).
 */
export function mrrLift(control: MrrSample, treatment: MrrSample): MrrLift | null {
  if (control.visitors < 2 || treatment.visitors < 2) return null;
  const diff = treatment.mean - control.mean;
  const se = Math.sqrt(treatment.variance / treatment.visitors + control.variance / control.visitors);
  return { expected: diff, ciLow: diff - Z_975 * se, ciHigh: diff + Z_975 * se };
}

/** Chance to win at which a treatment wins (docs/invoices-and-gst.md), given this many visitors in every arm. */
export const WIN_PROBABILITY = 0.95;
export const WIN_MIN_VISITORS = 100;
