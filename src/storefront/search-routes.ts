/** Storefront search and recommendation routes: thin adapters over the catalog search and recommendations. */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Collection } from '../catalog/types.js';
import { invalidParameter, missingParameter, notFound } from '../http/errors.js';
import { PUBLIC_READ } from '../http/openapi.js';
import type { RecommendationIntent } from '../recommendations/recommendations.js';
import type { Store } from '../store.js';
import type { ProductBodies } from './product-bodies.js';

const RESOURCE_TYPES = ['product', 'collection', 'query'] as const;
type ResourceType = (typeof RESOURCE_TYPES)[number];
const MAX_QUERY_LENGTH = 200;
const JSON_TYPE = 'application/json; charset=utf-8';

const errors = { 404: Type.Ref('Error'), 422: Type.Ref('Error'), 429: Type.Ref('Error') };

/**
 * Answers by normalised query, while the product JSON they show is unchanged: shoppers type the same
 * prefixes again and again. Bounded in entries and bytes; any change to what products show starts it anew.
 */
const MAX_SUGGEST_CACHE_ENTRIES = 20_000;
const MAX_SUGGEST_CACHE_BYTES = 16 * 1024 * 1024;

class SuggestCache {
  private entries = new Map<string, Buffer>();
  private bytes = 0;
  private generation = '';

  get(generation: string, key: string): Buffer | undefined {
    if (generation !== this.generation) {
      this.clear();
      this.generation = generation;
    }
    return this.entries.get(key);
  }

  set(key: string, body: Buffer): void {
    if (this.entries.size >= MAX_SUGGEST_CACHE_ENTRIES || this.bytes + body.length > MAX_SUGGEST_CACHE_BYTES) this.clear();
    this.entries.set(key, body);
    this.bytes += body.length;
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

export const searchRoutes: FastifyPluginAsync<{ store: Store; bodies: ProductBodies }> = async (app, { store, bodies }) => {
  const suggestCache = new SuggestCache();
  app.get(
    '/search/suggest.json',
    {
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
      const query = request.query as Record<string, unknown>;
      const q = typeof query.q === 'string' ? query.q.trim() : '';
      if (query.q === undefined) throw invalidParameter('Required parameter missing: q (the search text).');
      if (typeof query.q !== 'string' || q.length === 0) throw invalidParameter('Parameter q is invalid: it must contain at least one character.');
      if (q.length > MAX_QUERY_LENGTH) throw invalidParameter(`Parameter q is invalid: at most ${MAX_QUERY_LENGTH} characters.`);
      const types = resourceTypes(query['resources[type]']);
      const limit = integerParameter(query['resources[limit]'], 'resources[limit]', 5, 1, 10);

      const snapshot = store.catalog.snapshot;
      const key = `${types.join()}|${limit}|${q.toLowerCase().replace(/\s+/g, ' ')}`;
      const cached = suggestCache.get(bodies.generation, key);
      if (cached) return reply.type(JSON_TYPE).send(cached);
      const parts: string[] = [];
      if (types.includes('product')) {
        parts.push(`"products":[${store.search.products(q, limit).map((p) => bodies.text(p)).join(',')}]`);
      }
      if (types.includes('collection')) {
        const collections = store.search.collections(q, limit).map((c) => collectionJson(c, snapshot.baseUrl));
        parts.push(`"collections":${JSON.stringify(collections)}`);
      }
      if (types.includes('query')) {
        const queries = store.search.queries(q, limit).map((s) => ({ ...s, url: `/search?q=${encodeURIComponent(s.text)}` }));
        parts.push(`"queries":${JSON.stringify(queries)}`);
      }
      const body = Buffer.from(`{"resources":{"results":{${parts.join(',')}}}}`);
      suggestCache.set(key, body);
      return reply.type(JSON_TYPE).send(body);
    },
  );

  app.get(
    '/recommendations/products.json',
    {
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
      const query = request.query as Record<string, unknown>;
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
      return reply.type(JSON_TYPE).send(bodies.listText(products, `,"intent":"${intent}"`));
    },
  );
};

