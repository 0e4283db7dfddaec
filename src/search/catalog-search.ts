/** The search index of the current catalog snapshot, built once per snapshot and shared by both doors. */
import type { Catalog, CatalogSnapshot } from '../catalog/catalog.js';
import type { Collection, Product } from '../catalog/types.js';
import type { StockLevels } from '../inventory/stock.js';
import { SearchIndexBuilder, searchCollections, searchProducts, suggestQueries, type QuerySuggestion, type SearchIndex } from './search-index.js';

/**
 * How long the index is built at a stretch before requests waiting get their turn. At 100,000 products the whole
 * build takes seconds: in one piece it would hold a starting store's first answers, and every request while a
 * new catalog is taken in.
 */
const BUILD_SLICE_MS = 15;

/**
 * A snapshot's index while it is built, then the index alone: the builder's working tables are let go. A build
 * that throws is thrown away, and the next step or search starts again from the first product.
 */
class IndexBuild {
  private builder: SearchIndexBuilder | undefined;
  private index: SearchIndex | undefined;

  constructor(private readonly snapshot: CatalogSnapshot) {}

  get ready(): boolean {
    return this.index !== undefined;
  }

  /** Builds for about `budgetMs`; true once the index is built. */
  step(budgetMs: number): boolean {
    if (this.index === undefined && this.withBuilder((builder) => builder.step(budgetMs))) this.finish();
    return this.index !== undefined;
  }

  finish(): SearchIndex {
    this.index ??= this.withBuilder((builder) => builder.finish());
    this.builder = undefined;
    return this.index;
  }

  private withBuilder<T>(work: (builder: SearchIndexBuilder) => T): T {
    this.builder ??= new SearchIndexBuilder(this.snapshot.products, this.snapshot.collections);
    try {
      return work(this.builder);
    } catch (error) {
      this.builder = undefined;
      throw error;
    }
  }
}

const startBuilding = (snapshot: CatalogSnapshot) => new IndexBuild(snapshot);

/** The snapshot's search index; a search that comes before the background build is done finishes it. */
export function searchIndexFor(snapshot: CatalogSnapshot): SearchIndex {
  return snapshot.derived(startBuilding).finish();
}

/** Whether the snapshot's index is built, for tests and diagnostics: builds nothing (it may record an empty build). */
export function searchIndexReady(snapshot: CatalogSnapshot): boolean {
  return snapshot.derived(startBuilding).ready;
}

/** What the background build reports when it throws; a search's own build throws to that search instead. */
export const SEARCH_INDEX_BUILD_FAILED = 'search index build failed; the next search builds it again';

const reportOnStderr = (error: unknown) => console.error(`storefront: ${SEARCH_INDEX_BUILD_FAILED}: ${(error as Error)?.message ?? error}`);

export class CatalogSearch {
  constructor(
    private readonly catalog: Catalog,
    private readonly stock: StockLevels,
    /** Where a failure of the background build goes (nobody waits for it); by default one line on stderr. */
    private readonly onBuildError: (error: unknown) => void = reportOnStderr,
  ) {
    // Built as soon as a snapshot arrives, a slice at a time, so that no shopper's request pays for all of it.
    catalog.onChange((snapshot) => this.buildInBackground(snapshot));
  }

  private buildInBackground(snapshot: CatalogSnapshot): void {
    const build = snapshot.derived(startBuilding);
    const slice = () => {
      // A newer snapshot builds its own; this one's index, if still wanted, is finished by the search that wants it.
      if (this.catalog.snapshot !== snapshot) return;
      let built: boolean;
      try {
        built = build.step(BUILD_SLICE_MS);
      } catch (error) {
        // A throw here would crash the process; the build was thrown away, so the next search starts it again.
        this.onBuildError(error);
        return;
      }
      if (!built) setImmediate(slice).unref();
    };
    setImmediate(slice).unref();
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
