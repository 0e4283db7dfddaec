/**
 * Storefront search over the published catalog: products, collections and query suggestions,
 * as Shopify's predictive search (`/search/suggest.json`) returns them.
 *
 * Product ranking: every query word must match; each word scores by where it matched
 * (title > type, vendor, tags, variant titles, SKUs, barcodes > description) and how
 * (exact or plural > prefix of the last word > one typo); the scores add up; equal scores put
 * available products before sold-out ones, then those whose title begins with the query's words (the
 * more leading words, the closer; a title that is the query exactly closest of all), then order by
 * title and id. So "espresso" finds "Espresso Capsules" before "Decaf Espresso Capsules".
 */
import type { Collection, Product } from '../catalog/types.js';
import { isProductAvailable, type StockLevels } from '../inventory/stock.js';
import { QuerySuggestionsBuilder, suggestCompletions, type QuerySuggestion, type QuerySuggestions } from './query-suggestions.js';
import {
  buildTermIndex,
  FieldTier,
  groupByKey,
  int32List,
  TermIndexBuilder,
  queryWords,
  positionsOfHighestKeys,
  scoreDocuments,
  wordMatchers,
  type DocumentField,
  type TermIndex,
  type WordMatcher,
} from './term-index.js';
import { foldText, htmlToText } from './text-normalisation.js';

export type { QuerySuggestion } from './query-suggestions.js';

export interface SearchIndex {
  products: Product[];
  productTerms: TermIndex;
  /** Position of each product when ordered by title then id: the last tie-breaker. */
  productTitleOrder: Int32Array;
  /**
   * Each product's title read as a query is (folded words, grammar words dropped), for how closely a title
   * begins with the query: product i's words are at positions titleWordStart[i] .. titleWordStart[i + 1] of
   * titleStemIds (each word's stem id in productTerms) and titleWordRanks (its position in productTerms.sortedWords).
   */
  titleWordStart: Int32Array;
  titleStemIds: Int32Array;
  titleWordRanks: Int32Array;
  collections: Collection[];
  collectionTerms: TermIndex;
  collectionTitleOrder: Int32Array;
  querySuggestions: QuerySuggestions;
}

/** Shopify names a product's only variant "Default Title"; it says nothing about the product. */
const DEFAULT_VARIANT_TITLE = 'Default Title';

function productFields(product: Product): DocumentField[] {
  const fields: DocumentField[] = [
    { text: product.title, tier: FieldTier.title },
    { text: product.productType, tier: FieldTier.attribute, recurring: true },
    { text: product.vendor, tier: FieldTier.attribute, recurring: true },
    { text: htmlToText(product.descriptionHtml), tier: FieldTier.description },
  ];
  for (const tag of product.tags) fields.push({ text: tag, tier: FieldTier.attribute, recurring: true });
  for (const variant of product.variants) {
    if (variant.title !== DEFAULT_VARIANT_TITLE) {
      fields.push({ text: variant.title, tier: FieldTier.attribute, recurring: true });
    }
    if (variant.sku) fields.push({ text: variant.sku, tier: FieldTier.attribute });
    if (variant.barcode) fields.push({ text: variant.barcode, tier: FieldTier.attribute });
  }
  return fields;
}

function titleOrder(items: { id: number; title: string }[]): Int32Array {
  const foldedTitles = items.map((item) => foldText(item.title));
  const positions = items.map((_, position) => position);
  positions.sort((a, b) => {
    const left = items[a] as { id: number; title: string };
    const right = items[b] as { id: number; title: string };
    const byFoldedTitle = compareStrings(foldedTitles[a] as string, foldedTitles[b] as string);
    return byFoldedTitle || compareStrings(left.title, right.title) || left.id - right.id;
  });
  const order = new Int32Array(items.length);
  positions.forEach((itemPosition, rank) => {
    order[itemPosition] = rank;
  });
  return order;
}

/** Code-unit order: the same on every machine, unlike localeCompare. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Products indexed between two looks at the clock. */
const PRODUCTS_PER_CLOCK_CHECK = 64;

/**
 * Builds the search index of the published products and collections in steps: products are indexed a batch at a
 * time, then each finishing part (words sorted, postings grouped, titles ordered) is a step of its own, so that a
 * store can build the index of a large catalog between requests. `finish` does whatever is left at once.
 * A step that throws leaves the builder unusable (every later step throws the same error): build again with a new one.
 */
