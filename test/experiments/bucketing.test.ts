/**
 * Bucketing (docs/growth.md) and targeting (docs/growth.md) as pure rules, against values computed here independently:
 * the bucket as the whole SHA-256 digest turned into one BigInt, then mod 100.
 */
import crypto from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { bucketOf, variantForBucket } from '../../src/modules/experiments/experiment.bucketing';
import {
  matchesTargeting,
  validateAttributes,
  validateTargeting,
} from '../../src/modules/experiments/experiment.targeting';
import { expectedBucket } from './helpers';

describe('bucketOf', () => {
  it('is the SHA-256 digest of "<experiment_id>:<customer_id>" as one big-endian integer, mod 100', () => {
    for (let i = 0; i < 2000; i++) {
      const e = uuidv7();
      const c = crypto.randomUUID();
      expect([e, c, bucketOf(e, c)]).toEqual([e, c, expectedBucket(e, c)]);
    }
  });

  it('matches values worked out by hand for fixed ids', () => {
    const e = '0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b';
    const c = '0190a1b2-c3d4-7e5f-8a6b-000000000001';
    const digest = crypto.createHash('sha256').update(`${e}:${c}`).digest();
    // the integer's value mod 100 is the same as summing byte_i * 256^(31-i) mod 100
    let sum = 0n;
    digest.forEach((b, i) => (sum += BigInt(b) * 256n ** BigInt(31 - i)));
    expect(bucketOf(e, c)).toBe(Number(sum % 100n));
  });

  it('spreads customers evenly over the 100 buckets', () => {
    const e = uuidv7();
    const counts = new Array(100).fill(0);
    for (let i = 0; i < 20_000; i++) counts[bucketOf(e, crypto.randomUUID())]++;
    // 200 expected per bucket; a chi-square with 99 degrees of freedom stays well under 200 for a fair hash
    const chi = counts.reduce((s, n) => s + (n - 200) ** 2 / 200, 0);
    expect(chi).toBeLessThan(200);
  });
});

describe('variantForBucket', () => {
  const v = (id: string, trafficPercent: number) => ({ id, trafficPercent });

  it('sorts variants by id and gives each [sum of earlier percents, that + its own)', () => {
    // given out of order: sorted, b (30) holds 0..29, c (50) 30..79, d (20) 80..99
    const variants = [v('0000000d', 20), v('0000000b', 30), v('0000000c', 50)];
    const at = (bucket: number) => variantForBucket(variants, bucket)?.id;
    expect([0, 29, 30, 79, 80, 99].map(at)).toEqual([
      '0000000b',
      '0000000b',
      '0000000c',
      '0000000c',
      '0000000d',
      '0000000d',
    ]);
  });

  it('never picks a 0% variant', () => {
    const variants = [v('a', 0), v('b', 100), v('c', 0)];
    for (let b = 0; b < 100; b++) expect(variantForBucket(variants, b)?.id).toBe('b');
  });
});

describe('targeting', () => {
  const t = { country: 'IN', platform: ['ios', 'android'] };

  it('a scalar condition needs an equal attribute', () => {
    expect(matchesTargeting({ country: 'IN' }, { country: 'IN' })).toBe(true);
    expect(matchesTargeting({ country: 'IN' }, { country: 'US' })).toBe(false);
    expect(matchesTargeting({ country: 'IN' }, { country: 'in' })).toBe(false);
    expect(matchesTargeting({ version: 3 }, { version: '3' })).toBe(false);
    expect(matchesTargeting({ beta: true }, { beta: true })).toBe(true);
  });

  it('an array condition needs the attribute to be one of its values', () => {
    expect(matchesTargeting(t, { country: 'IN', platform: 'ios' })).toBe(true);
    expect(matchesTargeting(t, { country: 'IN', platform: 'android' })).toBe(true);
    expect(matchesTargeting(t, { country: 'IN', platform: 'web' })).toBe(false);
  });

  it('an array attribute matches a scalar condition it contains, and an array condition it shares a value with', () => {
    expect(matchesTargeting({ segment: 'students' }, { segment: ['students', 'india'] })).toBe(true);
    expect(matchesTargeting({ segment: 'students' }, { segment: ['india'] })).toBe(false);
    expect(matchesTargeting(t, { country: ['US', 'IN'], platform: ['web', 'ios'] })).toBe(true);
    expect(matchesTargeting(t, { country: 'IN', platform: ['web', 'windows'] })).toBe(false);
    expect(matchesTargeting({ segment: 'students' }, { segment: [] })).toBe(false);
  });

  it('a condition on a missing attribute does not match; every condition must hold; {} matches everyone', () => {
    expect(matchesTargeting(t, { country: 'IN' })).toBe(false);
    expect(matchesTargeting(t, { platform: 'ios' })).toBe(false);
    expect(matchesTargeting(t, {})).toBe(false);
    expect(matchesTargeting({ country: 'IN' }, { country: null })).toBe(false);
    expect(matchesTargeting({}, {})).toBe(true);
    expect(matchesTargeting({}, { anything: 'x' })).toBe(true);
    // inherited names are not attributes
    expect(matchesTargeting({ toString: 'x' }, {})).toBe(false);
  });

  it('validates conditions and attributes with the offending param', () => {
    const param = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return (e as { param: string }).param;
      }
      return 'no error';
    };
    expect(param(() => validateTargeting([]))).toBe('targeting');
    expect(param(() => validateTargeting({ country: { nested: 1 } }))).toBe('targeting.country');
    expect(param(() => validateTargeting({ platform: ['ios', null] }))).toBe('targeting.platform[1]');
    expect(param(() => validateTargeting({ platform: [] }))).toBe('targeting.platform');
    expect(param(() => validateTargeting({ note: 'x'.repeat(501) }))).toBe('targeting.note');
    expect(param(() => validateTargeting({ ['k'.repeat(65)]: 'x' }))).toBe(`targeting.${'k'.repeat(64)}`);
    expect(param(() => validateTargeting(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`a${i}`, 1]))))).toBe(
      'targeting',
    );
    expect(validateTargeting({ country: 'IN', n: 1.5, beta: false, platform: ['ios'] })).toEqual({
      country: 'IN',
      n: 1.5,
      beta: false,
      platform: ['ios'],
    });
    expect(param(() => validateAttributes({ tags: [{}] }))).toBe('attributes.tags[0]');
    expect(param(() => validateAttributes('x'))).toBe('attributes');
    expect(validateAttributes({ country: null, platform: 'ios' })).toEqual({ platform: 'ios' });
  });
});
