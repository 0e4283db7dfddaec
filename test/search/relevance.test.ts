import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSearchIndex, searchProducts } from '../../src/search/search-index.js';
import { fixtureCollections, fixtureProducts, fixtureStock, makeProduct, stockFor } from './fixture-catalog.js';

const index = buildSearchIndex(fixtureProducts, fixtureCollections);
/** Above every expected list's length, so each list below is the complete answer. */
const LIMIT = 20;

function handlesFor(query: string, limit = LIMIT): string[] {
  return searchProducts(index, query, limit, fixtureStock).map((product) => product.handle);
}

interface RelevanceCase {
  query: string;
  /** Every expected result, best first. */
  expected: string[];
  why: string;
}

/** All capsule products in title order: "Café Crème…" folds to "cafe…", so it sorts first. */
const CAPSULES_BY_TITLE = [
  'cafe-creme',
  'decaf-espresso',
  'espresso-intenso',
  'espresso-ristretto',
  'lungo-forte',
  'magnesium-night',
  'melatonin-sleep',
  'capsule-holder',
  'vitamin-d3',
  'wild-berries-vitamin-c',
];

/** Title matches on "stick" (available, by title), the sold-out one, then type/variant, then vendor-prefix matches. */
const STICKS_RANKED = [
  'electrolyte-lemon-lime',
  'electrolyte-mixed-berry',
  'energy-lemon-lime',
  'energy-mixed-berry',
  'instant-espresso-sticks',
  'kids-hydration-orange',
  'limited-edition-sticks',
  'electrolyte-watermelon',
  'hydration-sampler',
  'travel-shaker',
];

/** Equal title matches on "espresso": titles beginning with it first (#9: "Espresso Capsules" above "Decaf Espresso Capsules"), then by title. */
const ESPRESSO_RANKED = ['espresso-intenso', 'espresso-ristretto', 'decaf-espresso', 'instant-espresso-sticks'];

