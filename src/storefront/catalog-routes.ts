/** Storefront catalog routes: thin adapters from HTTP to the in-memory catalog. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../http/errors.js';
import { PUBLIC_READ } from '../http/openapi.js';
import { ALL_COLLECTION, type Catalog } from '../catalog/catalog.js';
import type { ProductBodies } from './product-bodies.js';

const HANDLE = /^[a-z0-9-]+$/;
/** Products per page when `limit` is not given (the spec's default). */
const DEFAULT_LIMIT = 30;
const JSON_TYPE = 'application/json; charset=utf-8';

const errorResponses = {
  404: Type.Ref('Error'),
  422: Type.Ref('Error'),
  429: Type.Ref('Error'),
};

export function catalogRoutes(server: FastifyInstance, catalog: Catalog, bodies: ProductBodies): void {
  // Handlers read their input typed from the route schemas.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/products/:handle.js',
    {
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
    async (request, reply) => {
      const { handle } = request.params;
      const product = HANDLE.test(handle) ? catalog.snapshot.productByHandle(handle) : undefined;
      if (!product) throw notFound(`No product has the handle "${handle.slice(0, 100)}". Re-derive handles from /sitemap.xml.`);
      return reply.type(JSON_TYPE).send(bodies.body(product));
    },
  );

  const listQuery = Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 250, default: DEFAULT_LIMIT, description: 'products per page' })),
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: '1-based page number' })),
  });

  const listProducts = (handle: string, limit: number, page: number): Buffer => {
    const body = HANDLE.test(handle) ? bodies.collectionPage(catalog.snapshot, handle, limit, page) : undefined;
    if (!body) throw notFound(`No collection has the handle "${handle.slice(0, 100)}". Re-derive handles from /sitemap.xml.`);
    return body;
  };

  app.get(
    '/collections/:handle/products.json',
    {
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
      return reply.type(JSON_TYPE).send(listProducts(handle, limit, page));
    },
  );

  app.get(
    '/products.json',
    {
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
      return reply.type(JSON_TYPE).send(listProducts(ALL_COLLECTION, limit, page));
    },
  );

  app.get(
    '/sitemap.xml',
    {
      schema: {
        operationId: 'getSitemap',
        summary: 'Every published product and collection URL (re-derive handles here after a 404)',
        tags: ['catalog'],
        security: PUBLIC_READ,
        response: {
          200: { description: 'sitemap XML', content: { 'application/xml': { schema: { type: 'string' } } } },
          429: Type.Ref('Error'),
        },
      },
    },
    async (_request, reply) => reply.type('application/xml; charset=utf-8').send(sitemapXml(catalog)),
  );
}

const escapeXml = (text: string) =>
  text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

function sitemapXml(catalog: Catalog): string {
  const snapshot = catalog.snapshot;
  const base = snapshot.baseUrl;
  const entry = (path: string, lastmod: string) =>
    `  <url><loc>${escapeXml(base + path)}</loc><lastmod>${lastmod.slice(0, 10)}</lastmod></url>`;
  const newest = snapshot.products.reduce((latest, p) => (p.updatedAt > latest ? p.updatedAt : latest), new Date(0).toISOString());
  const urls = [
    entry('/collections/all', newest),
    ...snapshot.collections.map((c) => entry(`/collections/${c.handle}`, c.updatedAt)),
    ...snapshot.products.map((p) => entry(`/products/${p.handle}`, p.updatedAt)),
  ];
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join('\n')}\n</urlset>\n`;
}
