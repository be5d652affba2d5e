/** An item of a bounded stream, with how many items were dropped just before it because the consumer fell behind. */
export interface StreamItem<T> {
  value: T;
  missed: number;
}

/**
 * An async iterator over values pushed to it, holding at most `capacity` values that its consumer has not taken yet:
 * when one more arrives, the oldest waiting value is dropped and counted (`missed` on the next value taken). A slow
 * consumer (a WebSocket client that reads slowly) so costs the process a fixed amount of memory, never a growing
 * queue. `subscribe` is called once, at once, with the push function, and answers the function that stops it; it is
 * called when the consumer ends the iteration (return) or the stream is ended.
 */
export function boundedStream<T>(
  subscribe: (push: (value: T) => void) => () => void,
  capacity: number,
): AsyncIterableIterator<StreamItem<T>> {
  const queue: StreamItem<T>[] = [];
  let waiting: ((r: IteratorResult<StreamItem<T>>) => void) | null = null;
  let done = false;
  let dropped = 0;
  const push = (value: T) => {
    if (done) return;
    const item = { value, missed: dropped };
    dropped = 0;
    if (waiting) {
      const resolve = waiting;
      waiting = null;
      resolve({ value: item, done: false });
      return;
    }
    if (queue.length >= capacity) {
      const oldest = queue.shift()!;
      const next = queue[0] ?? item;
      next.missed += oldest.missed + 1;
    }
    queue.push(item);
  };
  const stop = subscribe(push);
  const end = (): Promise<IteratorResult<StreamItem<T>>> => {
    if (!done) {
      done = true;
      queue.length = 0;
      stop();
      waiting?.({ value: undefined, done: true });
      waiting = null;
    }
    return Promise.resolve({ value: undefined, done: true });
  };
  return {
    next() {
      const item = queue.shift();
      if (item) return Promise.resolve({ value: item, done: false });
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => (waiting = resolve));
    },
    return: end,
    throw(err?: unknown) {
      void end();
      return Promise.reject(err);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
