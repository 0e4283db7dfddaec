/** Recommendations for a product from the current catalog snapshot and the store's purchase history. */
import type { Catalog, CatalogSnapshot } from '../catalog/catalog.js';
import type { Product } from '../catalog/types.js';
import { complementaryProducts, relatedProducts } from './recommend.js';

export type RecommendationIntent = 'related' | 'complementary';

/** Other product id -> times bought together with the product in completed orders. */
export type PurchaseHistory = (productId: number) => Promise<Map<number, number>>;

/** Until orders exist ([checkout]), no product has been bought with another. */
export const noPurchaseHistory: PurchaseHistory = async () => new Map();

export class Recommendations {
  private collectionsByProduct = new Map<number, number[]>();
  private byHandle = new Map<string, Product>();

  constructor(private readonly catalog: Catalog, private readonly purchaseHistory: PurchaseHistory = noPurchaseHistory) {
    catalog.onChange((snapshot: CatalogSnapshot) => {
      this.collectionsByProduct = snapshot.collectionsByProduct();
      this.byHandle = new Map(snapshot.products.map((p) => [p.handle, p]));
    });
  }

  /** Undefined when no published product has the id. */
  async forProduct(productId: number, intent: RecommendationIntent, limit: number): Promise<Product[] | undefined> {
    const snapshot = this.catalog.snapshot;
    const product = snapshot.productById(productId);
    if (!product) return undefined;
    if (intent === 'complementary') return complementaryProducts(product, this.byHandle, limit);
    const boughtTogether = await this.purchaseHistory(productId);
    return relatedProducts(product, snapshot.products, { collectionsByProduct: this.collectionsByProduct, boughtTogether }, limit);
  }
}
