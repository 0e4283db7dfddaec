/** Builds the Fastify app from its parts: error handling, the interface description, then each door's routes. */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { adminRoutes } from './admin/admin-routes.js';
import { approvalRoutes } from './storefront/approval-routes.js';
import { appSchemaController, installStorableInputCheck } from './storefront/body-validation.js';
import { cartPageRoutes } from './storefront/cart-page-routes.js';
import { cartRoutes } from './storefront/cart-routes.js';
import { STOREFRONT_CROSS_ORIGIN } from './storefront/catalog-reads.js';
import { STOREFRONT_OPENAPI } from './storefront/openapi-fragment.js';
import { catalogRoutes } from './storefront/catalog-routes.js';
import { shopRoutes } from './storefront/shop-routes.js';
import { stripeWebhookRoutes } from './storefront/stripe-webhook-routes.js';
import { subscriptionRoutes } from './storefront/subscription-routes.js';
import { ProductSchema, VariantSchema } from './storefront/product-schemas.js';
import { nonDecimalNumber } from './http/decimal-numbers.js';
import { ErrorMessage, ErrorSchema, errorBody, installErrorHandlers, invalidParameter, sendError } from './http/errors.js';
import { metaRoutes, registerOpenApi } from './http/openapi.js';
import { installOversizedBodyDiscard } from './http/oversized-body.js';
import { readinessCheck } from './http/readiness.js';
import { peerMatcher, requestIdGenerator } from './http/request-id.js';
import { installMetrics } from './http/metrics.js';
import { installRateLimits } from './http/rate-limit.js';
import { loggerOptions, type LogDestination } from './http/request-log.js';
import { RoutePatterns } from './http/route-patterns.js';
import { installResponseHeaders, PIPELINE_CROSS_ORIGIN, rawAnswerHeaders, type CrossOriginPolicy } from './http/response-headers.js';
import { loadMigrations } from './db/migrate.js';
import { ProductBodies } from './storefront/product-bodies.js';
import { searchRoutes } from './storefront/search-routes.js';
import type { Store } from './store.js';
import { storeFigureMetrics } from './store-figures.js';
import { UCP_CROSS_ORIGIN } from './ucp/cross-origin.js';
import { UCP_OPENAPI } from './ucp/openapi-fragment.js';
import { ucpRoutes } from './ucp/routes.js';

const BODY_LIMIT = 256 * 1024;
/** Node's default limit on a request's line and headers together (its maxHeaderSize). */
const MAX_HEADER_BYTES = 16 * 1024;
const DEMO_ASSETS = new URL('./catalog/demo-assets/', import.meta.url);
/** The demo catalog's images (the route below) are public reads, as the products that show them. */
const DEMO_ASSETS_CROSS_ORIGIN: CrossOriginPolicy = { publicReads: [String.raw`assets\/demo\/`] };

/** How long a connection may take at each step (milliseconds); a request over its time is answered 408 and closed. */
export interface ServerTimeouts {
  /** The whole request, headers and body, must have arrived within this. */
  requestTimeout: number;
  /** The request line and headers must have arrived within this (at most requestTimeout). */
  headersTimeout: number;
  /** A kept-alive connection waiting for its next request is closed after this. */
  keepAliveTimeout: number;
  /** A connection with no traffic either way (a client that stopped reading an answer) is closed after this. */
  idleTimeout: number;
  /** How often the server looks for requests over their time (so a limit is enforced within this much). */
  checkInterval: number;
}

/**
 * A shopper's browser sends a request in well under a second; 30 s leaves room for a slow mobile link with a
 * body of the largest size (256 KiB). Keep-alive outlasts the 60 s idle timeout of common load balancers, so
 * the balancer, not the store, closes an idle connection (the store closing one the balancer is about to reuse
 * would fail that request).
 */
export const DEFAULT_TIMEOUTS: ServerTimeouts = {
  requestTimeout: 30_000,
  headersTimeout: 10_000,
  keepAliveTimeout: 72_000,
  // Off: a per-socket idle timer cost about 15% of a product read's throughput (bench), and a silent connection
  // is already closed by headersTimeout, an idle keep-alive one by keepAliveTimeout.
  idleTimeout: 0,
  checkInterval: 1_000,
};

export interface AppOptions {
  /** Logs at LOG_LEVEL: true to stdout, or to the destination given (tests); off when absent. */
  logger?: boolean | LogDestination;
  /** Adds routes before the app is sealed (tests use it to reach the error handler with a crashing route). */
  extend?: (app: FastifyInstance) => void;
  /** Overrides of DEFAULT_TIMEOUTS (tests shorten them). */
  timeouts?: Partial<ServerTimeouts>;
}

/** Where a URL with a path the router cannot decode is routed (see rewriteUrl): it answers 400. */
const BAD_URL_PATH = '/__invalid-url__';

/** The URL as it is, or BAD_URL_PATH when its path's percent-encoding is not valid (the router could not decode it). */
export function rewriteBadUrl(url: string): string {
  const end = url.indexOf('?');
  const path = end === -1 ? url : url.slice(0, end);
  if (!path.includes('%')) return url;
  try {
    decodeURIComponent(path);
    return url;
  } catch {
    return BAD_URL_PATH;
  }
}

