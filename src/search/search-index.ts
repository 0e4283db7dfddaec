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
import { buildQuerySuggestions, suggestCompletions, type QuerySuggestion, type QuerySuggestions } from './query-suggestions.js';
import {
  buildTermIndex,
  FieldTier,
  queryWords,
  positionsOfHighestKeys,
  scoreDocuments,
  wordMatchers,
  type DocumentField,
  type TermIndex,
  type WordMatcher,
} from './term-index.js';
import { foldText, htmlToText, stem } from './text-normalisation.js';

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

/** Build from the published products and collections; rebuild whenever the catalog changes. */
export function buildSearchIndex(products: Product[], collections: Collection[]): SearchIndex {
  const productTerms = buildTermIndex(products.map(productFields));
  const titleWordStart = new Int32Array(products.length + 1);
  const titleWords: string[] = [];
  products.forEach((product, position) => {
    titleWords.push(...queryWords(product.title));
    titleWordStart[position + 1] = titleWords.length;
  });
  const rankOfWord = new Map(productTerms.sortedWords.map((word, rank) => [word, rank]));
  return {
    products,
    productTerms,
    productTitleOrder: titleOrder(products),
    titleWordStart,
    titleStemIds: Int32Array.from(titleWords, (word) => productTerms.stemIds.get(stem(word)) ?? -1),
    titleWordRanks: Int32Array.from(titleWords, (word) => rankOfWord.get(word) ?? -1),
    collections,
    // Shopify searches collections by title only.
    collectionTerms: buildTermIndex(collections.map((collection) => [{ text: collection.title, tier: FieldTier.title }])),
    collectionTitleOrder: titleOrder(collections),
    querySuggestions: buildQuerySuggestions(products),
  };
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
  const words = queryWords(query);
  const { documents, scores } = scoreDocuments(index.productTerms, words);
  if (documents.length === 0) return [];
  const count = index.products.length;
  const matchers = wordMatchers(index.productTerms, words);
  const closenessLevels = 2 * words.length + 2;
  // One number orders a match: score first, then available before sold out, then how closely the title
  // begins with the query, then title order.
  const rankKeys = documents.map((position, i) => {
    const availability = isProductAvailable(index.products[position] as Product, stock) ? 1 : 0;
    const closeness = titleCloseness(index, position, matchers);
    return (
      (((scores[i] as number) * 2 + availability) * closenessLevels + closeness) * count +
      (count - 1 - (index.productTitleOrder[position] as number))
    );
  });
  const best = positionsOfHighestKeys(rankKeys, limit);
  return best.map((i) => index.products[documents[i] as number] as Product);
}

/** The best `limit` collections whose titles match the query, best first. */
export function searchCollections(index: SearchIndex, query: string, limit: number): Collection[] {
  const { documents, scores } = scoreDocuments(index.collectionTerms, queryWords(query));
  const count = index.collections.length;
  const rankKeys = documents.map(
    (position, i) => (scores[i] as number) * count + (count - 1 - (index.collectionTitleOrder[position] as number)),
  );
  const best = positionsOfHighestKeys(rankKeys, limit);
  return best.map((i) => index.collections[documents[i] as number] as Collection);
}

/** Completions of the typed text drawn from the catalog, like Shopify's `queries` resource. */
export function suggestQueries(index: SearchIndex, query: string, limit: number): QuerySuggestion[] {
  return suggestCompletions(index.querySuggestions, query, limit);
}
