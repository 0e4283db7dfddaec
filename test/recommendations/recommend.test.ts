import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Product } from '../../src/catalog/types.js';
import { complementaryProducts, relatedProducts, type RelatedProductsContext } from '../../src/recommendations/recommend.js';
import { makeProduct, stockFor } from '../search/fixture-catalog.js';

interface Shape {
  id: number;
  title: string;
  productType?: string;
  tags?: string[];
  soldOut?: boolean;
  complementaryHandles?: string[];
}

function product({ id, title, productType = 'Drink Sticks', tags = [], soldOut = false, complementaryHandles = [] }: Shape): Product {
  return makeProduct({
    id,
    handle: `product-${id}`,
    title,
    productType,
    vendor: 'Stickwell',
    tags,
    descriptionHtml: '',
    variants: [{ title: '12 sticks', sku: null, inventoryQuantity: soldOut ? 0 : 10 }],
    complementaryHandles,
  });
}

function context(
  collections: Record<number, number[]> = {},
  boughtTogether: Record<number, number> = {},
  products: Product[] = [],
): RelatedProductsContext {
  return {
    collectionsByProduct: new Map(Object.entries(collections).map(([id, ids]) => [Number(id), ids])),
    boughtTogether: new Map(Object.entries(boughtTogether).map(([id, times]) => [Number(id), times])),
    stock: stockFor(products),
  };
}

function ids(products: Product[]): number[] {
  return products.map((item) => item.id);
}

// The product recommendations are asked for: an electrolyte stick in collections 1 and 2.
const current = product({ id: 1, title: 'Electrolyte Sticks – Lemon-Lime', tags: ['electrolyte', 'Hydration'] });

describe('related products', () => {
  it('never recommends the product itself, even when bought with itself', () => {
    const other = product({ id: 2, title: 'Energy Sticks', productType: 'Other' });
    const related = relatedProducts(current, [current, other], context({}, { 1: 99 }), 4);
    assert.deepEqual(ids(related), [2]);
  });

  it('puts the products most often bought together first, above more similar ones', () => {
    const twin = product({ id: 2, title: 'Electrolyte Sticks – Berry', tags: ['electrolyte', 'hydration'] });
    const oftenBought = product({ id: 3, title: 'Shaker Bottle', productType: 'Accessories' });
    const sometimesBought = product({ id: 4, title: 'Capsule Holder', productType: 'Accessories' });
    const related = relatedProducts(
      current,
      [twin, sometimesBought, oftenBought],
      context({ 1: [10, 11], 2: [10, 11] }, { 3: 7, 4: 2 }),
      4,
    );
    assert.deepEqual(ids(related), [3, 4, 2]);
  });

  it('then ranks by similarity: shared collections, same product type, shared tags', () => {
    const unrelated = product({ id: 2, title: 'A Unrelated', productType: 'Accessories' });
    const oneSharedTag = product({ id: 3, title: 'B One Tag', productType: 'Accessories', tags: ['electrolyte'] });
    const sameType = product({ id: 4, title: 'C Same Type' });
    const sameTypeAndTag = product({ id: 5, title: 'D Same Type And Tag', tags: ['electrolyte'] });
    const sameTypeTwoTagsOneCollection = product({ id: 6, title: 'E Everything', tags: ['electrolyte', 'hydration'] });
    const related = relatedProducts(
      current,
      [unrelated, oneSharedTag, sameType, sameTypeAndTag, sameTypeTwoTagsOneCollection],
      context({ 1: [10, 11], 6: [11, 12] }),
      10,
    );
    assert.deepEqual(ids(related), [6, 5, 4, 3, 2]);
  });

  it('counts a shared collection as resemblance on its own', () => {
    const inSameCollection = product({ id: 2, title: 'Z In Collection', productType: 'Accessories' });
    const elsewhere = product({ id: 3, title: 'A Elsewhere', productType: 'Accessories' });
    const related = relatedProducts(current, [elsewhere, inSameCollection], context({ 1: [10], 2: [10], 3: [99] }), 4);
    assert.deepEqual(ids(related), [2, 3]);
  });

  it('compares tags and product types without regard to case', () => {
    const shouty = product({ id: 2, title: 'Z Shouty', productType: 'DRINK STICKS', tags: ['HYDRATION'] });
    const plain = product({ id: 3, title: 'A Plain', productType: 'Accessories' });
    assert.deepEqual(ids(relatedProducts(current, [plain, shouty], context(), 4)), [2, 3]);
  });

  it('puts sold-out products after available ones, however related', () => {
    const soldOutFavourite = product({ id: 2, title: 'A Sold Out', tags: ['electrolyte'], soldOut: true });
    const availableRelated = product({ id: 3, title: 'B Related', tags: ['electrolyte'] });
    const availableUnrelated = product({ id: 4, title: 'C Unrelated', productType: 'Accessories' });
    const related = relatedProducts(
      current,
      [soldOutFavourite, availableRelated, availableUnrelated],
      context({}, { 2: 50 }, [soldOutFavourite, availableRelated, availableUnrelated]),
      4,
    );
    assert.deepEqual(ids(related), [3, 4, 2]);
  });

  it('fills the list with unrelated products after the related ones', () => {
    const related = product({ id: 2, title: 'Z Related', tags: ['hydration'] });
    const fillers = [
      product({ id: 3, title: 'B Filler', productType: 'Accessories' }),
      product({ id: 4, title: 'A Filler', productType: 'Accessories' }),
      product({ id: 5, title: 'C Filler', productType: 'Accessories' }),
    ];
    assert.deepEqual(ids(relatedProducts(current, [...fillers, related], context(), 4)), [2, 4, 3, 5]);
  });

  it('breaks ties by title, then id, whatever the candidate order', () => {
    const candidates = [
      product({ id: 7, title: 'Berry Sticks' }),
      product({ id: 3, title: 'Berry Sticks' }),
      product({ id: 5, title: 'Apple Sticks' }),
    ];
    for (const order of [candidates, [...candidates].reverse()]) {
      assert.deepEqual(ids(relatedProducts(current, order, context(), 4)), [5, 3, 7]);
    }
  });

  it('returns at most the limit, each product once', () => {
    const candidates = [1, 2, 3, 4, 5, 6].map((n) => product({ id: n + 1, title: `Sticks ${n}` }));
    const withRepeat = [...candidates, candidates[0] as Product];
    assert.deepEqual(ids(relatedProducts(current, withRepeat, context(), 10)), [2, 3, 4, 5, 6, 7]);
    assert.equal(relatedProducts(current, candidates, context(), 4).length, 4);
    assert.deepEqual(relatedProducts(current, candidates, context(), 0), []);
  });
});

