import { parse, v7, validate, version } from 'uuid';
import { uuidV7s } from '../../src/core/uuid-v7';

describe('uuidV7s', () => {
  it('makes valid, distinct v7 ids of the instant, laid out as the uuid package lays them out', () => {
    const msecs = Date.UTC(2026, 10, 24, 23, 40, 1, 234);
    const ids = uuidV7s(5000, msecs);
    expect(ids).toHaveLength(5000);
    expect(new Set(ids).size).toBe(5000);
    for (const id of ids) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
      expect(id).toBe(id.toLowerCase());
      const b = parse(id);
      expect(b[8] >> 6).toBe(0b10); // variant 10
      // The package's id from the same instant and the same random bits is this id.
      const random = new Uint8Array(16);
      random.set(b.subarray(6), 6);
      const seq = ((b[6] & 0x0f) << 28) | (b[7] << 20) | ((b[8] & 0x3f) << 14) | (b[9] << 6) | (b[10] >> 2);
      expect(v7({ random, msecs, seq })).toBe(id);
    }
    // The first 48 bits are the instant.
    expect(parseInt(ids[0].replace(/-/g, '').slice(0, 12), 16)).toBe(msecs);
  });

  it('varies all 74 random bits', () => {
    const ids = uuidV7s(2000);
    const seen = new Set<string>();
    for (const id of ids) for (const pos of [14, 15, 16, 17, 19, 20, 21, 22, 24, 25, 35]) seen.add(`${pos}:${id[pos]}`);
    // Each random hex position takes many values over 2,000 ids; position 19 (variant) only 8, 9, a, b.
    expect([...seen].filter((s) => s.startsWith('19:')).sort()).toEqual(['19:8', '19:9', '19:a', '19:b']);
    expect([...seen].filter((s) => s.startsWith('35:'))).toHaveLength(16);
  });

  it('answers an empty list for no ids', () => {
    expect(uuidV7s(0)).toEqual([]);
  });
});
