/** Storefront search and recommendation routes: thin adapters over the catalog search and recommendations. */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Collection } from '../catalog/types.js';
import { isProductAvailable } from '../inventory/stock.js';
import { invalidParameter, missingParameter, notFound } from '../http/errors.js';
import { PUBLIC_READ } from '../http/openapi.js';
import { sendCatalogRead } from './catalog-reads.js';
import type { RecommendationIntent } from '../recommendations/recommendations.js';
import type { QuerySuggestion } from '../search/query-suggestions.js';
import type { Store } from '../store.js';
import { html } from '../markup/html.js';
import { CACHE_ENTRY_OVERHEAD_BYTES, entityTag, type ProductBodies, type TaggedBody } from './product-bodies.js';

const RESOURCE_TYPES = ['product', 'collection', 'query'] as const;
type ResourceType = (typeof RESOURCE_TYPES)[number];
const MAX_QUERY_LENGTH = 200;

const errors = { 404: Type.Ref('Error'), 422: Type.Ref('Error'), 429: Type.Ref('Error') };

/**
 * Search suggestions are a catalog read (ETag, Cache-Control, 304): the answer depends only on the query and the
 * public catalog and stock, never on who asks, and shoppers ask the same prefixes again and again.
 *
 * Answers by normalised query, while the product JSON they show and every product's availability (which
 * orders them) are unchanged: shoppers type the same prefixes again and again. Bounded in entries and in bytes (bodies, keys and a per-entry overhead all
 * counted), so distinct queries, however many and long, cannot grow it past the bound; when full it starts
 * anew, as it does on any change to what products show.
 */
export const MAX_SUGGEST_CACHE_ENTRIES = 20_000;
export const MAX_SUGGEST_CACHE_BYTES = 16 * 1024 * 1024;

export class SuggestCache {
  private entries = new Map<string, TaggedBody>();
  private bytes = 0;
  private generation = '';

  constructor(
    private readonly maxEntries = MAX_SUGGEST_CACHE_ENTRIES,
    private readonly maxBytes = MAX_SUGGEST_CACHE_BYTES,
  ) {}

  /** How many answers are kept now (read-only, for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  /** What the kept answers count against the byte bound now. */
  get byteSize(): number {
    return this.bytes;
  }

  get(generation: string, key: string): TaggedBody | undefined {
    if (generation !== this.generation) {
      this.clear();
      this.generation = generation;
    }
    return this.entries.get(key);
  }

  set(key: string, answer: TaggedBody): void {
    const cost = answer.body.length + 2 * (key.length + answer.etag.length) + CACHE_ENTRY_OVERHEAD_BYTES;
    if (cost > this.maxBytes || this.entries.has(key)) return;
    if (this.entries.size >= this.maxEntries || this.bytes + cost > this.maxBytes) this.clear();
    this.entries.set(key, answer);
    this.bytes += cost;
  }

  private clear(): void {
    this.entries = new Map();
    this.bytes = 0;
  }
}

function collectionJson(collection: Collection, baseUrl: string) {
  return {
    id: collection.id,
    title: collection.title,
    handle: collection.handle,
    body: collection.descriptionHtml,
    published_at: collection.createdAt,
    featured_image: null,
    url: `/collections/${collection.handle}`,
    products_url: `${baseUrl}/collections/${collection.handle}/products.json`,
  };
}

/**
 * Shopify's `styled_text` of a query suggestion: what the shopper typed in `<mark>`, the completion in `<span>`, both
 * escaped ("cos" -> `<mark>cos</mark><span>tume</span>`, Shopify's documented example).
 */
export function styledText(suggestion: QuerySuggestion): string {
  const { text, typedLength } = suggestion;
  return html`<mark>${text.slice(0, typedLength)}</mark><span>${text.slice(typedLength)}</span>`.text;
}

/** `resources[type]` as a list: comma-separated, repeated, or both; unknown names are refused by name. */
function resourceTypes(raw: unknown): ResourceType[] {
  if (raw === undefined) return ['product'];
  const names = (Array.isArray(raw) ? raw : [raw])
    .flatMap((value) => String(value).split(','))
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) throw invalidParameter('Parameter resources[type] is invalid: name at least one of product, collection, query.');
  const unknown = names.find((name) => !(RESOURCE_TYPES as readonly string[]).includes(name));
  if (unknown !== undefined) {
    throw invalidParameter(`Parameter resources[type] is invalid: "${unknown.slice(0, 40)}" is not one of product, collection, query.`);
  }
  return [...new Set(names)] as ResourceType[];
}

function integerParameter(raw: unknown, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const text = Array.isArray(raw) ? undefined : String(raw).trim();
  if (text === undefined || !/^\d{1,10}$/.test(text) || Number(text) < min || Number(text) > max) {
    throw invalidParameter(`Parameter ${name} is invalid: expected an integer from ${min} to ${max}.`);
  }
  return Number(text);
}

export interface SearchRoutesOptions {
  store: Store;
  bodies: ProductBodies;
  /** The predictive-search answer cache; a new one with the default bounds unless given (tests give small ones). */
  suggestCache?: SuggestCache;
}

/**
 * Counts stock changes that may have changed whether a product can be bought. Search ranks sold-out products
 * last, so such a change can reorder an answer even when no product it shows changed (a product restocked
 * outside a cut-off list moves into it); the product JSON generation alone does not see that. A product whose
 * availability was not seen before counts as changed.
 */
class AvailabilityChanges {
  count = 0;
  private known = new Map<number, boolean>();

