/**
 * Storefront search over the published catalog: products, collections and query suggestions,
 * as Shopify's predictive search (`/search/suggest.json`) returns them.
 *
 * Product ranking: every query word must match; each word scores by where it matched
 * (title > type, vendor, tags, variant titles, SKUs, barcodes > description) and how
 * (exact or plural > prefix of the last word > one typo); the scores add up; equal scores put
 * available products before sold-out ones, then order by title and id.
 */
import type { Collection, Product } from '../catalog/types.js';
import { isProductAvailable, type StockLevels } from '../inventory/stock.js';
import { buildQuerySuggestions, suggestCompletions, type QuerySuggestion, type QuerySuggestions } from './query-suggestions.js';
import { buildTermIndex, FieldTier, queryWords, positionsOfHighestKeys, scoreDocuments, type DocumentField, type TermIndex } from './term-index.js';
import { foldText, htmlToText } from './text-normalisation.js';

export type { QuerySuggestion } from './query-suggestions.js';

export interface SearchIndex {
  products: Product[];
  productTerms: TermIndex;
  /** Position of each product when ordered by title then id: the last tie-breaker. */
  productTitleOrder: Int32Array;
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
  return {
    products,
    productTerms: buildTermIndex(products.map(productFields)),
    productTitleOrder: titleOrder(products),
    collections,
    // Shopify searches collections by title only.
    collectionTerms: buildTermIndex(collections.map((collection) => [{ text: collection.title, tier: FieldTier.title }])),
    collectionTitleOrder: titleOrder(collections),
    querySuggestions: buildQuerySuggestions(products),
  };
}

/** The best `limit` products for a query, best first; nothing for an empty query. Availability is read live. */
export function searchProducts(index: SearchIndex, query: string, limit: number, stock: StockLevels): Product[] {
  const { documents, scores } = scoreDocuments(index.productTerms, queryWords(query));
  const count = index.products.length;
  // One number orders a match: score first, then available before sold out, then title order.
  const rankKeys = documents.map((position, i) => {
    const availability = isProductAvailable(index.products[position] as Product, stock) ? 1 : 0;
    return ((scores[i] as number) * 2 + availability) * count + (count - 1 - (index.productTitleOrder[position] as number));
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
