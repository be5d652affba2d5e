import { KeyedBatches } from '../../src/core/keyed-batches';

/** The batching behind the catalog version lookups and entitlement evaluations (src/core/keyed-batches.ts). */
it('sends the items of one turn together, one batch per key in flight, and the items that waited in the next', async () => {
  const sent: string[][] = [];
  const release: (() => void)[] = [];
  const batches = new KeyedBatches<string>(async (items) => {
    sent.push(items);
    await new Promise<void>((r) => release.push(r));
  });
  const turn = () => new Promise((r) => setImmediate(r));

  batches.add('a', 'a1');
  batches.add('a', 'a2');
  batches.add('b', 'b1');
  await turn();
  expect(sent).toEqual([['a1', 'a2'], ['b1']]);

  // While a's batch is in flight, a's new items wait; b's batch is in flight too.
  batches.add('a', 'a3');
  batches.add('a', 'a4');
  await turn();
  await turn();
  expect(sent).toHaveLength(2);

  release.shift()!(); // a's first batch returns: the waiting items go together
  await turn();
  await turn();
  expect(sent).toEqual([['a1', 'a2'], ['b1'], ['a3', 'a4']]);
  release.forEach((r) => r());
});
