/** The home page: the store's name and description, its collections, featured products, a way to every product. */
import type { Collection, Product } from '../../catalog/types.js';
import type { StockLevels } from '../../inventory/stock.js';
import { html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';
import { productGrid } from './shop-parts.js';

export interface HomePageParts {
  collections: readonly { collection: Collection; productCount: number }[];
  featured: readonly Product[];
  stock: StockLevels;
}

const productCount = (count: number) => `${count} ${count === 1 ? 'product' : 'products'}`;

export function homePage(context: PageContext, { collections, featured, stock }: HomePageParts): string {
  const body = html`<div class="shop home">
<h1>${context.storeName}</h1>
<p class="lede">${context.storeDescription}</p>
<section aria-labelledby="collections-heading">
<h2 id="collections-heading">Collections</h2>
<ul class="collection-list" role="list">
${collections.map(
  ({ collection, productCount: count }) =>
    html`<li><a href="/collections/${collection.handle}">${collection.title}</a> <span class="count">${productCount(count)}</span></li>
`,
)}<li><a href="/collections/all">All products</a></li>
</ul>
</section>
${
  featured.length > 0
    ? html`<section aria-labelledby="featured-heading">
<h2 id="featured-heading">Featured products</h2>
${productGrid(featured, stock, context.baseUrl)}
</section>`
    : html`<p>No products are on sale yet.</p>`
}
<p class="more"><a href="/collections/all">Browse all products</a></p>
</div>`;
  return layout(context, {
    title: context.storeName,
    body,
    path: '/',
    shop: true, wide: true,
    jsonLd: {
      '@context': 'https://schema.org',
      '@type': 'WebSite',
      name: context.storeName,
      description: context.storeDescription,
      url: `${context.baseUrl}/`,
      potentialAction: {
        '@type': 'SearchAction',
        target: { '@type': 'EntryPoint', urlTemplate: `${context.baseUrl}/search?q={search_term_string}` },
        'query-input': 'required name=search_term_string',
      },
    },
  });
}
