/**
 * The storefront's response caches are bounded by entries and by bytes that count keys too, and pages past
 * the last are never cached (#9, defect c: 200k distinct `page=` values or 100k distinct long search queries
 * grew the server by 100+ MB). The routes run here in a probe scope of a real app, over caches the test
 * holds, so their sizes can be read after each request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { noPurchaseHistory, Recommendations } from '../../src/recommendations/recommendations.js';
import { catalogRoutes } from '../../src/storefront/catalog-routes.js';
import { BoundedPages, CACHE_ENTRY_OVERHEAD_BYTES, entityTag, ProductBodies, type PageCacheBounds } from '../../src/storefront/product-bodies.js';
import {
  MAX_SUGGEST_CACHE_BYTES,
  MAX_SUGGEST_CACHE_ENTRIES,
  searchRoutes,
  SuggestCache,
} from '../../src/storefront/search-routes.js';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

describe('the search answer cache (unit)', () => {
  it('never holds more than its entry bound, whatever the number of distinct queries', () => {
    const cache = new SuggestCache();
    const body = { body: Buffer.from('{"resources":{"results":{"products":[]}}}'), etag: '"e"' };
    let largest = 0;
    for (let n = 0; n < 50_000; n += 1) {
      const key = `product|5|${String(n).padStart(153, 'q')}`;
      assert.equal(cache.get('g', key), undefined);
      cache.set(key, body);
      largest = Math.max(largest, cache.size);
      assert.ok(cache.byteSize <= MAX_SUGGEST_CACHE_BYTES);
    }
    assert.ok(largest <= MAX_SUGGEST_CACHE_ENTRIES, `${largest} entries`);
  });

  it('counts keys against its byte bound, and keeps no answer larger than the bound', () => {
    const cache = new SuggestCache(1_000_000, 64 * 1024);
    const body = { body: Buffer.from('{}'), etag: '"e"' };
    for (let n = 0; n < 5_000; n += 1) {
      cache.set(`${n}`.padStart(153, 'k'), body);
      // Each entry costs at least its key and tag (two bytes a character) besides its two-byte body.
      assert.ok(cache.size * (2 + 2 * (153 + 3)) <= cache.byteSize && cache.byteSize <= 64 * 1024, `${cache.size} ${cache.byteSize}`);
    }
    const before = cache.size;
    cache.set('huge', { body: Buffer.alloc(64 * 1024), etag: '"h"' });
    assert.equal(cache.size, before);
    assert.equal(cache.get('g', 'huge'), undefined);
  });

  it('empties when the generation moves, and keeps a repeated key once', () => {
    const cache = new SuggestCache(10, 1 << 20);
    assert.equal(cache.get('one', 'a'), undefined);
    cache.set('a', { body: Buffer.from('x'), etag: '"x"' });
    const bytes = cache.byteSize;
    cache.set('a', { body: Buffer.from('x'), etag: '"x"' });
    assert.equal(cache.byteSize, bytes);
    assert.deepEqual(cache.get('one', 'a'), { body: Buffer.from('x'), etag: '"x"' });
    assert.equal(cache.get('two', 'a'), undefined);
    assert.equal(cache.size, 0);
  });
});

describe('the bounded page cache (unit)', () => {
  const page = (text: string) => ({ body: Buffer.from(text), etag: entityTag(text) });
  /** What one of the pages below costs: its body, key and tag (two bytes a character), and the entry overhead. */
  const cost = (key: string, text: string) => text.length + 2 * (key.length + entityTag(text).length) + CACHE_ENTRY_OVERHEAD_BYTES;

  it('when full of pages, forgets the least recently used first', () => {
    const pages = new BoundedPages({ maxPages: 3, maxBytes: 1 << 20 });
    for (const key of ['a', 'b', 'c']) pages.set('g', key, page(key));
    assert.ok(pages.get('g', 'a'));
    pages.set('g', 'd', page('d'));
    assert.equal(pages.size, 3);
    assert.equal(pages.get('g', 'b'), undefined);
    assert.deepEqual(['a', 'c', 'd'].map((key) => pages.get('g', key)?.body.toString()), ['a', 'c', 'd']);
  });

  it('counts bytes against its bound, keeps a repeated key once, and never keeps a page larger than the bound', () => {
    const maxBytes = 4 * cost('k0', 'x') + 10;
    const pages = new BoundedPages({ maxPages: 100, maxBytes });
    for (let n = 0; n < 10; n += 1) {
      pages.set('g', `k${n}`, page('x'));
      assert.ok(pages.bytes <= maxBytes, `${pages.bytes} bytes`);
    }
    assert.equal(pages.size, 4);
    assert.equal(pages.bytes, 4 * cost('k0', 'x'));
    pages.set('g', 'k9', page('x'));
    assert.equal(pages.bytes, 4 * cost('k0', 'x'));
    pages.set('g', 'huge', page('y'.repeat(maxBytes)));
    assert.equal(pages.get('g', 'huge'), undefined);
    assert.equal(pages.size, 4);
  });

  it('starts anew when the generation moves', () => {
    const pages = new BoundedPages();
    pages.set('one', 'a', page('a'));
    assert.ok(pages.get('one', 'a'));
    assert.equal(pages.get('two', 'a'), undefined);
    assert.equal(pages.size, 0);
    assert.equal(pages.bytes, 0);
  });
});

