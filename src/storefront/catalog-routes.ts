/** Storefront catalog routes: thin adapters from HTTP to the in-memory catalog. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../http/errors.js';
import { PUBLIC_READ } from '../http/openapi.js';
import { sendCatalogRead } from './catalog-reads.js';
import { ALL_COLLECTION, type Catalog, type CatalogSnapshot } from '../catalog/catalog.js';
import { entityTag, type ProductBodies, type TaggedBody } from './product-bodies.js';

export const HANDLE = /^[a-z0-9-]+$/;
/** The product read's route. */
export const PRODUCT_ROUTE = '/products/:handle.js';
/** Products per page when `limit` is not given (the spec's default). */
const DEFAULT_LIMIT = 30;
const XML_TYPE = 'application/xml; charset=utf-8';

const errorResponses = {
  404: Type.Ref('Error'),
  422: Type.Ref('Error'),
  429: Type.Ref('Error'),
};

export function catalogRoutes(server: FastifyInstance, catalog: Catalog, bodies: ProductBodies): void {
  // Handlers read their input typed from the route schemas.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    PRODUCT_ROUTE,
    {
      config: { rateLimit: 'catalog' },
      schema: {
        operationId: 'getProductByHandle',
        summary: 'A product with all its variants, prices and availability',
        tags: ['catalog'],
        security: PUBLIC_READ,
        params: Type.Object({ handle: Type.String({ pattern: '^[a-z0-9-]+$' }) }),
        response: { 200: Type.Ref('Product'), ...errorResponses },
      },
      // Handles that break the pattern are 404, not 422: the spec says so, and the route owns the check.
      attachValidation: true,
    },
    // Not async: the catalog is in memory, and a promise per read shows in the benchmarked product read.
    (request, reply) => {
      const { handle } = request.params;
      const product = HANDLE.test(handle) ? catalog.snapshot.productByHandle(handle) : undefined;
      if (!product) throw notFound(`No product has the handle "${handle.slice(0, 100)}". Re-derive handles from /sitemap.xml.`);
      const { body, etag } = bodies.product(product);
      return sendCatalogRead(request, reply, etag, body);
    },
  );

  const listQuery = Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 250, default: DEFAULT_LIMIT, description: 'products per page' })),
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: '1-based page number' })),
  });

  const listProducts = (handle: string, limit: number, page: number): TaggedBody => {
    const body = HANDLE.test(handle) ? bodies.collectionPage(catalog.snapshot, handle, limit, page) : undefined;
    if (!body) throw notFound(`No collection has the handle "${handle.slice(0, 100)}". Re-derive handles from /sitemap.xml.`);
    return body;
  };

  app.get(
    '/collections/:handle/products.json',
    {
      config: { rateLimit: 'catalog' },
      schema: {
        operationId: 'listCollectionProducts',
        summary: 'The products of a collection, page by page (`all` = every published product)',
        tags: ['catalog'],
        security: PUBLIC_READ,
        params: Type.Object({ handle: Type.String({ pattern: '^[a-z0-9-]+$', description: '`all` = every published product' }) }),
        querystring: listQuery,
        response: { 200: Type.Object({ products: Type.Array(Type.Ref('Product')) }), ...errorResponses },
      },
      attachValidation: true,
    },
    async (request, reply) => {
      const { handle } = request.params;
      // A handle breaking the pattern names no collection (404); a bad limit or page is the client's to fix (422).
      if (request.validationError && request.validationError.validationContext !== 'params') throw request.validationError;
      const { limit = DEFAULT_LIMIT, page = 1 } = request.query;
      const { body, etag } = listProducts(handle, limit, page);
      return sendCatalogRead(request, reply, etag, body);
    },
  );

  app.get(
    '/products.json',
    {
      config: { rateLimit: 'catalog' },
      schema: {
        operationId: 'listAllProducts',
        summary: 'Every published product, page by page (the same as /collections/all/products.json)',
        tags: ['catalog'],
        security: PUBLIC_READ,
        querystring: listQuery,
        response: { 200: Type.Object({ products: Type.Array(Type.Ref('Product')) }), 422: Type.Ref('Error'), 429: Type.Ref('Error') },
      },
    },
    async (request, reply) => {
      const { limit = DEFAULT_LIMIT, page = 1 } = request.query;
      const { body, etag } = listProducts(ALL_COLLECTION, limit, page);
      return sendCatalogRead(request, reply, etag, body);
    },
  );

  app.get(
    '/sitemap.xml',
    {
      config: { rateLimit: 'catalog' },
      schema: {
        operationId: 'getSitemap',
        summary: 'The home page and every published product and collection URL (re-derive handles here after a 404)',
        tags: ['catalog'],
        security: PUBLIC_READ,
        response: {
          200: { description: 'sitemap XML', content: { 'application/xml': { schema: { type: 'string' } } } },
          429: Type.Ref('Error'),
        },
      },
    },
    async (request, reply) => {
      const { body, etag } = catalog.snapshot.derived(sitemap);
      return sendCatalogRead(request, reply, etag, body, XML_TYPE);
    },
  );
}

const escapeXml = (text: string) =>
  text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

/** The sitemap of a snapshot, built once per snapshot (it shows no stock). */
function sitemap(snapshot: CatalogSnapshot): TaggedBody {
  const xml = sitemapXml(snapshot);
  return { body: Buffer.from(xml), etag: entityTag(xml) };
}

function sitemapXml(snapshot: CatalogSnapshot): string {
  const base = snapshot.baseUrl;
  const entry = (path: string, lastmod: string) =>
    `  <url><loc>${escapeXml(base + path)}</loc><lastmod>${lastmod.slice(0, 10)}</lastmod></url>`;
  const newest = snapshot.products.reduce((latest, p) => (p.updatedAt > latest ? p.updatedAt : latest), new Date(0).toISOString());
  // Only pages that answer 200: the home page, every product (`all`) and each published collection and product. A
  // collection whose handle is `all` is that same page, listed once.
  const urls = [
    entry('/', newest),
    entry('/collections/all', newest),
    ...snapshot.collections.filter((c) => c.handle !== ALL_COLLECTION).map((c) => entry(`/collections/${c.handle}`, c.updatedAt)),
    ...snapshot.products.map((p) => entry(`/products/${p.handle}`, p.updatedAt)),
  ];
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('\n')}\n</urlset>\n`;
}
