/**
 * The sitemap lists only URLs that answer 200 (issue [pages], item 5): a walk of every URL of /sitemap.xml, with the
 * demo catalog and after importing a generated 1,000-product catalog (as `storefront import` does, in-process), finds
 * each one answering 200 with HTML. Every product and collection URL the doors hand out resolves to its page too:
 * the storefront JSON's `url`, the UCP catalog's product and variant `url`, the cart line's `url`, the suggest
 * endpoint's collection and query URLs, and each page's canonical URL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { generateCatalog } from '../../bench/generated-catalog.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { injectToolCall } from '../ucp/mcp-harness.js';

after(dropTestDatabases);

const BASE = 'http://store.test';

const unescapeXml = (text: string) =>
  text.replace(/&(lt|gt|quot|apos|amp);/g, (_, name: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[name]!);

/** The path of an absolute URL of this store (BASE_URL is http://store.test in tests). */
function pathOf(url: string): string {
  assert.ok(url.startsWith(`${BASE}/`), `${url} is a URL of this store`);
  return url.slice(BASE.length);
}

async function sitemapUrls(app: FastifyInstance): Promise<string[]> {
  const response = await app.inject({ method: 'GET', url: '/sitemap.xml' });
  assert.equal(response.statusCode, 200);
  return [...response.body.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => unescapeXml(m[1]!));
}

/** GETs a path and asserts a 200 HTML page; returns its canonical URL. */
async function assertPage(app: FastifyInstance, path: string): Promise<string | undefined> {
  const response = await app.inject({ method: 'GET', url: path });
  assert.equal(response.statusCode, 200, `${path}: ${response.statusCode} ${response.body.slice(0, 200)}`);
  assert.equal(response.headers['content-type'], 'text/html; charset=utf-8', path);
  assert.match(response.body, /^<!doctype html>/, path);
  return /<link rel="canonical" href="([^"]*)">/.exec(response.body)?.[1]?.replace(/&amp;/g, '&');
}

/** Walks the whole sitemap: every URL a page answering 200 with HTML, whose canonical URL is the one listed. */
async function walkSitemap(t: TestStore): Promise<string[]> {
  const urls = await sitemapUrls(t.app);
  assert.equal(new Set(urls).size, urls.length, 'each URL listed once');
  for (const url of urls) {
    const canonical = await assertPage(t.app, pathOf(url));
    assert.equal(canonical, url, `${url}: its canonical URL is the one the sitemap lists`);
  }
  return urls;
}

for (const backend of backends) {
  describe(`the sitemap walk and the doors' URLs (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('with the demo catalog, every sitemap URL answers 200 with HTML: home, every product, each collection and product', async () => {
      const urls = await walkSitemap(t);
      const snapshot = t.store.catalog.snapshot;
      assert.deepEqual(
        urls.sort(),
        [
          `${BASE}/`,
          `${BASE}/collections/all`,
          ...snapshot.collections.map((c) => `${BASE}/collections/${c.handle}`),
          ...snapshot.products.map((p) => `${BASE}/products/${p.handle}`),
        ].sort(),
      );
      assert.ok(!urls.some((url) => url.includes('cold-brew-capsules')), 'an unpublished product is not listed');
    });

    it('the storefront JSON’s product url, the suggest endpoint’s collection and query urls, and a cart line’s url open pages', async () => {
      const { products } = JSON.parse((await t.app.inject({ method: 'GET', url: '/products.json?limit=250' })).body);
      assert.equal(products.length, 5);
      for (const product of products) {
        assert.equal(await assertPage(t.app, product.url), `${BASE}${product.url}`);
      }
      const suggest = JSON.parse(
        (await t.app.inject({ method: 'GET', url: '/search/suggest.json?q=ca&resources[type]=product,collection,query&resources[limit]=10' })).body,
      ).resources.results;
      assert.ok(suggest.collections.length > 0 && suggest.queries.length > 0);
      for (const collection of suggest.collections) assert.equal(await assertPage(t.app, collection.url), `${BASE}${collection.url}`);
      for (const query of suggest.queries) await assertPage(t.app, query.url);

      // A cart line's url names the variant and the selling plan chosen: the page opens with both.
      const hydration = t.store.catalog.snapshot.productByHandle('hydration-drink-stick')!;
      const variant = hydration.variants[1]!;
      const plan = hydration.sellingPlanGroups[0]!.plans[0]!;
      const added = await t.app.inject({ method: 'POST', url: '/cart/add.js', payload: { id: variant.id, quantity: 1, selling_plan: plan.id } });
      assert.equal(added.statusCode, 200, added.body);
      const [line] = JSON.parse(added.body).items;
      assert.equal(line.url, `/products/hydration-drink-stick?variant=${variant.id}&selling_plan=${plan.id}`);
      const page = await t.app.inject({ method: 'GET', url: line.url });
      assert.equal(page.statusCode, 200);
      assert.match(page.body, new RegExp(`<option value="${variant.id}"[^>]* selected>`));
      assert.match(page.body, new RegExp(`name="selling_plan" value="${plan.id}" checked>`));
    });

    it('the UCP catalog’s product and variant urls open the product’s page', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await injectToolCall(t.app, 'search_catalog', { catalog: { pagination: { limit: 10, ...(cursor ? { cursor } : {}) } } });
        for (const product of page.products) {
          assert.equal(await assertPage(t.app, pathOf(product.url)), product.url);
          for (const variant of product.variants) {
            assert.equal(await assertPage(t.app, pathOf(variant.url)), product.url, 'a variant URL is the product page, canonically');
          }
          seen.push(product.handle);
        }
        cursor = page.pagination.has_next_page ? page.pagination.cursor : undefined;
      } while (cursor);
      assert.equal(seen.length, 5);
    });

    // A few seconds on either backend: the import is one transaction, and the pages render from memory.
    it('after importing a generated 1,000-product catalog, every sitemap URL still answers 200 with HTML', async () => {
      const report = await importCatalog(t.store.db, generateCatalog(1000));
      assert.ok(report);
      await t.store.catalog.refresh(t.store.db);
      await t.store.inventory.refresh(t.store.db);
      assert.equal(t.store.catalog.snapshot.products.length, 1005);
      const urls = await walkSitemap(t);
      assert.equal(urls.length, 1 + 1 + t.store.catalog.snapshot.collections.length + 1005);
      // Every page of the collection of every product answers too, and the one after the last does not.
      const pages = Math.ceil(1005 / 24);
      for (let page = 2; page <= pages; page++) await assertPage(t.app, `/collections/all?page=${page}`);
      assert.equal((await t.app.inject({ method: 'GET', url: `/collections/all?page=${pages + 1}` })).statusCode, 404);
    });
  });
}
