/** The search index of the current catalog snapshot, rebuilt whenever the catalog changes. */
import type { Catalog } from '../catalog/catalog.js';
import type { Collection, Product } from '../catalog/types.js';
import { buildSearchIndex, searchCollections, searchProducts, suggestQueries, type QuerySuggestion, type SearchIndex } from './search-index.js';

export class CatalogSearch {
  private index!: SearchIndex;

  constructor(catalog: Catalog) {
    catalog.onChange((snapshot) => {
      this.index = buildSearchIndex(snapshot.products, snapshot.collections);
    });
  }

  products(query: string, limit: number): Product[] {
    return searchProducts(this.index, query, limit);
  }

  collections(query: string, limit: number): Collection[] {
    return searchCollections(this.index, query, limit);
  }

  queries(query: string, limit: number): QuerySuggestion[] {
    return suggestQueries(this.index, query, limit);
  }
}
