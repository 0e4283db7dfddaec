/**
 * `storefront stock` (listStock) shows committed backorders: a back-orderable variant sold beyond its stock has 0
 * on hand, and the units sold beyond it that have neither shipped nor been canceled show as backordered. Orders are
 * placed through the real checkout (an agent's checkout approved by the buyer) and moved by the merchant's order
 * actions (fulfil, cancel). On both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import type { LineInput } from '../../src/checkout/checkout-service.js';
import { describeStock } from '../../src/cli/merchant-commands.js';
import { listStock, type StockListing } from '../../src/inventory/inventory-store.js';
import type { Order } from '../../src/orders/orders.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const BUYER = { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' };
const ADDRESS = { streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' };

for (const backend of backends) {
  describe(`stock with committed backorders (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend, { seedDemo: false });
      await importCatalog(t.store.db, {
        products: [
          {
            handle: 'night-capsules',
            title: 'Night Capsules',
            variants: [{ sku: 'NGT-30', price: 1800, inventory_quantity: 2, inventory_policy: 'continue' }],
          },
          { handle: 'day-capsules', title: 'Day Capsules', variants: [{ sku: 'DAY-30', price: 1600, inventory_quantity: 5 }] },
        ],
      });
      await t.store.catalog.refresh(t.store.db);
      await t.store.inventory.refresh(t.store.db);
    });
    after(() => t.close());

    const variantId = (sku: string) => t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;
    const listed = async (sku: string): Promise<StockListing> => (await listStock(t.store.db)).find((row) => row.sku === sku)!;

    /** An agent's checkout the buyer approves: the order as the real checkout places it. */
    async function placeOrder(lines: LineInput[]): Promise<Order> {
      const { checkouts, db } = t.store;
      const created = await checkouts.create(db, { lines, buyer: BUYER, destination: ADDRESS, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
      const approval = asked.approval!;
      const outcome = await checkouts.approve(db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
      assert.equal(outcome.kind, 'placed', JSON.stringify(outcome));
      return (outcome as { order: Order }).order;
    }

    it('a variant nobody ordered beyond stock lists 0 backordered', async () => {
      assert.deepEqual(
        (await listStock(t.store.db)).map((row) => [row.sku, row.onHand, row.backordered]),
        [
          ['DAY-30', 5, 0],
          ['NGT-30', 2, 0],
        ],
      );
    });

    let first: Order;
    it('a back-orderable variant sold beyond stock lists 0 on hand and the units sold beyond it as backordered', async () => {
      first = await placeOrder([{ variantId: variantId('NGT-30'), quantity: 5 }]);
      assert.equal(first.lines[0]!.backordered, 3);
      assert.deepEqual(await listed('NGT-30'), {
        sku: 'NGT-30',
        variantId: variantId('NGT-30'),
        productTitle: 'Night Capsules',
        variantTitle: 'Default Title',
        onHand: 0,
        backordered: 3,
        tracked: true,
      });
      const second = await placeOrder([{ variantId: variantId('NGT-30'), quantity: 4 }]);
      assert.equal(second.lines[0]!.backordered, 4);
      assert.equal((await listed('NGT-30')).backordered, 7, "every order's backorders add up");
      assert.equal((await listed('DAY-30')).backordered, 0);

      await t.store.orders.cancel(t.store.db, second.id, 'the buyer changed their mind');
      assert.deepEqual([(await listed('NGT-30')).onHand, (await listed('NGT-30')).backordered], [0, 3], "a canceled order's backorders do not count");
    });

    it('units shipped are no longer backordered: the in-stock units ship first, then the backordered ones, taken from stock when they arrive', async () => {
      await t.store.orders.fulfill(t.store.db, first.id, { lines: new Map([[first.lines[0]!.id, 2]]) });
      assert.equal((await listed('NGT-30')).backordered, 3, 'the two units that were in stock shipped');
      // Backordered units cannot ship before the store has them: refused, nothing changed.
      await assert.rejects(t.store.orders.fulfill(t.store.db, first.id, { lines: new Map([[first.lines[0]!.id, 2]]) }), /sold beyond stock are not in stock yet/);
      assert.equal((await listed('NGT-30')).backordered, 3);
      // They arrive: the merchant counts 5; shipping 2 of the backordered units takes them out of those 5.
      await t.store.inventory.setOnHand(t.store.db, 'NGT-30', 5);
      await t.store.orders.fulfill(t.store.db, first.id, { lines: new Map([[first.lines[0]!.id, 2]]) });
      assert.deepEqual([(await listed('NGT-30')).onHand, (await listed('NGT-30')).backordered], [3, 1]);
      await t.store.orders.cancel(t.store.db, first.id);
      assert.equal((await listed('NGT-30')).backordered, 0, 'the unshipped backordered unit was canceled');
      assert.equal((await listed('NGT-30')).onHand, 3, 'a backordered unit never came out of stock, so none goes back');
    });

    it('`storefront stock` shows the committed backorders beside the units on hand', async () => {
      // 3 on hand (the units that arrived above): an order of 6 takes them and backorders 3.
      await placeOrder([{ variantId: variantId('NGT-30'), quantity: 6 }]);
      const lines = describeStock(await listStock(t.store.db)).split('\n');
      assert.match(lines[0]!, /^SKU\s+VARIANT ID\s+PRODUCT\s+ON HAND$/);
      assert.match(lines[1]!, new RegExp(`^DAY-30\\s+${variantId('DAY-30')}\\s+Day Capsules\\s+5$`));
      assert.match(lines[2]!, new RegExp(`^NGT-30\\s+${variantId('NGT-30')}\\s+Night Capsules\\s+0 \\(3 backordered\\)$`));
    });
  });
}

describe('what `storefront stock` prints for each kind of level', () => {
  const row = (overrides: Partial<StockListing>): StockListing => ({
    sku: 'SKU-1',
    variantId: 7,
    productTitle: 'Tin',
    variantTitle: 'Default Title',
    onHand: 0,
    backordered: 0,
    tracked: true,
    ...overrides,
  });

  it('units on hand, backorders, and untracked stock', () => {
    assert.equal(
      describeStock([
        row({ sku: 'A', onHand: 12 }),
        row({ sku: 'B', onHand: 0, backordered: 3, variantTitle: 'Large' }),
        row({ sku: 'C', onHand: 4, backordered: 2 }),
        row({ sku: null, onHand: 0, tracked: false }),
      ]),
      [
        'SKU  VARIANT ID  PRODUCT      ON HAND',
        'A    7           Tin          12',
        'B    7           Tin - Large  0 (3 backordered)',
        'C    7           Tin          4 (2 backordered)',
        '-    7           Tin          0 (not tracked)',
      ].join('\n'),
    );
  });
});
