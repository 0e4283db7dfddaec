/**
 * The catalog as the UCP catalog tools read it, derived once per catalog snapshot: the search index, the
 * identifiers a lookup accepts (product id, variant id, handle, SKU), each product's categories and its
 * UCP JSON, serialised once. Pure queries over it; no I/O.
 */
import type { CatalogSnapshot } from '../../catalog/catalog.js';
import { isVariantAvailable, type Product, type Variant } from '../../catalog/types.js';
import { searchIndexFor } from '../../search/catalog-search.js';
import { searchProducts, type SearchIndex } from '../../search/search-index.js';
import { ucpProduct, type UcpSelectedOption } from './ucp-product.js';

/** How deep search pagination goes: the best 250 matches, like Shopify's page-size ceiling. */
export const MAX_SEARCH_RESULTS = 250;

export class CatalogView {
  private readonly byIdentifier = new Map<string, { product: Product; variant?: Variant }[]>();
  private readonly categories = new Map<number, string[]>();
  private readonly json = new Map<number, { text: string; escaped: string }>();

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

  /** The same index the storefront's search uses for this snapshot. */
  get searchIndex(): SearchIndex {
    return searchIndexFor(this.snapshot);
  }

  collectionTitles(product: Product): string[] {
    return this.categories.get(product.id) ?? [];
  }

  /** The product's UCP JSON with all its variants, serialised (and escaped as a JSON string) once per snapshot. */
  productJson(product: Product): { text: string; escaped: string } {
    let json = this.json.get(product.id);
    if (json === undefined) {
      const text = JSON.stringify(ucpProduct(product, this.snapshot.baseUrl, this.collectionTitles(product)));
      json = { text, escaped: JSON.stringify(text).slice(1, -1) };
      this.json.set(product.id, json);
    }
    return json;
  }

  /** What an identifier names: a product (by id or handle) or a variant (by id or SKU); an id may name both. */
  resolve(identifier: string): readonly { product: Product; variant?: Variant }[] {
    return this.byIdentifier.get(identifier) ?? [];
  }
}

const views = new WeakMap<CatalogSnapshot, CatalogView>();

export function catalogView(snapshot: CatalogSnapshot): CatalogView {
  let view = views.get(snapshot);
  if (!view) {
    view = new CatalogView(snapshot);
    views.set(snapshot, view);
  }
  return view;
}

export interface CatalogFilters {
  /** Matches a product whose type or collection title is any of these (case-insensitive). */
  categories?: readonly string[];
  /** Cents, inclusive: a product matches when one of its variants is priced in the range. */
  priceMin?: number;
  priceMax?: number;
}

export function matchesFilters(view: CatalogView, product: Product, filters: CatalogFilters): boolean {
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
export function searchCatalog(view: CatalogView, query: string, filters: CatalogFilters, offset: number, limit: number): SearchPage {
  const text = query.trim();
  if (offset >= MAX_SEARCH_RESULTS) return { products: [], total: undefined, hasNextPage: false };
  const end = Math.min(offset + limit, MAX_SEARCH_RESULTS);
  if (text && !hasFilters(filters)) {
    const ranked = searchProducts(view.searchIndex, text, end + 1);
    return { products: ranked.slice(offset, end), total: ranked.length <= end ? ranked.length : undefined, hasNextPage: ranked.length > end };
  }
  const candidates = text ? searchProducts(view.searchIndex, text, MAX_SEARCH_RESULTS) : view.snapshot.products;
  const matching = candidates.filter((product) => matchesFilters(view, product, filters)).slice(0, MAX_SEARCH_RESULTS);
  return { products: matching.slice(offset, end), total: matching.length, hasNextPage: end < matching.length };
}

export interface LookupMatch {
  product: Product;
  /** The variants the identifiers resolved to, each with the identifiers and how they matched. */
  variants: { variant: Variant; inputs: { id: string; match: 'exact' | 'featured' }[] }[];
}

/** The variant a listing leads with: the first one that can be bought, else the first. */
export function featuredVariant(product: Product, candidates: readonly Variant[] = product.variants): Variant | undefined {
  return candidates.find(isVariantAvailable) ?? candidates[0];
}

/**
 * Resolves identifiers to products: a variant id or SKU to that variant (`exact`), a product id or handle
 * to its featured variant (`featured`). Identifiers that name nothing, or nothing within the filters, are
 * returned in `notFound`. Products come back in the order their first identifier was asked.
 */
export function lookupCatalog(view: CatalogView, ids: readonly string[], filters: CatalogFilters): { matches: LookupMatch[]; notFound: string[] } {
  const matches = new Map<number, LookupMatch>();
  const notFound: string[] = [];
  for (const id of new Set(ids)) {
    let found = false;
    for (const { product, variant } of view.resolve(id)) {
      if (!matchesFilters(view, product, filters)) continue;
      const eligible = product.variants.filter((v) => variantInPriceRange(v, filters));
      const resolved = variant ?? featuredVariant(product, eligible);
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
  selected: UcpSelectedOption[];
  options: OptionSignal[];
  variants: Variant[];
}

function matchesSelections(product: Product, variant: Variant, selections: readonly UcpSelectedOption[]): boolean {
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
  view: CatalogView,
  id: string,
  request: { selected?: readonly UcpSelectedOption[]; preferences?: readonly string[]; filters: CatalogFilters },
): ProductDetail | undefined {
  const target = view.resolve(id)[0];
  if (!target) return undefined;
  const { product } = target;
  const variants = product.variants.filter((v) => variantInPriceRange(v, request.filters));
  if (variants.length === 0 || !matchesFilters(view, product, request.filters)) return undefined;

  let selections: UcpSelectedOption[] = (request.selected ?? []).filter((s) => product.optionNames.includes(s.name));
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
  const featured = featuredVariant(product, candidates.length ? candidates : variants)!;
  const selected = product.optionNames.map((name, i) => ({ name, label: featured.optionValues[i] ?? '' })).filter((s) => s.label);

  const options = product.optionNames.map((name, index) => {
    const others = selected.filter((s) => s.name !== name);
    const labels = [...new Set(product.variants.map((v) => v.optionValues[index]).filter((v): v is string => !!v))];
    return {
      name,
      values: labels.map((label) => {
        const matching = variants.filter((v) => v.optionValues[index] === label && matchesSelections(product, v, others));
        return { label, exists: matching.length > 0, available: matching.some(isVariantAvailable) };
      }),
    };
  });
  return { product, featured, selected, options: options.filter((o) => o.values.length > 0), variants: [featured, ...variants.filter((v) => v !== featured)] };
}
