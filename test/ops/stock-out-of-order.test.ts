/**
 * Stock writers on a PostgreSQL server take their change numbers when they write, not when they commit: when the
 * writer holding the smaller number commits last, an instance that read in between must still take in its level.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore } from '../helpers/store.js';

after(dropTestDatabases);

const postgres = backends.find((backend) => backend.name === 'postgres')!;

describe('stock written by two transactions that commit out of order (postgres)', () => {
  it('the level of the writer that committed last is taken in by the next read', async () => {
    const t = await startTestStore(postgres, { config: { rateLimit: false } });
    try {
      const { store } = t;
      const variants = store.catalog.snapshot.products.flatMap((p) => p.variants).filter((v) => v.inventoryTracked);
      const [first, second] = [variants[0]!, variants[1]!];
      await store.inventory.refresh(store.db);

      let releaseFirst!: () => void;
      const firstMayCommit = new Promise<void>((resolve) => (releaseFirst = resolve));
      let firstWrote!: () => void;
      const firstHasWritten = new Promise<void>((resolve) => (firstWrote = resolve));
      const setLevel = `update inventory_levels set on_hand = $2, change_seq = nextval('inventory_change_seq') where variant_id = $1`;

      // The first writer takes the smaller change number and holds its transaction open…
      const slow = store.db.transaction(async (tx) => {
        await tx.query(setLevel, [first.id, 777]);
        firstWrote();
        await firstMayCommit;
      });
      await firstHasWritten;
      // …while the second takes the next number and commits, and this instance reads past both numbers.
      await store.db.transaction(async (tx) => tx.query(setLevel, [second.id, 888]));
      await store.inventory.refresh(store.db);
      assert.equal(store.inventory.onHand(second.id), 888);
      assert.notEqual(store.inventory.onHand(first.id), 777, 'not visible yet');

      releaseFirst();
      await slow;
      await store.inventory.refresh(store.db);
      assert.equal(store.inventory.onHand(first.id), 777, 'the level committed last is taken in');
    } finally {
      await t.close();
    }
  });
});
