/** Builds the Fastify app from its parts: error handling, the interface description, then each door's routes. */
import { readFile } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import FindMyWay from 'find-my-way';
import { cartRoutes } from './storefront/cart-routes.js';
import { catalogRoutes } from './storefront/catalog-routes.js';
import { ProductSchema, VariantSchema } from './storefront/product-schemas.js';
import { nonDecimalNumber } from './http/decimal-numbers.js';
import { ErrorMessage, ErrorSchema, installErrorHandlers, invalidParameter, sendError } from './http/errors.js';
import { metaRoutes, registerOpenApi } from './http/openapi.js';
import { ProductBodies } from './storefront/product-bodies.js';
import { searchRoutes } from './storefront/search-routes.js';
import type { Store } from './store.js';
import { ucpRoutes } from './ucp/routes.js';

const BODY_LIMIT = 256 * 1024;
const DEMO_ASSETS = new URL('./catalog/demo-assets/', import.meta.url);

export interface AppOptions {
  logger?: boolean;
  /** Adds routes before the app is sealed (tests use it to reach the error handler with a crashing route). */
  extend?: (app: FastifyInstance) => void;
}

export async function buildApp(store: Store, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ? { level: store.config.logLevel } : false,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    // A JSON body naming __proto__ is stripped of it rather than refused as if it were not JSON.
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
    // Malformed HTTP (a bad Content-Length, an oversized header) is answered before Fastify sees a request.
    clientErrorHandler: answerClientError,
    // A request a client sends never ends as an unhandled 5xx from the router or parser.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // Errors the router raises before any route runs (a bad percent-encoding, an over-long URL) answer JSON too.
    frameworkErrors: (error, _request, reply) => {
      sendError(reply, 400, ErrorMessage.badRequest, error.code === 'FST_ERR_BAD_URL' ? 'The URL is not valid.' : 'The request could not be understood.');
    },
    ajv: { customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false } },
  });

  installErrorHandlers(app);
  installMethodNotAllowed(app);
  // Query-string numbers in decimal digits only (Ajv's coercion would read `0x5` or `1e1` as a number).
  app.addHook('preValidation', (request, _reply, done) => {
    const schema = request.routeOptions.schema?.querystring;
    const notDecimal = schema ? nonDecimalNumber(schema, request.query) : undefined;
    done(notDecimal ? invalidParameter(`Parameter ${notDecimal} is invalid: expected a whole number in decimal digits.`) : undefined);
  });
  // Callback-style hooks: on the hottest paths an async hook's extra promise is measurable.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });

  app.addSchema(ErrorSchema);
  app.addSchema(VariantSchema);
  app.addSchema(ProductSchema);
  await registerOpenApi(app, store.config.baseUrl);

  const bodies = new ProductBodies(store.catalog, store.inventory);
  catalogRoutes(app, store.catalog, bodies);
  // Each door owns its plugin scope (body parsers, cookies); errors and 404/405 stay app-wide.
  await app.register(searchRoutes, { store, bodies });
  await app.register(cartRoutes, { store });
  await app.register(ucpRoutes, { store });
  metaRoutes(app, async () => {
    await store.db.query('select 1');
  });

  app.get('/assets/demo/:file', { schema: { hide: true } }, async (request, reply) => {
    const { file } = request.params as { file: string };
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

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) return;
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify({
    status,
    message: tooLarge ? 'Request header fields too large' : ErrorMessage.badRequest,
    description: tooLarge ? 'The request headers are too large.' : 'The request is not valid HTTP.',
  });
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A path that exists under another method answers 405 with Allow, not 404. */
function installMethodNotAllowed(app: FastifyInstance): void {
  const routes = FindMyWay();
  const methods = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const list = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of list) {
      if (method === 'HEAD') continue;
      const known = methods.get(route.url);
      if (known) known.add(method);
      else {
        methods.set(route.url, new Set([method]));
        routes.on('GET', route.url, () => {}, { url: route.url });
      }
    }
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404 === false) return done();
    const path = request.url.split('?')[0] ?? '/';
    const found = routes.find('GET', path);
    const allowed = found ? methods.get((found.store as { url: string }).url) : undefined;
    if (allowed && !allowed.has(request.method)) {
      const allow = [...allowed, ...(allowed.has('GET') ? ['HEAD'] : [])].join(', ');
      reply.header('allow', allow);
      sendError(reply, 405, ErrorMessage.methodNotAllowed, `${request.method} is not allowed here; use ${allow}.`);
      return; // the reply is sent: the request goes no further
    }
    done();
  });
}