export class SearchIndexBuilder {
  private readonly terms = new TermIndexBuilder();
  private readonly suggestions = new QuerySuggestionsBuilder();
  /** Each product's title words (as queryWords reads the title) by their word ids in `terms`. */
  private readonly titleWordStart: Int32Array;
  private readonly titleWordIds = int32List();
  private added = 0;
  private readonly finishing: (() => void)[];
  private productTerms: TermIndex | undefined;
  private querySuggestions: QuerySuggestions | undefined;
  private productTitleOrder: Int32Array | undefined;
  private index: SearchIndex | undefined;
  /** Set by a step that threw: a product half added cannot be taken out of the word tables, so no step goes on. */
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly products: Product[],
    private readonly collections: Collection[],
  ) {
    this.titleWordStart = new Int32Array(products.length + 1);
    this.finishing = [
      () => (this.productTerms = this.terms.finish()),
      () => (this.querySuggestions = this.suggestions.finish()),
      () => (this.productTitleOrder = titleOrder(this.products)),
      () => (this.index = this.assemble()),
    ];
  }

  /** Works for about `budgetMs` (a finishing part may take longer); true once the index is built. */
  step(budgetMs: number): boolean {
    if (this.failure) throw this.failure.error;
    try {
      return this.work(budgetMs);
    } catch (error) {
      this.failure = { error };
      throw error;
    }
  }

  /** The index, built now as far as it is not yet. */
  finish(): SearchIndex {
    // Ends: a step without a budget adds every product left or takes a finishing part off the list, or throws.
    while (!this.step(Infinity));
    return this.index as SearchIndex;
  }

  private work(budgetMs: number): boolean {
    const stopAt = performance.now() + budgetMs;
    while (this.added < this.products.length) {
      this.addProduct(this.products[this.added] as Product);
      this.added += 1;
      if (this.added % PRODUCTS_PER_CLOCK_CHECK === 0 && performance.now() >= stopAt) return false;
    }
    this.finishing[0]?.();
    this.finishing.shift(); // only once it is done
    // The last part sets the index: with no part left, the build is done.
    return this.finishing.length === 0;
  }

  private addProduct(product: Product): void {
    this.terms.add(productFields(product));
    this.suggestions.add(product);
    // Every title word is indexed (the title is a field), so each has a word id.
    for (const word of queryWords(product.title)) this.titleWordIds.push(this.terms.wordId(word));
    this.titleWordStart[this.added + 1] = this.titleWordIds.length;
  }

  private assemble(): SearchIndex {
    const productTerms = this.productTerms as TermIndex;
    const titleWordIds = this.titleWordIds.done();
    return {
      products: this.products,
      productTerms,
      productTitleOrder: this.productTitleOrder as Int32Array,
      titleWordStart: this.titleWordStart,
      titleStemIds: titleWordIds.map((wordId) => this.terms.stemIdOf(wordId)),
      titleWordRanks: titleWordIds.map((wordId) => this.terms.rankOf(wordId)),
      collections: this.collections,
      // Shopify searches collections by title only.
      collectionTerms: buildTermIndex(this.collections.map((collection) => [{ text: collection.title, tier: FieldTier.title }])),
      collectionTitleOrder: titleOrder(this.collections),
      querySuggestions: this.querySuggestions as QuerySuggestions,
    };
  }
}

/** Build from the published products and collections at once; rebuild whenever the catalog changes. */
export function buildSearchIndex(products: Product[], collections: Collection[]): SearchIndex {
  return new SearchIndexBuilder(products, collections).finish();
}

/**
 * How closely a product's title begins with the query: twice the number of query words matching the title's
 * first words in order (each as scoring matches it: same stem, a typo, the last word as a prefix), plus one
 * when those are all of the title's words and all of the query's. From 0 to 2 × words + 1.
 */
function titleCloseness(index: SearchIndex, position: number, matchers: readonly WordMatcher[]): number {
  const start = index.titleWordStart[position] as number;
  const end = index.titleWordStart[position + 1] as number;
  let lead = 0;
  while (lead < matchers.length && start + lead < end) {
    const matcher = matchers[lead] as WordMatcher;
    const rank = index.titleWordRanks[start + lead] as number;
    const matches =
      (rank >= matcher.prefixStart && rank < matcher.prefixEnd) || matcher.stemIds.includes(index.titleStemIds[start + lead] as number);
    if (!matches) break;
    lead += 1;
  }
  return lead * 2 + (lead === matchers.length && start + lead === end ? 1 : 0);
}

