/**
 * The catalog served from memory. A snapshot holds the published products and collections as of one
 * catalog version; it is rebuilt when the version in the database moves (after an import, here or in
 * another process). Stock is not part of it: the inventory module keeps units on hand apart, so a stock
 * change never rebuilds the catalog. What the doors derive from a snapshot (search index, lookup tables,
 * serialised JSON) is computed once per snapshot through `derived`.
 */
import type { Database } from '../db/database.js';
import { catalogVersion, loadCatalog, type CatalogRows } from './catalog-store.js';
import type { Collection, Product, Variant } from './types.js';

export const ALL_COLLECTION = 'all';

export class CatalogSnapshot {
  readonly version: number;
  /** Published products, in the store's stable order (oldest first, then id). */
  readonly products: Product[];
  /** Published collections. */
  readonly collections: Collection[];
  private readonly byHandle = new Map<string, Product>();
  private readonly byId = new Map<number, Product>();
  /** Every published variant by id (its product is found by the variant's productId). */
  private readonly variants = new Map<number, Variant>();
  private readonly collectionByHandle = new Map<string, Collection>();
  private readonly collectionMembers = new Map<string, Product[]>();
  private readonly derivedValues = new Map<unknown, unknown>();

  constructor(rows: CatalogRows, readonly baseUrl: string) {
    this.version = rows.version;
    this.products = rows.products.filter((p) => p.published && p.variants.length > 0);
    for (const product of this.products) {
      this.byHandle.set(product.handle, product);
      this.byId.set(product.id, product);
      for (const variant of product.variants) this.variants.set(variant.id, variant);
    }
    this.collections = rows.collections.filter((c) => c.published);
    for (const collection of this.collections) {
      this.collectionByHandle.set(collection.handle, collection);
      this.collectionMembers.set(
        collection.handle,
        collection.productIds.map((id) => this.byId.get(id)).filter((p): p is Product => p !== undefined),
      );
    }
    this.collectionMembers.set(ALL_COLLECTION, this.products);
  }

  productByHandle(handle: string): Product | undefined {
    return this.byHandle.get(handle);
  }

  productById(id: number): Product | undefined {
    return this.byId.get(id);
  }

  /** A published variant with its product; unpublished products' variants are not found. */
  variantById(id: number): { product: Product; variant: Variant } | undefined {
    const variant = this.variants.get(id);
    return variant && { product: this.byId.get(variant.productId) as Product, variant };
  }

  collectionByHandleOf(handle: string): Collection | undefined {
    return this.collectionByHandle.get(handle);
  }

  /** The products of a collection (`all` = every published product); undefined when no such collection. */
  collectionProducts(handle: string): Product[] | undefined {
    return this.collectionMembers.get(handle);
  }

  /** Ids of the published collections each product belongs to. */
  collectionsByProduct(): Map<number, number[]> {
    const result = new Map<number, number[]>();
    for (const collection of this.collections) {
      for (const id of collection.productIds) result.set(id, [...(result.get(id) ?? []), collection.id]);
    }
    return result;
  }

  /**
   * A value computed from this snapshot once, on first use, and kept as long as the snapshot: the one way
   * anything per snapshot is cached (search index, lookup tables, serialised product JSON). `build` is
   * the key, so pass a module-level function.
   */
  derived<T>(build: (snapshot: CatalogSnapshot) => T): T {
    if (!this.derivedValues.has(build)) this.derivedValues.set(build, build(this));
    return this.derivedValues.get(build) as T;
  }
}

/** Every bump of catalog_version is announced on this channel (a trigger, migration 006), with the new version. */
export const CATALOG_CHANNEL = 'storefront_catalog';

type SnapshotListener = (snapshot: CatalogSnapshot) => void;

export class Catalog {
  private current: CatalogSnapshot;
  private queued: Promise<CatalogSnapshot> | undefined;
  private running: Promise<CatalogSnapshot> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly listeners: SnapshotListener[] = [];

  private constructor(private readonly baseUrl: string, first: CatalogSnapshot) {
    this.current = first;
  }

  static async load(db: Database, baseUrl: string): Promise<Catalog> {
    return new Catalog(baseUrl, new CatalogSnapshot(await loadCatalog(db), baseUrl));
  }

  get snapshot(): CatalogSnapshot {
    return this.current;
  }

  /** Called with each new snapshot (the search index and recommendations rebuild from it). */
  onChange(listener: SnapshotListener): void {
    this.listeners.push(listener);
    listener(this.current);
  }

  /**
   * Reloads when the database holds a newer catalog. Each call is answered by a reload that starts after
   * the call (so a writer that awaits it sees its own change); calls made while one waits share it.
   */
  refresh(db: Database): Promise<CatalogSnapshot> {
    if (this.queued) return this.queued;
    const previous = this.running ?? Promise.resolve(this.current);
    const queued = previous
      .catch(() => this.current)
      .then(() => {
        this.queued = undefined;
        this.running = this.reloadIfStale(db).finally(() => {
          this.running = undefined;
        });
        return this.running;
      });
    this.queued = queued;
    return queued;
  }

  private async reloadIfStale(db: Database): Promise<CatalogSnapshot> {
    // A refresh asked for before the store closed (a notification, a poll) reads nothing once it has.
    if (this.closed) return this.current;
    const version = await catalogVersion(db);
    if (version !== this.current.version) {
      this.current = new CatalogSnapshot(await loadCatalog(db), this.baseUrl);
      for (const listener of this.listeners) listener(this.current);
    }
    return this.current;
  }

  /** Other processes change the catalog too (an import, another instance): look for a new version now and then, in case a notification was missed. */
  watch(db: Database, intervalMs: number, onError: (error: unknown) => void): void {
    this.timer = setInterval(() => this.refresh(db).catch(onError), intervalMs);
    this.timer.unref();
  }

  /** Stops the polling; refreshes still queued then read nothing. */
  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
  }
}
