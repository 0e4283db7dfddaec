/**
 * The shop's pages in HTML (issue [pages]): the home page, collections, products and search, and the shop's one
 * script. Each page is the same for everyone, so it is answered like a catalog read (ETag, 304, 30 s of public
 * caching: page-answers.ts) and kept once rendered, until what it shows changes:
 * - home and collection pages while no product JSON changed (ProductBodies.generation; every product a page shows
 *   has its JSON built, so a change to it moves the generation);
 * - a product page while its product's JSON (price, stock, anything), its variants' stock status and the JSON of
 *   every product it shows beside it are unchanged; after 30 s it is built again in the background, the kept one
 *   answering meanwhile (which products are related can change without any shown product changing, another one
 *   restocked: at most 30 s late, as long as browsers may keep the page anyway);
 * - search pages are not kept: their order depends on the availability of every matching product.
 * An unknown handle is the shop's 404 page; a path with a dot (`/products/x.json`) is not a page, and gets the
 * store's JSON 404 as before.
 */
import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ALL_COLLECTION, type CatalogSnapshot } from '../catalog/catalog.js';
import { htmlToText } from '../search/text-normalisation.js';
import type { Product, Variant } from '../catalog/types.js';
import { availabilityStatus, isProductAvailable, isVariantAvailable, type StockLevels } from '../inventory/stock.js';
import { sendCatalogRead } from './catalog-reads.js';
import type { Store } from '../store.js';
import { HANDLE } from './catalog-routes.js';
import { HTML_TYPE, sendShopPage } from './page-answers.js';
import { pagePolicy, type PagePolicy } from './page-policy.js';
import { BoundedPages, entityTag, type ProductBodies, type TaggedBody } from './product-bodies.js';
import { collectionPage } from './pages/collection-page.js';
import { homePage } from './pages/home-page.js';
import { escapeHtml } from '../markup/html.js';
import { layout, pageContext, SHOP_SCRIPT, type PageContext } from './pages/layout.js';
import { productPage } from './pages/product-page.js';
import { searchPage } from './pages/search-page.js';
import { notFoundBody, pageCount, pageNumber, PRODUCTS_PER_PAGE } from './pages/shop-parts.js';

/** The search box's bound (the suggest endpoint's too). */
const MAX_QUERY_LENGTH = 200;
/** A search shows at most this many products (ten pages); more words narrow it. */
const MAX_SEARCH_RESULTS = 10 * PRODUCTS_PER_PAGE;
const FEATURED_COUNT = 8;
const POPULAR_COUNT = 4;
const RELATED_COUNT = 4;
/** The collection the home page features when the catalog has it (Shopify's convention); else the first products. */
const FEATURED_COLLECTION = 'frontpage';
const PRODUCT_PAGE_MAX_AGE_MS = 30_000;
const SCRIPT_TYPE = 'text/javascript; charset=utf-8';

/** A rendered page as sent (its UTF-8 bytes) with its entity tag. */
type RenderedPage = TaggedBody;

/** Answers a kept shop page: its bytes and tag. */
const sendPage = (request: FastifyRequest, reply: FastifyReply, page: RenderedPage, policy: PagePolicy): FastifyReply =>
  sendShopPage(request, reply, page.body, policy, page.etag);

/** A product page as kept, with what it was built from. */
interface ProductPageEntry extends RenderedPage {
  snapshot: CatalogSnapshot;
  productTag: string;
  stockKey: string;
  /** The other products the page shows, and their JSON tags when it was built. */
  shown: readonly Product[];
  shownTags: readonly string[];
  builtAt: number;
}

/** Each variant's stock status (in stock, backorder, sold out): the page tells backorder apart, the product JSON does not. */
function stockKey(product: Product, stock: StockLevels): string {
  let key = '';
  for (const variant of product.variants) key += availabilityStatus(variant, stock)[0];
  return key;
}

/** What a product page's link chose: `?variant=` of this product and `?selling_plan=` of its plans; anything else is ignored. */
interface ProductChoice {
  variant: Variant | undefined;
  sellingPlanId: number | null;
}

const firstText = (value: unknown): string | undefined => (typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined);

