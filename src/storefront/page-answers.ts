/**
 * How the HTML pages are answered. A page for one person (the cart, the checkout, the approval and order pages) is
 * never stored by a cache; a shop page (home, collection, product, search) is the same for everyone, so it is
 * answered like a catalog read: an ETag of its bytes, 30 s of public caching, and 304 when the client's copy is
 * current. Every page carries a Content-Security-Policy.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CatalogSnapshot } from '../catalog/catalog.js';
import { entityTag } from './product-bodies.js';
import { sendCatalogRead } from '../http/response-headers.js';

export const HTML_TYPE = 'text/html; charset=utf-8';

/** A page for one person: never cached, never framed, no referrer leaves it (its URL may hold a secret). */
export function sendPersonalPage(reply: FastifyReply, status: number, page: string, policy: string): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', policy)
    .header('x-frame-options', 'DENY')
    .type(HTML_TYPE)
    .send(page);
}

/**
 * A shop page, the same for everyone: 200 with its ETag, or 304. `etag` may be given when it is known already; a kept
 * page is best sent as its bytes (encoding some 20 KB of text per answer costs a product page a third of its throughput).
 */
export function sendShopPage(
  request: FastifyRequest,
  reply: FastifyReply,
  page: string | Buffer | (() => string | Buffer),
  policy: string,
  etag?: string,
): FastifyReply {
  reply.header('content-security-policy', policy).header('x-frame-options', 'DENY').header('referrer-policy', 'strict-origin-when-cross-origin');
  if (etag === undefined) {
    const body = typeof page === 'function' ? page() : page;
    return sendCatalogRead(request, reply, entityTag(body), body, HTML_TYPE);
  }
  return sendCatalogRead(request, reply, etag, page, HTML_TYPE);
}

/**
 * The origins the catalog's images are served from besides this store (an imported catalog's CDN), for the shop
 * pages' img-src: https only (a page never loads a plain-http image), computed once per catalog snapshot.
 */
export function catalogImageOrigins(snapshot: CatalogSnapshot): string[] {
  return snapshot.derived(imageOrigins);
}

function imageOrigins(snapshot: CatalogSnapshot): string[] {
  const own = new URL(snapshot.baseUrl).origin;
  const origins = new Set<string>();
  for (const product of snapshot.products) {
    for (const image of product.images) {
      if (!/^https:\/\//i.test(image.src)) continue;
      try {
        const origin = new URL(image.src).origin;
        if (origin !== own) origins.add(origin);
      } catch {
        // Not a URL a page could load: it is not shown either.
      }
    }
  }
  return [...origins].sort();
}
