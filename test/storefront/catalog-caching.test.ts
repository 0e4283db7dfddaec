/**
 * Cheap reads (#11, item 5): catalog reads carry an ETag and a short public Cache-Control and answer 304 Not
 * Modified to a matching If-None-Match (exact, weak, a list, `*`), GET and HEAD alike. The tag changes exactly
 * when the body does: a price change (an import) or a stock change that shows (availability); a stock change
 * that shows nothing keeps it. Errors carry no tag; the cart and the buyer's pages stay no-store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { demoCatalog } from '../../src/catalog/demo-catalog.js';
import type { CatalogDocument } from '../../src/catalog/import/catalog-document.js';
import { ifNoneMatchHits } from '../../src/http/response-headers.js';
import { CATALOG_CACHE_CONTROL } from '../../src/storefront/catalog-reads.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const STRONG_TAG = /^"[A-Za-z0-9_-]{27}"$/;

async function read(app: FastifyInstance, url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  const response = await app.inject({ method, url, headers });
  return { status: response.statusCode, headers: response.headers, body: response.body };
}

describe('If-None-Match against a tag (RFC 9110, 13.1.2)', () => {
  const tag = '"abc"';
  it('matches the same tag, its weak form, either side, any member of a list, and *', () => {
    assert.equal(ifNoneMatchHits('"abc"', tag), true);
    assert.equal(ifNoneMatchHits('W/"abc"', tag), true);
    assert.equal(ifNoneMatchHits('"abc"', 'W/"abc"'), true);
    assert.equal(ifNoneMatchHits('"x", W/"y",W/"abc" ', tag), true);
    assert.equal(ifNoneMatchHits('*', tag), true);
  });

  it('does not match another tag, a tag without quotes, an empty field or no field', () => {
    assert.equal(ifNoneMatchHits('"abd"', tag), false);
    assert.equal(ifNoneMatchHits('abc', tag), false);
    assert.equal(ifNoneMatchHits('"x", "y"', tag), false);
    assert.equal(ifNoneMatchHits('', tag), false);
    assert.equal(ifNoneMatchHits(undefined, tag), false);
  });
});

for (const backend of backends) {
  describe(`catalog reads are cacheable (${backend.name})`, () => {
    let t: TestStore;
    let decafId: number;
    before(async () => {
      t = await startTestStore(backend);
      decafId = t.store.catalog.snapshot.productByHandle('decaf-capsules')!.id;
    });
    after(() => t.close());

    const catalogReads = () => [
      '/products/decaf-capsules.js',
      '/collections/all/products.json',
      '/collections/capsules/products.json?limit=2&page=1',
      '/products.json?limit=3',
      `/recommendations/products.json?product_id=${decafId}`,
      `/recommendations/products.json?product_id=${decafId}&intent=complementary`,
      '/search/suggest.json?q=caps&resources[type]=product,collection,query',
      '/sitemap.xml',
    ];

    it('every catalog read carries a strong ETag and the public 30 s Cache-Control, the same on identical reads', async () => {
      assert.equal(CATALOG_CACHE_CONTROL, 'public, max-age=30');
      const tags = new Set<string>();
      for (const url of catalogReads()) {
        const first = await read(t.app, url);
        const second = await read(t.app, url);
        assert.equal(first.status, 200, url);
        assert.match(String(first.headers.etag), STRONG_TAG, url);
        assert.equal(first.headers['cache-control'], 'public, max-age=30', url);
        assert.equal(second.headers.etag, first.headers.etag, `${url}: the same tag again`);
        assert.equal(second.body, first.body, url);
        tags.add(String(first.headers.etag));
      }
      assert.equal(tags.size, catalogReads().length, 'different bodies, different tags');
    });

    it('answers 304 with no body, the tag and Cache-Control repeated, to the exact tag, its weak form, a list and *', async () => {
      for (const url of catalogReads()) {
        const { headers, body } = await read(t.app, url);
        const etag = String(headers.etag);
        for (const ifNoneMatch of [etag, `W/${etag}`, `"stale", ${etag}`, `W/"stale",W/${etag}`, '*']) {
          const answer = await read(t.app, url, { 'if-none-match': ifNoneMatch });
          assert.equal(answer.status, 304, `${url} with ${ifNoneMatch}`);
          assert.equal(answer.body, '', url);
          assert.equal(answer.headers.etag, etag, url);
          assert.equal(answer.headers['cache-control'], 'public, max-age=30', url);
          assert.equal(answer.headers['content-length'], undefined, url);
          assert.match(String(answer.headers['x-request-id']), /^[0-9a-f-]{36}$/, 'the usual headers still come');
          assert.equal(answer.headers['access-control-allow-origin'], '*', url);
        }
        const other = await read(t.app, url, { 'if-none-match': '"stale", W/"older"' });
        assert.equal(other.status, 200, url);
        assert.equal(other.body, body, url);
        assert.equal(other.headers.etag, etag, url);
      }
    });

    it('HEAD answers the same headers as GET, no body, and 304 to a matching tag', async () => {
      for (const url of catalogReads()) {
        const get = await read(t.app, url);
        const head = await read(t.app, url, {}, 'HEAD');
        assert.equal(head.status, 200, url);
        assert.equal(head.body, '', url);
        assert.equal(head.headers.etag, get.headers.etag, url);
        assert.equal(head.headers['cache-control'], get.headers['cache-control'], url);
        assert.equal(head.headers['content-type'], get.headers['content-type'], url);
        const conditional = await read(t.app, url, { 'if-none-match': String(get.headers.etag) }, 'HEAD');
        assert.equal(conditional.status, 304, url);
        assert.equal(conditional.headers.etag, get.headers.etag, url);
      }
    });

    it('errors carry no ETag and no public Cache-Control', async () => {
      for (const url of [
        '/products/no-such-product.js',
        '/products/Bad_Handle.js',
        '/collections/no-such/products.json',
        '/collections/all/products.json?limit=0',
        '/search/suggest.json',
        '/recommendations/products.json',
        '/recommendations/products.json?product_id=999999',
      ]) {
        const answer = await read(t.app, url, { 'if-none-match': '*' });
        assert.ok(answer.status === 404 || answer.status === 422, `${url}: ${answer.status}`);
        assert.equal(answer.headers.etag, undefined, url);
        assert.equal(answer.headers['cache-control'], undefined, url);
        assert.equal(JSON.parse(answer.body).status, answer.status, url);
      }
    });

    it('a stock change that shows nothing keeps the tags; one that changes availability changes them, and old tags get 200', async () => {
      const urls = ['/products/decaf-capsules.js', '/collections/capsules/products.json', '/products.json', `/recommendations/products.json?product_id=${decafId}&intent=complementary`, '/search/suggest.json?q=decaf'];
      const before = new Map<string, string>();
      for (const url of urls) before.set(url, String((await read(t.app, url)).headers.etag));

      await t.store.inventory.setOnHand(t.store.db, 'ESP-DEC-10', 149);
      for (const url of urls) assert.equal((await read(t.app, url)).headers.etag, before.get(url), `${url}: units on hand are not shown`);

      await t.store.inventory.setOnHand(t.store.db, 'ESP-DEC-10', 0);
      // On PostgreSQL a read of the stock begun on the NOTIFY of the write before (149) may land after this one:
      // one more read settles the copy on what is written now (as test/search/search-live-stock.test.ts does).
      await t.store.inventory.refresh(t.store.db);
      try {
        const product = await read(t.app, '/products/decaf-capsules.js', { 'if-none-match': before.get('/products/decaf-capsules.js')! });
        assert.equal(product.status, 200, 'the old tag is stale: the body comes');
        assert.equal(JSON.parse(product.body).available, false);
        // Recommendations for a product whose own availability changed show other products: only the lists that show it move.
        for (const url of urls.filter((u) => !u.startsWith('/recommendations/'))) {
          const now = await read(t.app, url, { 'if-none-match': before.get(url)! });
          assert.equal(now.status, 200, url);
          assert.notEqual(now.headers.etag, before.get(url), `${url}: availability shows`);
          assert.equal((await read(t.app, url, { 'if-none-match': String(now.headers.etag) })).status, 304, url);
        }
      } finally {
        await t.store.inventory.setOnHand(t.store.db, 'ESP-DEC-10', 150);
        await t.store.inventory.refresh(t.store.db);
      }
      assert.equal((await read(t.app, '/products/decaf-capsules.js')).headers.etag, before.get('/products/decaf-capsules.js'), 'back in stock: the same body, the same tag');
    });

    it('a price change (an import) changes the tags of the product and its lists; a new product the sitemap', async () => {
      const urls = ['/products/decaf-capsules.js', '/collections/capsules/products.json', '/products.json', '/search/suggest.json?q=decaf'];
      const before = new Map<string, string>();
      for (const url of urls) before.set(url, String((await read(t.app, url)).headers.etag));
      const untouched = String((await read(t.app, '/products/hydration-drink-stick.js')).headers.etag);

      const document = structuredClone(demoCatalog) as CatalogDocument;
      const decaf = document.products.find((p) => p.handle === 'decaf-capsules')!;
      decaf.variants[0]!.price = 720;
      decaf.variants[0]!.inventory_quantity = 150;
      await importCatalog(t.store.db, document);
      await t.store.catalog.refresh(t.store.db);

      const product = await read(t.app, '/products/decaf-capsules.js', { 'if-none-match': before.get('/products/decaf-capsules.js')! });
      assert.equal(product.status, 200);
      assert.equal(JSON.parse(product.body).price, 720);
      for (const url of urls) assert.notEqual((await read(t.app, url)).headers.etag, before.get(url), url);
      assert.equal((await read(t.app, '/products/hydration-drink-stick.js')).headers.etag, untouched, 'a product whose JSON is unchanged keeps its tag');

      const sitemap = await read(t.app, '/sitemap.xml');
      document.products.push({ handle: 'travel-pouch', title: 'Travel Pouch', variants: [{ sku: 'TP-1', price: 900, inventory_quantity: 5 }] });
      await importCatalog(t.store.db, document);
      await t.store.catalog.refresh(t.store.db);
      const grown = await read(t.app, '/sitemap.xml', { 'if-none-match': String(sitemap.headers.etag) });
      assert.equal(grown.status, 200);
      assert.match(grown.body, /\/products\/travel-pouch</);
      assert.notEqual(grown.headers.etag, sitemap.headers.etag);
    });

    it('the cart and the buyer pages carry no ETag and stay no-store, even asked with If-None-Match', async () => {
      const cart = await read(t.app, '/cart.js', { 'if-none-match': '*' });
      assert.equal(cart.status, 200);
      assert.equal(cart.headers.etag, undefined);
      assert.equal(cart.headers['cache-control'], 'no-store');

      const variantId = t.store.catalog.snapshot.productByHandle('decaf-capsules')!.variants[0]!.id;
      const added = await t.app.inject({ method: 'POST', url: '/cart/add.js', payload: { items: [{ id: variantId, quantity: 1 }] } });
      assert.equal(added.statusCode, 200);
      assert.equal(added.headers.etag, undefined);
      assert.equal(added.headers['cache-control'], 'no-store');
      const cookie = String(added.headers['set-cookie']).split(';')[0]!;
      const again = await read(t.app, '/cart.js', { cookie, 'if-none-match': '*' });
      assert.equal(again.status, 200);
      assert.equal(again.headers.etag, undefined);
      assert.equal(again.headers['cache-control'], 'no-store');

      const created = await t.store.checkouts.create(t.store.db, { lines: [{ variantId, quantity: 1 }] }, 'agent', 'agent');
      const page = await read(t.app, `/checkouts/${created.view.record.id}`, { 'if-none-match': '*' });
      assert.equal(page.status, 200);
      assert.equal(page.headers.etag, undefined);
      assert.equal(page.headers['cache-control'], 'no-store');
    });
  });
}
