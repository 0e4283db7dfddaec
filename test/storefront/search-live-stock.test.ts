/**
 * Search and recommendations follow live stock: a product that sells out (through the store's inventory,
 * as `storefront stock set` or a sale does) moves after the available ones and shows `available: false`,
 * and a restock brings it back, all without a catalog reload (the snapshot stays the same object).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const ESPRESSO_SKUS = ['ESP-RIS-10', 'ESP-RIS-50', 'ESP-CLA-10', 'ESP-CLA-50', 'ESP-LUN-10', 'ESP-LUN-50'];
const ENERGY_SKUS = ['NRG-CITRUS-12', 'NRG-CHERRYCOLA-12'];

interface Shown {
  handle: string;
  available: boolean;
  variants: { available: boolean }[];
}

for (const backend of backends) {
  describe(`search and recommendations follow live stock (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    async function setStock(skus: string[], onHand: number): Promise<void> {
      for (const sku of skus) await t.store.inventory.setOnHand(t.store.db, sku, onHand);
      await t.store.inventory.refresh(t.store.db);
    }

    async function suggest(q: string, limit = 10): Promise<Shown[]> {
      const { status, body } = await getJson(t.app, `/search/suggest.json?q=${encodeURIComponent(q)}&resources[limit]=${limit}`);
      assert.equal(status, 200);
      return body.resources.results.products;
    }

    async function recommend(handle: string, intent: 'related' | 'complementary'): Promise<Shown[]> {
      const id = t.store.catalog.snapshot.productByHandle(handle)!.id;
      const { status, body } = await getJson(t.app, `/recommendations/products.json?product_id=${id}&limit=10&intent=${intent}`);
      assert.equal(status, 200);
      return body.products;
    }

    const handles = (products: Shown[]) => products.map((p) => p.handle);
    const availability = (products: Shown[]) => Object.fromEntries(products.map((p) => [p.handle, p.available]));

    // First, before anything shows the energy stick: a restock of a product no cached answer shows must
    // still reach answers that cut it off (it moves back into a list of one).
    it('a product restocked outside a cached, cut-off answer moves back into it', async () => {
      const snapshot = t.store.catalog.snapshot;
      await setStock(ENERGY_SKUS, 0);
      assert.deepEqual(handles(await suggest('drink stick', 1)), ['hydration-drink-stick']);
      assert.deepEqual(handles(await suggest('drink stick', 1)), ['hydration-drink-stick'], 'answered again, from the cache');
      await setStock(ENERGY_SKUS, 40);
      assert.deepEqual(handles(await suggest('drink stick', 1)), ['energy-drink-stick']);
      assert.deepEqual(handles(await suggest('drink stick')), ['energy-drink-stick', 'hydration-drink-stick']);
      assert.equal(t.store.catalog.snapshot, snapshot, 'no catalog reload');
    });

    it('a sold-out product moves after available ones in search and recommendations, and shows available: false', async () => {
      const snapshot = t.store.catalog.snapshot;
      // Asked first so every answer is cached (and the product JSON kept) before the stock changes.
      const searchBefore = await suggest('espresso');
      const relatedBefore = await recommend('decaf-capsules', 'related');
      const complementaryBefore = await recommend('hydration-drink-stick', 'complementary');
      assert.deepEqual(handles(searchBefore), ['espresso-capsules', 'decaf-capsules']);
      assert.equal(relatedBefore[0]!.handle, 'espresso-capsules', 'same type and collection first');
      assert.deepEqual(handles(complementaryBefore), ['energy-drink-stick', 'sleep-capsules']);
      for (const products of [searchBefore, relatedBefore, complementaryBefore]) {
        assert.ok(products.every((p) => p.available), JSON.stringify(availability(products)));
      }

      await setStock(ESPRESSO_SKUS, 0);
      await setStock(ENERGY_SKUS, 0);
      assert.equal(t.store.catalog.snapshot, snapshot, 'no catalog reload');

      const search = await suggest('espresso');
      assert.deepEqual(handles(search), ['decaf-capsules', 'espresso-capsules']);
      assert.deepEqual(availability(search), { 'decaf-capsules': true, 'espresso-capsules': false });
      assert.ok(search[1]!.variants.every((variant) => !variant.available));

      const related = await recommend('decaf-capsules', 'related');
      assert.deepEqual(new Set(handles(related)), new Set(handles(relatedBefore)), 'the same products');
      const soldOut = related.filter((p) => !p.available).map((p) => p.handle);
      assert.deepEqual(soldOut.sort(), ['energy-drink-stick', 'espresso-capsules']);
      assert.ok(related.slice(-2).every((p) => !p.available), `sold-out ones last: ${handles(related)}`);
      assert.ok(related.slice(0, -2).every((p) => p.available));

      const complementary = await recommend('hydration-drink-stick', 'complementary');
      assert.deepEqual(handles(complementary), ['sleep-capsules', 'energy-drink-stick']);
      assert.deepEqual(availability(complementary), { 'sleep-capsules': true, 'energy-drink-stick': false });
      assert.deepEqual(availability(await recommend('decaf-capsules', 'complementary')), { 'espresso-capsules': false });

      // The product's own page says the same.
      assert.equal((await getJson(t.app, '/products/espresso-capsules.js')).body.available, false);

      // Restocked: back in front, available again, still the same snapshot.
      await setStock(ESPRESSO_SKUS, 5);
      await setStock(ENERGY_SKUS, 5);
      assert.equal(t.store.catalog.snapshot, snapshot, 'no catalog reload');
      const restocked = await suggest('espresso');
      assert.deepEqual(handles(restocked), ['espresso-capsules', 'decaf-capsules']);
      assert.ok(restocked.every((p) => p.available));
      assert.deepEqual(handles(await recommend('decaf-capsules', 'related')), handles(relatedBefore));
      assert.deepEqual(handles(await recommend('hydration-drink-stick', 'complementary')), ['energy-drink-stick', 'sleep-capsules']);
    });

    it('one variant selling out leaves the product available and in place', async () => {
      await setStock(['ESP-RIS-10'], 0);
      const search = await suggest('espresso');
      assert.deepEqual(handles(search), ['espresso-capsules', 'decaf-capsules']);
      assert.equal(search[0]!.available, true);
      assert.deepEqual(
        search[0]!.variants.map((variant) => variant.available),
        [false, true, true, true, true, true],
      );
    });
  });
}
