/**
 * The search index of a large catalog is built a slice at a time between requests (SearchIndexBuilder, and
 * CatalogSearch in the background); whatever the slices, the index is the one built at once, and a search that
 * comes before the build is done finishes it and answers as the finished index does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { CatalogSnapshot, type Catalog } from '../../src/catalog/catalog.js';
import { CatalogSearch, searchIndexReady } from '../../src/search/catalog-search.js';
import { buildSearchIndex, SearchIndexBuilder, searchProducts, suggestQueries } from '../../src/search/search-index.js';
import { fixtureCollections, fixtureProducts, stockFor, teaProducts } from './fixture-catalog.js';

/** The fixture catalog, and many more products like it: enough for a build of several slices. */
const products = [
  ...fixtureProducts,
  ...teaProducts(3000),
];
const stock = stockFor(products);
const QUERIES = ['tea', 'green t', 'mint tea no. 12', 'capsu', 'espresso', 'lemon-l', 'tea-3', 'rooibso', 'no. 299', 'c'];

describe('building the search index in slices', () => {
  it('the index built a slice at a time is the index built at once', () => {
    const whole = buildSearchIndex(products, fixtureCollections);
    const builder = new SearchIndexBuilder(products, fixtureCollections);
    let slices = 1;
    while (!builder.step(0)) slices += 1;
    assert.ok(slices > 10, `built in ${slices} slices`);
    assert.deepEqual(builder.finish(), whole);
  });

  it('a search while the index is half built finishes it and answers as the whole index does', () => {
    const whole = buildSearchIndex(products, fixtureCollections);
    const builder = new SearchIndexBuilder(products, fixtureCollections);
    for (let slice = 0; slice < 5; slice += 1) builder.step(0);
    const finished = builder.finish();
    for (const query of QUERIES) {
      assert.deepEqual(searchProducts(finished, query, 10, stock), searchProducts(whole, query, 10, stock), query);
      assert.deepEqual(suggestQueries(finished, query, 10), suggestQueries(whole, query, 10), query);
    }
  });

  it('a store builds the index of a new snapshot in the background, and answers a search asked at once', async () => {
    const first = new CatalogSnapshot({ version: 1, products, collections: fixtureCollections }, 'http://shop.test');
    const listeners: ((snapshot: CatalogSnapshot) => void)[] = [];
    const catalog = {
      snapshot: first,
      onChange(listener: (snapshot: CatalogSnapshot) => void) {
        listeners.push(listener);
        listener(this.snapshot);
      },
    };
    const search = new CatalogSearch(catalog as unknown as Catalog, stock);
    const whole = buildSearchIndex(first.products, first.collections);
    assert.equal(searchIndexReady(first), false, 'the store only schedules the build: its start does not wait for it');
    assert.deepEqual(search.products('green t', 5), searchProducts(whole, 'green t', 5, stock), 'a search before any slice ran');

    const next = new CatalogSnapshot({ version: 2, products: products.slice(0, 1000), collections: fixtureCollections }, 'http://shop.test');
    catalog.snapshot = next;
    for (const listener of listeners) listener(next);
    for (let turn = 0; turn < 10_000 && !searchIndexReady(next); turn += 1) await yieldToLoop();
    assert.ok(searchIndexReady(next), 'the slices built the new index between turns of the event loop');
    assert.deepEqual(search.products('tea no. 99', 5), searchProducts(buildSearchIndex(next.products, next.collections), 'tea no. 99', 5, stock));
  });
});
