/**
 * The per-product cache (each product's JSON, as both doors send it) keeps at most a bounded number of products, the
 * least recently used let go first, so a large catalog read end to end does not keep every product. Its generation
 * still moves whenever a product shown somewhere may have changed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CatalogSnapshot, type Catalog } from '../../src/catalog/catalog.js';
import { PerProductCache } from '../../src/catalog/product-cache.js';
import type { Product } from '../../src/catalog/types.js';
import { fixtureProducts } from '../search/fixture-catalog.js';

function cacheOf(maxKept: number) {
  const snapshot = new CatalogSnapshot({ version: 1, products: fixtureProducts, collections: [] }, 'http://shop.test');
  const onHand = new Map<number, number>();
  let announce: (change: ReadonlyMap<number, unknown>) => void = () => {};
  let builds = 0;
  const cache = new PerProductCache(
    { snapshot } as Catalog,
    { onChange: (listener) => (announce = listener) },
    (product: Product) => {
      builds += 1;
      return `${product.handle}:${product.variants.map((variant) => onHand.get(variant.id) ?? 1).join(',')}`;
    },
    (a, b) => a === b,
    maxKept,
  );
  /** Sets a variant's stock and announces it, as the inventory does. */
  const setStock = (product: Product, units: number) => {
    onHand.set(product.variants[0]!.id, units);
    announce(new Map([[product.variants[0]!.id, units]]));
  };
  return { cache, setStock, builds: () => builds };
}

describe('the per-product cache', () => {
  const [a, b, c, d] = fixtureProducts as [Product, Product, Product, Product];

  it('keeps at most its bound, letting the least recently used go first', () => {
    const { cache, builds } = cacheOf(2);
    cache.get(a);
    cache.get(b);
    cache.get(a); // a is now the more recent
    cache.get(c); // b goes
    assert.equal(cache.size, 2);
    const before = builds();
    cache.get(a);
    cache.get(c);
    assert.equal(builds(), before, 'a and c were kept');
    cache.get(b);
    assert.equal(builds(), before + 1, 'b was let go and is built again');
  });

  it("a stock change moves the generation for a kept product whose value changed, not for one whose value is the same", () => {
    const { cache, setStock } = cacheOf(2);
    cache.get(a);
    const generation = cache.generation;
    setStock(a, 1); // the value built from it does not change
    assert.equal(cache.generation, generation);
    setStock(a, 0);
    assert.notEqual(cache.generation, generation);
    assert.equal(cache.get(a), `${a.handle}:${[0, ...a.variants.slice(1).map(() => 1)].join(',')}`);
  });

  it('a stock change of a product let go moves the generation once (a page may still show it), of one never built not at all', () => {
    const { cache, setStock } = cacheOf(1);
    cache.get(a);
    cache.get(b); // a is let go
    const generation = cache.generation;
    setStock(d, 5); // never built: nothing shows it
    assert.equal(cache.generation, generation);
    setStock(a, 5);
    const moved = cache.generation;
    assert.notEqual(moved, generation);
    setStock(a, 6); // nothing built from a since the generation moved
    assert.equal(cache.generation, moved);
  });

  it('a product let go and read again is compared like any kept product: a sale that leaves its value alone keeps the generation', () => {
    const { cache, setStock } = cacheOf(1);
    cache.get(a);
    cache.get(b); // a is let go
    cache.get(a); // and built again, from the same stock: the same value a page may show
    const generation = cache.generation;
    setStock(a, 1); // its value does not change
    assert.equal(cache.generation, generation, 'pages built from the generation are kept');
    setStock(a, 0);
    assert.notEqual(cache.generation, generation);
  });

  it('a product let go, read again and let go again moves the generation on its next sale (a page may show the value read again)', () => {
    const { cache, setStock } = cacheOf(1);
    cache.get(a);
    cache.get(b); // a is let go
    cache.get(a); // read again: b is let go
    cache.get(b); // a is let go again
    const generation = cache.generation;
    setStock(a, 5);
    assert.notEqual(cache.generation, generation);
  });
});
