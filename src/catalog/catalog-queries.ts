/**
 * The catalog queries an agent door asks (search with filters and pagination, lookup by identifier, one
 * product in detail), pure, over a catalog snapshot and the live stock. The lookup tables they need are
 * derived once per snapshot.
 */
import type { CatalogSnapshot } from './catalog.js';
import { optionValues, type Product, type Variant } from './types.js';
import { searchIndexFor } from '../search/catalog-search.js';
import { searchProducts } from '../search/search-index.js';
import { isVariantAvailable, type StockLevels } from '../inventory/stock.js';

/** How deep search pagination goes: the best 250 matches, like Shopify's page-size ceiling. */
export const MAX_SEARCH_RESULTS = 250;

/** An option value chosen for a product (`Flavour: Lemon-Lime`). */
export interface OptionSelection {
  name: string;
  label: string;
}

/** What identifiers name (product id, variant id, handle, SKU) and each product's categories, per snapshot. */
export class CatalogIndex {
  private readonly byIdentifier = new Map<string, { product: Product; variant?: Variant }[]>();
  private readonly categories = new Map<number, string[]>();

  constructor(readonly snapshot: CatalogSnapshot) {
    const titles = new Map(snapshot.collections.map((c) => [c.id, c.title]));
    for (const [productId, collectionIds] of snapshot.collectionsByProduct()) {
      this.categories.set(productId, collectionIds.map((id) => titles.get(id)).filter((t): t is string => t !== undefined));
    }
    const add = (key: string, match: { product: Product; variant?: Variant }) => {
      const list = this.byIdentifier.get(key);
      if (list) list.push(match);
      else this.byIdentifier.set(key, [match]);
    };
    for (const product of snapshot.products) {
      add(String(product.id), { product });
      add(product.handle, { product });
      for (const variant of product.variants) {
        add(String(variant.id), { product, variant });
        if (variant.sku) add(variant.sku, { product, variant });
      }
    }
  }

  /** Titles of the published collections the product is in. */
  collectionTitles(product: Product): string[] {
    return this.categories.get(product.id) ?? [];
  }

  /** What an identifier names: a product (by id or handle) or a variant (by id or SKU); an id may name both. */
  resolve(identifier: string): readonly { product: Product; variant?: Variant }[] {
    return this.byIdentifier.get(identifier) ?? [];
  }
}

const buildCatalogIndex = (snapshot: CatalogSnapshot) => new CatalogIndex(snapshot);

export function catalogIndex(snapshot: CatalogSnapshot): CatalogIndex {
  return snapshot.derived(buildCatalogIndex);
}

export interface CatalogFilters {
  /** Matches a product whose type or collection title is any of these (case-insensitive). */
  categories?: readonly string[];
  /** Cents, inclusive: a product matches when one of its variants is priced in the range. */
  priceMin?: number;
  priceMax?: number;
}

export function matchesFilters(view: CatalogIndex, product: Product, filters: CatalogFilters): boolean {
  if (filters.categories?.length) {
    const wanted = new Set(filters.categories.map((c) => c.toLowerCase()));
    const own = [product.productType, ...view.collectionTitles(product)].map((c) => c.toLowerCase());
    if (!own.some((c) => wanted.has(c))) return false;
  }
  if (filters.priceMin !== undefined || filters.priceMax !== undefined) return product.variants.some((v) => variantInPriceRange(v, filters));
  return true;
}

export function variantInPriceRange(variant: Variant, filters: CatalogFilters): boolean {
  return (filters.priceMin === undefined || variant.priceCents >= filters.priceMin) && (filters.priceMax === undefined || variant.priceCents <= filters.priceMax);
}

export interface SearchPage {
  products: Product[];
  /** How many products match in all, when known without ranking them all. */
  total: number | undefined;
  hasNextPage: boolean;
}

const hasFilters = (filters: CatalogFilters) =>
  !!filters.categories?.length || filters.priceMin !== undefined || filters.priceMax !== undefined;

/**
 * Products matching a free-text query (every published product when there is none) and the filters, one
 * page. Without filters only the page (and one more, to know whether another page follows) is ranked.
 */
export function searchCatalog(
  snapshot: CatalogSnapshot,
  stock: StockLevels,
  query: string,
  filters: CatalogFilters,
  offset: number,
  limit: number,
): SearchPage {
  const view = catalogIndex(snapshot);
  const text = query.trim();
  if (offset >= MAX_SEARCH_RESULTS) return { products: [], total: undefined, hasNextPage: false };
  const end = Math.min(offset + limit, MAX_SEARCH_RESULTS);
  if (text && !hasFilters(filters)) {
    const ranked = searchProducts(searchIndexFor(snapshot), text, end + 1, stock);
    return { products: ranked.slice(offset, end), total: ranked.length <= end ? ranked.length : undefined, hasNextPage: ranked.length > end };
  }
  const candidates = text ? searchProducts(searchIndexFor(snapshot), text, MAX_SEARCH_RESULTS, stock) : snapshot.products;
  const matching = candidates.filter((product) => matchesFilters(view, product, filters)).slice(0, MAX_SEARCH_RESULTS);
  return { products: matching.slice(offset, end), total: matching.length, hasNextPage: end < matching.length };
}