export async function buildApp(store: Store, options: AppOptions = {}): Promise<FastifyInstance> {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const headersTimeout = Math.min(timeouts.headersTimeout, timeouts.requestTimeout);
  const { baseUrl, trustProxy } = store.config;
  // Set once the server begins to close: new requests are answered 503, answers close their connection.
  const lifecycle = { draining: false };
  const genReqId = requestIdGenerator(trustProxy);
  const trustedProxy = trustProxy.length > 0 ? peerMatcher(trustProxy) : undefined;
  // Every route by pattern, under any method: the 405's Allow and the log's name for a request no route answered.
  const routes = new RoutePatterns();
  const app = Fastify({
    ...loggerOptions(options.logger, store.config, routes),
    bodyLimit: BODY_LIMIT,
    // The onRequest hook below answers 503 in the store's JSON, with the request id, while the server drains.
    return503OnClosing: false,
    // request.ip (rate limits, logs) and a client's X-Request-Id are believed only from these proxies.
    // As a function: whether a hop is a trusted proxy, remembered per address rather than parsed per request.
    trustProxy: trustedProxy ?? false,
    requestIdHeader: false,
    genReqId,
    // Without limits a client sending a byte every few seconds holds its connection (and its memory) forever.
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    connectionTimeout: timeouts.idleTimeout,
    http: {
      requestTimeout: timeouts.requestTimeout,
      headersTimeout,
      connectionsCheckingInterval: timeouts.checkInterval,
      // Node would answer a missing Host with an empty 400; the onRequest hook below answers it in JSON.
      requireHostHeader: false,
    },
    // A JSON body naming __proto__ is stripped of it rather than refused as if it were not JSON.
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
    // Malformed HTTP (a bad Content-Length, an oversized header, a request over its time) is answered before
    // Fastify sees a request.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, baseUrl),
    // A path segment of any length is routed like any other (a request line is at most Node's 16 KiB of headers): an
    // over-long handle or token reaches its route, which answers 404 through the one pipeline (id, headers, log,
    // metrics, limit), where the router's own answer to it (frameworkErrors) would skip every hook.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_HEADER_BYTES },
    // A path whose percent-encoding is not valid (`/%zz`, `/products/%C0.js`) is routed like any request, to the
    // route that answers it 400: it gets its id, headers, log line, metrics and rate limit from the one pipeline,
    // where the router's own answer to it (frameworkErrors, below) would skip every hook.
    rewriteUrl: (raw) => rewriteBadUrl(raw.url ?? '/'),
    // Errors the router raises before any route runs answer JSON too (none is expected: see the two options above).
    frameworkErrors: (error, _request, reply) => {
      sendError(reply, 400, ErrorMessage.badRequest, error.code === 'FST_ERR_BAD_URL' ? 'The URL is not valid.' : 'The request could not be understood.');
    },
    // Routes validate on the app's one coercing Ajv, the one the cart's form coercion uses (storefront/body-validation.ts).
    schemaController: appSchemaController,
  });

  installErrorHandlers(app);
  installOversizedBodyDiscard(app);
  app.addHook('preClose', (done) => {
    lifecycle.draining = true;
    done();
  });
  const crossOrigin = [STOREFRONT_CROSS_ORIGIN, UCP_CROSS_ORIGIN, PIPELINE_CROSS_ORIGIN, DEMO_ASSETS_CROSS_ORIGIN];
  const answerPreflight = installResponseHeaders(app, { baseUrl, crossOrigin, lifecycle });
  const metrics = installMetrics(app, store, [storeFigureMetrics(store)]);
  const limit = (await installRateLimits(app, store, metrics))?.limit;
  // Node answers an Expect it cannot meet (anything but 100-continue) with an empty 417; this answers JSON.
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const body = JSON.stringify(errorBody(417, 'The Expect header cannot be met: only Expect: 100-continue is supported.'));
    response
      .writeHead(417, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        ...rawAnswerHeaders(genReqId(request), baseUrl),
        connection: 'close',
      })
      .end(body);
  });
  app.addHook('onRoute', (route) => routes.add(route.url, route.method));
  const answerMethodNotAllowed = methodNotAllowed(routes);
  // Answers a request may get on arrival, before its body is read: while the server drains, 503; an HTTP/1.1
  // request without Host, 400; a CORS preflight, 204 or 403.
  const answerOnArrival = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (lifecycle.draining) {
      reply.header('retry-after', '5');
      sendError(reply, 503, ErrorMessage.unavailable, 'The store is shutting down; retry shortly.');
      return true;
    }
    // HTTP/1.1 requires Host (RFC 9112, 3.2); HTTP/1.0 requests may go without.
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      sendError(reply, 400, ErrorMessage.badRequest, 'An HTTP/1.1 request needs a Host header.');
      return true;
    }
    return answerPreflight(request, reply);
  };
  // One hook on arrival for every request, routed or not (each hook a request passes costs it, and a product read
  // is benchmarked): the answers above, then the rate limit (src/http/rate-limit.ts), then the 405.
  // Callback-style: with the counters in memory the limit answers at once, and the request goes on without a promise.
  const goOn = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void, refused: Error | undefined) => {
    if (refused) done(refused); // the error handler answers the 429
    else if (!answerMethodNotAllowed(request, reply)) done();
  };
  app.addHook('onRequest', (request, reply, done) => {
    if (answerOnArrival(request, reply)) return; // answered
    const refused = limit?.(request, reply);
    if (refused instanceof Promise) refused.then((result) => goOn(request, reply, done, result), done);
    else goOn(request, reply, done, refused);
  });
  // Query-string numbers in decimal digits only (Ajv's coercion would read `0x5` or `1e1` as a number). Attached
  // only to routes with a querystring schema, so a product read pays nothing for it.
  app.addHook('onRoute', (route) => {
    const schema = route.schema?.querystring;
    // A route with its own validator compiler reads its parameters itself (search, recommendations).
    if (!schema || route.validatorCompiler) return;
    const check = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
      const notDecimal = nonDecimalNumber(schema, request.query);
      done(notDecimal ? invalidParameter(`Parameter ${notDecimal} is invalid: expected a whole number in decimal digits.`) : undefined);
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [check] : [check, ...(Array.isArray(existing) ? existing : [existing])];
  });

  app.all(BAD_URL_PATH, { config: { rateLimit: 'other' }, schema: { hide: true } }, (_request, reply) => sendError(reply, 400, ErrorMessage.badRequest, 'The URL is not valid.'));

  app.addSchema(ErrorSchema);
  app.addSchema(VariantSchema);
  app.addSchema(ProductSchema);
  const scopes = await registerOpenApi(app, store.config, [STOREFRONT_OPENAPI, UCP_OPENAPI]);

  const bodies = new ProductBodies(store.catalog, store.inventory, store.config.cartMaxLineQuantity);
  // Each door owns its plugin scope (body parsers, cookies); errors and 404/405 stay app-wide. Every storefront
  // route, pages included, refuses input the store cannot keep (storefront/body-validation.ts); the commerce door
  // checks its own, answering in JSON-RPC.
  await app.register(async (storefront) => {
    installStorableInputCheck(storefront);
    catalogRoutes(storefront, store.catalog, bodies);
    await storefront.register(searchRoutes, { store, bodies });
    await storefront.register(cartRoutes, { store });
    await storefront.register(approvalRoutes, { store });
    await storefront.register(shopRoutes, { store, bodies });
    await storefront.register(cartPageRoutes, { store });
    await storefront.register(subscriptionRoutes, { store });
  });
  await app.register(ucpRoutes, { store });
  await app.register(adminRoutes, { store });
  await app.register(stripeWebhookRoutes, { store });
  metaRoutes(app, scopes, readinessCheck(store.db, loadMigrations()));
  metrics.routes(app);

  app.get<{ Params: { file: string } }>('/assets/demo/:file', { config: { rateLimit: 'catalog' }, schema: { hide: true } }, async (request, reply) => {
    const { file } = request.params;
    if (!/^[a-z0-9-]+\.svg$/.test(file)) return sendError(reply, 404, ErrorMessage.notFound, 'No such image.');
    try {
      const svg = await readFile(new URL(file, DEMO_ASSETS));
      return reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(svg);
    } catch {
      return sendError(reply, 404, ErrorMessage.notFound, 'No such image.');
    }
  });

  options.extend?.(app);
  await app.ready();
  return app;
}

