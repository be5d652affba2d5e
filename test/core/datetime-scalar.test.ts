import { GraphQLISODateTime } from 'type-graphql';
import { DateTime } from '../../src/core/scalars';

// Our DateTimeISO answers Dates without the library's validation passes; it must answer exactly what the library does.
describe('DateTime scalar', () => {
  const library = GraphQLISODateTime;

  it('keeps the name, description and input parsing of type-graphql DateTimeISO', () => {
    expect(DateTime.name).toBe('DateTimeISO');
    expect(DateTime.description).toBe(library.description);
    expect(DateTime.parseValue('2026-11-24T08:00:00.123Z')).toEqual(library.parseValue('2026-11-24T08:00:00.123Z'));
    expect(() => DateTime.parseValue('yesterday')).toThrow();
  });

  it('serialises what the library serialises, the same way', () => {
    const values: unknown[] = [
      new Date('2026-11-24T08:00:00.123Z'),
      new Date(0),
      new Date('1999-12-31T23:59:59.999Z'),
      new Date(8.64e15), // the largest Date: +275760-09-13
      '2026-11-24T13:30:00+05:30',
      1795506387578,
    ];
    for (const v of values) expect(DateTime.serialize(v)).toBe(library.serialize(v));
  });

  it('answers an instant by its time, not by the Date object: the same instant again, a Date changed since, a thousand others', () => {
    const d = new Date('2026-11-24T08:00:00.123Z');
    expect(DateTime.serialize(d)).toBe('2026-11-24T08:00:00.123Z');
    expect(DateTime.serialize(new Date(d.getTime()))).toBe('2026-11-24T08:00:00.123Z');
    d.setTime(d.getTime() + 1);
    expect(DateTime.serialize(d)).toBe('2026-11-24T08:00:00.124Z');
    // More instants than it keeps: each still its own text.
    for (let i = 0; i < 1000; i++) {
      const t = new Date(1795506387578 + i * 86_399_999);
      expect(DateTime.serialize(t)).toBe(library.serialize(t));
    }
    expect(DateTime.serialize(new Date('2026-11-24T08:00:00.123Z'))).toBe('2026-11-24T08:00:00.123Z');
  });

  it('refuses what the library refuses', () => {
    for (const v of [new Date(NaN), 'not a date', {}, null]) {
      expect(() => library.serialize(v)).toThrow();
      expect(() => DateTime.serialize(v)).toThrow();
    }
  });
});
