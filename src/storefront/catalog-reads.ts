/** The storefront's cache policy for its catalog reads, their conditional answers, and the paths any origin may read. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ifNoneMatchHits, JSON_TYPE, type CrossOriginPolicy } from '../http/response-headers.js';

/**
 * Catalog reads (products, collection pages, search suggestions, recommendations, the sitemap) may be kept by
 * browsers and shared caches for 30 s. Their JSON carries prices and availability, which an import or a sale
 * changes at any moment: 30 s bounds how stale a shown price or "in stock" can be (adding to the cart checks
 * both again, so a stale page costs at most a refused add), while a shopper paging back and forth, or a CDN in
 * front of many shoppers, asks again at most twice a minute and mostly gets a 304.
 */
export const CATALOG_CACHE_CONTROL = 'public, max-age=30';

/**
 * Answers a catalog read: 200 with the body, its ETag and Cache-Control; or, when the client's copy is current,
 * 304 Not Modified with no body and the same two headers (RFC 9110, 15.4.5). `body` may be a function, so a 304
 * never builds it. Only these answers carry an ETag: errors are sent elsewhere and have none.
 */
export function sendCatalogRead(
  request: FastifyRequest,
  reply: FastifyReply,
  etag: string,
  body: Buffer | string | (() => Buffer | string),
  type = JSON_TYPE,
): FastifyReply {
  reply.header('etag', etag).header('cache-control', CATALOG_CACHE_CONTROL);
  if (ifNoneMatchHits(request.headers['if-none-match'], etag)) return reply.code(304).send();
  return reply.type(type).send(typeof body === 'function' ? body() : body);
}

/**
 * The storefront's public reads, which any origin may fetch (src/http/response-headers.ts): products, collections,
 * search suggestions, recommendations and the sitemap.
 */
export const STOREFRONT_CROSS_ORIGIN: CrossOriginPolicy = {
  publicReads: [
    String.raw`products(?:\/|\.json(?:[?#]|$))`,
    String.raw`collections\/`,
    String.raw`search\/suggest\.json(?:[?#]|$)`,
    String.raw`recommendations\/`,
    String.raw`sitemap\.xml(?:[?#]|$)`,
  ],
};
