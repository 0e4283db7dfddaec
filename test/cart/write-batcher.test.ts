/** Group commit of cart changes (src/cart/write-batcher.ts) on a real database. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readCart, type CartWrite } from '../../src/cart/cart-store.js';
import { addItems, lineChanges } from '../../src/cart/cart.js';
import { CartWriteBatcher } from '../../src/cart/write-batcher.js';
import type { Queryable, Row } from '../../src/db/database.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { variantId } from './shopper.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`cart: batched writes (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    /** `count` stored carts, and for each a change adding one more of its line. */
    async function cartsWithChanges(count: number): Promise<CartWrite[]> {
      const { carts, db: storeDb } = t.store;
      const id = variantId(t, 'ESP-RIS-10');
      const lookup = (variant: number) => t.store.catalog.snapshot.variantById(variant);
      const writes: CartWrite[] = [];
      for (let i = 0; i < count; i++) {
        const token = (await carts.addItems(storeDb, undefined, [{ variantId: id, quantity: 1 }])).token;
        const stored = (await readCart(t.store.db, token))!;
        const after = addItems(stored.cart, [{ variantId: id, quantity: 1 }], lookup, { maxLineQuantity: 10, stock: t.store.inventory });
        writes.push({ id: stored.id, version: stored.version, cart: after, changes: lineChanges(stored.cart, after) });
      }
      return writes;
    }

    async function quantities(writes: CartWrite[]): Promise<number[]> {
      return Promise.all(writes.map(async (w) => (await readCart(t.store.db, w.cart.token))!.cart.lines[0]!.quantity));
    }

    /** A deadlock: PostgreSQL rolled the statement back whole. */
    const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });

    /**
     * The database, counting the write statements and failing the ones `fail` picks: before running them
     * (`failure`, a deadlock by default), or after running them (`afterwards`: the answer was lost).
     */
    function watched(fail: (sql: string, params: readonly unknown[]) => boolean = () => false, options: { afterwards?: boolean } = {}) {
      const statements: number[] = [];
      const db: Queryable = {
        query: async <T extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> => {
          const failing = sql.includes('with input') && fail(sql, params);
          if (sql.includes('with input')) statements.push(params.length);
          if (failing && !options.afterwards) throw deadlock();
          const rows = await t.store.db.query<T>(sql, params);
          if (failing) throw new Error('Connection terminated unexpectedly');
          return rows;
        },
      };
      return { db, statements };
    }

    it('changes to many carts made at once share a few statements, and each is stored', async () => {
      const writes = await cartsWithChanges(30);
      const { db, statements } = watched();
      const batcher = new CartWriteBatcher(db, 1);
      const results = await Promise.all(writes.map((w) => batcher.write(w)));
      assert.deepEqual(new Set(results), new Set([true]));
      assert.ok(statements.length <= 3, `${statements.length} statements for 30 changes`);
      assert.deepEqual(await quantities(writes), writes.map(() => 2));
    });

    it('a change whose cart moved on since it was read is not written and says so', async () => {
      const [write] = await cartsWithChanges(1);
      const batcher = new CartWriteBatcher(t.store.db, 1);
      assert.equal(await batcher.write(write!), true);
      assert.equal(await batcher.write(write!), false);
      assert.deepEqual(await quantities([write!]), [2]);
    });

    it('a batch statement PostgreSQL rolled back (deadlock) is retried change by change, so one failure does not fail the others', async () => {
      const writes = await cartsWithChanges(8);
      let failures = 0;
      const { db, statements } = watched((_sql, params) => params.length > 12 && failures++ === 0);
      const batcher = new CartWriteBatcher(db, 1);
      const results = await Promise.all(writes.map((w) => batcher.write(w)));
      assert.deepEqual(new Set(results), new Set([true]));
      assert.equal(failures, 1);
      assert.ok(statements.length > 2);
      assert.deepEqual(await quantities(writes), writes.map(() => 2));
    });

    it('a batch whose answer was lost after it was applied is not tried again: each change is refused and stored once', async () => {
      const writes = await cartsWithChanges(4);
      let failures = 0;
      const { db, statements } = watched((_sql, params) => params.length > 8 && failures++ === 0, { afterwards: true });
      const batcher = new CartWriteBatcher(db, 1);
      const results = await Promise.allSettled(writes.map((w) => batcher.write(w)));
      assert.equal(failures, 1);
      assert.equal(statements.length, 1, 'no second statement for the same changes');
      assert.deepEqual(results.map((r) => r.status), writes.map(() => 'rejected'));
      // Each change landed once (1 + 1 = 2), never twice.
      assert.deepEqual(await quantities(writes), writes.map(() => 2));
    });

    it('a change that fails alone is refused to its caller only', async () => {
      const writes = await cartsWithChanges(3);
      const doomed = writes[1]!;
      const { db } = watched((_sql, params) => params.includes(doomed.id));
      const batcher = new CartWriteBatcher(db, 1);
      const results = await Promise.allSettled(writes.map((w) => batcher.write(w)));
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.deepEqual(await quantities(writes), [2, 1, 2]);
    });
  });
}
