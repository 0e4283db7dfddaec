/** Each product's UCP JSON, serialised (and escaped as a JSON string) once, again after its stock changes. */
import type { Catalog, CatalogSnapshot } from '../../catalog/catalog.js';
import { catalogIndex } from '../../catalog/catalog-queries.js';
import { PerProductCache, type StockChangeFeed } from '../../catalog/product-cache.js';
import type { Product } from '../../catalog/types.js';
import type { StockLevels } from '../../inventory/stock.js';
import { ucpProduct } from './ucp-product.js';

export interface SerialisedProduct {
  text: string;
  /** `text` escaped for use inside a JSON string (the tool result's text content). */
  escaped: string;
}

export class UcpProducts {
  private readonly json: PerProductCache<SerialisedProduct>;

  /** `maxLineQuantity`: the units one cart or checkout line may hold, in each variant's quantity rule. */
  constructor(catalog: Catalog, readonly stock: StockLevels & StockChangeFeed, maxLineQuantity: number) {
    this.json = new PerProductCache(
      catalog,
      stock,
      (product: Product, snapshot: CatalogSnapshot) => {
        const text = JSON.stringify(ucpProduct(product, snapshot.baseUrl, stock, catalogIndex(snapshot).collectionTitles(product), maxLineQuantity));
        return { text, escaped: JSON.stringify(text).slice(1, -1) };
      },
      (a, b) => a.text === b.text,
    );
  }

  serialised(product: Product): SerialisedProduct {
    return this.json.get(product);
  }
}
