/**
 * Units of work: the services take the database handle per call, so a checkout-shaped sequence (read the
 * cart, take its stock, change the cart, write an order) runs in ONE transaction on both backends, and a
 * failure after the stock is taken rolls everything back. Stock never goes below zero, whatever runs at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { demandByVariant, InsufficientStock } from '../../src/inventory/inventory.js';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';
import { Shopper, variantId } from '../cart/shopper.js';

after(dropTestDatabases);

async function onHandInDatabase(t: TestStore, variant: number): Promise<number> {
  const [row] = await t.store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variant]);
  return row!.on_hand;
}

for (const backend of backends) {
  describe(`units of work (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
      // Stands in for the orders table [checkout] adds: a row written in the same transaction.
      await t.store.db.query('create table uow_orders (id serial primary key, cart_token text not null, total integer not null)');
    });
    after(() => t.close());

    /** A cart holding `quantity` of a SKU, through the storefront. */
    async function cartWith(sku: string, quantity: number): Promise<{ token: string; variant: number }> {
      const shopper = new Shopper(t.app);
      const variant = variantId(t, sku);
      assert.equal((await shopper.add([{ id: variant, quantity }])).status, 200);
      return { token: shopper.token!, variant };
    }

    it('a failure after the stock is taken rolls back the stock, the cart change and the order row', async () => {
      const { store } = t;
      const { token, variant } = await cartWith('ESP-RIS-10', 3);
      const stockBefore = await onHandInDatabase(t, variant);
      await assert.rejects(
        store.db.transaction(async (tx) => {
          const view = await store.carts.findCart(tx, token);
          assert.ok(view);
          await store.inventory.take(tx, demandByVariant(view.cart.lines.map((l) => l.line)));
          assert.equal(await tx.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variant]).then((r) => r[0]!.on_hand), stockBefore - 3);
          await store.carts.clear(tx, token);
          await tx.query('insert into uow_orders (cart_token, total) values ($1, $2)', [token, view.cart.totals.totalPrice]);
          throw new Error('payment declined');
        }),
        /payment declined/,
      );
      assert.equal(await onHandInDatabase(t, variant), stockBefore);
      assert.equal((await store.carts.findCart(store.db, token))!.cart.totals.itemCount, 3);
      assert.deepEqual(await store.db.query('select * from uow_orders where cart_token = $1', [token]), []);
      // The store keeps working on the same database after the rollback (PGlite has one connection).
      assert.equal((await Shopper.holding(t.app, token).cart()).body.item_count, 3);
    });

    it('the same sequence commits whole: stock goes down, the cart empties, the order row stays, and the storefront follows', async () => {
      const { store } = t;
      const { token, variant } = await cartWith('SLP-120', 2);
      const stockBefore = await onHandInDatabase(t, variant);
      const snapshot = store.catalog.snapshot;
      await store.db.transaction(async (tx) => {
        const view = (await store.carts.findCart(tx, token))!;
        await store.inventory.take(tx, demandByVariant(view.cart.lines.map((l) => l.line)));
        await store.carts.clear(tx, token);
        await tx.query('insert into uow_orders (cart_token, total) values ($1, $2)', [token, view.cart.totals.totalPrice]);
      });
      assert.equal(await onHandInDatabase(t, variant), stockBefore - 2);
      assert.equal((await store.carts.findCart(store.db, token))!.cart.totals.itemCount, 0);
      assert.equal((await store.db.query('select * from uow_orders where cart_token = $1', [token])).length, 1);
      await store.inventory.refresh(store.db);
      assert.equal(store.inventory.onHand(variant), stockBefore - 2);
      assert.equal(store.catalog.snapshot, snapshot, 'a stock change does not reload the catalog');
    });

    it('taking more than is on hand refuses with InsufficientStock and takes nothing, not even of the other lines', async () => {
      const { store } = t;
      const [plenty, scarce] = [variantId(t, 'ESP-LUN-10'), variantId(t, 'SLP-60')];
      await store.inventory.setOnHand(store.db, 'SLP-60', 1);
      await store.db.query(`update variants set inventory_policy = 'deny' where id = $1`, [scarce]);
      try {
        const before = [await onHandInDatabase(t, plenty), await onHandInDatabase(t, scarce)];
        // Two lines of one variant draw on one stock: 1 + 1 > 1.
        const demand = demandByVariant([
          { variantId: plenty, quantity: 2 },
          { variantId: scarce, quantity: 1 },
          { variantId: scarce, quantity: 1 },
        ]);
        await assert.rejects(
          store.db.transaction((tx) => store.inventory.take(tx, demand)),
          (error: unknown) => error instanceof InsufficientStock && error.variantIds.includes(scarce) && !error.variantIds.includes(plenty),
        );
        assert.deepEqual([await onHandInDatabase(t, plenty), await onHandInDatabase(t, scarce)], before);
      } finally {
        await store.db.query(`update variants set inventory_policy = 'continue' where id = $1`, [scarce]);
      }
    });

    it('twenty transactions racing for the last 3 units: exactly 3 succeed and stock ends at zero, never below', async () => {
      const { store } = t;
      const variant = variantId(t, 'ESP-DEC-10');
      await store.inventory.setOnHand(store.db, 'ESP-DEC-10', 3);
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => store.db.transaction((tx) => store.inventory.take(tx, new Map([[variant, 1]])))),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 3);
      assert.ok(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof InsufficientStock));
      assert.equal(await onHandInDatabase(t, variant), 0);
    });

    it('a stock change reaches the product JSON without reloading the catalog', async () => {
      const { store } = t;
      const snapshot = store.catalog.snapshot;
      await store.inventory.setOnHand(store.db, 'ESP-DEC-10', 0);
      await store.inventory.refresh(store.db);
      assert.equal((await getJson(t.app, '/products/decaf-capsules.js')).body.available, false);
      await store.inventory.setOnHand(store.db, 'ESP-DEC-10', 7);
      await store.inventory.refresh(store.db);
      const product = (await getJson(t.app, '/products/decaf-capsules.js')).body;
      assert.equal(product.available, true);
      assert.equal(product.variants[0].available, true);
      const listed = (await getJson(t.app, '/collections/all/products.json?limit=250')).body.products.find((p: { handle: string }) => p.handle === 'decaf-capsules');
      assert.equal(listed.available, true, 'collection pages follow stock too');
      assert.equal(store.catalog.snapshot, snapshot);
    });
  });
}
