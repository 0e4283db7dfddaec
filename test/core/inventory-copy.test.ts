/**
 * The in-memory copy of stock follows the database in order: a read of the levels that began before the merchant
 * set a level (on an earlier notification, a poll) and is answered after it does not put the older level back.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Queryable } from '../../src/db/database.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`the stock copy after a merchant's set (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('a read begun before the set and answered after it does not put the older level back', async () => {
      const { store } = t;
      const variant = store.catalog.snapshot.products[0]!.variants[0]!;
      await store.inventory.setOnHand(store.db, variant.sku!, 149);
      assert.equal(store.inventory.onHand(variant.id), 149);

      // The real database, with one read's answer held back (a slow network, a busy process): it reads 149 now
      // and is delivered only when released.
      let readDone!: () => void;
      const readRan = new Promise<void>((resolve) => (readDone = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const slow: Queryable = {
        async query(sql, params) {
          const rows = await store.db.query(sql, params);
          readDone();
          await released;
          return rows as never;
        },
      };
      const earlier = store.inventory.refresh(slow);
      await readRan;
      const setting = store.inventory.setOnHand(store.db, variant.sku!, 0);
      await sleep(50); // the set has committed and, before the fix, been taken in
      release();
      await Promise.all([setting, earlier]);
      assert.equal(store.inventory.onHand(variant.id), 0, 'the level the merchant set last');
    });
  });
}