describe('complementary products', () => {
  const shaker = product({ id: 2, title: 'Shaker', productType: 'Accessories' });
  const bottle = product({ id: 3, title: 'Bottle', productType: 'Accessories' });
  const soldOutPouch = product({ id: 4, title: 'Pouch', productType: 'Accessories', soldOut: true });
  const holder = product({ id: 5, title: 'Holder', productType: 'Accessories' });
  const byHandle = new Map([shaker, bottle, soldOutPouch, holder, current].map((item) => [item.handle, item]));
  const stock = stockFor([shaker, bottle, soldOutPouch, holder, current]);

  function withComplements(handles: string[]): Product {
    return { ...current, complementaryHandles: handles };
  }

  it("keeps the merchant's order", () => {
    const result = complementaryProducts(withComplements(['product-5', 'product-2', 'product-3']), byHandle, 10, stock);
    assert.deepEqual(ids(result), [5, 2, 3]);
  });

  it('skips handles of unknown or unpublished products', () => {
    const result = complementaryProducts(withComplements(['product-404', 'product-3', 'retired-product']), byHandle, 10, stock);
    assert.deepEqual(ids(result), [3]);
  });

  it('moves sold-out products after available ones', () => {
    const result = complementaryProducts(withComplements(['product-4', 'product-3', 'product-2']), byHandle, 10, stock);
    assert.deepEqual(ids(result), [3, 2, 4]);
  });

  it('returns at most the limit, after moving sold-out ones last', () => {
    const result = complementaryProducts(withComplements(['product-4', 'product-3', 'product-2', 'product-5']), byHandle, 2, stock);
    assert.deepEqual(ids(result), [3, 2]);
  });

  it('skips the product itself and repeated handles', () => {
    const result = complementaryProducts(withComplements(['product-1', 'product-2', 'product-2']), byHandle, 10, stock);
    assert.deepEqual(ids(result), [2]);
  });

  it('returns nothing when the merchant chose none', () => {
    assert.deepEqual(complementaryProducts(withComplements([]), byHandle, 4, stock), []);
  });
});