export interface LookupMatch {
  product: Product;
  /** The variants the identifiers resolved to, each with the identifiers and how they matched. */
  variants: { variant: Variant; inputs: { id: string; match: 'exact' | 'featured' }[] }[];
}

/** The variant a listing leads with: the first one that can be bought, else the first. */
export function featuredVariant(product: Product, stock: StockLevels, candidates: readonly Variant[] = product.variants): Variant | undefined {
  return candidates.find((variant) => isVariantAvailable(variant, stock)) ?? candidates[0];
}

/**
 * Resolves identifiers to products: a variant id or SKU to that variant (`exact`), a product id or handle
 * to its featured variant (`featured`). Identifiers that name nothing, or nothing within the filters, are
 * returned in `notFound`. Products come back in the order their first identifier was asked.
 */
export function lookupCatalog(
  snapshot: CatalogSnapshot,
  stock: StockLevels,
  ids: readonly string[],
  filters: CatalogFilters,
): { matches: LookupMatch[]; notFound: string[] } {
  const view = catalogIndex(snapshot);
  const matches = new Map<number, LookupMatch>();
  const notFound: string[] = [];
  for (const id of new Set(ids)) {
    let found = false;
    for (const { product, variant } of view.resolve(id)) {
      if (!matchesFilters(view, product, filters)) continue;
      const eligible = product.variants.filter((v) => variantInPriceRange(v, filters));
      const resolved = variant ?? featuredVariant(product, stock, eligible);
      if (!resolved || !eligible.includes(resolved)) continue;
      found = true;
      let match = matches.get(product.id);
      if (!match) {
        match = { product, variants: [] };
        matches.set(product.id, match);
      }
      let entry = match.variants.find((v) => v.variant.id === resolved.id);
      if (!entry) {
        entry = { variant: resolved, inputs: [] };
        match.variants.push(entry);
      }
      entry.inputs.push({ id, match: variant ? 'exact' : 'featured' });
    }
    if (!found) notFound.push(id);
  }
  return { matches: [...matches.values()], notFound };
}

export interface OptionSignal {
  name: string;
  values: { label: string; available: boolean; exists: boolean }[];
}

export interface ProductDetail {
  product: Product;
  /** The variant the selections lead to, listed first. */
  featured: Variant;
  /** The effective selections anchoring `featured`; empty for a product without options. */
  selected: OptionSelection[];
  options: OptionSignal[];
  variants: Variant[];
}

function matchesSelections(product: Product, variant: Variant, selections: readonly OptionSelection[]): boolean {
  return selections.every((s) => {
    const index = product.optionNames.indexOf(s.name);
    return index < 0 || variant.optionValues[index] === s.label;
  });
}

/**
 * One product in detail (get_product): a product id or handle, or a variant id or SKU (which selects that
 * variant). Selections narrow to a variant; when none matches them all, the options named last in
 * `preferences` (then the last selections) are relaxed first. Option values carry `exists` and `available`
 * relative to the other effective selections.
 */
export function productDetail(
  snapshot: CatalogSnapshot,
  stock: StockLevels,
  id: string,
  request: { selected?: readonly OptionSelection[]; preferences?: readonly string[]; filters: CatalogFilters },
): ProductDetail | undefined {
  const view = catalogIndex(snapshot);
  const target = view.resolve(id)[0];
  if (!target) return undefined;
  const { product } = target;
  const variants = product.variants.filter((v) => variantInPriceRange(v, request.filters));
  if (variants.length === 0 || !matchesFilters(view, product, request.filters)) return undefined;

  let selections: OptionSelection[] = (request.selected ?? []).filter((s) => product.optionNames.includes(s.name));
  if (target.variant && variants.includes(target.variant) && selections.length === 0) {
    selections = product.optionNames.map((name, i) => ({ name, label: target.variant!.optionValues[i] ?? '' }));
  }
  const relaxOrder = [...(request.preferences ?? [])].reverse().concat([...selections].reverse().map((s) => s.name));
  let candidates = variants.filter((v) => matchesSelections(product, v, selections));
  for (const name of relaxOrder) {
    if (candidates.length > 0) break;
    selections = selections.filter((s) => s.name !== name);
    candidates = variants.filter((v) => matchesSelections(product, v, selections));
  }
  const featured = featuredVariant(product, stock, candidates.length ? candidates : variants)!;
  const selected = product.optionNames.map((name, i) => ({ name, label: featured.optionValues[i] ?? '' })).filter((s) => s.label);

  const options = product.optionNames.map((name, index) => {
    const others = selected.filter((s) => s.name !== name);
    const labels = optionValues(product, index);
    return {
      name,
      values: labels.map((label) => {
        const matching = variants.filter((v) => v.optionValues[index] === label && matchesSelections(product, v, others));
        return { label, exists: matching.length > 0, available: matching.some((v) => isVariantAvailable(v, stock)) };
      }),
    };
  });
  return { product, featured, selected, options: options.filter((o) => o.values.length > 0), variants: [featured, ...variants.filter((v) => v !== featured)] };
}