for (const backend of backends) {
  describe(`cache bounds over HTTP (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      // Thousands of reads from one client: the rate limits (their own tests) would answer 429 long before.
      t = await startTestStore(backend, { config: { rateLimit: false } });
    });
    after(() => t.close());

    /** A second app on the store whose /probe routes use the caches given, as the app's own routes use theirs. */
    async function probeApp(bounds?: PageCacheBounds, suggestCache?: SuggestCache): Promise<{ app: FastifyInstance; bodies: ProductBodies }> {
      const bodies = new ProductBodies(t.store.catalog, t.store.inventory, t.store.config.cartMaxLineQuantity, bounds);
      const app = await buildApp(t.store, {
        extend: (root) => {
          void root.register(
            async (scope) => {
              catalogRoutes(scope, t.store.catalog, bodies);
              await scope.register(searchRoutes, { store: t.store, bodies, suggestCache });
            },
            { prefix: '/probe' },
          );
        },
      });
      return { app, bodies };
    }

    it('distinct page= values past the last page answer an empty list and cache nothing', async () => {
      const { app, bodies } = await probeApp();
      try {
        const all = t.store.catalog.snapshot.products.length;
        assert.ok(all > 0 && all < 30, 'the demo catalog fits on the first page of 30');
        for (let page = 2; page <= 2_000; page += 1) {
          const { status, body } = await getJson(app, `/probe/collections/all/products.json?page=${page}`);
          assert.equal(status, 200);
          assert.deepEqual(body, { products: [] });
        }
        for (let page = 4; page <= 1_000; page += 1) {
          const { status, body } = await getJson(app, `/probe/products.json?limit=${(page % 3) + 2}&page=${page}`);
          assert.equal(status, 200);
          assert.deepEqual(body, { products: [] });
        }
        const far = await getJson(app, '/probe/collections/capsules/products.json?limit=1&page=99999999');
        assert.deepEqual(far.body, { products: [] });
        assert.equal(bodies.cachedPageCount, 0);
        assert.equal(bodies.cachedPageBytes, 0);
        // The first page is a real page: kept once, answered again from the cache.
        const first = await getJson(app, '/probe/collections/all/products.json?page=1');
        assert.equal(first.body.products.length, all);
        await getJson(app, '/probe/collections/all/products.json?page=1');
        assert.equal(bodies.cachedPageCount, 1);
        // The app's own route answers the same for a page past the last.
        assert.deepEqual((await getJson(t.app, '/collections/all/products.json?page=123456')).body, { products: [] });
      } finally {
        await app.close();
      }
    });

    it('distinct real pages never hold more pages or bytes than the bounds', async () => {
      const bounds = { maxPages: 20, maxBytes: 40_000 };
      const { app, bodies } = await probeApp(bounds);
      try {
        let requests = 0;
        for (const handle of ['all', 'capsules', 'drink-sticks']) {
          const count = t.store.catalog.snapshot.collectionProducts(handle)!.length;
          for (let limit = 1; limit <= 250; limit += 1) {
            for (let page = 1; (page - 1) * limit < count; page += 1) {
              const { status, body } = await getJson(app, `/probe/collections/${handle}/products.json?limit=${limit}&page=${page}`);
              assert.equal(status, 200);
              assert.ok(body.products.length >= 1);
              requests += 1;
              assert.ok(bodies.cachedPageCount <= bounds.maxPages, `${bodies.cachedPageCount} pages`);
              assert.ok(bodies.cachedPageBytes <= bounds.maxBytes, `${bodies.cachedPageBytes} bytes`);
            }
          }
        }
        assert.ok(requests > 10 * bounds.maxPages, `${requests} distinct pages`);
        assert.ok(bodies.cachedPageCount > 0);
        // A page larger than the whole byte bound is answered, never kept.
        const tiny = await probeApp({ maxPages: 100, maxBytes: 100 });
        try {
          assert.equal((await getJson(tiny.app, '/probe/collections/all/products.json')).status, 200);
          assert.equal(tiny.bodies.cachedPageCount, 0);
        } finally {
          await tiny.app.close();
        }
      } finally {
        await app.close();
      }
    });

    it('distinct 153-character search queries never hold more answers or bytes than the bounds', async () => {
      const cache = new SuggestCache(50, 256 * 1024);
      const { app } = await probeApp(undefined, cache);
      try {
        for (let n = 0; n < 600; n += 1) {
          const q = `espresso ${n} `.padEnd(153, 'z');
          const { status } = await getJson(app, `/probe/search/suggest.json?q=${encodeURIComponent(q)}`);
          assert.equal(status, 200);
          assert.ok(cache.size <= 50, `${cache.size} answers`);
          assert.ok(cache.byteSize <= 256 * 1024, `${cache.byteSize} bytes`);
        }
        assert.ok(cache.size > 0);
        // A repeated query is answered from the cache: nothing more is kept.
        const size = cache.size;
        const again = await getJson(app, '/probe/search/suggest.json?q=caps');
        assert.equal(cache.size, size + 1 > 50 ? 1 : size + 1);
        const kept = cache.size;
        assert.deepEqual((await getJson(app, '/probe/search/suggest.json?q=caps')).body, again.body);
        assert.equal(cache.size, kept);
        // The probe answers as the app's own route does.
        assert.deepEqual(again.body, (await getJson(t.app, '/search/suggest.json?q=caps')).body);
      } finally {
        await app.close();
      }
    });

    it('related recommendations are cached per product and limit, bounded in lists; unknown ids cache nothing', async () => {
      const recommendations = new Recommendations(t.store.catalog, t.store.inventory, noPurchaseHistory, 7);
      const products = t.store.catalog.snapshot.products;
      for (let id = 1; id <= 2_000; id += 1) {
        if (t.store.catalog.snapshot.productById(id)) continue;
        assert.equal(await recommendations.forProduct(id, 'related', 4), undefined);
      }
      assert.equal(recommendations.cachedListCount, 0);
      for (const product of products) {
        for (let limit = 1; limit <= 10; limit += 1) {
          await recommendations.forProduct(product.id, 'related', limit);
          assert.ok(recommendations.cachedListCount <= 7);
        }
      }
      assert.ok(products.length * 10 > 7);
    });
  });
}
