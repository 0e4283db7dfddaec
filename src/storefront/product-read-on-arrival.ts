/**
 * The product read answered on arrival (issue [operations], item 5): `GET /products/{handle}.js` of a published
 * product is answered from its cached body as soon as the request arrives, before Fastify makes its request and
 * reply objects, routes it and runs its hooks. Through Fastify a product read cost about 42 µs of CPU where bare
 * node:http spends 25 µs on an answer of the same size, and a minimal Fastify app 29 µs; most of the difference
 * was Fastify's per-request machinery, each part well under a microsecond (docs/performance.md).
 *
 * It answers exactly what the route in catalog-routes.ts answers, from the same parts: the body and ETag
 * (ProductBodies), the 304 (ifNoneMatchHits), the headers (answerHeaders), the request id, the rate limit (one count
 * per request), the route's metrics series and the completion log line. test/storefront/product-read-on-arrival
 * .test.ts sends the same requests both ways and compares the answers.
 *
 * Everything else goes to Fastify as it came: other methods and paths, a query string, a handle naming no product,
 * a request without Host, any request while the server shuts down, and a request over its budget (counted here,
 * answered 429 by the arrival hook without counting it again).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Catalog } from '../catalog/catalog.js';
import type { Product } from '../catalog/types.js';
import type { AnswerTally } from '../http/metrics.js';
import { routeClass, type RateLimits } from '../http/rate-limit.js';
import { REQUEST_ID_HEADER } from '../http/request-id.js';
import { completionLine, logCompleted } from '../http/request-log.js';
import { CATALOG_CACHE_CONTROL, JSON_TYPE, answerHeaders, ifNoneMatchHits } from '../http/response-headers.js';
import { HANDLE, PRODUCT_ROUTE } from './catalog-routes.js';
import type { ProductBodies } from './product-bodies.js';

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

export interface ProductReadParts {
  catalog: Catalog;
  bodies: ProductBodies;
  baseUrl: string;
  /** True once the server shuts down (Fastify then answers 503 and closes connections). */
  lifecycle: { draining: boolean };
  /** The request id Fastify would give the request (genReqId). */
  requestId: (request: IncomingMessage) => string;
  /** The client address Fastify's request.ip would give. */
  clientAddress: (request: IncomingMessage) => string;
  /** Undefined with RATE_LIMIT=off. */
  limits: RateLimits | undefined;
  /** The product route's series in the request metrics. */
  tally: AnswerTally;
  /** The root logger, when request lines are logged. */
  log: FastifyBaseLogger | undefined;
}

const PREFIX = '/products/';
const SUFFIX = '.js';

/** Returns the server's request listener: the product read on arrival, and Fastify's handler (`next`) for the rest. */
export function productReadOnArrival(parts: ProductReadParts, next: RequestHandler): RequestHandler {
  const { catalog, bodies, lifecycle, requestId, clientAddress, limits, tally, log } = parts;
  const rateLimitClass = routeClass('GET', PRODUCT_ROUTE);
  const { everyAnswer, publicRead } = answerHeaders(parts.baseUrl);
  // The headers as Node takes them (name, value, name, value…): per answer a copy of one of these, with the
  // request's values written into their places.
  const constantHeaders = ['cache-control', CATALOG_CACHE_CONTROL, ...everyAnswer.flat(), ...publicRead.flat()];
  const okHeaders = ['content-type', JSON_TYPE, 'content-length', '', 'etag', '', REQUEST_ID_HEADER, '', ...constantHeaders];
  const notModifiedHeaders = ['etag', '', REQUEST_ID_HEADER, '', ...constantHeaders];

  /** To Fastify after all, once counted here (the product has gone meanwhile, or its body failed). */
  const passOn = (request: IncomingMessage, response: ServerResponse) => {
    limits?.passOn(request, rateLimitClass);
    next(request, response);
  };

  /** Answers with the product's current body: `product` as found on arrival, or looked up again after a wait. */
  const answer = (request: IncomingMessage, response: ServerResponse, handle: string, started: number, address: string | undefined, found?: Product) => {
    const product = found ?? catalog.snapshot.productByHandle(handle);
    if (product === undefined) return passOn(request, response);
    let tagged;
    try {
      tagged = bodies.product(product);
    } catch {
      // The route builds the same body and fails the same way, into the store's 500 answer and its log line.
      return passOn(request, response);
    }
    const { body, etag } = tagged;
    const id = requestId(request);
    const notModified = ifNoneMatchHits(request.headers['if-none-match'], etag);
    const status = notModified ? 304 : 200;
    let headers: string[];
    if (notModified) {
      headers = notModifiedHeaders.slice();
      headers[1] = etag;
      headers[3] = id;
    } else {
      headers = okHeaders.slice();
      headers[3] = String(body.length);
      headers[5] = etag;
      headers[7] = id;
    }
    response.writeHead(status, headers);
    response.end(notModified ? undefined : body);
    const elapsedMs = performance.now() - started;
    tally('GET', status, elapsedMs / 1000);
    if (log !== undefined) logCompleted(log, completionLine(id, 'GET', request.url!, PRODUCT_ROUTE, status, elapsedMs, address ?? clientAddress(request)));
  };

  return (request, response) => {
    const url = request.url!;
    if (request.method !== 'GET' || !url.startsWith(PREFIX) || !url.endsWith(SUFFIX) || lifecycle.draining) return next(request, response);
    // An HTTP/1.1 request without Host is answered 400 by the arrival hook.
    if (request.headers.host === undefined && request.httpVersion === '1.1') return next(request, response);
    const handle = url.slice(PREFIX.length, -SUFFIX.length);
    const product = HANDLE.test(handle) ? catalog.snapshot.productByHandle(handle) : undefined;
    if (product === undefined) return next(request, response);
    const started = performance.now();
    if (limits === undefined) return answer(request, response, handle, started, undefined, product);
    const address = clientAddress(request);
    const within = limits.countOnArrival(request, rateLimitClass, address);
    if (within === true) return answer(request, response, handle, started, address, product);
    if (within === false) return next(request, response);
    within
      .then((yes) => (yes ? answer(request, response, handle, started, address) : next(request, response)))
      // Nothing above is expected to throw; should it, the request is not left without an answer or a close.
      .catch((error: unknown) => (response.headersSent ? response.destroy(error as Error) : passOn(request, response)));
  };
}
