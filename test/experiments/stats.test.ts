/**
 * The statistics of experiment results, checked against values computed here independently: chance to win against a
 * numerical integration of the two Beta posteriors (docs/growth.md: exact to 0.001; we ask 1e-4), the chi-square
 * survival function against closed forms, and the winner and sample-ratio rules on results built from counts.
 */
import { Experiment, ExperimentStatus, ExperimentVariant } from '../../src/modules/experiments/experiment.entities';
import { buildResults } from '../../src/modules/experiments/experiment.results';
import type { VariantCounts } from '../../src/modules/experiments/experiment.store';
import {
  chanceToWin,
  chiSquareSurvival,
  logGamma,
  mrrLift,
  sampleRatioMismatch,
} from '../../src/modules/experiments/experiment.stats';

/**
 * P(p_B > p_A) = ∫ f_A(x) (1 - F_B(x)) dx for p ~ Beta(1 + c, 1 + v - c), by the trapezoid rule on a fine grid over
 * the region where the posteriors have mass. Each density is normalised numerically (no Beta function involved), so
 * this shares nothing with the closed form under test.
 */
function integrate(a: { v: number; c: number }, b: { v: number; c: number }): number {
  const params = (x: { v: number; c: number }) => ({ alpha: 1 + x.c, beta: 1 + x.v - x.c });
  const A = params(a);
  const B = params(b);
  // The region holding all but a negligible part of both posteriors: 12 standard deviations around each mean.
  const span = (p: { alpha: number; beta: number }) => {
    const n = p.alpha + p.beta;
    const mean = p.alpha / n;
    const sd = Math.sqrt((p.alpha * p.beta) / (n * n * (n + 1)));
    return [Math.max(0, mean - 12 * sd), Math.min(1, mean + 12 * sd)];
  };
  const [lo, hi] = [Math.min(span(A)[0], span(B)[0]), Math.max(span(A)[1], span(B)[1])];
  const N = 100_000;
  const h = (hi - lo) / N;
  const logDensity = (p: { alpha: number; beta: number }, x: number) => {
    const l1 = p.alpha === 1 ? 0 : (p.alpha - 1) * Math.log(x);
    const l2 = p.beta === 1 ? 0 : (p.beta - 1) * Math.log(1 - x);
    return l1 + l2;
  };
  const density = (p: { alpha: number; beta: number }) => {
    const logs = new Float64Array(N + 1);
    let max = -Infinity;
    for (let i = 0; i <= N; i++) {
      logs[i] = logDensity(p, lo + i * h);
      if (logs[i] > max) max = logs[i];
    }
    const f = new Float64Array(N + 1);
    let area = 0;
    for (let i = 0; i <= N; i++) {
      f[i] = Number.isFinite(logs[i]) ? Math.exp(logs[i] - max) : 0;
      area += (i === 0 || i === N ? 0.5 : 1) * f[i] * h;
    }
    for (let i = 0; i <= N; i++) f[i] /= area;
    return f;
  };
  const fA = density(A);
  const fB = density(B);
  // survivalB[i] = ∫_{x_i}^{hi} f_B, accumulated from the right
  const survivalB = new Float64Array(N + 1);
  for (let i = N - 1; i >= 0; i--) survivalB[i] = survivalB[i + 1] + 0.5 * (fB[i] + fB[i + 1]) * h;
  let p = 0;
  for (let i = 0; i <= N; i++) p += (i === 0 || i === N ? 0.5 : 1) * fA[i] * survivalB[i] * h;
  return p;
}

const arm = (visitors: number, conversions: number) => ({ visitors, conversions });

