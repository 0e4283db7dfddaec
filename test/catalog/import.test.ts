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
  });
}
