/**
 * The headers every answer carries (JSON, HTML pages, errors): its request id, `nosniff` (and HSTS over https), and
 * CORS; everything but the public reads also carries X-Frame-Options and Referrer-Policy. The public reads each
 * door names (CrossOriginPolicy: the storefront's catalog reads, the UCP profile) may be fetched from any origin
 * (`access-control-allow-origin: *`: they carry no credential and no private data); everything else (the cart, the
 * buyer's pages, the commerce endpoint) is same-origin only: no allow-origin header, and a cross-origin preflight is
 * refused, except on the paths whose routes judge Origin themselves (the commerce endpoint).
 *
 * One callback-style onSend hook with constant values: a product read is benchmarked, and an async hook's promise
 * or a per-request object shows in its throughput.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorMessage, sendError } from './errors.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/** What a door tells the response headers about its paths (src/app.ts passes each door's). */
export interface CrossOriginPolicy {
  /**
   * The paths any origin may read (GET and HEAD, and their preflight), with or without a route behind them: sources
   * of regular expressions, each matched from just after the path's leading `/`.
   */
  publicReads: readonly string[];
  /** Path prefixes whose routes judge Origin themselves: a cross-origin preflight there is an ordinary OPTIONS. */
  ownOriginRules?: readonly string[];
}

/** The pipeline's own public reads: the interface description and the scopes (src/http/openapi.ts). */
export const PIPELINE_CROSS_ORIGIN: CrossOriginPolicy = {
  publicReads: [String.raw`openapi\.json(?:[?#]|$)`, String.raw`scopes\.json(?:[?#]|$)`],
};

/** One expression for the public reads of all the policies. */
function publicReadPath(policies: readonly CrossOriginPolicy[]): RegExp {
  return new RegExp(String.raw`^\/(?:${policies.flatMap((policy) => policy.publicReads).join('|')})`);
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD';

export const PUBLIC_READ_METHODS = 'GET, HEAD';

export interface ResponseHeaderOptions {
  baseUrl: string;
  /** Each door's public reads and paths with Origin rules of their own, and PIPELINE_CROSS_ORIGIN. */
  crossOrigin: readonly CrossOriginPolicy[];
  /** True once the server is shutting down: answers then close their connection, so the drain ends. */
  lifecycle: { draining: boolean };
}

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
 * Installs the headers every answer carries (an onSend hook) and returns the CORS preflight answer, which the app's
 * one arrival hook (src/app.ts) calls before routing picks a 405 or 404: true when it has answered the request.
 */
export function installResponseHeaders(app: FastifyInstance, { baseUrl, crossOrigin, lifecycle }: ResponseHeaderOptions): (request: FastifyRequest, reply: FastifyReply) => boolean {
  const ownOrigin = new URL(baseUrl).origin;
  const PUBLIC_READ_PATH = publicReadPath(crossOrigin);
  const ownOriginRules = crossOrigin.flatMap((policy) => policy.ownOriginRules ?? []);

  // A preflight is an OPTIONS with Access-Control-Request-Method.
  const answerPreflight = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined) return false;
    if (PUBLIC_READ_PATH.test(request.url)) {
      reply
        .code(204)
        .header('access-control-allow-methods', PUBLIC_READ_METHODS)
        .header('access-control-allow-headers', 'Accept, Accept-Language, Content-Type, X-Request-Id')
        .header('access-control-max-age', '600')
        .send();
      return true;
    }
    // A path with Origin rules of its own (the commerce endpoint's, src/ucp/routes.ts) keeps them; a same-origin
    // preflight is an ordinary OPTIONS.
    const origin = request.headers.origin;
    if (origin === undefined || origin === ownOrigin || ownOriginRules.some((prefix) => request.url.startsWith(prefix))) return false;
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