describe('chance to win', () => {
  it('is about 0.98 for 130/1000 against a control of 100/1000, and the complement the other way round', () => {
    const p = chanceToWin(arm(1000, 100), arm(1000, 130));
    expect(p).toBeGreaterThan(0.98);
    expect(p).toBeLessThan(0.985);
    expect(p).toBeCloseTo(0.98217, 4);
    expect(chanceToWin(arm(1000, 130), arm(1000, 100))).toBeCloseTo(1 - p, 12);
  });

  it('is one half for equal arms, and with no data at all', () => {
    expect(chanceToWin(arm(0, 0), arm(0, 0))).toBeCloseTo(0.5, 12);
    expect(chanceToWin(arm(500, 50), arm(500, 50))).toBeCloseTo(0.5, 10);
  });

  it('has the closed forms of small cases: uniform against Beta(2,1) is 2/3', () => {
    // control 0/0 ~ U(0,1); treatment 1/1 ~ Beta(2,1) with density 2x: P(B > A) = ∫ 2x · x dx = 2/3
    expect(chanceToWin(arm(0, 0), arm(1, 1))).toBeCloseTo(2 / 3, 12);
    // treatment 0/1 ~ Beta(1,2), density 2(1-x): P(B > A) = ∫ 2(1-x) x dx = 1/3
    expect(chanceToWin(arm(0, 0), arm(1, 0))).toBeCloseTo(1 / 3, 12);
  });

  it.each([
    [arm(1000, 100), arm(1000, 130)],
    [arm(1000, 130), arm(1000, 100)],
    [arm(20, 3), arm(25, 7)],
    [arm(10, 0), arm(10, 10)],
    [arm(200, 190), arm(180, 175)],
    [arm(5000, 250), arm(4800, 260)],
    [arm(100_000, 5000), arm(100_000, 5150)],
    [arm(100_000, 5000), arm(1000, 60)],
    [arm(3, 1), arm(40_000, 9000)],
  ])('agrees with numerical integration to 1e-4: control %o, treatment %o', (control, treatment) => {
    const exact = chanceToWin(control, treatment);
    const numeric = integrate(
      { v: control.visitors, c: control.conversions },
      { v: treatment.visitors, c: treatment.conversions },
    );
    expect(Math.abs(exact - numeric)).toBeLessThan(1e-4);
  });

  it('stays within [0, 1] at extremes and handles a million visitors', () => {
    const p = chanceToWin(arm(1_000_000, 100_000), arm(1_000_000, 101_000));
    expect(p).toBeGreaterThan(0.99);
    expect(p).toBeLessThanOrEqual(1);
    const q = chanceToWin(arm(1_000_000, 101_000), arm(1_000_000, 100_000));
    expect(q).toBeGreaterThanOrEqual(0);
    expect(p + q).toBeCloseTo(1, 9);
  });

  it('uses an accurate log-gamma (ln n! for whole numbers, ln √π at 1/2)', () => {
    let lnFact = 0;
    for (let n = 1; n <= 170; n++) {
      lnFact += Math.log(n);
      expect(Math.abs(logGamma(n + 1) - lnFact)).toBeLessThan(1e-9 * Math.max(1, lnFact));
    }
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 12);
  });
});

describe('chi-square survival', () => {
  it('matches the closed forms: 2 degrees of freedom is exp(-x/2), 1 is erfc(√(x/2))', () => {
    for (const x of [0.1, 1, 2.5, 5.991464547107979, 13.8, 40])
      expect(chiSquareSurvival(x, 2)).toBeCloseTo(Math.exp(-x / 2), 12);
    // erfc by its continued-fraction-free series for these moderate values: 1 - (2/√π) Σ (-1)^n z^(2n+1) / (n! (2n+1))
    const erfc = (z: number) => {
      let sum = 0;
      let term = z;
      for (let n = 0; n < 200; n++) {
        sum += term / (2 * n + 1);
        term *= (-z * z) / (n + 1);
      }
      return 1 - (2 / Math.sqrt(Math.PI)) * sum;
    };
    for (const x of [0.5, 1, 3.841458820694124, 6.6, 10.827566170662733]) {
      expect(chiSquareSurvival(x, 1)).toBeCloseTo(erfc(Math.sqrt(x / 2)), 10);
    }
  });

  it('gives the textbook critical values', () => {
    expect(chiSquareSurvival(3.841458820694124, 1)).toBeCloseTo(0.05, 10);
    expect(chiSquareSurvival(10.827566170662733, 1)).toBeCloseTo(0.001, 10);
    expect(chiSquareSurvival(16.26623619623813, 3)).toBeCloseTo(0.001, 10);
    expect(chiSquareSurvival(0, 4)).toBe(1);
  });
});

describe('sample-ratio mismatch', () => {
  it('warns on a skewed split (p < 0.001) and not on a fair one', () => {
    const skewed = sampleRatioMismatch([
      { observed: 560, percent: 50 },
      { observed: 440, percent: 50 },
    ]);
    expect(skewed.chiSquare).toBeCloseTo(14.4, 10); // (60² + 60²) / 500
    expect(skewed.degreesOfFreedom).toBe(1);
    expect(skewed.pValue).toBeLessThan(0.001);
    expect(skewed.warning).toBe(true);
    const fair = sampleRatioMismatch([
      { observed: 515, percent: 50 },
      { observed: 485, percent: 50 },
    ]);
    expect(fair.warning).toBe(false);
    expect(fair.pValue).toBeGreaterThan(0.3);
  });

  it('tests against the configured split, not an even one, and leaves out 0% variants', () => {
    const r = sampleRatioMismatch([
      { observed: 900, percent: 90 },
      { observed: 100, percent: 10 },
      { observed: 0, percent: 0 },
    ]);
    expect(r.chiSquare).toBeCloseTo(0, 12);
    expect(r.degreesOfFreedom).toBe(1);
    expect(r.warning).toBe(false);
    const three = sampleRatioMismatch([
      { observed: 250, percent: 20 },
      { observed: 300, percent: 30 },
      { observed: 450, percent: 50 },
    ]);
    // expected 200, 300, 500: 2500/200 + 0 + 2500/500 = 17.5 with 2 degrees of freedom
    expect(three.chiSquare).toBeCloseTo(17.5, 10);
    expect(three.pValue).toBeCloseTo(Math.exp(-17.5 / 2), 12);
    expect(three.warning).toBe(true);
  });

  it('has nothing to test without visitors', () => {
    expect(
      sampleRatioMismatch([
        { observed: 0, percent: 50 },
        { observed: 0, percent: 50 },
      ]),
    ).toEqual({ chiSquare: 0, pValue: 1, degreesOfFreedom: 1, warning: false });
  });
});

