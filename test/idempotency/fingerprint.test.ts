import { canonicalJson, fingerprint } from '../../src/modules/idempotency/fingerprint';

// The Idempotency-Key fingerprint decides whether a reused key is the same request: anything that differs must differ here.
describe('idempotency fingerprint', () => {
  it('ignores key order at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }),
    );
  });

  it('tells dates apart (a GraphQL DateTime input arrives as a Date, which has no keys)', () => {
    const a = fingerprint('post', '/v1/usage/events', { timestamp: new Date('2026-11-01T00:00:00Z'), quantity: 1 });
    const b = fingerprint('post', '/v1/usage/events', { timestamp: new Date('2026-11-02T00:00:00Z'), quantity: 1 });
    expect(a).not.toBe(b);
    expect(canonicalJson({ at: new Date('2026-11-01T00:00:00Z') })).toBe('{"at":"2026-11-01T00:00:00.000Z"}');
  });
});
