/** Recommendations for a product from the current catalog snapshot and the store's purchase history. */
import type { Catalog, CatalogSnapshot } from '../catalog/catalog.js';
import type { Product } from '../catalog/types.js';
import type { StockChangeFeed } from '../catalog/product-cache.js';
import type { StockLevels } from '../inventory/stock.js';
import { complementaryProducts, relatedProducts } from './recommend.js';

const MAX_CACHED_LISTS = 10_000;

export type RecommendationIntent = 'related' | 'complementary';

/** Other product id -> times bought together with the product in completed orders. */
export type PurchaseHistory = (productId: number) => Promise<Map<number, number>>;

/** Until orders exist ([checkout]), no product has been bought with another. */
export const noPurchaseHistory: PurchaseHistory = async () => new Map();

export class Recommendations {
  private collectionsByProduct = new Map<number, number[]>();
  private byHandle = new Map<string, Product>();
  /**
   * Related lists cost a pass over the catalog: kept per snapshot and stock (purchase history joins the key
   * once orders exist). Keyed by a published product's id and a limit of 1–10, and bounded in entries.
   */
  private related = new Map<string, Product[]>();

  constructor(
    private readonly catalog: Catalog,
    private readonly stock: StockLevels & StockChangeFeed,
    private readonly purchaseHistory: PurchaseHistory = noPurchaseHistory,
    private readonly maxCachedLists = MAX_CACHED_LISTS,
  ) {
    // Sold-out products go last, so a stock change can reorder a list.
    stock.onChange(() => {
      this.related = new Map();
    });
    catalog.onChange((snapshot: CatalogSnapshot) => {
      this.collectionsByProduct = snapshot.collectionsByProduct();
      this.byHandle = new Map(snapshot.products.map((p) => [p.handle, p]));
      this.related = new Map();
    });
  }

  /** How many related lists are kept now (read-only, for tests and diagnostics). */
  get cachedListCount(): number {
    return this.related.size;
  }

  /** Undefined when no published product has the id. */
  async forProduct(productId: number, intent: RecommendationIntent, limit: number): Promise<Product[] | undefined> {
    const snapshot = this.catalog.snapshot;
    const product = snapshot.productById(productId);
    if (!product) return undefined;
    if (intent === 'complementary') return complementaryProducts(product, this.byHandle, limit, this.stock);
    const key = `${productId}:${limit}`;
    const cached = this.related.get(key);
    if (cached) return cached;
    const boughtTogether = await this.purchaseHistory(productId);
    const related = relatedProducts(product, snapshot.products, { collectionsByProduct: this.collectionsByProduct, boughtTogether, stock: this.stock }, limit);
    if (this.related.size >= this.maxCachedLists) this.related.clear();
    // Only a list computed against the snapshot still current is kept.
    if (this.catalog.snapshot === snapshot) this.related.set(key, related);
    return related;
  }
}
