import { boundedStream } from '../../src/core/bounded-stream';

/** A source the test pushes into by hand; `stopped` tells whether the stream let go of it. */
function source() {
  const s = { push: (_v: number) => undefined as void, stopped: false };
  const subscribe = (push: (v: number) => void) => {
    s.push = push;
    return () => void (s.stopped = true);
  };
  return { s, subscribe };
}

describe('boundedStream', () => {
  it('hands values over in order, to a waiting consumer at once', async () => {
    const { s, subscribe } = source();
    const stream = boundedStream(subscribe, 10);
    const first = stream.next();
    s.push(1);
    s.push(2);
    expect(await first).toEqual({ value: { value: 1, missed: 0 }, done: false });
    expect(await stream.next()).toEqual({ value: { value: 2, missed: 0 }, done: false });
  });

  it('keeps at most `capacity` values waiting, dropping the oldest and counting them on the next value taken', async () => {
    const { s, subscribe } = source();
    const stream = boundedStream(subscribe, 3);
    for (let i = 1; i <= 10; i++) s.push(i);
    const taken = [];
    for (let i = 0; i < 3; i++) taken.push((await stream.next()).value);
    expect(taken).toEqual([
      { value: 8, missed: 7 },
      { value: 9, missed: 0 },
      { value: 10, missed: 0 },
    ]);
    s.push(11);
    expect((await stream.next()).value).toEqual({ value: 11, missed: 0 });
  });

  it('lets go of its source when the consumer returns, ending a pending next', async () => {
    const { s, subscribe } = source();
    const stream = boundedStream(subscribe, 3);
    const pending = stream.next();
    await stream.return!();
    expect(s.stopped).toBe(true);
    expect(await pending).toEqual({ value: undefined, done: true });
    s.push(1);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });
});
