/**
 * The catalog served from memory. A snapshot holds the published products and collections with their
 * storefront JSON already serialised; it is rebuilt when the catalog version in the database moves
 * (after an import or a stock change here, or, with several instances, on the next poll).
 */
import type { Database } from '../db/database.js';
import { catalogVersion, loadCatalog, type CatalogRows } from './catalog-store.js';
import { productJson } from './product-json.js';
import type { Collection, Product, Variant } from './types.js';

export const ALL_COLLECTION = 'all';
/** Cached collection pages are bounded by their total size, whatever mix of limit and page clients ask for. */
const MAX_CACHED_PAGE_BYTES = 32 * 1024 * 1024;

export class CatalogSnapshot {
  readonly version: number;
  /** Published products, in the store's stable order (oldest first, then id). */
  readonly products: Product[];
  /** Published collections. */
  readonly collections: Collection[];
  private readonly byHandle = new Map<string, Product>();
  private readonly byId = new Map<number, Product>();
  private readonly variants = new Map<number, { product: Product; variant: Variant }>();
  private readonly collectionByHandle = new Map<string, Collection>();
  private readonly collectionMembers = new Map<string, Product[]>();
  private readonly json = new Map<number, string>();
  private readonly bodies = new Map<number, Buffer>();
  /** Collection pages as sent, built on first request; bounded so odd limit/page mixes cannot grow it without end. */
  private readonly pages = new Map<string, Buffer>();
  private cachedPageBytes = 0;

  constructor(rows: CatalogRows, readonly baseUrl: string) {
    this.version = rows.version;
    this.products = rows.products.filter((p) => p.published && p.variants.length > 0);
    for (const product of this.products) {
      this.byHandle.set(product.handle, product);
      this.byId.set(product.id, product);
      for (const variant of product.variants) this.variants.set(variant.id, { product, variant });
      this.json.set(product.id, JSON.stringify(productJson(product, baseUrl)));
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
    return this.variants.get(id);
  }

  collectionByHandleOf(handle: string): Collection | undefined {
    return this.collectionByHandle.get(handle);
  }

  /** The products of a collection (`all` = every published product); undefined when no such collection. */
  collectionProducts(handle: string): Product[] | undefined {
    return this.collectionMembers.get(handle);
  }

  /** The product's storefront JSON as the response body, encoded once per snapshot. */
  productJsonBody(product: Product): Buffer {
    let body = this.bodies.get(product.id);
    if (!body) {
      body = Buffer.from(this.productJsonText(product));
      this.bodies.set(product.id, body);
    }
    return body;
  }

  /** The product's storefront JSON, serialised once per snapshot. */
  productJsonText(product: Product): string {
    return this.json.get(product.id) ?? JSON.stringify(productJson(product, this.baseUrl));
  }

  /** `{"products":[…]}` for a list of products, joined from the serialised products. */
  productListJsonText(products: readonly Product[], extra = ''): string {
    return `{"products":[${products.map((p) => this.productJsonText(p)).join(',')}]${extra}}`;
  }

  /** One page of a collection as the response body; undefined when no such collection. */
  collectionPage(handle: string, limit: number, page: number): Buffer | undefined {
    const key = `${handle}:${limit}:${page}`;
    const cached = this.pages.get(key);
    if (cached) return cached;
    const products = this.collectionMembers.get(handle);
    if (!products) return undefined;
    const start = (page - 1) * limit;
    const body = Buffer.from(this.productListJsonText(start < products.length ? products.slice(start, start + limit) : []));
    if (this.cachedPageBytes + body.length > MAX_CACHED_PAGE_BYTES) {
      this.pages.clear();
      this.cachedPageBytes = 0;
    }
    this.pages.set(key, body);
    this.cachedPageBytes += body.length;
    return body;
  }

  /** Ids of the published collections each product belongs to. */
  collectionsByProduct(): Map<number, number[]> {
    const result = new Map<number, number[]>();
    for (const collection of this.collections) {
      for (const id of collection.productIds) result.set(id, [...(result.get(id) ?? []), collection.id]);
    }
    return result;
  }
}

type SnapshotListener = (snapshot: CatalogSnapshot) => void;

export class Catalog {
  private current: CatalogSnapshot;
  private queued: Promise<CatalogSnapshot> | undefined;
  private running: Promise<CatalogSnapshot> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: SnapshotListener[] = [];

  private constructor(private readonly db: Database, private readonly baseUrl: string, first: CatalogSnapshot) {
    this.current = first;
  }

  static async load(db: Database, baseUrl: string): Promise<Catalog> {
    return new Catalog(db, baseUrl, new CatalogSnapshot(await loadCatalog(db), baseUrl));
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
  refresh(): Promise<CatalogSnapshot> {
    if (this.queued) return this.queued;
    const previous = this.running ?? Promise.resolve(this.current);
    const queued = previous
      .catch(() => this.current)
      .then(() => {
        this.queued = undefined;
        this.running = this.reloadIfStale().finally(() => {
          this.running = undefined;
        });
        return this.running;
      });
    this.queued = queued;
    return queued;
  }

  private async reloadIfStale(): Promise<CatalogSnapshot> {
    const version = await catalogVersion(this.db);
    if (version !== this.current.version) {
      this.current = new CatalogSnapshot(await loadCatalog(this.db), this.baseUrl);
      for (const listener of this.listeners) listener(this.current);
    }
    return this.current;
  }

  /** With a shared database server, other instances change the catalog too: look for a new version now and then. */
  watch(intervalMs: number, onError: (error: unknown) => void): void {
    this.timer = setInterval(() => this.refresh().catch(onError), intervalMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