/** The best `limit` products for a query, best first; nothing for an empty query. Availability is read live. */
export function searchProducts(index: SearchIndex, query: string, limit: number, stock: StockLevels): Product[] {
  const wanted = Math.floor(limit);
  if (!(wanted >= 1)) return []; // also NaN
  const words = queryWords(query);
  const { documents, scores } = scoreDocuments(index.productTerms, words);
  if (documents.length === 0) return [];
  const matchers = wordMatchers(index.productTerms, words);
  // Score comes first: the matches of the highest score are ranked, then those of the next, until there are enough.
  // A short prefix in a large catalog matches tens of thousands of products, and the lower scores are not looked at again.
  const best: number[] = [];
  for (const group of byScoreHighestFirst(documents, scores)) {
    best.push(...bestOfOneScore(index, group, matchers, wanted - best.length, stock));
    if (best.length === wanted) break;
  }
  return best.map((position) => index.products[position] as Product);
}

/** The documents grouped by score, the highest score first. */
function* byScoreHighestFirst(documents: Int32Array, scores: Uint16Array): Generator<Int32Array> {
  let highest = 0;
  for (let i = 0; i < scores.length; i += 1) highest = Math.max(highest, scores[i] as number);
  const { start, order } = groupByKey(scores, highest + 1);
  const grouped = new Int32Array(documents.length);
  for (let position = 0; position < order.length; position += 1) grouped[position] = documents[order[position] as number] as number;
  for (let score = highest; score > 0; score -= 1) {
    const first = start[score] as number;
    const end = start[score + 1] as number;
    if (end > first) yield grouped.subarray(first, end);
  }
}

/** Rounds of asking the stock of the best-placed matches before asking it of all of them. */
const AVAILABILITY_ROUNDS = 3;

/**
 * The best `wanted` of matches of one score: available before sold out, then how closely the title begins with the
 * query, then title order. Closeness and title order cost a few array reads per match; availability costs a stock
 * lookup per variant, so it is asked only of the best-placed matches, round by round, until `wanted` of them are
 * available (those then beat every match not asked, which could only rank after them); when too many are sold out,
 * of every match.
 */
function bestOfOneScore(index: SearchIndex, group: Int32Array, matchers: readonly WordMatcher[], wanted: number, stock: StockLevels): number[] {
  const count = index.products.length;
  const placeKeys = new Float64Array(group.length);
  for (let i = 0; i < group.length; i += 1) {
    const position = group[i] as number;
    placeKeys[i] = titleCloseness(index, position, matchers) * count + (count - 1 - (index.productTitleOrder[position] as number));
  }
  const isAvailable = (position: number) => isProductAvailable(index.products[position] as Product, stock);
  const available: number[] = [];
  const soldOut: number[] = [];
  const asked = placeKeys.slice();
  for (let round = 0; round < AVAILABILITY_ROUNDS && available.length < wanted; round += 1) {
    const next = positionsOfHighestKeys(asked, wanted - available.length).filter((i) => (asked[i] as number) >= 0);
    if (next.length === 0) return [...available, ...soldOut].slice(0, wanted).map((i) => group[i] as number);
    for (const i of next) {
      (isAvailable(group[i] as number) ? available : soldOut).push(i);
      asked[i] = -1;
    }
  }
  if (available.length >= wanted) return available.slice(0, wanted).map((i) => group[i] as number);
  // Too many sold out among the best placed: every match's availability decides.
  const levels = 2 * (matchers.length + 1) * count;
  const rankKeys = new Float64Array(group.length);
  for (let i = 0; i < group.length; i += 1) rankKeys[i] = (isAvailable(group[i] as number) ? levels : 0) + (placeKeys[i] as number);
  return positionsOfHighestKeys(rankKeys, wanted).map((i) => group[i] as number);
}

/** The best `limit` collections whose titles match the query, best first. */
export function searchCollections(index: SearchIndex, query: string, limit: number): Collection[] {
  const { documents, scores } = scoreDocuments(index.collectionTerms, queryWords(query));
  const count = index.collections.length;
  const rankKeys = Float64Array.from(
    documents,
    (position, i) => (scores[i] as number) * count + (count - 1 - (index.collectionTitleOrder[position] as number)),
  );
  const best = positionsOfHighestKeys(rankKeys, limit);
  return best.map((i) => index.collections[documents[i] as number] as Collection);
}

/** Completions of the typed text drawn from the catalog, like Shopify's `queries` resource. */
export function suggestQueries(index: SearchIndex, query: string, limit: number): QuerySuggestion[] {
  return suggestCompletions(index.querySuggestions, query, limit);
}