/** Errors Node's HTTP parser and timers raise on a connection, and what the client is told. */
const CLIENT_ERRORS: Record<string, { status: number; reason: string; description: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: 'Request Timeout', description: 'The request did not arrive in time.' },
  HPE_HEADER_OVERFLOW: { status: 431, reason: 'Request Header Fields Too Large', description: 'The URL or the request headers are too large.' },
};

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, baseUrl: string): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // An answer already under way on this connection cannot be followed by another: close it (as Node does).
  const response = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || response?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, reason, description } = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, reason: 'Bad Request', description: 'The request is not valid HTTP.' };
  const body = JSON.stringify(errorBody(status, description));
  // No request was read, so there is no id to trust: this answer's is new.
  const headers = Object.entries(rawAnswerHeaders(randomUUID(), baseUrl))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * A path that exists under another method answers 405 with Allow, not 404. Returns the check, which the arrival hook
 * runs: true when it has answered.
 */
function methodNotAllowed(routes: RoutePatterns): (request: FastifyRequest, reply: FastifyReply) => boolean {
  return (request, reply) => {
    if (request.is404 === false) return false;
    const allowed = routes.find(request.url.split('?')[0] ?? '/')?.methods;
    if (!allowed || allowed.has(request.method)) return false;
    // HEAD goes with GET (Fastify adds it to each GET route), last.
    const allow = [...[...allowed].filter((method) => method !== 'HEAD'), ...(allowed.has('GET') ? ['HEAD'] : [])].join(', ');
    reply.header('allow', allow);
    sendError(reply, 405, ErrorMessage.methodNotAllowed, `${request.method} is not allowed here; use ${allow}.`);
    return true;
  };
}
