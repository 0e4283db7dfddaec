/**
 * A value derived from each product that also depends on stock (its JSON shows availability): built on
 * first use, kept for the current catalog snapshot, and rebuilt for a product when its variants' stock
 * changes. `generation` moves whenever a kept value changed, so caches built from these values (collection
 * pages, search answers) know when to start again.
 *
 * At most `maxKept` values are kept, the least recently used let go first: a large catalog read end to end (a
 * crawler, a bench of random reads) would otherwise keep every product's JSON. A value let go may still be part
 * of a page or an answer built from it, so a stock change of such a product moves the generation without the
 * comparison a kept value allows.
 */
import type { Catalog, CatalogSnapshot } from './catalog.js';
import type { Product } from './types.js';

/** What tells this cache that stock changed: the inventory's change feed (variant id -> units on hand). */
export interface StockChangeFeed {
  onChange(listener: (change: ReadonlyMap<number, unknown>) => void): void;
}

/** Enough for the products a store's shoppers look at; a catalog of 10,000 is kept whole. */
export const MAX_KEPT_PRODUCTS = 10_000;

export class PerProductCache<T> {
  private snapshot: CatalogSnapshot;
  /** In order of last use, least recent first (a Map keeps insertion order; a use moves its entry last). */
  private values = new Map<number, T>();
  /** Products whose value was let go since the generation last moved for them. */
  private letGo = new Set<number>();
  private changes = 0;

  constructor(
    private readonly catalog: Catalog,
    stock: StockChangeFeed,
    private readonly build: (product: Product, snapshot: CatalogSnapshot) => T,
    /** Whether a rebuilt value shows the same as the kept one (then nothing built from it needs to change). */
    private readonly same: (a: T, b: T) => boolean = (a, b) => a === b,
    private readonly maxKept = MAX_KEPT_PRODUCTS,
  ) {
    this.snapshot = catalog.snapshot;
    stock.onChange((change) => this.stockChanged(change));
  }

  /** Moves when the snapshot changes or a kept value changed after a stock change. */
  get generation(): string {
    return `${this.current().version}:${this.changes}`;
  }

  /** How many values are kept now (read-only, for tests and diagnostics). */
  get size(): number {
    return this.values.size;
  }

  get(product: Product): T {
    this.current();
    let value = this.values.get(product.id);
    if (value === undefined) {
      value = this.build(product, this.snapshot);
      if (this.values.size >= this.maxKept) this.letGoLeastRecent();
    } else {
      this.values.delete(product.id);
    }
    this.values.set(product.id, value);
    return value;
  }

  private letGoLeastRecent(): void {
    const [oldest] = this.values.keys();
    if (oldest === undefined) return;
    this.values.delete(oldest);
    this.letGo.add(oldest);
  }

  private current(): CatalogSnapshot {
    const snapshot = this.catalog.snapshot;
    if (snapshot !== this.snapshot) {
      this.snapshot = snapshot;
      this.values = new Map();
      this.letGo = new Set();
      this.changes = 0;
    }
    return snapshot;
  }

  private stockChanged(change: ReadonlyMap<number, unknown>): void {
    const snapshot = this.current();
    const products = new Set<Product>();
    for (const variantId of change.keys()) {
      const found = snapshot.variantById(variantId);
      if (found) products.add(found.product);
    }
    for (const product of products) {
      const kept = this.values.get(product.id);
      if (kept === undefined) {
        // Once the generation moved, nothing built from the value let go is kept any more.
        if (this.letGo.delete(product.id)) this.changes++;
        continue;
      }
      const rebuilt = this.build(product, snapshot);
      if (this.same(rebuilt, kept)) continue;
      this.values.set(product.id, rebuilt);
      this.changes++;
    }
  }
}