describe('MRR lift', () => {
  it('is the difference of means with a 95% normal interval', () => {
    const lift = mrrLift({ visitors: 400, mean: 100, variance: 2500 }, { visitors: 100, mean: 130, variance: 3600 })!;
    expect(lift.expected).toBeCloseTo(30, 12);
    const se = Math.sqrt(3600 / 100 + 2500 / 400); // = 6.5
    expect(lift.ciLow).toBeCloseTo(30 - 1.959963984540054 * se, 10);
    expect(lift.ciHigh).toBeCloseTo(30 + 1.959963984540054 * se, 10);
  });

  it('is null while an arm has fewer than 2 visitors', () => {
    expect(mrrLift({ visitors: 1, mean: 5, variance: 0 }, { visitors: 10, mean: 5, variance: 1 })).toBeNull();
  });
});

describe('results from counts: the winner rule', () => {
  const experiment = Object.assign(new Experiment(), {
    id: 'e',
    name: 'Paywall test',
    status: ExperimentStatus.RUNNING,
    trafficVersion: 1,
  });
  const variant = (id: string, isControl: boolean, trafficPercent = 50) =>
    Object.assign(new ExperimentVariant(), { id, key: id, name: id, offeringId: 'o', trafficPercent, isControl });
  const counts = (
    variant_id: string,
    visitors: number,
    conversions: number,
    extra: Partial<VariantCounts> = {},
  ): VariantCounts => ({
    variant_id,
    visitors,
    current_visitors: visitors,
    conversions,
    trial_starts: 0,
    revenue: 0,
    mrr: 0,
    mrr_mean: 0,
    mrr_variance: 0,
    ...extra,
  });

  it('declares a treatment the winner at chance to win >= 0.95 with >= 100 visitors in it and in the control', () => {
    const r = buildResults(
      experiment,
      [variant('a', true), variant('b', false)],
      [counts('a', 1000, 100), counts('b', 1000, 130)],
      'INR',
    );
    const [control, treatment] = r.variants;
    expect(control.chanceToWin).toBeNull();
    expect(control.mrrLift).toBeNull();
    expect(treatment.chanceToWin).toBeCloseTo(0.98217, 4);
    expect(treatment.isWinner).toBe(true);
    expect(control.isWinner).toBe(false);
    expect(r.winnerVariantId).toBe('b');
    expect(treatment.conversionRate).toBe(0.13);
  });

  it('declares none below 100 visitors in an arm, however sure', () => {
    const r = buildResults(
      experiment,
      [variant('a', true), variant('b', false)],
      [counts('a', 99, 0), counts('b', 99, 60)],
      'INR',
    );
    expect(r.variants[1].chanceToWin).toBeGreaterThan(0.999);
    expect(r.winnerVariantId).toBeNull();
    expect(r.variants.some((v) => v.isWinner)).toBe(false);
    const control100 = buildResults(
      experiment,
      [variant('a', true), variant('b', false)],
      [counts('a', 100, 0), counts('b', 99, 60)],
      'INR',
    );
    expect(control100.winnerVariantId).toBeNull();
  });

  it('declares none below 0.95, and picks the likeliest of several qualifying treatments', () => {
    const close = buildResults(
      experiment,
      [variant('a', true), variant('b', false)],
      [counts('a', 1000, 100), counts('b', 1000, 115)],
      'INR',
    );
    expect(close.variants[1].chanceToWin).toBeLessThan(0.95);
    expect(close.winnerVariantId).toBeNull();
    const three = buildResults(
      experiment,
      [variant('a', true, 34), variant('b', false, 33), variant('c', false, 33)],
      [counts('a', 1000, 100), counts('b', 1000, 135), counts('c', 1000, 150)],
      'INR',
    );
    expect(three.variants[1].chanceToWin).toBeGreaterThan(0.95);
    expect(three.winnerVariantId).toBe('c');
    expect(three.variants.map((v) => v.isWinner)).toEqual([false, false, true]);
  });

  it('reports a variant without visitors with zeros, and the sample-ratio check over the current split', () => {
    const r = buildResults(
      experiment,
      [variant('a', true), variant('b', false)],
      [counts('a', 700, 10, { current_visitors: 560 })],
      'INR',
    );
    expect(r.variants[1]).toMatchObject({
      visitors: 0,
      conversions: 0,
      conversionRate: 0,
      revenue: 0,
      mrr: 0,
      chanceToWin: expect.any(Number),
      mrrLift: null,
    });
    expect(r.totalVisitors).toBe(700);
    // 560 against 0 under a 50/50 split
    expect(r.sampleRatioMismatch.warning).toBe(true);
  });
});
