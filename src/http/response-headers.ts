/**
 * The headers every answer carries (JSON, HTML pages, errors): its request id, `nosniff` (and HSTS over https), and
 * CORS; everything but the public reads also carries X-Frame-Options and Referrer-Policy. The
 * storefront's public reads may be fetched from any origin (`access-control-allow-origin: *`: they carry no
 * credential and no private data); everything else (the cart, the buyer's pages, the commerce endpoint) is
 * same-origin only: no allow-origin header, and a cross-origin preflight is refused.
 *
 * One callback-style onSend hook with constant values: a product read is benchmarked, and an async hook's promise
 * or a per-request object shows in its throughput.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorMessage, sendError } from './errors.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/**
 * The public reads: products, collections, search suggestions, recommendations, the sitemap, the interface
 * description, the scopes and the UCP profile (and the demo images their products show).
 */
const PUBLIC_READ_PATH =
  /^\/(?:products(?:\/|\.json(?:[?#]|$))|collections\/|search\/suggest\.json(?:[?#]|$)|recommendations\/|sitemap\.xml(?:[?#]|$)|openapi\.json(?:[?#]|$)|scopes\.json(?:[?#]|$)|\.well-known\/ucp(?:[/?#]|$)|assets\/demo\/)/;

export function isPublicReadPath(url: string): boolean {
  return PUBLIC_READ_PATH.test(url);
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

export const PUBLIC_READ_METHODS = 'GET, HEAD';

export interface ResponseHeaderOptions {
  baseUrl: string;
  /** True once the server is shutting down: answers then close their connection, so the drain ends. */
  lifecycle: { draining: boolean };
}

/**
 * Catalog reads (products, collection pages, search suggestions, recommendations, the sitemap) may be kept by
 * browsers and shared caches for 30 s. Their JSON carries prices and availability, which an import or a sale
 * changes at any moment: 30 s bounds how stale a shown price or "in stock" can be (adding to the cart checks
 * both again, so a stale page costs at most a refused add), while a shopper paging back and forth, or a CDN in
 * front of many shoppers, asks again at most twice a minute and mostly gets a 304.
 */
export const CATALOG_CACHE_CONTROL = 'public, max-age=30';
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Whether an If-None-Match field matches the current entity tag (RFC 9110, 13.1.2): `*` (a current
 * representation exists), or any tag of the list equal to it by the weak comparison (8.8.3.2: W/ ignored).
 */
export function ifNoneMatchHits(field: string | undefined, etag: string): boolean {
  if (field === undefined) return false;
  const current = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const listed of field.split(',')) {
    const tag = listed.trim();
    if (tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === current) return true;
  }
  return false;
}

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
 * Installs the headers every answer carries (an onSend hook) and returns the CORS preflight answer, which the app's
 * one arrival hook (src/app.ts) calls before routing picks a 405 or 404: true when it has answered the request.
 */
export function installResponseHeaders(app: FastifyInstance, { baseUrl, lifecycle }: ResponseHeaderOptions): (request: FastifyRequest, reply: FastifyReply) => boolean {
  const ownOrigin = new URL(baseUrl).origin;

  // A preflight is an OPTIONS with Access-Control-Request-Method.
  const answerPreflight = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined) return false;
    if (isPublicReadPath(request.url)) {
      reply
        .code(204)
        .header('access-control-allow-methods', PUBLIC_READ_METHODS)
        .header('access-control-allow-headers', 'Accept, Accept-Language, Content-Type, X-Request-Id')
        .header('access-control-max-age', '600')
        .send();
      return true;
    }
    // The commerce endpoint keeps its own Origin and Host rules (src/ucp/routes.ts); a same-origin preflight is
    // an ordinary OPTIONS.
    const origin = request.headers.origin;
    if (origin === undefined || origin === ownOrigin || request.url.startsWith('/api/ucp/mcp')) return false;
    sendError(reply, 403, ErrorMessage.forbidden, 'Cross-origin requests are not allowed here: only the storefront reads are.');
    return true;
  };

  const { everyAnswer, publicRead } = answerHeaders(baseUrl);
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    for (const [name, value] of everyAnswer) reply.header(name, value);
    if ((isRead(request.method) || request.method === 'OPTIONS') && PUBLIC_READ_PATH.test(request.url)) {
      for (const [name, value] of publicRead) reply.header(name, value);
    } else {
      // A route (the buyer's pages) may set its own.
      if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', 'DENY');
      if (!reply.hasHeader('referrer-policy')) reply.header('referrer-policy', 'strict-origin-when-cross-origin');
      reply.header('cross-origin-resource-policy', 'same-site');
    }
    if (lifecycle.draining) reply.header('connection', 'close');
    done(null, payload);
  });
  return answerPreflight;
}

type Header = readonly [name: string, value: string];

/**
 * The constant headers of answers, beside the request id: those of every answer, and those a public read adds
 * (the onSend hook above).
 */
export function answerHeaders(baseUrl: string): { everyAnswer: readonly Header[]; publicRead: readonly Header[] } {
  return {
    everyAnswer: [['x-content-type-options', 'nosniff'], ...(baseUrl.startsWith('https:') ? [['strict-transport-security', 'max-age=31536000'] as const] : [])],
    // Public data any site may fetch: framing it or leaking a referrer from it protects nothing, so the public
    // reads (the benchmarked product read among them) go without X-Frame-Options and Referrer-Policy.
    publicRead: [
      ['access-control-allow-origin', '*'],
      ['access-control-expose-headers', REQUEST_ID_HEADER],
      ['cross-origin-resource-policy', 'cross-origin'],
    ],
  };
}

/** The same headers for the answers Node's HTTP layer sends before Fastify sees a request (malformed HTTP). */
export function rawAnswerHeaders(requestId: string, baseUrl: string): Record<string, string> {
  return {
    [REQUEST_ID_HEADER]: requestId,
    ...Object.fromEntries(answerHeaders(baseUrl).everyAnswer),
    'x-frame-options': 'DENY',
    'referrer-policy': 'strict-origin-when-cross-origin',
    'cross-origin-resource-policy': 'same-site',
  };
}
