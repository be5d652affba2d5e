/**
 * Requests for the same thing, per key, sent together: an item joins its key's batch until the batch is sent on the
 * next turn of the event loop, so what is sent is asked after every item in it arrived (its answer sees every write
 * committed before any of them). One batch per key is in flight at a time: items arriving meanwhile wait for it and
 * go together in the next one. Under load one round trip serves many requests instead of one each, at the price of
 * at most one round trip of waiting. `send` answers its items itself, failures included (it must not reject).
 */
export class KeyedBatches<T> {
  /** Items not sent yet, per key. */
  private readonly pending = new Map<string, T[]>();
  /** Keys whose batch is being sent. */
  private readonly inFlight = new Set<string>();

  constructor(private readonly send: (items: T[]) => Promise<void>) {}

  add(key: string, item: T): void {
    let items = this.pending.get(key);
    if (!items) {
      this.pending.set(key, (items = []));
      if (!this.inFlight.has(key)) this.sendSoon(key);
    }
    items.push(item);
  }

  private sendSoon(key: string): void {
    setImmediate(() => {
      const items = this.pending.get(key);
      if (!items) return;
      this.pending.delete(key);
      this.inFlight.add(key);
      void this.send(items).finally(() => {
        this.inFlight.delete(key);
        if (this.pending.has(key)) this.sendSoon(key);
      });
    });
  }
}
