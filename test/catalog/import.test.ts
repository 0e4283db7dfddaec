import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ImportError, type CatalogDocument } from '../../src/catalog/import/catalog-document.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { parseShopifyCsv } from '../../src/catalog/import/shopify-csv.js';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

const mugDocument = (): CatalogDocument => ({
  products: [
    {
      handle: 'shaker-bottle',
      title: 'Shaker Bottle',
      product_type: 'Accessory',
      options: ['Colour'],
      variants: [
        { sku: 'SHK-BLK', options: ['Black'], price: 1200, inventory_quantity: 5 },
        { sku: 'SHK-WHT', options: ['White'], price: 1200, inventory_quantity: 0 },
      ],
    },
  ],
  collections: [{ handle: 'accessories', title: 'Accessories', products: ['shaker-bottle'] }],
});

async function counts(t: TestStore) {
  const [row] = await t.store.db.query<{ products: number; variants: number; collections: number }>(
    `select (select count(*)::int from products) as products, (select count(*)::int from variants) as variants,
            (select count(*)::int from collections) as collections`,
  );
  return row!;
}

/** The store's in-memory catalog and stock after an import made outside them. */
async function refreshed(t: TestStore): Promise<void> {
  await t.store.catalog.refresh(t.store.db);
  await t.store.inventory.refresh(t.store.db);
}

