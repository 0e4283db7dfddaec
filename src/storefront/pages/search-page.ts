/**
 * The search page: the products matching the query, ranked as the predictive search ranks them, page by page; the
 * collections whose titles match; and when nothing matches, what the shopper could try instead (completions of
 * what was typed, popular products, every product).
 */
import type { Collection, Product } from '../../catalog/types.js';
import type { StockLevels } from '../../inventory/stock.js';
import { html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';
import { pagination, productGrid, PRODUCTS_PER_PAGE, searchForm } from './shop-parts.js';

export interface SearchPageParts {
  /** The query as searched (trimmed, at most MAX_QUERY_LENGTH characters); empty: the search form alone. */
  query: string;
  /** This page's products, best first. */
  products: readonly Product[];
  /** How many products match (at most `limit`). */
  total: number;
  /** True when more products match than the pages show. */
  more: boolean;
  page: number;
  pages: number;
  collections: readonly Collection[];
  /** When nothing matches: completions of the query the catalog offers, and products to show instead. */
  suggestions: readonly string[];
  popular: readonly Product[];
  stock: StockLevels;
}

export const searchPagePath = (query: string, page = 1) =>
  query === '' ? '/search' : `/search?q=${encodeURIComponent(query)}${page > 1 ? `&page=${page}` : ''}`;

export function searchPage(context: PageContext, parts: SearchPageParts): string {
  const { query, products, total, page, pages, stock } = parts;
  const baseUrl = context.baseUrl;
  const path = searchPagePath(query, page);
  if (query === '') {
    const body = html`<div class="shop search">
<h1>Search</h1>
${searchForm('search-page-q', '')}
<p><a href="/collections/all">Browse all products</a></p>
</div>`;
    return layout(context, { title: 'Search', body, path, description: `Search the products of ${context.storeName}.`, shop: true, wide: true });
  }
  const first = (page - 1) * PRODUCTS_PER_PAGE + 1;
  const count =
    total === 0
      ? ''
      : parts.more
        ? `Products ${first}–${first + products.length - 1} of the best ${total} matches`
        : pages > 1
          ? `Products ${first}–${first + products.length - 1} of ${total}`
          : `${total} ${total === 1 ? 'product' : 'products'}`;
  const body = html`<div class="shop search">
<h1>Search results for “${query}”</h1>
${searchForm('search-page-q', query)}
${
  parts.collections.length > 0
    ? html`<section aria-labelledby="collections-heading">
<h2 id="collections-heading">Collections</h2>
<ul class="collection-list" role="list">
${parts.collections.map((collection) => html`<li><a href="/collections/${collection.handle}">${collection.title}</a></li>`)}
</ul>
</section>`
    : ''
}
${
  total > 0
    ? html`<section aria-labelledby="results-heading">
<h2 id="results-heading">Products</h2>
<p class="count" id="product-count" role="status">${count}</p>
${productGrid(products, stock, baseUrl)}
${pagination(page, pages, (n) => searchPagePath(query, n))}
${parts.more ? html`<p>Not what you are looking for? Try more words to narrow the search.</p>` : ''}
</section>`
    : html`<p class="notice" id="no-results" role="status">No products match “${query}”.</p>
${
  parts.suggestions.length > 0
    ? html`<section aria-labelledby="suggestions-heading">
<h2 id="suggestions-heading">Try searching for</h2>
<ul class="collection-list" role="list">
${parts.suggestions.map((text) => html`<li><a href="${searchPagePath(text)}">${text}</a></li>`)}
</ul>
</section>`
    : ''
}
${
  parts.popular.length > 0
    ? html`<section aria-labelledby="popular-heading">
<h2 id="popular-heading">Popular products</h2>
${productGrid(parts.popular, stock, baseUrl)}
</section>`
    : ''
}
<p class="more"><a href="/collections/all">Browse all products</a></p>`
}
</div>`;
  return layout(context, {
    title: page > 1 ? `Search: ${query} (page ${page} of ${pages})` : `Search: ${query}`,
    body,
    path,
    description: `Products of ${context.storeName} matching “${query}”.`,
    shop: true, wide: true,
    query,
  });
}
