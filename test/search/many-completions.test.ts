/**
 * A last word with very many completions ("1" of the numbers 1 to 1999) is scored from its completions' postings
 * merged into one run: the answer is the one its definition gives, checked here against a plain filter and sort.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSearchIndex, searchProducts } from '../../src/search/search-index.js';
import { stockFor, teaProducts } from './fixture-catalog.js';

// Titles "Green Tea No. 0" to "Rooibos Tea No. 2999"; every seventh product is sold out; descriptions and SKUs
// carry the number too.
const teas = teaProducts(3000);
const index = buildSearchIndex(teas, []);
const stock = stockFor(teas);
const available = (handle: string) => teas.find((tea) => tea.handle === handle)!.variants.some((variant) => stock.onHand(variant.id) > 0);

/** What the ranking's rules give for "KIND tea no. PREFIX": every such tea, available first, then in title order. */
function expected(kind: string, prefix: string, limit: number): string[] {
  return teas
    .filter((tea) => tea.title.startsWith(`${kind} Tea No. ${prefix}`))
    .map((tea) => tea.handle)
    .sort((a, b) => Number(available(b)) - Number(available(a)) || compareTitles(a, b))
    .slice(0, limit);
}

const titleOf = (handle: string) => teas.find((tea) => tea.handle === handle)!.title.toLowerCase();
const compareTitles = (a: string, b: string) => (titleOf(a) < titleOf(b) ? -1 : titleOf(a) > titleOf(b) ? 1 : 0);

describe('a last word with very many completions', () => {
  for (const [kind, prefix] of [
    ['Green', '1'],
    ['Mint', '2'],
    ['Black', '13'],
  ] as const) {
    it(`"${kind.toLowerCase()} tea no. ${prefix}" finds every ${kind} tea whose number begins with ${prefix}, ranked by the rules`, () => {
      for (const limit of [5, 250]) {
        const found = searchProducts(index, `${kind.toLowerCase()} tea no. ${prefix}`, limit, stock).map((product) => product.handle);
        assert.deepEqual(found, expected(kind, prefix, limit));
      }
    });
  }

  it('gives the same answer when asked again (the merged run is kept)', () => {
    const first = searchProducts(index, 'tea 2', 250, stock).map((product) => product.id);
    const again = searchProducts(index, 'tea 2', 250, stock).map((product) => product.id);
    assert.equal(first.length, 250);
    assert.deepEqual(again, first);
  });
});