  constructor(store: Store) {
    store.catalog.onChange(() => {
      this.known = new Map();
      this.count += 1;
    });
    store.inventory.onChange((change) => {
      const snapshot = store.catalog.snapshot;
      for (const variantId of change.keys()) {
        const product = snapshot.variantById(variantId)?.product;
        if (!product) continue;
        const available = isProductAvailable(product, store.inventory);
        if (this.known.get(product.id) === available) continue;
        this.known.set(product.id, available);
        this.count += 1;
      }
    });
  }
}

export const searchRoutes: FastifyPluginAsync<SearchRoutesOptions> = async (app, { store, bodies, suggestCache = new SuggestCache() }) => {
  const availability = new AvailabilityChanges(store);
  app.get<{ Querystring: Record<string, unknown> }>(
    '/search/suggest.json',
    {
      config: { rateLimit: 'search' },
      schema: {
        operationId: 'searchProducts',
        summary: 'Predictive search: products (and collections, query suggestions) matching free text',
        tags: ['search'],
        security: PUBLIC_READ,
        querystring: Type.Object({
          q: Type.String({ minLength: 1, maxLength: MAX_QUERY_LENGTH, description: 'the text typed so far' }),
          'resources[type]': Type.Optional(
            Type.String({ default: 'product', description: 'comma-separated: product, collection, query' }),
          ),
          'resources[limit]': Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 5, description: 'results per type' })),
        }),
        response: {
          200: Type.Object({
            resources: Type.Object({
              results: Type.Object({
                products: Type.Optional(Type.Array(Type.Ref('Product'))),
                collections: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
                queries: Type.Optional(Type.Array(Type.Object({ text: Type.String(), styled_text: Type.String(), url: Type.String() }))),
              }),
            }),
          }),
          ...errors,
        },
      },
      // Parameters are checked here, in order, so each failure names its parameter exactly.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const { query } = request;
      const q = typeof query.q === 'string' ? query.q.trim() : '';
      if (query.q === undefined) throw invalidParameter('Required parameter missing: q (the search text).');
      if (typeof query.q !== 'string' || q.length === 0) throw invalidParameter('Parameter q is invalid: it must contain at least one character.');
      if (q.length > MAX_QUERY_LENGTH) throw invalidParameter(`Parameter q is invalid: at most ${MAX_QUERY_LENGTH} characters.`);
      const types = resourceTypes(query['resources[type]']);
      const limit = integerParameter(query['resources[limit]'], 'resources[limit]', 5, 1, 10);

      const snapshot = store.catalog.snapshot;
      const key = `${types.join()}|${limit}|${q.toLowerCase().replace(/\s+/g, ' ')}`;
      const cached = suggestCache.get(`${bodies.generation}/${availability.count}`, key);
      if (cached) return sendCatalogRead(request, reply, cached.etag, cached.body);
      const parts: string[] = [];
      if (types.includes('product')) {
        parts.push(`"products":[${store.search.products(q, limit).map((p) => bodies.text(p)).join(',')}]`);
      }
      if (types.includes('collection')) {
        const collections = store.search.collections(q, limit).map((c) => collectionJson(c, snapshot.baseUrl));
        parts.push(`"collections":${JSON.stringify(collections)}`);
      }
      if (types.includes('query')) {
        const queries = store.search.queries(q, limit).map((s) => ({ text: s.text, styled_text: styledText(s), url: `/search?q=${encodeURIComponent(s.text)}` }));
        parts.push(`"queries":${JSON.stringify(queries)}`);
      }
      const text = `{"resources":{"results":{${parts.join(',')}}}}`;
      const answer = { body: Buffer.from(text), etag: entityTag(text) };
      suggestCache.set(key, answer);
      return sendCatalogRead(request, reply, answer.etag, answer.body);
    },
  );

  app.get<{ Querystring: Record<string, unknown> }>(
    '/recommendations/products.json',
    {
      config: { rateLimit: 'catalog' },
      schema: {
        operationId: 'getProductRecommendations',
        summary: 'Products to show with a product: related (bought together, similar) or complementary (chosen by the merchant)',
        tags: ['search'],
        security: PUBLIC_READ,
        querystring: Type.Object({
          product_id: Type.Integer({ description: 'Product.id' }),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 4 })),
          intent: Type.Optional(Type.Union([Type.Literal('related'), Type.Literal('complementary')], { default: 'related' })),
        }),
        response: {
          200: Type.Object({ products: Type.Array(Type.Ref('Product')), intent: Type.String() }),
          ...errors,
        },
      },
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const { query } = request;
      if (query.product_id === undefined || query.product_id === '') {
        throw missingParameter('Required parameter missing: product_id (the id of a published product).');
      }
      const raw = Array.isArray(query.product_id) ? '' : String(query.product_id).trim();
      if (!/^\d{1,18}$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
        throw invalidParameter('Parameter product_id is invalid: expected an integer product id.');
      }
      const limit = integerParameter(query.limit, 'limit', 4, 1, 10);
      const intent = (query.intent ?? 'related') as RecommendationIntent;
      if (intent !== 'related' && intent !== 'complementary') {
        throw invalidParameter('Parameter intent is invalid: it must be one of related, complementary.');
      }
      const products = await store.recommendations.forProduct(Number(raw), intent, limit);
      if (!products) throw notFound(`No published product has the id ${raw}.`);
      const extra = `,"intent":"${intent}"`;
      return sendCatalogRead(request, reply, bodies.listTag(products, extra), () => bodies.listText(products, extra));
    },
  );
};

