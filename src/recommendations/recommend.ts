/**
 * Product recommendations as Shopify's `/recommendations/products.json` gives them:
 * `related` (bought together, then similar) and `complementary` (merchant-chosen add-ons).
 */
import type { Product } from '../catalog/types.js';
import { isProductAvailable, type StockLevels } from '../inventory/stock.js';

export interface RelatedProductsContext {
  /**
   * Product id → ids of the published collections holding it. Catch-all collections (`all`,
   * `frontpage`) should be left out, as Shopify does: sharing them says nothing.
   */
  collectionsByProduct: Map<number, number[]>;
  /** Other product id → times bought together with the product in completed orders. */
  boughtTogether: Map<number, number>;
  /** Units on hand, for available-before-sold-out. */
  stock: StockLevels;
}

/** How much each kind of resemblance counts: a shared collection or the same type outweighs one shared tag. */
const SHARED_COLLECTION_WEIGHT = 2;
const SAME_PRODUCT_TYPE_WEIGHT = 2;
const SHARED_TAG_WEIGHT = 1;

function normalisedLabel(label: string): string {
  return label.trim().toLowerCase();
}

interface Related {
  product: Product;
  available: boolean;
  boughtTogether: number;
  similarity: number;
}

/**
 * Up to `limit` products to show next to `product`: available before sold out; within each, most
 * often bought together first, then most similar (shared collections, same type, shared tags), then title and id.
 */
export function relatedProducts(
  product: Product,
  candidates: Product[],
  context: RelatedProductsContext,
  limit: number,
): Product[] {
  const ownCollections = new Set(context.collectionsByProduct.get(product.id) ?? []);
  const ownType = normalisedLabel(product.productType);
  const ownTags = new Set(product.tags.map(normalisedLabel));
  const seen = new Set([product.id]);
  const related: Related[] = [];

  for (const candidate of candidates) {
    if (seen.has(candidate.id)) continue;
    seen.add(candidate.id);
    let sharedCollections = 0;
    for (const collectionId of context.collectionsByProduct.get(candidate.id) ?? []) {
      if (ownCollections.has(collectionId)) sharedCollections += 1;
    }
    const sameType = ownType !== '' && normalisedLabel(candidate.productType) === ownType;
    let sharedTags = 0; // a product's tags are distinct, as in Shopify
    for (const tag of candidate.tags) if (ownTags.has(normalisedLabel(tag))) sharedTags += 1;
    related.push({
      product: candidate,
      available: isProductAvailable(candidate, context.stock),
      boughtTogether: context.boughtTogether.get(candidate.id) ?? 0,
      similarity:
        sharedCollections * SHARED_COLLECTION_WEIGHT + (sameType ? SAME_PRODUCT_TYPE_WEIGHT : 0) + sharedTags * SHARED_TAG_WEIGHT,
    });
  }

  // Unrelated products still fill the list, after the related ones of the same availability: a small store shows a full row.
  const order = (a: Related, b: Related): number =>
    Number(b.available) - Number(a.available) ||
    b.boughtTogether - a.boughtTogether ||
    b.similarity - a.similarity ||
    compareByTitleThenId(a.product, b.product);
  return firstInOrder(related, limit, order).map((entry) => entry.product);
}

/** The first `limit` items in `order`, without sorting the whole catalog for a row of four. */
function firstInOrder<T>(items: T[], limit: number, order: (a: T, b: T) => number): T[] {
  const first: T[] = [];
  const wanted = Math.floor(limit);
  if (!(wanted >= 1)) return first; // also NaN
  for (const item of items) {
    if (first.length === wanted && order(item, first[wanted - 1] as T) >= 0) continue;
    let slot = first.length < wanted ? first.length : wanted - 1;
    while (slot > 0 && order(item, first[slot - 1] as T) < 0) {
      first[slot] = first[slot - 1] as T;
      slot -= 1;
    }
    first[slot] = item;
  }
  return first;
}

function compareByTitleThenId(a: Product, b: Product): number {
  if (a.title !== b.title) return a.title < b.title ? -1 : 1;
  return a.id - b.id;
}

/**
 * The merchant's add-ons for `product` (its `complementaryHandles`), in the merchant's order with sold-out
 * ones moved last; handles of unknown or unpublished products, repeats and the product itself are skipped.
 */
export function complementaryProducts(product: Product, byHandle: Map<string, Product>, limit: number, stock: StockLevels): Product[] {
  const available: Product[] = [];
  const soldOut: Product[] = [];
  const seen = new Set([product.id]);
  for (const handle of product.complementaryHandles) {
    const complement = byHandle.get(handle);
    if (complement === undefined || !complement.published || seen.has(complement.id)) continue;
    seen.add(complement.id);
    (isProductAvailable(complement, stock) ? available : soldOut).push(complement);
  }
  return [...available, ...soldOut].slice(0, Math.max(0, limit));
}
