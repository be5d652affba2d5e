import fc from 'fast-check';
import { pathDeeperThan } from '../../src/core/input-limits';
import { nulAt } from '../../src/core/nul';

/**
 * The two walks every request's input goes through (nesting depth, NUL characters) against plain recursive
 * references: the same verdict on generated JSON-like values, and a path that points at what was found.
 */

type Json = unknown;

const json: fc.Arbitrary<Json> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', '', 'x\u0000y', '\u0000', 'é'),
    fc.integer(),
    fc.constant(null),
    fc.boolean(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'k\u0000', 'c'), tie('value'), { maxKeys: 3 }),
  ),
})).value;

const depthOf = (v: Json): number =>
  v === null || typeof v !== 'object'
    ? 0
    : 1 + Math.max(0, ...(Array.isArray(v) ? v : Object.values(v as object)).map(depthOf));

const at = (v: Json, path: (string | number)[]): Json => path.reduce((o: any, k) => o[k], v);

const firstNul = (v: Json, path: (string | number)[]): (string | number)[] | null => {
  if (typeof v === 'string') return v.includes('\u0000') ? path : null;
  if (v === null || typeof v !== 'object') return null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const hit = firstNul(v[i], [...path, i]);
      if (hit) return hit;
    }
    return null;
  }
  const keys = Object.keys(v as object);
  for (const k of keys) if (k.includes('\u0000')) return [...path, k];
  for (const k of keys) {
    const hit = firstNul((v as Record<string, Json>)[k], [...path, k]);
    if (hit) return hit;
  }
  return null;
};

describe('input walks', () => {
  it('pathDeeperThan: a path exactly when the value nests deeper than the limit, to a container that deep', () => {
    fc.assert(
      fc.property(json, fc.integer({ min: 1, max: 5 }), (v, max) => {
        const path = pathDeeperThan(v, max);
        expect(path !== null).toBe(depthOf(v) > max);
        if (path) {
          expect(path).toHaveLength(max);
          const found = at(v, path);
          expect(found !== null && typeof found === 'object').toBe(true);
        }
      }),
      { seed: 20261124, numRuns: 2000 },
    );
  });

  it('pathDeeperThan names the first over-deep container in document order', () => {
    const v = { a: { b: 1 }, c: [{ d: [[1]] }], e: { f: { g: {} } } };
    expect(pathDeeperThan(v, 3)).toEqual(['c', 0, 'd']);
    expect(pathDeeperThan(v, 4)).toEqual(['c', 0, 'd', 0]);
    expect(pathDeeperThan(v, 5)).toBeNull();
  });

  it('nulAt answers the first NUL (key or string) in document order, or null', () => {
    fc.assert(
      fc.property(json, (v) => {
        expect(nulAt(v, 'input')).toEqual(firstNul(v, ['input']));
      }),
      { seed: 20261124, numRuns: 2000 },
    );
  });

  it('judges by own keys only, as before (inherited enumerable keys are not input)', () => {
    const proto = { deep: { a: { b: { c: {} } } }, text: 'x\u0000' };
    const v = Object.create(proto) as Record<string, unknown>;
    v.own = 1;
    expect(pathDeeperThan(v, 2)).toBeNull();
    expect(nulAt(v, 'input')).toBeNull();
    v.mine = { a: { b: {} } };
    expect(pathDeeperThan(v, 2)).toEqual(['mine', 'a']);
  });

  it('walks nesting far deeper than the stack allows without overflowing', () => {
    let deep: Json = 'x\u0000';
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(pathDeeperThan(deep, 32)).toHaveLength(32);
    expect(nulAt(deep, 'v')).toHaveLength(50_001);
  });
});
