import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { demoCatalog } from '../../src/catalog/demo-catalog.js';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';
import { schemaErrors } from '../helpers/schemas.js';

const publishedDemo = demoCatalog.products.filter((p) => p.published !== false);

after(dropTestDatabases);

for (const backend of backends) {
  describe(`catalog endpoints (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('GET /products/{handle}.js answers the product with every variant, in cents, valid against the Product schema', async () => {
      const { status, body, headers } = await getJson(t.app, '/products/hydration-drink-stick.js');
      assert.equal(status, 200);
      assert.match(String(headers['content-type']), /^application\/json/);
      assert.deepEqual(schemaErrors('Product', body), []);
      const source = demoCatalog.products.find((p) => p.handle === 'hydration-drink-stick')!;
      assert.equal(body.title, source.title);
      assert.equal(body.variants.length, source.variants.length);
      const prices = source.variants.map((v) => v.price);
      assert.equal(body.price, Math.min(...prices));
      assert.equal(body.price_min, Math.min(...prices));
      assert.equal(body.price_max, Math.max(...prices));
      for (const variant of body.variants) {
        assert.ok(Number.isInteger(variant.price), 'variant price is integer cents');
        const input = source.variants.find((v) => v.sku === variant.sku)!;
        assert.equal(variant.price, input.price);
        assert.equal(variant.compare_at_price, input.compare_at_price ?? null);
        assert.deepEqual(variant.options, input.options);
      }
      assert.deepEqual(
        body.options.map((o: { name: string }) => o.name),
        source.options,
      );
      assert.deepEqual(body.options[0].values, ['Lemon-Lime', 'Mixed Berry', 'Watermelon']);
    });

    it('a sold-out variant is unavailable while its product stays available', async () => {
      const { body } = await getJson(t.app, '/products/hydration-drink-stick.js');
      const soldOut = body.variants.find((v: { sku: string }) => v.sku === 'HYD-WATERMELON-30');
      assert.equal(soldOut.available, false);
      assert.equal(body.available, true);
      assert.ok(body.variants.filter((v: { available: boolean }) => v.available).length > 0);
    });

    it('a back-orderable variant with no stock on hand stays available', async () => {
      const { body } = await getJson(t.app, '/products/sleep-capsules.js');
      assert.equal(body.variants.find((v: { sku: string }) => v.sku === 'SLP-60').available, true);
    });

    it('image URLs are absolute and start with BASE_URL, and the featured image is the first', async () => {
      const { body } = await getJson(t.app, '/products/espresso-capsules.js');
      assert.ok(body.images.length > 0);
      for (const src of body.images) assert.ok(src.startsWith('http://store.test/'), src);
      assert.equal(body.featured_image, body.images[0]);
      const image = await t.app.inject({ method: 'GET', url: new URL(body.featured_image).pathname });
      assert.equal(image.statusCode, 200);
      assert.match(String(image.headers['content-type']), /^image\/svg\+xml/);
    });

    it('selling plans show on the product with their discounted allocation price', async () => {
      const { body } = await getJson(t.app, '/products/espresso-capsules.js');
      assert.equal(body.selling_plan_groups.length, 1);
      const plan = body.selling_plan_groups[0].selling_plans[0];
      const variant = body.variants[0];
      const allocation = variant.selling_plan_allocations.find((a: { selling_plan_id: number }) => a.selling_plan_id === plan.id);
      assert.equal(allocation.price, variant.price - Math.round(variant.price * 0.1));
      assert.equal(allocation.compare_at_price, variant.price);
    });

    it('an unknown handle answers 404 with the JSON error shape', async () => {
      const { status, body } = await getJson(t.app, '/products/no-such-thing.js');
      assert.equal(status, 404);
      assert.deepEqual(schemaErrors('Error', body), []);
      assert.equal(body.status, 404);
      assert.match(body.description, /sitemap\.xml/);
    });

    for (const handle of ['Hydration-Drink-Stick', 'hydration_drink_stick', 'a%20b', '%2e%2e', 'caf%C3%A9']) {
      it(`a handle breaking ^[a-z0-9-]+$ (${handle}) answers 404, never 422 or 5xx`, async () => {
        const { status, body } = await getJson(t.app, `/products/${handle}.js`);
        assert.equal(status, 404);
        assert.equal(body.status, 404);
      });
    }

    it('an unpublished product is invisible: 404 on .js, absent from collections and the sitemap', async () => {
      assert.equal((await getJson(t.app, '/products/cold-brew-capsules.js')).status, 404);
      const all = await getJson(t.app, '/collections/all/products.json?limit=250');
      assert.ok(!all.body.products.some((p: { handle: string }) => p.handle === 'cold-brew-capsules'));
      const capsules = await getJson(t.app, '/collections/capsules/products.json');
      assert.ok(!capsules.body.products.some((p: { handle: string }) => p.handle === 'cold-brew-capsules'));
      const sitemap = await t.app.inject({ method: 'GET', url: '/sitemap.xml' });
      assert.ok(!sitemap.body.includes('cold-brew-capsules'));
    });

    it('the collection `all` lists every published product, each valid against the Product schema', async () => {
      const { status, body } = await getJson(t.app, '/collections/all/products.json');
      assert.equal(status, 200);
      assert.deepEqual(
        body.products.map((p: { handle: string }) => p.handle).sort(),
        publishedDemo.map((p) => p.handle).sort(),
      );
      for (const product of body.products) assert.deepEqual(schemaErrors('Product', product), []);
    });

    it('a collection lists its products in the collection order', async () => {
      const { body } = await getJson(t.app, '/collections/capsules/products.json');
      assert.deepEqual(
        body.products.map((p: { handle: string }) => p.handle),
        ['espresso-capsules', 'decaf-capsules', 'sleep-capsules'],
      );
    });

    it('pages partition the list in a stable order, and a page past the end is an empty list', async () => {
      const all = (await getJson(t.app, '/collections/all/products.json')).body.products.map((p: { id: number }) => p.id);
      const again = (await getJson(t.app, '/collections/all/products.json')).body.products.map((p: { id: number }) => p.id);
      assert.deepEqual(again, all);
      const paged: number[] = [];
      for (let page = 1; page <= 3; page++) {
        const { status, body } = await getJson(t.app, `/collections/all/products.json?limit=2&page=${page}`);
        assert.equal(status, 200);
        assert.ok(body.products.length <= 2);
        paged.push(...body.products.map((p: { id: number }) => p.id));
      }
      assert.deepEqual(paged, all);
      const past = await getJson(t.app, '/collections/all/products.json?limit=2&page=99');
      assert.equal(past.status, 200);
      assert.deepEqual(past.body, { products: [] });
    });

    it('/products.json is the `all` collection', async () => {
      const a = await getJson(t.app, '/products.json?limit=3');
      const b = await getJson(t.app, '/collections/all/products.json?limit=3');
      assert.deepEqual(a.body, b.body);
    });

    for (const [query, parameter] of [
      ['limit=0', 'limit'],
      ['limit=251', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=2.5', 'limit'],
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=x', 'page'],
    ] as const) {
      it(`an invalid ${query} answers 422 Invalid parameter error naming ${parameter}`, async () => {
        const { status, body } = await getJson(t.app, `/collections/all/products.json?${query}`);
        assert.equal(status, 422);
        assert.deepEqual(schemaErrors('Error', body), []);
        assert.equal(body.message, 'Invalid parameter error');
        assert.match(body.description, new RegExp(`\\b${parameter}\\b`));
      });
    }

    it('an unknown collection answers 404, and so does a handle breaking the pattern', async () => {
      for (const url of ['/collections/no-such/products.json', '/collections/Capsules/products.json']) {
        const { status, body } = await getJson(t.app, url);
        assert.equal(status, 404);
        assert.equal(body.message, 'Not found');
      }
    });

    it('the sitemap is valid XML listing every published product and collection under BASE_URL', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/sitemap.xml' });
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['content-type']), /^application\/xml/);
      assert.equal(XMLValidator.validate(response.body), true);
      const parsed = new XMLParser().parse(response.body);
      const locs: string[] = [parsed.urlset.url].flat().map((u: { loc: string }) => u.loc);
      for (const product of publishedDemo) assert.ok(locs.includes(`http://store.test/products/${product.handle}`), product.handle);
      for (const collection of demoCatalog.collections!) {
        assert.ok(locs.includes(`http://store.test/collections/${collection.handle}`), collection.handle);
      }
      assert.ok(locs.every((loc) => loc.startsWith('http://store.test/')));
    });

    it('/scopes.json lists the four scopes with what each grants and its credential', async () => {
      const { status, body } = await getJson(t.app, '/scopes.json');
      assert.equal(status, 200);
      assert.deepEqual(
        body.scopes.map((s: { scope: string }) => s.scope),
        ['catalog:read', 'cart:write', 'checkout:write', 'checkout:complete'],
      );
      for (const scope of body.scopes) {
        assert.ok(scope.grants.length > 0);
        assert.ok(scope.credential.length > 0);
      }
      assert.match(body.scopes[3].credential, /human/);
    });

    it('/healthz answers ok while the database answers', async () => {
      const { status, body } = await getJson(t.app, '/healthz');
      assert.equal(status, 200);
      assert.equal(body.status, 'ok');
    });
  });
}
