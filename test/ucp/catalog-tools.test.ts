/**
 * The catalog tools' behaviour (UCP catalog capability): search with filters and cursor pagination,
 * lookup by product id, variant id, handle and SKU, get_product with option selection; ids and prices
 * are the storefront's own, so what search returns is what the storefront and carts accept.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';
import { injectToolCall } from './mcp-harness.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`${backend.name}: catalog tools`, () => {
    let test: TestStore;
    const call = (name: string, args: Record<string, unknown>) => injectToolCall(test.app, name, args);

    before(async () => {
      test = await startTestStore(backend, { config: { rateLimit: false } });
    });
    after(() => test.close());

    describe('search_catalog', () => {
      it('without a query lists every published product, page by page through the cursor', async () => {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await call('search_catalog', { catalog: { pagination: { limit: 2, ...(cursor ? { cursor } : {}) } } });
          seen.push(...page.products.map((p: any) => p.handle));
          assert.ok(page.products.length <= 2);
          cursor = page.pagination.has_next_page ? page.pagination.cursor : undefined;
          pages += 1;
        } while (cursor && pages < 10);
        assert.deepEqual(seen.sort(), ['decaf-capsules', 'energy-drink-stick', 'espresso-capsules', 'hydration-drink-stick', 'sleep-capsules']);
        assert.ok(!seen.includes('cold-brew-capsules'), 'unpublished products are not listed');
      });

      it('ranks free-text matches and defaults to 10 per page', async () => {
        const result = await call('search_catalog', { catalog: { query: 'hydration drink stick' } });
        assert.equal(result.products[0].handle, 'hydration-drink-stick');
        assert.equal(result.pagination.has_next_page, false);
        assert.ok(result.products.length <= 10);
      });

      it('finds nothing with products: [] and no error', async () => {
        const result = await call('search_catalog', { catalog: { query: 'unicorn saddle' } });
        assert.deepEqual(result.products, []);
        assert.equal(result.ucp.status, 'success');
      });

      it('filters by category: a product type or a collection title', async () => {
        const byType = await call('search_catalog', { catalog: { filters: { categories: ['coffee capsule'] } } });
        assert.deepEqual(byType.products.map((p: any) => p.handle).sort(), ['decaf-capsules', 'espresso-capsules']);
        const byCollection = await call('search_catalog', { catalog: { filters: { categories: ['Drink Sticks'] } } });
        assert.deepEqual(byCollection.products.map((p: any) => p.handle).sort(), ['energy-drink-stick', 'hydration-drink-stick']);
      });

      it('filters by price in cents: a product with a variant in the range', async () => {
        const result = await call('search_catalog', { catalog: { filters: { price: { max: 700 } }, context: { currency: 'USD' } } });
        assert.deepEqual(result.products.map((p: any) => p.handle).sort(), ['decaf-capsules', 'espresso-capsules']);
        const none = await call('search_catalog', { catalog: { filters: { price: { min: 100_000 } } } });
        assert.deepEqual(none.products, []);
      });

      it('does not apply a price filter in another currency, and says so', async () => {
        const result = await call('search_catalog', { catalog: { filters: { price: { max: 700 } }, context: { currency: 'EUR' } } });
        assert.equal(result.products.length, 5);
        assert.equal(result.messages[0].type, 'warning');
        assert.equal(result.messages[0].code, 'price_filter_ignored');
      });

      it('shows prices in integer cents, the same as the storefront JSON', async () => {
        const result = await call('search_catalog', { catalog: { query: 'hydration drink stick' } });
        const product = result.products[0];
        const storefront = (await getJson(test.app, '/products/hydration-drink-stick.js')).body;
        assert.equal(product.id, String(storefront.id));
        assert.deepEqual(product.price_range, { min: { amount: storefront.price_min, currency: 'USD' }, max: { amount: storefront.price_max, currency: 'USD' } });
        for (const variant of product.variants) {
          const same = storefront.variants.find((v: any) => String(v.id) === variant.id);
          assert.ok(same, `variant ${variant.id} is a storefront variant id`);
          assert.equal(variant.price.amount, same.price);
          assert.ok(Number.isInteger(variant.price.amount));
          assert.equal(variant.availability.available, same.available);
        }
      });
    });

    describe('lookup_catalog', () => {
      it('resolves a variant id and a SKU exactly, a product id and a handle to the featured variant', async () => {
        const search = await call('search_catalog', { catalog: { query: 'espresso capsules' } });
        const espresso = search.products.find((p: any) => p.handle === 'espresso-capsules');
        const variantId = espresso.variants[3].id;
        const result = await call('lookup_catalog', { catalog: { ids: [variantId, 'SLP-120', espresso.id, 'decaf-capsules'] } });
        const byHandle = Object.fromEntries(result.products.map((p: any) => [p.handle, p]));
        assert.deepEqual(Object.keys(byHandle).sort(), ['decaf-capsules', 'espresso-capsules', 'sleep-capsules']);
        const espressoVariants = byHandle['espresso-capsules'].variants;
        assert.deepEqual(espressoVariants.find((v: any) => v.id === variantId).inputs, [{ id: variantId, match: 'exact' }]);
        assert.ok(espressoVariants.some((v: any) => v.inputs.some((i: any) => i.id === espresso.id && i.match === 'featured')));
        assert.deepEqual(byHandle['sleep-capsules'].variants.map((v: any) => v.sku), ['SLP-120']);
        assert.equal(byHandle['decaf-capsules'].variants[0].inputs[0].match, 'featured');
        assert.equal(result.messages, undefined);
      });

      it('leaves out identifiers that name nothing and reports them as info not_found', async () => {
        const result = await call('lookup_catalog', { catalog: { ids: ['no-such-thing', 'cold-brew-capsules', 'SLP-60', 'SLP-60'] } });
        assert.deepEqual(result.products.map((p: any) => p.handle), ['sleep-capsules']);
        assert.equal(result.products[0].variants.length, 1);
        assert.deepEqual(
          result.messages.map((m: any) => [m.type, m.code, m.content]),
          [
            ['info', 'not_found', 'no-such-thing'],
            ['info', 'not_found', 'cold-brew-capsules'],
          ],
        );
      });
    });

    describe('get_product', () => {
      it('by handle: every variant, the first available one featured, options with availability signals', async () => {
        const { product } = await call('get_product', { catalog: { id: 'hydration-drink-stick' } });
        assert.equal(product.variants.length, 6);
        assert.equal(product.variants[0].availability.available, true);
        assert.equal(product.selected.length, 2);
        assert.ok(product.options.every((o: any) => o.values.every((v: any) => typeof v.available === 'boolean' && typeof v.exists === 'boolean')));
      });

      it('by variant id: that variant is featured and selected', async () => {
        const { products } = await call('lookup_catalog', { catalog: { ids: ['HYD-MIXEDBERRY-30'] } });
        const variantId = products[0].variants[0].id;
        const { product } = await call('get_product', { catalog: { id: variantId } });
        assert.equal(product.variants[0].id, variantId);
        assert.deepEqual(product.selected, [
          { name: 'Flavour', label: 'Mixed Berry' },
          { name: 'Pack size', label: '30 sticks' },
        ]);
      });

      it('selected options narrow to a variant; a sold-out combination shows as existing but unavailable', async () => {
        const { product } = await call('get_product', {
          catalog: { id: 'hydration-drink-stick', selected: [{ name: 'Flavour', label: 'Watermelon' }, { name: 'Pack size', label: '30 sticks' }] },
        });
        assert.equal(product.variants[0].title, 'Watermelon / 30 sticks');
        assert.equal(product.variants[0].availability.available, false);
        const packs = product.options.find((o: any) => o.name === 'Pack size').values;
        assert.deepEqual(packs.find((v: any) => v.label === '30 sticks'), { label: '30 sticks', exists: true, available: false });
        assert.deepEqual(packs.find((v: any) => v.label === '10 sticks'), { label: '10 sticks', exists: true, available: true });
      });

      it('relaxes the options named last in preferences when no variant matches every selection', async () => {
        const { product } = await call('get_product', {
          catalog: {
            id: 'espresso-capsules',
            selected: [{ name: 'Roast', label: 'Lungo' }, { name: 'Pack size', label: '500 capsules' }],
            preferences: ['Roast', 'Pack size'],
          },
        });
        assert.equal(product.selected.find((s: any) => s.name === 'Roast').label, 'Lungo');
        assert.match(product.variants[0].title, /^Lungo \//);
      });

      it('an unknown or unpublished product is a not_found business error', async () => {
        for (const id of ['no-such-product', 'cold-brew-capsules']) {
          const result = await call('get_product', { catalog: { id } });
          assert.equal(result.ucp.status, 'error');
          assert.deepEqual(
            result.messages.map((m: any) => [m.type, m.code, m.severity]),
            [['error', 'not_found', 'unrecoverable']],
          );
        }
      });
    });
  });
}