for (const backend of backends) {
  describe(`catalog import (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('a JSON catalog imports, reports what it created, and shows on the storefront after the catalog refreshes', async () => {
      const report = await importCatalog(t.store.db, mugDocument());
      assert.deepEqual(report.products, { created: 1, updated: 0, unchanged: 0, removed: 0 });
      assert.equal(report.variants.created, 2);
      assert.equal(report.collections.created, 1);
      assert.deepEqual(report.stock, { set: [], keptExisting: 0 }, "new variants start at the file's quantity; no existing level was touched");
      await refreshed(t);
      const { status, body } = await getJson(t.app, '/products/shaker-bottle.js');
      assert.equal(status, 200);
      assert.equal(body.variants.length, 2);
      assert.equal(body.variants[1].available, false);
      const collection = await getJson(t.app, '/collections/accessories/products.json');
      assert.deepEqual(
        collection.body.products.map((p: { handle: string }) => p.handle),
        ['shaker-bottle'],
      );
    });

    it('importing the same file again changes nothing and says so', async () => {
      const before = await counts(t);
      const report = await importCatalog(t.store.db, mugDocument());
      assert.deepEqual(report.products, { created: 0, updated: 0, unchanged: 1, removed: 0 });
      assert.deepEqual(report.variants, { created: 0, updated: 0, unchanged: 2, removed: 0 });
      assert.equal(report.collections.unchanged, 1);
      assert.deepEqual(report.stock, { set: [], keptExisting: 0 });
      assert.deepEqual(await counts(t), before);
    });

    it('a re-import upserts by handle and SKU: ids stay, the changed price shows, a dropped variant is removed', async () => {
      await refreshed(t);
      const first = (await getJson(t.app, '/products/shaker-bottle.js')).body;
      const doc = mugDocument();
      doc.products[0]!.variants = [{ sku: 'SHK-BLK', options: ['Black'], price: 1350, inventory_quantity: 5 }];
      const report = await importCatalog(t.store.db, doc);
      assert.equal(report.products.unchanged, 1);
      assert.deepEqual(report.variants, { created: 0, updated: 1, unchanged: 0, removed: 1 });
      await refreshed(t);
      const second = (await getJson(t.app, '/products/shaker-bottle.js')).body;
      assert.equal(second.id, first.id);
      assert.equal(second.variants.length, 1);
      assert.equal(second.variants[0].id, first.variants[0].id);
      assert.equal(second.variants[0].price, 1350);
    });

    it('an invalid document is rejected naming the place, and nothing is imported', async () => {
      const before = await counts(t);
      const doc = mugDocument() as unknown as { products: { variants: { price: unknown }[] }[] };
      doc.products[0]!.variants[1]!.price = 12.5;
      await assert.rejects(importCatalog(t.store.db, doc), (error: unknown) => {
        assert.ok(error instanceof ImportError);
        assert.equal(error.where, 'products.0.variants.1.price');
        return true;
      });
      assert.deepEqual(await counts(t), before);
    });

    it('a collection naming an unknown product rolls back the products of the same file', async () => {
      const before = await counts(t);
      const doc: CatalogDocument = {
        products: [{ handle: 'travel-pouch', title: 'Travel Pouch', variants: [{ sku: 'TP-1', price: 900 }] }],
        collections: [{ handle: 'travel', title: 'Travel', products: ['travel-pouch', 'no-such-product'] }],
      };
      await assert.rejects(importCatalog(t.store.db, doc), /collections\.0\.products\.1/);
      assert.deepEqual(await counts(t), before);
      await refreshed(t);
      assert.equal((await getJson(t.app, '/products/travel-pouch.js')).status, 404);
    });

    it('a SKU already used by another product is rejected, and nothing is imported', async () => {
      const before = await counts(t);
      const doc: CatalogDocument = { products: [{ handle: 'sku-thief', title: 'SKU thief', variants: [{ sku: 'ESP-DEC-10', price: 1 }] }] };
      await assert.rejects(importCatalog(t.store.db, doc), /another product/);
      assert.deepEqual(await counts(t), before);
    });

    it('a real-shaped Shopify CSV export imports with its variants, options, images and drafts hidden', async () => {
      const doc = parseShopifyCsv(fixture('shopify-products.csv'));
      const report = await importCatalog(t.store.db, doc);
      assert.equal(report.products.created, doc.products.length);
      await refreshed(t);
      const electrolyte = await getJson(t.app, '/products/electrolyte-drink-mix-sticks.js');
      assert.equal(electrolyte.status, 200);
      assert.equal(electrolyte.body.variants.length, 5);
      assert.equal(electrolyte.body.options.length, 2);
      assert.ok(electrolyte.body.images.length >= 2);
      assert.ok(electrolyte.body.variants.every((v: { price: number }) => Number.isInteger(v.price)));
      const draft = doc.products.find((p) => p.published === false)!;
      assert.equal((await getJson(t.app, `/products/${draft.handle}.js`)).status, 404);
      const all = await getJson(t.app, '/collections/all/products.json?limit=250');
      assert.ok(all.body.products.some((p: { handle: string }) => p.handle === 'lungo-coffee-capsules'));
      assert.ok(!all.body.products.some((p: { handle: string }) => p.handle === draft.handle));
    });

    it('a Shopify CSV with one bad row is rejected naming its row and column, and nothing is imported', async () => {
      const before = await counts(t);
      assert.throws(() => parseShopifyCsv(fixture('shopify-products-bad.csv')), (error: unknown) => {
        assert.ok(error instanceof ImportError);
        assert.equal(error.where, 'row 9, column "Variant Price"');
        return true;
      });
      assert.deepEqual(await counts(t), before);
    });

    it("an existing variant's stock changes only with setStock, and then only where the file gives a quantity", async () => {
      const doc: CatalogDocument = { products: [{ handle: 'pill-box', title: 'Pill Box', variants: [{ sku: 'PB-1', price: 500, inventory_quantity: 9 }] }] };
      await importCatalog(t.store.db, doc);
      await t.store.inventory.setOnHand(t.store.db, 'PB-1', 4); // sold or counted since
      const onHand = async () =>
        (await t.store.db.query<{ on_hand: number }>(`select i.on_hand from inventory_levels i join variants v on v.id = i.variant_id where v.sku = 'PB-1'`))[0]!.on_hand;
      const [{ id: variantId }] = (await t.store.db.query<{ id: number }>(`select id from variants where sku = 'PB-1'`)) as [{ id: number }];

      const withoutStock: CatalogDocument = { products: [{ handle: 'pill-box', title: 'Pill Box', variants: [{ sku: 'PB-1', price: 550 }] }] };
      const priced = await importCatalog(t.store.db, withoutStock);
      assert.deepEqual(priced.variants, { created: 0, updated: 1, unchanged: 0, removed: 0 });
      assert.deepEqual(priced.stock, { set: [], keptExisting: 0 });
      assert.equal(await onHand(), 4);

      const kept = await importCatalog(t.store.db, doc);
      assert.equal(await onHand(), 4, "without setStock the file's quantity does not replace the store's level");
      assert.deepEqual(kept.stock, { set: [], keptExisting: 1 });
      assert.deepEqual(kept.variants, { created: 0, updated: 1, unchanged: 0, removed: 0 }, 'the price changed back; the stock did not');

      const set = await importCatalog(t.store.db, doc, { setStock: true });
      assert.equal(await onHand(), 9, 'with setStock a quantity the file gives is set');
      assert.deepEqual(set.stock, { set: [{ sku: 'PB-1', variantId, previous: 4, onHand: 9 }], keptExisting: 0 });
      assert.deepEqual(set.variants, { created: 0, updated: 1, unchanged: 0, removed: 0 }, 'a stock change alone counts as a change');

      await t.store.inventory.setOnHand(t.store.db, 'PB-1', 2);
      const noQuantity = await importCatalog(t.store.db, { products: [{ handle: 'pill-box', title: 'Pill Box', variants: [{ sku: 'PB-1', price: 500 }] }] }, { setStock: true });
      assert.equal(await onHand(), 2, 'setStock leaves a variant alone whose quantity the file does not give');
      assert.deepEqual(noQuantity.stock, { set: [], keptExisting: 0 });
    });

    it('a variant in a cart that a re-import drops is archived, not deleted: the cart keeps its row, the catalog drops it, its SKU brings it back', async () => {
      const two: CatalogDocument = {
        products: [{ handle: 'tin', title: 'Tin', options: ['Size'], variants: [{ sku: 'TIN-S', options: ['S'], price: 300, inventory_quantity: 5 }, { sku: 'TIN-L', options: ['L'], price: 400, inventory_quantity: 5 }] }],
      };
      await importCatalog(t.store.db, two);
      await refreshed(t);
      const large = t.store.catalog.snapshot.productByHandle('tin')!.variants.find((v) => v.sku === 'TIN-L')!;
      const cart = await t.store.carts.addItems(t.store.db, undefined, [{ variantId: large.id, quantity: 1 }]);

      const one: CatalogDocument = { products: [{ ...two.products[0]!, variants: [two.products[0]!.variants[0]!] }] };
      const report = await importCatalog(t.store.db, one);
      assert.equal(report.variants.removed, 1);
      const [row] = await t.store.db.query<{ archived: boolean }>('select archived_at is not null as archived from variants where id = $1', [large.id]);
      assert.equal(row!.archived, true);
      assert.equal((await t.store.db.query('select 1 from cart_lines where variant_id = $1', [large.id])).length, 1, 'the cart line still names it');
      await refreshed(t);
      assert.equal(t.store.catalog.snapshot.variantById(large.id), undefined);
      assert.equal((await t.store.carts.findCart(t.store.db, cart.token))!.cart.lines.length, 0, 'the cart no longer shows it');

      await importCatalog(t.store.db, two);
      await refreshed(t);
      assert.equal(t.store.catalog.snapshot.variantById(large.id)?.variant.sku, 'TIN-L', 'the same id is back');
    });
  });
}