const relevanceTable: RelevanceCase[] = [
  {
    query: 'electrolyte',
    expected: ['electrolyte-lemon-lime', 'electrolyte-mixed-berry', 'electrolyte-watermelon'],
    why: 'equal title matches: available by title, the sold-out one last',
  },
  {
    query: 'ELECTRO',
    expected: ['electrolyte-lemon-lime', 'electrolyte-mixed-berry', 'electrolyte-watermelon'],
    why: 'the last word matches as a prefix, whatever its case',
  },
  { query: 'capsu', expected: CAPSULES_BY_TITLE, why: 'prefix finds capsule and capsules alike' },
  { query: '  CAPSULES  ', expected: CAPSULES_BY_TITLE, why: 'spaces and case ignored; plural meets singular' },
  { query: 'capsle', expected: CAPSULES_BY_TITLE, why: 'one missing letter is forgiven' },
  { query: 'espresso', expected: ESPRESSO_RANKED, why: 'whole word in titles; titles beginning with it first' },
  { query: 'expresso', expected: ESPRESSO_RANKED, why: 'one wrong letter is forgiven, also at the start of a title' },
  { query: 'espresso sticks', expected: ['instant-espresso-sticks'], why: 'every word must match' },
  {
    query: 'espresso capsu',
    expected: ['espresso-intenso', 'espresso-ristretto', 'decaf-espresso'],
    why: 'earlier words whole, last word as prefix; titles beginning with both words first',
  },
  { query: 'capsu espresso', expected: [], why: 'an earlier word is not completed as a prefix' },
  { query: 'decaf', expected: ['decaf-espresso'], why: 'a title word' },
  { query: 'cafe creme', expected: ['cafe-creme'], why: 'unaccented query finds the accented title' },
  { query: 'CAFÉ', expected: ['cafe-creme'], why: 'accented query in capitals' },
  { query: 'crème', expected: ['cafe-creme'], why: 'accent typed, not matched to the vendor "Crema"' },
  {
    query: 'berry',
    expected: ['electrolyte-mixed-berry', 'energy-mixed-berry', 'wild-berries-vitamin-c', 'hydration-sampler'],
    why: 'singular finds "Berries" in a title; the description-only match comes last',
  },
  {
    query: 'berries',
    expected: ['electrolyte-mixed-berry', 'energy-mixed-berry', 'wild-berries-vitamin-c', 'hydration-sampler'],
    why: 'plural finds "Berry"',
  },
  { query: 'stick', expected: STICKS_RANKED, why: 'title above variant title above vendor prefix; sold-out last among equals' },
  { query: 'sticks', expected: STICKS_RANKED, why: 'plural query, same ranking' },
  {
    query: 'lemon-lime',
    expected: ['electrolyte-lemon-lime', 'energy-lemon-lime', 'hydration-sampler'],
    why: 'a hyphen separates words; both must match',
  },
  {
    query: 'lemonlime',
    expected: ['electrolyte-lemon-lime', 'energy-lemon-lime', 'hydration-sampler'],
    why: 'a hyphenated word also matches written as one',
  },
  {
    query: 'lemon',
    expected: ['electrolyte-lemon-lime', 'energy-lemon-lime', 'hydration-sampler', 'magnesium-night'],
    why: 'title matches above description matches',
  },
  {
    query: 'watermelon',
    expected: ['electrolyte-watermelon', 'hydration-sampler'],
    why: 'a sold-out title match still ranks above an available description match',
  },
  {
    query: 'watermellon',
    expected: ['electrolyte-watermelon'],
    why: 'typos are forgiven in titles, not in descriptions',
  },
  {
    query: 'mixed berry sticks',
    expected: ['electrolyte-mixed-berry', 'energy-mixed-berry', 'hydration-sampler'],
    why: 'three words, all required; title matches first',
  },
  {
    query: 'hydration',
    expected: [
      'hydration-sampler',
      'kids-hydration-orange',
      'electrolyte-lemon-lime',
      'electrolyte-mixed-berry',
      'electrolyte-watermelon',
    ],
    why: 'title above tags; sold-out last among the tag matches',
  },
  { query: 'sleep', expected: ['melatonin-sleep', 'magnesium-night'], why: 'title above tag' },
  {
    query: 'capsules for sleep',
    expected: ['melatonin-sleep', 'magnesium-night'],
    why: 'a grammar word in the middle is not required',
  },
  {
    query: 'night',
    expected: ['magnesium-night', 'melatonin-sleep', 'vitamin-d3', 'wild-berries-vitamin-c'],
    why: 'exact title word above the vendor "NightOwl" found by prefix',
  },
  {
    query: 'vitamins',
    expected: ['vitamin-d3', 'wild-berries-vitamin-c', 'energy-mixed-berry'],
    why: 'plural query finds singular titles; description match last',
  },
  {
    query: 'vitamin c',
    expected: ['wild-berries-vitamin-c', 'vitamin-d3', 'energy-mixed-berry'],
    why: 'the exact one-letter word above its prefix completions ("capsules", "caffeine")',
  },
  { query: 'chamomile', expected: ['magnesium-night'], why: 'a word only in a description (inside <em>)' },
  { query: 'barista', expected: ['milk-frother'], why: 'a word only in tags' },
  { query: 'ltd', expected: ['limited-edition-sticks'], why: 'a word only in a SKU' },
  { query: 'DS-EL-LL-12', expected: ['electrolyte-lemon-lime'], why: 'a full SKU as typed' },
  { query: 'dselll12', expected: ['electrolyte-lemon-lime'], why: 'a SKU without its hyphens' },
  { query: 'dselll13', expected: [], why: 'no typo forgiven in words with digits' },
  { query: 'intensity 12', expected: ['espresso-ristretto'], why: 'a hyphenated tag split into words' },
  { query: 'sugar free', expected: ['electrolyte-lemon-lime', 'electrolyte-mixed-berry'], why: 'tag "sugar-free"' },
  { query: 'lmeon', expected: ['electrolyte-lemon-lime', 'energy-lemon-lime'], why: 'two swapped letters are forgiven' },
  { query: 'kdis', expected: ['kids-hydration-orange'], why: 'swapped letters in a plural word' },
  { query: 'kis', expected: [], why: 'no typo forgiven under four letters' },
  { query: 'lugo', expected: ['lungo-forte'], why: 'a missing letter in a four-letter word' },
  { query: 'frothers', expected: ['milk-frother'], why: 'plural of a singular title word' },
  { query: 'boxes', expected: ['hydration-sampler'], why: 'plural in -es' },
  { query: 'stainless steel', expected: [], why: 'one word matching is not enough' },
  { query: 'default', expected: [], why: 'the "Default Title" of single-variant products is not indexed' },
  { query: 'amp', expected: [], why: 'HTML entities are decoded, not indexed' },
  { query: 'kombucha', expected: [], why: 'no match' },
  { query: '   ', expected: [], why: 'whitespace only' },
  { query: '!!!', expected: [], why: 'punctuation only' },
];

