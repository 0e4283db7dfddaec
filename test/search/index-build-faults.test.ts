/**
 * A search index build that throws part way (a product or collection that cannot be read) is thrown away, not
 * continued: the error reaches whoever asked for the build (a search, or the store's report of background work),
 * nothing crashes the process or loops, and once the fault clears the next search builds the index from the start.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { CatalogSnapshot, type Catalog } from '../../src/catalog/catalog.js';
import type { Collection, Product } from '../../src/catalog/types.js';
import { CatalogSearch, searchIndexReady } from '../../src/search/catalog-search.js';
import { buildSearchIndex, SearchIndexBuilder, searchCollections, searchProducts } from '../../src/search/search-index.js';
import { fixtureCollections, fixtureProducts, stockFor, teaProducts } from './fixture-catalog.js';

class InjectedFault extends Error {}

/** A fault the test turns off; while on, the title of an item made by `titleFailingWhileOn` cannot be read. */
interface Fault {
  on: boolean;
}

/**
 * A copy of `item` whose title throws while the fault is on, after `readsFirst` good reads: a product's first read
 * indexes its fields, so with one good read the fault comes half way through adding the product.
 */
function titleFailingWhileOn<T extends { title: string }>(item: T, fault: Fault, readsFirst = 0): T {
  const { title } = item;
  let reads = 0;
  return Object.defineProperty({ ...item }, 'title', {
    enumerable: true,
    get() {
      reads += 1;
      if (fault.on && reads > readsFirst) throw new InjectedFault(`the title of ${title} cannot be read`);
      return title;
    },
  });
}

const teas = teaProducts(3000);
const products = [...fixtureProducts, ...teas];
const stock = stockFor(products);
/** Far enough in that the background build meets it in a later slice; "Green Tea No. 1500". */
const FAULTY_POSITION = fixtureProducts.length + 1500;
const QUERIES = ['tea', 'green tea no. 1500', 'tea no. 150', 'tea no. 1501', 'capsu', 'espresso', 'rooibso', 'c'];

/** The catalog with one product whose indexing fails while the fault is on. */
function productsWithFaultyOne(fault: Fault): Product[] {
  const copy = [...products];
  copy[FAULTY_POSITION] = titleFailingWhileOn(products[FAULTY_POSITION] as Product, fault, 1);
  return copy;
}

/** The collections with one whose title cannot be read while the fault is on: the build's last part fails. */
function collectionsWithFaultyOne(fault: Fault): Collection[] {
  return [...fixtureCollections.slice(0, -1), titleFailingWhileOn(fixtureCollections.at(-1) as Collection, fault)];
}

/** A catalog of one snapshot, as CatalogSearch sees it. */
function catalogOf(snapshot: CatalogSnapshot): Catalog {
  return { snapshot, onChange: (listener: (snapshot: CatalogSnapshot) => void) => listener(snapshot) } as unknown as Catalog;
}

/** Runs `work`, then fails if any exception went uncaught meanwhile (a background build's throw crashes a store). */
async function withoutUncaughtExceptions(work: () => Promise<void>): Promise<void> {
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    await work();
  } finally {
    process.off('uncaughtException', record);
  }
  assert.deepEqual(uncaught, []);
}

/** Lets the background build run until it reports an error; the bound fails a build that never reports. */
async function untilReported(errors: unknown[]): Promise<void> {
  for (let turn = 0; turn < 10_000 && errors.length === 0; turn += 1) await yieldToLoop();
  assert.equal(errors.length, 1, 'the background build reported its error once');
}

const whole = buildSearchIndex(products, fixtureCollections);

describe('a search index build that fails part way', { timeout: 60_000 }, () => {
  it('a builder that failed half way through a product goes no further: every later step throws', () => {
    const fault = { on: true };
    const builder = new SearchIndexBuilder(productsWithFaultyOne(fault), fixtureCollections);
    assert.throws(() => builder.finish(), InjectedFault);
    fault.on = false;
    // Going on would index the product's half-added words a second time, every later product one place off.
    assert.throws(() => builder.step(Infinity), InjectedFault);
    assert.throws(() => builder.finish(), InjectedFault);
  });

  it('a builder that failed in its last part throws on every later step instead of finishing nothing forever', () => {
    const fault = { on: true };
    const builder = new SearchIndexBuilder(products, collectionsWithFaultyOne(fault));
    assert.throws(() => builder.finish(), InjectedFault);
    fault.on = false;
    assert.throws(() => builder.step(Infinity), InjectedFault);
    assert.throws(() => builder.finish(), InjectedFault);
  });

  it('a product that fails in the background build is reported, its search throws, and the next search after the fault builds from the start', async () => {
    await withoutUncaughtExceptions(async () => {
      const fault = { on: true };
      const snapshot = new CatalogSnapshot({ version: 1, products: productsWithFaultyOne(fault), collections: fixtureCollections }, 'http://shop.test');
      const errors: unknown[] = [];
      const search = new CatalogSearch(catalogOf(snapshot), stock, (error) => errors.push(error));
      await untilReported(errors);
      assert.ok(errors[0] instanceof InjectedFault);
      assert.equal(searchIndexReady(snapshot), false);
      assert.throws(() => search.products('tea', 5), InjectedFault, 'a search while the fault lasts fails, and returns');

      fault.on = false;
      for (const query of QUERIES) {
        assert.deepEqual(
          search.products(query, 10).map((product) => product.title),
          searchProducts(whole, query, 10, stock).map((product) => product.title),
          query,
        );
      }
      assert.equal(search.products('green tea no. 1500', 1)[0]?.handle, 'tea-1500');
      assert.equal(errors.length, 1, 'a search reports its own failure; only the background build reports to the store');
    });
  });

  it('a collection that fails in the background build is reported, and the next search after the fault answers', async () => {
    await withoutUncaughtExceptions(async () => {
      const fault = { on: true };
      const snapshot = new CatalogSnapshot({ version: 1, products, collections: collectionsWithFaultyOne(fault) }, 'http://shop.test');
      const errors: unknown[] = [];
      const search = new CatalogSearch(catalogOf(snapshot), stock, (error) => errors.push(error));
      await untilReported(errors);
      assert.ok(errors[0] instanceof InjectedFault);
      assert.throws(() => search.collections('capsules', 5), InjectedFault);

      fault.on = false;
      assert.deepEqual(
        search.collections('capsules', 5).map((collection) => collection.handle),
        searchCollections(whole, 'capsules', 5).map((collection) => collection.handle),
      );
      assert.deepEqual(search.products('espresso', 5), searchProducts(whole, 'espresso', 5, stock));
      assert.ok(searchIndexReady(snapshot));
    });
  });
});
