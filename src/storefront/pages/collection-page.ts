/** A collection's page (`all`: every product): its title and description, a grid of its products, page by page. */
import type { Product } from '../../catalog/types.js';
import type { StockLevels } from '../../inventory/stock.js';
import { html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';
import { merchantHtml, metaDescription, pagination, productGrid, PRODUCTS_PER_PAGE } from './shop-parts.js';

export interface CollectionPageParts {
  handle: string;
  title: string;
  descriptionHtml: string;
  /** The collection's description as plain text (the meta description). */
  descriptionText: string;
  /** The products of this page. */
  products: readonly Product[];
  /** How many products the whole collection holds. */
  total: number;
  page: number;
  pages: number;
  stock: StockLevels;
}

/** Page 1 is the collection's own URL; later pages add `?page=N`. */
export const collectionPagePath = (handle: string, page: number) => (page === 1 ? `/collections/${handle}` : `/collections/${handle}?page=${page}`);

export function collectionPage(context: PageContext, parts: CollectionPageParts): string {
  const { handle, title, page, pages, total, products } = parts;
  const first = (page - 1) * PRODUCTS_PER_PAGE + 1;
  const shownRange = pages === 1 ? `${total} ${total === 1 ? 'product' : 'products'}` : `Products ${first}–${first + products.length - 1} of ${total}`;
  const body = html`<div class="shop collection">
<h1>${title}</h1>
${parts.descriptionHtml.trim() === '' ? '' : html`<div class="description">${merchantHtml(parts.descriptionHtml)}</div>`}
${
  total === 0
    ? html`<p>This collection has no products yet. <a href="/collections/all">Browse all products</a>.</p>`
    : html`<p class="count" id="product-count">${shownRange}</p>
<h2 class="visually-hidden">Products</h2>
${productGrid(products, parts.stock, context.baseUrl)}
${pagination(page, pages, (n) => collectionPagePath(handle, n))}`
}
</div>`;
  const pageTitle = page > 1 ? `${title} (page ${page} of ${pages})` : title;
  return layout(context, {
    title: pageTitle,
    body,
    path: collectionPagePath(handle, page),
    description: metaDescription(parts.descriptionText, `${title} at ${context.storeName}: ${context.storeDescription}`),
    shop: true, wide: true,
  });
}