describe('product search relevance', () => {
  for (const { query, expected, why } of relevanceTable) {
    it(`"${query}": ${why}`, () => {
      assert.deepEqual(handlesFor(query), expected);
    });
  }

  it('answers nothing for an empty query', () => {
    assert.deepEqual(handlesFor(''), []);
  });

  it('returns no more than the limit, keeping the best first', () => {
    assert.deepEqual(handlesFor('capsules', 3), CAPSULES_BY_TITLE.slice(0, 3));
    assert.deepEqual(handlesFor('capsules', 0), []);
  });

  it('breaks ties by title, then by id, whatever the catalog order', () => {
    const twin = (id: number, handle: string, title: string) =>
      makeProduct({
        id,
        handle,
        title,
        productType: 'Coffee Capsules',
        vendor: 'Crema & Co',
        tags: [],
        descriptionHtml: '',
        variants: [{ title: '10 capsules', sku: null }],
      });
    // Every title begins with the query word, so only title and id tell them apart.
    const products = [
      twin(9, 'lungo-b', 'Lungo Capsules'),
      twin(3, 'lungo-a', 'Lungo Capsules'),
      twin(5, 'lungo-aroma', 'Lungo Aroma'),
    ];
    const expected = ['lungo-aroma', 'lungo-a', 'lungo-b'];
    for (const catalog of [products, [...products].reverse()]) {
      const handles = searchProducts(buildSearchIndex(catalog, []), 'lungo', 10, stockFor(catalog)).map((product) => product.handle);
      assert.deepEqual(handles, expected);
    }
  });

  it('ranks the same when a short prefix has very many completions (merged once, reused)', () => {
    // 300 products with 20 description words each starting with "s": far more postings than products.
    const products = Array.from({ length: 300 }, (_, n) =>
      makeProduct({
        id: n + 1,
        handle: `item-${n}`,
        title: n === 7 ? 'Sunrise Item' : `Item ${n}`,
        productType: '',
        vendor: '',
        tags: n === 3 ? ['s'] : [],
        descriptionHtml: Array.from({ length: 20 }, (_, w) => `s${n}x${w}`).join(' '),
        variants: [{ title: 'Default Title', sku: null, inventoryQuantity: n === 0 ? 0 : 5 }],
      }),
    );
    const bigIndex = buildSearchIndex(products, []);
    // Title prefix, then the exact tag "s", then description prefixes: available by title, sold-out item-0 last.
    const expected = ['item-7', 'item-3', 'item-1', 'item-10', 'item-100'];
    for (let round = 0; round < 2; round += 1) {
      assert.deepEqual(searchProducts(bigIndex, 's', 5, stockFor(products)).map((product) => product.handle), expected);
      assert.equal(searchProducts(bigIndex, 's', 400, stockFor(products)).at(-1)?.handle, 'item-0');
    }
  });

  it('ranks a product available through any variant with the available ones', () => {
    const partlySoldOut = makeProduct({
      id: 50,
      handle: 'aaa-espresso-sampler',
      title: 'AAA Espresso Sampler',
      productType: 'Coffee Capsules',
      vendor: 'Crema & Co',
      tags: [],
      descriptionHtml: '',
      variants: [
        { title: '10 capsules', sku: null, inventoryQuantity: 0 },
        { title: '20 capsules', sku: null, inventoryQuantity: 3 },
      ],
    });
    const soldOut = makeProduct({
      id: 51,
      handle: 'aa-espresso-sold-out',
      title: 'AA Espresso Sold Out',
      productType: 'Coffee Capsules',
      vendor: 'Crema & Co',
      tags: [],
      descriptionHtml: '',
      variants: [{ title: '10 capsules', sku: null, inventoryQuantity: 0 }],
    });
    const handles = searchProducts(buildSearchIndex([soldOut, partlySoldOut], []), 'espresso', 10, stockFor([soldOut, partlySoldOut])).map(
      (product) => product.handle,
    );
    assert.deepEqual(handles, ['aaa-espresso-sampler', 'aa-espresso-sold-out']);
  });

  describe('a title that begins with the query ranks above one that only contains it (#9, item 8)', () => {
    const capsules = (id: number, handle: string, title: string, extra: { tags?: string[]; soldOut?: boolean } = {}) =>
      makeProduct({
        id,
        handle,
        title,
        productType: 'Coffee Capsule',
        vendor: 'Stick & Capsule Co.',
        tags: extra.tags ?? ['coffee'],
        descriptionHtml: '<p>Roasted in small batches, espresso-ready.</p>',
        variants: [{ title: '10 capsules', sku: null, inventoryQuantity: extra.soldOut ? 0 : 10 }],
      });
    // The demo catalog's two capsules (the decaf one sorts first by title), one more, and a tag-only match.
    const products = [
      capsules(1, 'decaf-capsules', 'Decaf Espresso Capsules'),
      capsules(2, 'espresso-capsules', 'Espresso Capsules'),
      capsules(3, 'espresso-intenso', 'Espresso Capsules – Intenso'),
      capsules(4, 'barista-sampler', 'Barista Sampler', { tags: ['espresso'] }),
    ];
    const search = (query: string, catalog = products) =>
      searchProducts(buildSearchIndex(catalog, []), query, 10, stockFor(catalog)).map((product) => product.handle);

    it('"espresso": the titles beginning with it, then the one containing it, then the tag match', () => {
      assert.deepEqual(search('espresso'), ['espresso-capsules', 'espresso-intenso', 'decaf-capsules', 'barista-sampler']);
      assert.deepEqual(search('expresso'), ['espresso-capsules', 'espresso-intenso', 'decaf-capsules', 'barista-sampler']);
    });

    it('"espresso capsules": the title that is the query exactly comes first, typed or being typed', () => {
      for (const query of ['espresso capsules', 'Espresso Capsule', 'espresso caps']) {
        assert.deepEqual(search(query), ['espresso-capsules', 'espresso-intenso', 'decaf-capsules', 'barista-sampler'], query);
      }
    });

    it('the catalog order and ids do not matter', () => {
      assert.deepEqual(search('espresso', [...products].reverse()), search('espresso'));
    });

    it('a sold-out title beginning with the query still goes after available equal matches', () => {
      const catalog = [...products.filter((p) => p.id !== 2), capsules(2, 'espresso-capsules', 'Espresso Capsules', { soldOut: true })];
      assert.deepEqual(search('espresso', catalog), ['espresso-intenso', 'decaf-capsules', 'espresso-capsules', 'barista-sampler']);
    });
  });

  it('every product whose title holds all the query words ranks above every product matching only elsewhere', () => {
    // The same products with nothing searchable but their titles: what a title-only search finds.
    const titlesOnly = fixtureProducts.map(
      (product): typeof product => ({
        ...product,
        productType: '',
        vendor: '',
        tags: [],
        descriptionHtml: '',
        variants: product.variants.map((variant) => ({ ...variant, title: 'Default Title', sku: null, barcode: null })),
      }),
    );
    const titleIndex = buildSearchIndex(titlesOnly, []);
    let checked = 0;
    for (const { query } of relevanceTable) {
      const inTitle = new Set(searchProducts(titleIndex, query, LIMIT, fixtureStock).map((product) => product.handle));
      const ranked = handlesFor(query);
      const firstElsewhere = ranked.findIndex((handle) => !inTitle.has(handle));
      if (firstElsewhere < 0) continue;
      assert.ok(ranked.slice(firstElsewhere).every((handle) => !inTitle.has(handle)), `${query}: ${ranked.join(', ')}`);
      if (inTitle.size > 0) checked += 1;
    }
    assert.ok(checked >= 10, `${checked} queries mix title and other matches`);
  });
});
