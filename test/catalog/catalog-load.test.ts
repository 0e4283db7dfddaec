/**
 * The in-memory catalog is read a page of products at a time (each page's rows built into one JSON text by the
 * database): read in pages of two, it is the catalog read in one page, with every variant, image and selling plan.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadCatalog } from '../../src/catalog/catalog-store.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`reading the catalog in pages (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
      await importCatalog(t.store.db, {
        products: [
          { handle: 'draft-kettle', title: 'Draft Kettle', published: false, variants: [{ sku: 'DK-1', price: 100 }] },
          { handle: 'tin', title: 'Tin', options: ['Size'], variants: [{ sku: 'TIN-S', options: ['S'], price: 300 }, { sku: 'TIN-L', options: ['L'], price: 400 }] },
        ],
      });
    });
    after(() => t.close());

    it('pages of two read the same catalog as one page: variants, images, selling plans, collections, times', async () => {
      const whole = await loadCatalog(t.store.db);
      const paged = await loadCatalog(t.store.db, 2);
      assert.deepEqual(paged, whole);
      assert.ok(whole.products.length > 4, 'more products than two pages');
      assert.ok(whole.products.some((p) => p.images.length > 0) && whole.products.some((p) => p.sellingPlanGroups.length > 0));
      assert.ok(whole.products.every((p, i) => i === 0 || p.id > whole.products[i - 1]!.id), 'in id order');
    });

    it('reads published products only, with their variants in position order and times as toISOString writes them', async () => {
      const { products } = await loadCatalog(t.store.db, 2);
      assert.equal(products.find((p) => p.handle === 'draft-kettle'), undefined);
      const tin = products.find((p) => p.handle === 'tin')!;
      assert.deepEqual(tin.variants.map((v) => [v.sku, v.position, v.title]), [['TIN-S', 1, 'S'], ['TIN-L', 2, 'L']]);
      const [row] = await t.store.db.query<{ created_at: Date }>(`select created_at from products where handle = 'tin'`);
      assert.equal(tin.createdAt, new Date(row!.created_at).toISOString());
    });
  });
}
