/**
 * The storefront's product JSON as sent: each product serialised once (again after its stock changes), and
 * collection pages joined from those, cached while nothing they show changed. The page cache is bounded by
 * entries and bytes (bodies, keys and a per-entry overhead all counted), and pages past the last are not
 * cached (they are all the same empty list): a crawler walking `page=` values cannot grow it past the bound.
 *
 * Every body has an entity tag (ETag) taken when the body is built, never per request: a product's is a digest
 * of its JSON, a list's a digest of its products' tags (and whatever else the list body holds). A tag changes
 * exactly when the bytes do (price, stock, title, any field), and instances on one database agree on it, so a
 * shopper's 304 survives a load balancer switching instances.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Catalog, CatalogSnapshot } from '../catalog/catalog.js';
import { PerProductCache, type StockChangeFeed } from '../catalog/product-cache.js';
import type { Product } from '../catalog/types.js';
import type { StockLevels } from '../inventory/stock.js';
import { productJson } from './product-json.js';

const MAX_CACHED_PAGES = 2_000;
const MAX_CACHED_PAGE_BYTES = 32 * 1024 * 1024;
/** What a kept page costs beside its body and key: the Map entry, the Buffer object, the key string's header. */
export const CACHE_ENTRY_OVERHEAD_BYTES = 160;

/** A response body as sent, with its entity tag. */
export interface TaggedBody {
  body: Buffer;
  etag: string;
}

/** A strong entity tag (RFC 9110, 8.8.3) naming these bytes: the same text always gets the same tag. */
export function entityTag(text: string | Buffer): string {
  return `"${createHash('sha1').update(text).digest('base64url')}"`;
}

const EMPTY_PAGE_TEXT = '{"products":[]}';
const EMPTY_PAGE: TaggedBody = { body: Buffer.from(EMPTY_PAGE_TEXT), etag: entityTag(EMPTY_PAGE_TEXT) };

/** The bounds of the collection-page cache (tests use small ones). */
export interface PageCacheBounds {
  maxPages: number;
  maxBytes: number;
}

interface ProductBody extends TaggedBody {
  text: string;
}

/** What a kept page counts against the byte bound: its bytes, key and tag, and the entry's overhead. */
const pageCost = (key: string, page: TaggedBody) => page.body.length + 2 * (key.length + page.etag.length) + CACHE_ENTRY_OVERHEAD_BYTES;

/**
 * Pages kept while a generation lasts, bounded in entries and bytes (lru-cache: when full, the least recently used
 * pages go, so a crawler walking every page cannot grow it past the bound; a page that alone breaks the byte bound
 * is never kept). When the generation moves, it starts anew. The collection pages here and the shop's HTML pages
 * (shop-routes.ts) are kept in these.
 */
export class BoundedPages<Entry extends TaggedBody = TaggedBody> {
  private readonly entries: LRUCache<string, Entry>;
  private generation = '';

  constructor(bounds: PageCacheBounds = { maxPages: MAX_CACHED_PAGES, maxBytes: MAX_CACHED_PAGE_BYTES }) {
    this.entries = new LRUCache<string, Entry>({ max: bounds.maxPages, maxSize: bounds.maxBytes, sizeCalculation: (page, key) => pageCost(key, page) });
  }

  /** How many pages are kept now. */
  get size(): number {
    return this.entries.size;
  }

  /** What the kept pages count against the byte bound now. */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  get(generation: string, key: string): Entry | undefined {
    this.adopt(generation);
    return this.entries.get(key);
  }

  set(generation: string, key: string, entry: Entry): void {
    this.adopt(generation);
    this.entries.set(key, entry);
  }

  private adopt(generation: string): void {
    if (generation === this.generation) return;
    this.entries.clear();
    this.generation = generation;
  }
}

export class ProductBodies {
  private readonly json: PerProductCache<ProductBody>;
  private readonly pages: BoundedPages;

  /** `maxLineQuantity`: the units one cart line may hold, each variant's quantity_rule.max. */
  constructor(catalog: Catalog, stock: StockLevels & StockChangeFeed, maxLineQuantity: number, bounds?: PageCacheBounds) {
    this.pages = new BoundedPages(bounds);
    this.json = new PerProductCache(
      catalog,
      stock,
      (product: Product, snapshot: CatalogSnapshot): ProductBody => {
        const text = JSON.stringify(productJson(product, snapshot.baseUrl, stock, maxLineQuantity));
        return { text, body: Buffer.from(text), etag: entityTag(text) };
      },
      (a, b) => a.text === b.text,
    );
  }

  /** How many collection pages are kept now (read-only, for tests and diagnostics). */
  get cachedPageCount(): number {
    return this.pages.size;
  }

  /** What the kept collection pages count against the byte bound now. */
  get cachedPageBytes(): number {
    return this.pages.bytes;
  }

  /** Moves whenever any product's JSON may have changed (a new snapshot, a stock change that shows). */
  get generation(): string {
    return this.json.generation;
  }

  text(product: Product): string {
    return this.json.get(product).text;
  }

  /** The product's JSON as the response body, encoded once, with its tag. */
  product(product: Product): TaggedBody {
    return this.json.get(product);
  }

  /** `{"products":[…]}` for a list of products, joined from the serialised products; `extra` ends the object. */
  listText(products: readonly Product[], extra = ''): string {
    return `{"products":[${products.map((p) => this.text(p)).join(',')}]${extra}}`;
  }

  /** The tag of `listText(products, extra)`, from the products' tags: the list body need not be built. */
  listTag(products: readonly Product[], extra = ''): string {
    const digest = createHash('sha1');
    for (const product of products) digest.update(this.json.get(product).etag);
    return `"${digest.update(extra).digest('base64url')}"`;
  }

  /** One page of a collection as the response body; undefined when no such collection. */
  collectionPage(snapshot: CatalogSnapshot, handle: string, limit: number, page: number): TaggedBody | undefined {
    const products = snapshot.collectionProducts(handle);
    if (!products) return undefined;
    const start = (page - 1) * limit;
    if (start >= products.length) return EMPTY_PAGE;
    const key = `${handle}:${limit}:${page}`;
    const cached = this.pages.get(this.generation, key);
    if (cached) return cached;
    const shown = products.slice(start, start + limit);
    const built = { body: Buffer.from(this.listText(shown)), etag: this.listTag(shown) };
    this.pages.set(this.generation, key, built);
    return built;
  }
}
