/**
 * How the HTML pages are answered. A page for one person (the cart, the checkout, the approval and order pages) is
 * never stored by a cache; a shop page (home, collection, product, search) is the same for everyone, so it is
 * answered like a catalog read: an ETag of its bytes, 30 s of public caching, and 304 when the client's copy is
 * current. Every page carries a Content-Security-Policy, one that page-policy.ts built.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { entityTag } from './product-bodies.js';
import type { PagePolicy } from './page-policy.js';
import { sendCatalogRead } from './catalog-reads.js';

export const HTML_TYPE = 'text/html; charset=utf-8';

/** A page for one person: never cached, never framed, no referrer leaves it (its URL may hold a secret). */
export function sendPersonalPage(reply: FastifyReply, status: number, page: string, policy: PagePolicy): FastifyReply {
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
  policy: PagePolicy,
  etag?: string,
): FastifyReply {
  reply.header('content-security-policy', policy).header('x-frame-options', 'DENY').header('referrer-policy', 'strict-origin-when-cross-origin');
  if (etag === undefined) {
    const body = typeof page === 'function' ? page() : page;
    return sendCatalogRead(request, reply, entityTag(body), body, HTML_TYPE);
  }
  return sendCatalogRead(request, reply, etag, page, HTML_TYPE);
}