/**
 * The search box's text as searched: trimmed and cut to MAX_QUERY_LENGTH, never between the two halves of a
 * surrogate pair (an emoji): a lone half is no Unicode, and the page's links (encodeURIComponent) throw on one.
 */
function searchText(raw: string): string {
  let text = raw.trim();
  if (text.length > MAX_QUERY_LENGTH) text = text.slice(0, /[\uD800-\uDBFF]/.test(text[MAX_QUERY_LENGTH - 1]!) ? MAX_QUERY_LENGTH - 1 : MAX_QUERY_LENGTH);
  return text.trim();
}

function productChoice(product: Product, query: Record<string, unknown>): ProductChoice {
  const variantText = firstText(query.variant);
  const planText = firstText(query.selling_plan);
  const variantId = variantText !== undefined && /^[0-9]{1,15}$/.test(variantText) ? Number(variantText) : undefined;
  const planId = planText !== undefined && /^[0-9]{1,15}$/.test(planText) ? Number(planText) : undefined;
  const variant = variantId === undefined ? undefined : product.variants.find((v) => v.id === variantId);
  const known = product.sellingPlanGroups.some((group) => group.plans.some((plan) => plan.id === planId));
  return { variant, sellingPlanId: known && planId !== undefined ? planId : null };
}

export const shopRoutes: FastifyPluginAsync<{ store: Store; bodies: ProductBodies }> = async (app, { store, bodies }) => {
  const { catalog, inventory: stock, config, recommendations, search } = store;
  const context: PageContext = pageContext(config);
  const listPages = new BoundedPages<RenderedPage>();
  const productPages = new BoundedPages<ProductPageEntry>();

  // The pages' policy allows the catalog's image origins, so it follows the snapshot a page shows.
  const policy = (snapshot: CatalogSnapshot): PagePolicy => pagePolicy(snapshot, 'shop');

  const rendered = (text: string): RenderedPage => ({ body: Buffer.from(text), etag: entityTag(text) });

  /** The shop's 404 page (the product, collection or page asked for is not there). */
  const sendNotFound = (reply: FastifyReply, snapshot: CatalogSnapshot, what: string) =>
    reply
      .code(404)
      .header('content-security-policy', policy(snapshot))
      .header('x-frame-options', 'DENY')
      .header('cache-control', 'no-cache')
      .type(HTML_TYPE)
      .send(layout(context, { title: 'Page not found', body: notFoundBody(what), description: what, shop: true }));

  /**
   * Up to `count` products to feature, those that can be bought first: the `frontpage` collection's, else the
   * catalog's first. Each product looked at has its JSON built, so a change to it moves the pages' generation.
   */
  const featured = (snapshot: CatalogSnapshot, count: number): Product[] => {
    const source = snapshot.collectionProducts(FEATURED_COLLECTION) ?? snapshot.products;
    const available: Product[] = [];
    const soldOut: Product[] = [];
    for (const product of source.slice(0, count * 10)) {
      bodies.product(product);
      if (isProductAvailable(product, stock)) available.push(product);
      else if (soldOut.length < count) soldOut.push(product);
      if (available.length === count) break;
    }
    return [...available, ...soldOut].slice(0, count);
  };

  app.get(SHOP_SCRIPT, { config: { rateLimit: 'catalog' }, schema: { hide: true } }, (request, reply) => sendCatalogRead(request, reply, SCRIPT.etag, SCRIPT.body, SCRIPT_TYPE));

  app.get('/', { config: { rateLimit: 'catalog' }, schema: { hide: true } }, (request, reply) => {
    const snapshot = catalog.snapshot;
    const generation = bodies.generation;
    let page = listPages.get(generation, 'home');
    if (!page) {
      const collections = snapshot.collections
        .filter((collection) => collection.handle !== ALL_COLLECTION)
        .map((collection) => ({ collection, productCount: snapshot.collectionProducts(collection.handle)?.length ?? 0 }));
      page = rendered(homePage(context, { collections, featured: featured(snapshot, FEATURED_COUNT), stock }));
      listPages.set(generation, 'home', page);
    }
    return sendPage(request, reply, page, policy(snapshot));
  });

  app.get<{ Params: { handle: string }; Querystring: Record<string, unknown> }>('/collections/:handle', { config: { rateLimit: 'catalog' }, schema: { hide: true } }, (request, reply) => {
    const { handle } = request.params;
    // `/collections/x.json` and the like are no page: the store's JSON 404, as before the pages.
    if (handle.includes('.')) return reply.callNotFound();
    const snapshot = catalog.snapshot;
    const products = HANDLE.test(handle) ? snapshot.collectionProducts(handle) : undefined;
    if (!products) return sendNotFound(reply, snapshot, `No collection has the address /collections/${handle.slice(0, 100)}.`);
    const page = pageNumber(request.query.page);
    const pages = pageCount(products.length);
    if (page === undefined || page > pages) {
      return sendNotFound(reply, snapshot, `This collection has ${pages === 1 ? 'one page' : `${pages} pages`}: there is no such page of it.`);
    }
    const generation = bodies.generation;
    const key = `${handle}:${page}`;
    let cached = listPages.get(generation, key);
    if (!cached) {
      const shown = products.slice((page - 1) * PRODUCTS_PER_PAGE, page * PRODUCTS_PER_PAGE);
      for (const product of shown) bodies.product(product);
      const collection = snapshot.collectionByHandleOf(handle);
      const descriptionHtml = collection?.descriptionHtml ?? '';
      cached = rendered(
        collectionPage(context, {
          handle,
          title: collection?.title ?? 'All products',
          descriptionHtml: collection ? descriptionHtml : `<p>Every product of ${escapeHtml(context.storeName)}.</p>`,
          descriptionText: collection ? htmlToText(descriptionHtml) : `Every product of ${context.storeName}.`,
          products: shown,
          total: products.length,
          page,
          pages,
          stock,
        }),
      );
      listPages.set(generation, key, cached);
    }
    return sendPage(request, reply, cached, policy(snapshot));
  });

  /** The kept page when nothing it shows has changed since it was built. */
  const keptProductPage = (key: string, product: Product, snapshot: CatalogSnapshot): ProductPageEntry | undefined => {
    const entry = productPages.get(String(snapshot.version), key);
    if (!entry || entry.snapshot !== snapshot) return undefined;
    if (bodies.product(product).etag !== entry.productTag || stockKey(product, stock) !== entry.stockKey) return undefined;
    for (let i = 0; i < entry.shown.length; i++) if (bodies.product(entry.shown[i]!).etag !== entry.shownTags[i]) return undefined;
    return entry;
  };

  const buildProductPage = async (key: string, product: Product, choice: ProductChoice): Promise<ProductPageEntry> => {
    const [related = [], complementary = []] = await Promise.all([
      recommendations.forProduct(product.id, 'related', RELATED_COUNT + 4),
      recommendations.forProduct(product.id, 'complementary', RELATED_COUNT),
    ]);
    // From here on, one synchronous pass: the stock read, the page and the tags it is kept under agree.
    const snapshot = catalog.snapshot;
    const alongside = complementary.filter((p) => p.id !== product.id);
    const also = related.filter((p) => p.id !== product.id && !alongside.some((c) => c.id === p.id)).slice(0, RELATED_COUNT);
    const requested = choice.variant;
    const selected =
      (requested && isVariantAvailable(requested, stock) ? requested : undefined) ??
      product.variants.find((variant) => isVariantAvailable(variant, stock)) ??
      requested ??
      product.variants[0]!;
    const text = productPage(context, {
      product,
      stock,
      selected,
      requestedSoldOut: requested && !isVariantAvailable(requested, stock) ? requested : undefined,
      sellingPlanId: choice.sellingPlanId,
      related: also,
      complementary: alongside,
      maxQuantity: config.cartMaxLineQuantity,
    });
    const shown = [...alongside, ...also];
    const entry: ProductPageEntry = {
      ...rendered(text),
      snapshot,
      productTag: bodies.product(product).etag,
      stockKey: stockKey(product, stock),
      shown,
      shownTags: shown.map((p) => bodies.product(p).etag),
      builtAt: Date.now(),
    };
    // A page built from a snapshot that has since gone is answered once, not kept.
    if (snapshot.productByHandle(product.handle) === product) productPages.set(String(snapshot.version), key, entry);
    return entry;
  };

  /** One build of a page at a time: the requests that miss it together (or find it old together) share that build. */
  const building = new Map<string, Promise<ProductPageEntry>>();
  const build = (key: string, product: Product, choice: ProductChoice, snapshot: CatalogSnapshot): Promise<ProductPageEntry> => {
    const buildKey = `${snapshot.version}|${key}`;
    let pending = building.get(buildKey);
    if (!pending) {
      pending = buildProductPage(key, product, choice).finally(() => building.delete(buildKey));
      building.set(buildKey, pending);
    }
    return pending;
  };

  // Not async when the page is kept (the usual case): the product page is benchmarked, and a promise per read shows.
  app.get<{ Params: { handle: string }; Querystring: Record<string, unknown> }>('/products/:handle', { config: { rateLimit: 'catalog' }, schema: { hide: true } }, (request, reply) => {
    const { handle } = request.params;
    // `/products/x.json` and the like are no page: the store's JSON 404, as before the pages.
    if (handle.includes('.')) return reply.callNotFound();
    const snapshot = catalog.snapshot;
    const product = HANDLE.test(handle) ? snapshot.productByHandle(handle) : undefined;
    if (!product) return sendNotFound(reply, snapshot, `No product has the address /products/${handle.slice(0, 100)}.`);
    const choice = productChoice(product, request.query);
    const key = choice.variant === undefined && choice.sellingPlanId === null ? handle : `${handle}?${choice.variant?.id ?? ''}&${choice.sellingPlanId ?? ''}`;
    const kept = keptProductPage(key, product, snapshot);
    if (kept) {
      if (Date.now() - kept.builtAt > PRODUCT_PAGE_MAX_AGE_MS) {
        build(key, product, choice, snapshot).catch((error: unknown) => request.log.error({ err: error }, 'product page rebuild failed'));
      }
      return sendPage(request, reply, kept, policy(snapshot));
    }
    return build(key, product, choice, snapshot).then((page) => sendPage(request, reply, page, policy(page.snapshot)));
  });

  app.get<{ Querystring: Record<string, unknown> }>('/search', { config: { rateLimit: 'search' }, schema: { hide: true } }, (request, reply) => {
    const query = request.query;
    const q = searchText(firstText(query.q) ?? '');
    const snapshot = catalog.snapshot;
    const page = pageNumber(query.page);
    if (page === undefined) return sendNotFound(reply, snapshot, 'There is no such page of search results.');
    if (q === '') {
      if (page > 1) return sendNotFound(reply, snapshot, 'There is no such page of search results.');
      return sendShopPage(request, reply, searchPage(context, emptySearch(stock)), policy(snapshot));
    }
    // The ranking of the suggest endpoint (/search/suggest.json): the same search, asked for one more than is shown.
    const found = search.products(q, MAX_SEARCH_RESULTS + 1);
    const matches = found.slice(0, MAX_SEARCH_RESULTS);
    const pages = pageCount(matches.length);
    if (page > pages) return sendNotFound(reply, snapshot, `This search has ${pages === 1 ? 'one page' : `${pages} pages`} of results: there is no such page.`);
    const none = matches.length === 0;
    const text = searchPage(context, {
      query: q,
      products: matches.slice((page - 1) * PRODUCTS_PER_PAGE, page * PRODUCTS_PER_PAGE),
      total: matches.length,
      more: found.length > MAX_SEARCH_RESULTS,
      page,
      pages,
      collections: page === 1 ? search.collections(q, 5) : [],
      suggestions: none ? search.queries(q, 5).map((s) => s.text).filter((text) => text !== q.toLowerCase()) : [],
      popular: none ? featured(snapshot, POPULAR_COUNT) : [],
      stock,
    });
    return sendShopPage(request, reply, text, policy(snapshot));
  });
};

function emptySearch(stock: StockLevels) {
  return { query: '', products: [], total: 0, more: false, page: 1, pages: 1, collections: [], suggestions: [], popular: [], stock };
}

/** The shop's one script, read once (scripts/copy-assets.mjs puts it beside the compiled code). */
const SCRIPT = (() => {
  const body = readFileSync(new URL('./pages/assets/storefront.js', import.meta.url));
  return { body, etag: entityTag(body.toString('utf8')) };
})();

