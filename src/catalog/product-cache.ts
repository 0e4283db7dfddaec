/**
 * A value derived from each product that also depends on stock (its JSON shows availability): built on
 * first use, kept for the current catalog snapshot, and rebuilt for a product when its variants' stock
 * changes. `generation` moves whenever a kept value changed, so caches built from these values (collection
 * pages, search answers) know when to start again.
 *
 * At most `maxKept` values are kept, the least recently used let go first (lru-cache): a large catalog read end to
 * end (a crawler, a bench of random reads) would otherwise keep every product's JSON. A value let go may still be part
 * of a page or an answer built from it, so a stock change of such a product moves the generation without the
 * comparison a kept value allows.
 */
import { LRUCache } from 'lru-cache';
import type { Catalog, CatalogSnapshot } from './catalog.js';
import type { Product } from './types.js';

/** What tells this cache that stock changed: the inventory's change feed (variant id -> units on hand). */
export interface StockChangeFeed {
  onChange(listener: (change: ReadonlyMap<number, unknown>) => void): void;
}

/** Enough for the products a store's shoppers look at; a catalog of 10,000 is kept whole. */
export const MAX_KEPT_PRODUCTS = 10_000;

export class PerProductCache<T extends NonNullable<unknown>> {
  private snapshot: CatalogSnapshot;
  private readonly values: LRUCache<number, T>;
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
    this.values = new LRUCache<number, T>({
      max: Math.max(1, maxKept),
      dispose: (_value, productId, reason) => {
        if (reason === 'evict') this.letGo.add(productId);
      },
    });
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
      this.values.set(product.id, value);
    }
    return value;
  }

  private current(): CatalogSnapshot {
    const snapshot = this.catalog.snapshot;
    if (snapshot !== this.snapshot) {
      this.snapshot = snapshot;
      this.values.clear();
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
      const kept = this.values.peek(product.id);
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
