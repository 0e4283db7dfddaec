import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSearchIndex, searchCollections, suggestQueries as suggestions, type SearchIndex } from '../../src/search/search-index.js';
import { styledText } from '../../src/storefront/search-routes.js';
import { fixtureCollections, fixtureProducts, makeProduct } from './fixture-catalog.js';

const index = buildSearchIndex(fixtureProducts, fixtureCollections);

/** The suggestions as the storefront answers them: the text, and the typed part marked up (Shopify's styled_text). */
function suggestQueries(searchIndex: SearchIndex, query: string, limit: number) {
  return suggestions(searchIndex, query, limit).map((suggestion) => ({ text: suggestion.text, styled_text: styledText(suggestion) }));
}

function suggestionTexts(query: string, limit = 10): string[] {
  return suggestQueries(index, query, limit).map((suggestion) => suggestion.text);
}

function collectionHandles(query: string, limit = 10): string[] {
  return searchCollections(index, query, limit).map((collection) => collection.handle);
}

describe('query suggestions', () => {
  it('completes the word being typed, marks the typed part as Shopify does, and shows plural or singular once', () => {
    assert.deepEqual(suggestQueries(index, 'capsu', 10), [
      { text: 'capsules', styled_text: '<mark>capsu</mark><span>les</span>' },
      { text: 'capsule holder', styled_text: '<mark>capsu</mark><span>le holder</span>' },
    ]);
  });

  it('keeps earlier words and completes the last one', () => {
    assert.deepEqual(suggestQueries(index, 'mixed b', 10), [
      { text: 'mixed berry', styled_text: '<mark>mixed b</mark><span>erry</span>' },
    ]);
  });

  it('keeps the catalog spelling of a hyphenated word', () => {
    assert.deepEqual(suggestQueries(index, 'Lemon-L', 10), [
      { text: 'lemon-lime', styled_text: '<mark>lemon-l</mark><span>ime</span>' },
    ]);
  });

  it('ranks phrases found in more products first, then shorter ones', () => {
    assert.deepEqual(suggestionTexts('caf'), ['caffeine', 'café', 'café crème']);
    assert.deepEqual(suggestionTexts('e', 3), ['espresso', 'electrolyte', 'electrolyte drink']);
  });

  it('matches typed text without accents and marks the accented letters it covers', () => {
    assert.deepEqual(suggestQueries(index, 'cafe c', 10), [
      { text: 'café crème', styled_text: '<mark>café c</mark><span>rème</span>' },
      { text: 'café crème capsules', styled_text: '<mark>café c</mark><span>rème capsules</span>' },
    ]);
  });

  it('suggests what follows a complete word, never the typed text itself', () => {
    assert.deepEqual(suggestQueries(index, 'lungo', 10), [
      { text: 'lungo capsules', styled_text: '<mark>lungo</mark><span> capsules</span>' },
    ]);
    assert.deepEqual(suggestionTexts('drink'), ['drink sticks']);
  });

  it('does not run a suggestion across punctuation in a title', () => {
    // "Espresso Capsules – Intenso": the dash ends the phrase.
    assert.ok(!suggestionTexts('espresso c').some((text) => text.includes('intenso')));
  });

  it('shows the spelling the catalog uses most when words are written two ways', () => {
    const titles = ['Lemon Lime Soda Sticks', 'Lemon Lime Tea Sticks', 'Lemon-Lime Energy Sticks'];
    const products = titles.map((title, n) =>
      makeProduct({
        id: n + 1,
        handle: `product-${n}`,
        title,
        productType: '',
        vendor: '',
        tags: [],
        descriptionHtml: '',
        variants: [{ title: 'Default Title', sku: null }],
      }),
    );
    for (const catalog of [products, [...products].reverse()]) {
      const suggestions = suggestQueries(buildSearchIndex(catalog, []), 'lemon l', 1);
      assert.deepEqual(suggestions, [{ text: 'lemon lime', styled_text: '<mark>lemon l</mark><span>ime</span>' }]);
    }
  });

  it('escapes HTML in styled_text', () => {
    const tomsIndex = buildSearchIndex(
      [
        makeProduct({
          id: 1,
          handle: 'toms-sticks',
          title: "Tom's Sticks",
          productType: '',
          vendor: '',
          tags: [],
          descriptionHtml: '',
          variants: [{ title: 'Default Title', sku: null }],
        }),
      ],
      [],
    );
    assert.deepEqual(suggestQueries(tomsIndex, 'tom', 1), [{ text: "tom's", styled_text: '<mark>tom</mark><span>&#39;s</span>' }]);
  });

  it('returns at most the limit', () => {
    assert.equal(suggestQueries(index, 's', 2).length, 2);
    assert.deepEqual(suggestQueries(index, 's', 0), []);
  });

  it('returns nothing for an empty, blank or unknown prefix', () => {
    assert.deepEqual(suggestionTexts(''), []);
    assert.deepEqual(suggestionTexts('   '), []);
    assert.deepEqual(suggestionTexts('zq'), []);
  });
});

describe('collection search', () => {
  it('finds collections by title, plural or singular, ties by title', () => {
    assert.deepEqual(collectionHandles('capsule'), ['coffee-capsules', 'supplement-capsules']);
    assert.deepEqual(collectionHandles('sticks'), ['drink-sticks']);
  });

  it('completes the last word and ignores accents', () => {
    assert.deepEqual(collectionHandles('caf'), ['cafe-favourites']);
    assert.deepEqual(collectionHandles('CAFÉ fav'), ['cafe-favourites']);
  });

  it('forgives one typo', () => {
    assert.deepEqual(collectionHandles('welness'), ['sleep-wellness']);
  });

  it('requires every word and ignores punctuation', () => {
    assert.deepEqual(collectionHandles('sleep & wellness'), ['sleep-wellness']);
    assert.deepEqual(collectionHandles('sleep capsules'), []);
  });

  it('searches titles only, as Shopify does, not descriptions', () => {
    assert.deepEqual(collectionHandles('loved'), []);
  });

  it('returns at most the limit and nothing for a blank query', () => {
    assert.deepEqual(collectionHandles('capsules', 1), ['coffee-capsules']);
    assert.deepEqual(collectionHandles('  '), []);
  });
});
