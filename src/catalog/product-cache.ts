/**
 * A value derived from each product that also depends on stock (its JSON shows availability): built on
 * first use, kept for the current catalog snapshot, and rebuilt for a product when its variants' stock
 * changes. `generation` moves whenever a kept value changed, so caches built from these values (collection
 * pages, search answers) know when to start again.
 */
import type { Catalog, CatalogSnapshot } from './catalog.js';
import type { Product } from './types.js';

/** What tells this cache that stock changed: the inventory's change feed (variant id -> units on hand). */
export interface StockChangeFeed {
  onChange(listener: (change: ReadonlyMap<number, unknown>) => void): void;
}

export class PerProductCache<T> {
  private snapshot: CatalogSnapshot;
  private values = new Map<number, T>();
  private changes = 0;

  constructor(
    private readonly catalog: Catalog,
    stock: StockChangeFeed,
    private readonly build: (product: Product, snapshot: CatalogSnapshot) => T,
    /** Whether a rebuilt value shows the same as the kept one (then nothing built from it needs to change). */
    private readonly same: (a: T, b: T) => boolean = (a, b) => a === b,
  ) {
    this.snapshot = catalog.snapshot;
    stock.onChange((change) => this.stockChanged(change));
  }

  /** Moves when the snapshot changes or a kept value changed after a stock change. */
  get generation(): string {
    return `${this.current().version}:${this.changes}`;
  }

  get(product: Product): T {
    this.current();
    let value = this.values.get(product.id);
    if (value === undefined) {
      value = this.build(product, this.snapshot);
      this.values.set(product.id, value);
    }
    return value;
  }

  private current(): CatalogSnapshot {
    const snapshot = this.catalog.snapshot;
    if (snapshot !== this.snapshot) {
      this.snapshot = snapshot;
      this.values = new Map();
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
      if (kept === undefined) continue;
      const rebuilt = this.build(product, snapshot);
      if (this.same(rebuilt, kept)) continue;
      this.values.set(product.id, rebuilt);
      this.changes++;
    }
  }
}
