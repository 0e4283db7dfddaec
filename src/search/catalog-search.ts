/** The search index of the current catalog snapshot, built once per snapshot and shared by both doors. */
import type { Catalog, CatalogSnapshot } from '../catalog/catalog.js';
import type { Collection, Product } from '../catalog/types.js';
import type { StockLevels } from '../inventory/stock.js';
import { buildSearchIndex, searchCollections, searchProducts, suggestQueries, type QuerySuggestion, type SearchIndex } from './search-index.js';

const buildIndex = (snapshot: CatalogSnapshot): SearchIndex => buildSearchIndex(snapshot.products, snapshot.collections);

/** The snapshot's search index; the first caller builds it, every later one (storefront or MCP) reuses it. */
export function searchIndexFor(snapshot: CatalogSnapshot): SearchIndex {
  return snapshot.derived(buildIndex);
}

export class CatalogSearch {
  constructor(
    private readonly catalog: Catalog,
    private readonly stock: StockLevels,
  ) {
    // Build as soon as a snapshot arrives, so no shopper's request pays for it.
    catalog.onChange((snapshot) => searchIndexFor(snapshot));
  }

  private get index(): SearchIndex {
    return searchIndexFor(this.catalog.snapshot);
  }

  products(query: string, limit: number): Product[] {
    return searchProducts(this.index, query, limit, this.stock);
  }

  collections(query: string, limit: number): Collection[] {
    return searchCollections(this.index, query, limit);
  }

  queries(query: string, limit: number): QuerySuggestion[] {
    return suggestQueries(this.index, query, limit);
  }
}
