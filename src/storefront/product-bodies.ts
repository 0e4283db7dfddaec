/**
 * The storefront's product JSON as sent: each product serialised once (again after its stock changes), and
 * collection pages joined from those, cached while nothing they show changed. The page cache is bounded by
 * entries and bytes, and pages past the last are not cached (they are all the same empty list).
 */
import type { Catalog, CatalogSnapshot } from '../catalog/catalog.js';
import { PerProductCache, type StockChangeFeed } from '../catalog/product-cache.js';
import type { Product } from '../catalog/types.js';
import type { StockLevels } from '../inventory/stock.js';
import { productJson } from './product-json.js';

const MAX_CACHED_PAGES = 2_000;
const MAX_CACHED_PAGE_BYTES = 32 * 1024 * 1024;
const EMPTY_PAGE = Buffer.from('{"products":[]}');

export class ProductBodies {
  private readonly json: PerProductCache<{ text: string; body: Buffer<ArrayBuffer> }>;
  private pages = new Map<string, Buffer>();
  private pageBytes = 0;
  private pagesGeneration = '';

  constructor(
    catalog: Catalog,
    stock: StockLevels & StockChangeFeed,
  ) {
    this.json = new PerProductCache(
      catalog,
      stock,
      (product: Product, snapshot: CatalogSnapshot) => {
        const text = JSON.stringify(productJson(product, snapshot.baseUrl, stock));
        return { text, body: Buffer.from(text) as Buffer<ArrayBuffer> };
      },
      (a: { text: string }, b: { text: string }) => a.text === b.text,
    );
  }

  /** Moves whenever any product's JSON may have changed (a new snapshot, a stock change that shows). */
  get generation(): string {
    return this.json.generation;
  }

  text(product: Product): string {
    return this.json.get(product).text;
  }

  /** The product's JSON as the response body, encoded once. */
  body(product: Product): Buffer {
    return this.json.get(product).body;
  }

  /** `{"products":[…]}` for a list of products, joined from the serialised products. */
  listText(products: readonly Product[], extra = ''): string {
    return `{"products":[${products.map((p) => this.text(p)).join(',')}]${extra}}`;
  }

  /** One page of a collection as the response body; undefined when no such collection. */
  collectionPage(snapshot: CatalogSnapshot, handle: string, limit: number, page: number): Buffer | undefined {
    const products = snapshot.collectionProducts(handle);
    if (!products) return undefined;
    const start = (page - 1) * limit;
    if (start >= products.length) return EMPTY_PAGE;
    if (this.pagesGeneration !== this.generation) {
      this.pages = new Map();
      this.pageBytes = 0;
      this.pagesGeneration = this.generation;
    }
    const key = `${handle}:${limit}:${page}`;
    const cached = this.pages.get(key);
    if (cached) return cached;
    const body = Buffer.from(this.listText(products.slice(start, start + limit)));
    if (this.pages.size >= MAX_CACHED_PAGES || this.pageBytes + body.length > MAX_CACHED_PAGE_BYTES) {
      this.pages.clear();
      this.pageBytes = 0;
    }
    this.pages.set(key, body);
    this.pageBytes += body.length;
    return body;
  }
}
