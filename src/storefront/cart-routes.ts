/**
 * Session cart routes, Shopify's AJAX cart: /cart.js (/cart.json), /cart/add.js, /cart/change.js,
 * /cart/update.js, /cart/clear.js, the same without `.js` as themes and the cart page post them (a plain HTML form
 * post lands on the cart page, /cart), and /cart/c/{token}, the continue_url of a cart: GET reads it (a browser sees
 * the cart and a button), POST takes it over (a new token in the cookie; a browser lands on the cart page). Thin
 * adapters: parse the body, call the cart service, answer the Cart and keep the `cart` cookie; the rules live in
 * cart.ts and cart-service.ts.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { ErrorMessage, StorefrontError, invalidParameter, notFound } from '../http/errors.js';
import { SESSION_CART } from './openapi-fragment.js';
import type { Store } from '../store.js';
import { CartError, lineTargetFromId, type CartView, type ItemToAdd } from '../cart/cart-service.js';
import { cartJson } from './cart-json.js';
import { parseId } from '../catalog/ids.js';
import { cartFromCookie, PER_CART, setCartCookie } from './cart-cookie.js';
import { cartPagesPolicy, sendCartPage } from './cart-page-routes.js';
import { sendPersonalPage } from './page-answers.js';
import { CART_PATH, cartLinkNotFoundPage } from './pages/cart-page.js';
import { cartHandedOverPage, cartLinkPage, cartLinkRefusedPage } from './pages/cart-link-page.js';
import { pageContext } from './pages/layout.js';
import { sameOriginCheck } from './same-origin.js';
import { formFields, indexedArray, urlencodedFields } from './form-body.js';
import {
  AddCartItemsBody,
  CartSchema,
  ChangeCartItemBody,
  UpdateCartBody,
  type AddCartItemsInput,
} from './cart-schemas.js';
import { formCoercion, installStrictBodyValidation, isFormRequest } from './body-validation.js';

const JSON_TYPE = 'application/json; charset=utf-8';
/** Multipart bypasses Fastify's body limit; these bound a FormData post (a product form is a dozen fields). */
const MULTIPART_LIMITS = { fields: 300, fieldNameSize: 300, fieldSize: 4096, files: 5, fileSize: 64 * 1024, parts: 310 };

const cartResponses = {
  200: Type.Ref('Cart'),
  422: Type.Ref('Error'),
  429: Type.Ref('Error'),
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** AJAX callers get JSON; a plain HTML form post to a non-.js route is redirected to the cart (Shopify's behaviour). */
function wantsJson(request: FastifyRequest): boolean {
  const requestedWith = request.headers['x-requested-with'];
  const accept = request.headers.accept ?? '';
  return (
    (typeof requestedWith === 'string' && requestedWith.toLowerCase() === 'xmlhttprequest') ||
    /application\/(json|javascript)/i.test(accept)
  );
}

/**
 * A person's browser submitting a form or opening a link (Sec-Fetch-Mode: navigate), not a script: it is answered
 * with a page. A client that does not say so keeps the JSON answers themes have always had.
 */
function isNavigation(request: FastifyRequest): boolean {
  return request.headers['sec-fetch-mode'] === 'navigate' && !wantsJson(request);
}

/** A browser opening a link: a navigation, or a request asking for HTML first (a browser that sends no Sec-Fetch-*). */
function opensPage(request: FastifyRequest): boolean {
  if (wantsJson(request)) return false;
  const mode = request.headers['sec-fetch-mode'];
  if (mode !== undefined) return mode === 'navigate';
  return /^\s*text\/html\b/i.test(request.headers.accept ?? '');
}

/** The add body's three forms -> `{items: [...]}`: `items` as an array or a numbered form object, or one top-level item. */
function normalizeAddBody(body: unknown, form: boolean): unknown {
  if (body === undefined || body === null) return {};
  if (!isRecord(body)) return body;
  const { items, id, quantity, properties, selling_plan, ...rest } = body;
  const list = items !== undefined ? indexedArray(items) : id !== undefined ? [{ id, quantity, properties, selling_plan }] : undefined;
  if (!Array.isArray(list)) return list === undefined ? rest : { ...rest, items: list };
  return {
    ...rest,
    items: list.map((item) => {
      if (!isRecord(item)) return item;
      // Themes post empty inputs: a blank selling plan or properties means none, a blank form quantity the default 1.
      // A JSON quantity is taken as sent (only a missing one defaults), so `"quantity": null` is refused.
      const cleaned = { ...item };
      for (const field of ['quantity', 'selling_plan', 'properties'] as const) {
        const blank = cleaned[field] === '' || cleaned[field] === null;
        if (cleaned[field] === undefined || (blank && (form || field !== 'quantity'))) delete cleaned[field];
      }
      // Themes send the variant and selling plan ids as they read them from the form, digit strings, in JSON too.
      for (const field of ['id', 'selling_plan'] as const) {
        const value = cleaned[field];
        const parsed = typeof value === 'string' ? parseId(value) : undefined;
        if (parsed !== undefined) cleaned[field] = parsed;
      }
      return cleaned;
    }),
  };
}

function normalizeObjectBody(body: unknown): unknown {
  return body === undefined || body === null ? {} : body;
}

/** change.js: `id` names a line key or a variant id, and JSON callers send a variant id as a number. */
function normalizeChangeBody(body: unknown): unknown {
  const normalized = normalizeObjectBody(body);
  if (isRecord(normalized) && Number.isSafeInteger(normalized.id)) return { ...normalized, id: String(normalized.id) };
  return normalized;
}

function itemsToAdd(body: AddCartItemsInput): ItemToAdd[] {
  return body.items.map((item) => ({
    variantId: item.id,
    quantity: item.quantity,
    properties: item.properties,
    sellingPlanId: item.selling_plan ?? null,
  }));
}

export const cartRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const { carts, db } = store;
  const { baseUrl, cartMaxLineQuantity } = store.config;

  await app.register(cookie);
  await app.register(formbody, { parser: urlencodedFields });
  await app.register(multipart, { limits: MULTIPART_LIMITS });
  installLenientJsonParser(app);
  refuseTextBodies(app);
  installStrictBodyValidation(app);
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart()) request.body = await multipartFields(request, app.initialConfig.bodyLimit ?? 1024 * 1024);
  });
  app.addSchema(CartSchema);
  const coerceAddForm = formCoercion(AddCartItemsBody);
  const coerceChangeForm = formCoercion(ChangeCartItemBody);
  const coerceUpdateForm = formCoercion(UpdateCartBody);

  /**
   * Answers the cart, setting the cookie when the cart changed (renewal), is not the one the cookie named, or
   * `setCookie` says so. `redirectForms`: a plain HTML form post is redirected to the cart instead.
   */
  const answer = (request: FastifyRequest, reply: FastifyReply, view: CartView, options: { redirectForms?: boolean; setCookie?: boolean } = {}) => {
    const cookieToken = cartFromCookie(request);
    // A cookie naming no live cart was handed a new token: a start the onRequest check could not foresee.
    if (!options.setCookie && cookieToken !== undefined && view.token !== cookieToken) app.cartStarts.record(request);
    if (options.setCookie || view.changed || view.token !== cookieToken) setCartCookie(reply, view.token, baseUrl);
    reply.header('cache-control', 'no-store');
    if (options.redirectForms && !wantsJson(request)) return reply.redirect(CART_PATH, 302);
    return reply.type(JSON_TYPE).send(JSON.stringify(cartJson(view.cart, baseUrl, cartMaxLineQuantity)));
  };

  /**
   * Every cart read and change may hand out a new cart: each client address may start the 'cart-start' budget's
   * carts (src/http/rate-limit.ts, RATE_LIMITS). Before the body is read; a live cart's cookie is looked up only once the budget is spent.
   */
  const limitCartStarts = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = cartFromCookie(request);
    await app.cartStarts.admit(request, reply, token !== undefined, async () => (await carts.findCart(db, token)) !== undefined);
  };

  /** A refused cart change is a 422 Cart Error; the description is the service's, written for the shopper. */
  const cartErrors = async (run: () => Promise<CartView>): Promise<CartView> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof CartError) throw new StorefrontError(422, ErrorMessage.cartError, error.description);
      throw error;
    }
  };

  /** The paths of the form posts (no `.js`), whose refusals a person's browser sees as the cart page. */
  const formPaths = new Set<string>();

  /**
   * A form post from a person's browser that the cart refused (sold out, a quantity over the limit, a form it cannot
   * read) is answered with the cart page as it is, saying why (422, or the error's status); every other caller, and
   * every other route, gets the JSON error of the app's handler. A 429 stays JSON: a client over its budget costs no read.
   */
  app.setErrorHandler(async (error: FastifyError | StorefrontError, request, reply) => {
    const status = error.statusCode ?? 500;
    const formPost = request.method === 'POST' && formPaths.has(request.routeOptions.url ?? '');
    if (!formPost || !isNavigation(request) || status < 400 || status >= 500 || status === 429) throw error;
    const problem =
      error instanceof StorefrontError && error.errorClass === ErrorMessage.cartError
        ? error.description
        : 'The form could not be read, so nothing was changed.';
    const cart = await carts.findCart(db, cartFromCookie(request));
    return sendCartPage(reply, store, status, cart?.cart, problem);
  });

  /**
   * Registers the documented `.js` route (always JSON) and the undocumented form themes post to, which
   * answers JSON to AJAX callers and redirects a plain HTML form post to the cart page.
   */
  const post = <Body extends TSchema = TSchema>(
    path: string,
    options: RouteShorthandOptions & { schema: Record<string, unknown> & { body?: Body } },
    change: (request: FastifyRequest<{ Body: Static<Body> }>) => Promise<CartView>,
  ) => {
    // Fastify validated the body against `options.schema.body` before the handler runs: that makes it Static<Body>.
    const run = (request: FastifyRequest) => cartErrors(() => change(request as FastifyRequest<{ Body: Static<Body> }>));
    options = { ...options, onRequest: limitCartStarts, config: { rateLimit: 'cart-write', rateLimitKeys: PER_CART } };
    app.post(`${path}.js`, options, async (request, reply) => answer(request, reply, await run(request)));
    formPaths.add(path);
    app.post(path, { ...options, schema: { ...options.schema, hide: true } }, async (request, reply) =>
      answer(request, reply, await run(request), { redirectForms: true }),
    );
  };

  const getCartOptions = {
    onRequest: limitCartStarts,
    config: { rateLimit: 'cart-read' as const },
    schema: {
      operationId: 'getCart',
      summary: 'The session cart (cookie `cart`); without a live cart, a fresh empty one and a new cookie',
      tags: ['cart'],
      security: SESSION_CART,
      response: { 200: Type.Ref('Cart'), 429: Type.Ref('Error') },
    },
  };
  const getCart = async (request: FastifyRequest, reply: FastifyReply) => answer(request, reply, await carts.getCart(db, cartFromCookie(request)));
  app.get('/cart.js', getCartOptions, getCart);
  app.get('/cart.json', { ...getCartOptions, schema: { ...getCartOptions.schema, operationId: undefined, hide: true } }, getCart);

  post(
    '/cart/add',
    {
      schema: {
        operationId: 'addCartItems',
        summary: 'Add items to the cart: the same variant, properties and selling plan raise one line; all items or none',
        description:
          'Accepts JSON `{items:[…]}` or a single top-level `{id, quantity, properties, selling_plan}`, and the urlencoded and ' +
          'multipart forms themes post (`id=…&quantity=…`, `items[0][id]=…`, `properties[Name]=…`). Answers the updated Cart.',
        tags: ['cart'],
        security: SESSION_CART,
        body: AddCartItemsBody,
        response: cartResponses,
      },
      preValidation: async (request) => {
        request.body = normalizeAddBody(request.body, isFormRequest(request));
        coerceAddForm(request);
      },
    },
    (request) => carts.addItems(db, cartFromCookie(request), itemsToAdd(request.body)),
  );

  post(
    '/cart/change',
    {
      schema: {
        operationId: 'changeCartItem',
        summary: 'Set the quantity of one line, named by its key (`id`) or its 1-based place (`line`); 0 removes it',
        tags: ['cart'],
        security: SESSION_CART,
        body: ChangeCartItemBody,
        response: cartResponses,
      },
      preValidation: async (request) => {
        request.body = normalizeChangeBody(request.body);
        coerceChangeForm(request);
      },
    },
    async (request) => {
      const { body } = request;
      const target = body.line !== undefined ? { line: body.line } : body.id !== undefined ? lineTargetFromId(body.id) : undefined;
      if (!target) throw invalidParameter('Required parameter missing: id (a line key) or line (1-based).');
      return carts.changeLine(db, cartFromCookie(request), target, body.quantity);
    },
  );

  post(
    '/cart/update',
    {
      schema: {
        operationId: 'updateCart',
        summary: 'Set several quantities at once (`updates`: {line key or variant id: quantity}), the note and attributes',
        tags: ['cart'],
        security: SESSION_CART,
        body: UpdateCartBody,
        response: cartResponses,
      },
      preValidation: async (request) => {
        request.body = normalizeObjectBody(request.body);
        coerceUpdateForm(request);
      },
    },
    (request) => {
      const { body } = request;
      return carts.setQuantities(db, cartFromCookie(request), body.updates ?? {}, { note: body.note, attributes: body.attributes });
    },
  );

  post(
    '/cart/clear',
    {
      schema: {
        operationId: 'clearCart',
        summary: 'Remove every line (the note and attributes stay)',
        tags: ['cart'],
        security: SESSION_CART,
        response: cartResponses,
      },
    },
    (request) => carts.clear(db, cartFromCookie(request)),
  );

  const linkParams = Type.Object({ token: Type.String({ description: 'Cart.token' }) });
  const fromThisStore = sameOriginCheck(baseUrl);
  const notFoundDescription = 'No live cart has this token; it may have expired. Start a new cart with POST /cart/add.js.';
  /** The 404 of a link whose cart is gone: a page saying why to a browser, the JSON Error to a script. */
  const noCartHere = (request: FastifyRequest, reply: FastifyReply, kind: 'handed_over' | 'none') => {
    if (!opensPage(request)) throw notFound(notFoundDescription);
    const context = pageContext(store.config);
    return sendPersonalPage(reply, 404, kind === 'handed_over' ? cartHandedOverPage(context) : cartLinkNotFoundPage(context), cartPagesPolicy(store));
  };
  const toCartPage = (reply: FastifyReply) => reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(CART_PATH, 303);

  // Opening the link only reads (RFC 9110: GET is safe): chat apps fetch a link to preview it before the buyer
  // clicks, and must not take the cart. Counted as a cart write, as taking it is: a token tried costs its cart's budget.
  app.get<{ Params: { token: string } }>(
    '/cart/c/:token',
    {
      config: { rateLimit: 'cart-write', rateLimitKeys: PER_CART },
      schema: {
        operationId: 'getCartByToken',
        summary: "A cart by its token (a commerce-protocol cart's continue_url), read only: the Cart, and nothing taken or set",
        description:
          'Opening the link changes nothing, so a link preview cannot take the cart. A script gets the Cart (404 when the token ' +
          'names no live cart, as after the cart was handed over, ordered or canceled). A browser (Sec-Fetch-Mode: navigate, or ' +
          'Accept: text/html first) gets a page showing what the cart holds and a button that takes it over (POST to this path); ' +
          'a browser whose `cart` cookie holds the cart already gets a 303 to the cart page, /cart; for no live cart, a 404 page ' +
          '(saying so when the cart was handed over to another browser).',
        tags: ['cart'],
        security: SESSION_CART,
        params: linkParams,
        response: { 200: Type.Ref('Cart'), 404: Type.Ref('Error'), 429: Type.Ref('Error') },
      },
    },
    async (request, reply) => {
      const link = await carts.cartLink(db, request.params.token, cartFromCookie(request));
      if (link.kind === 'handed_over' || link.kind === 'none') return noCartHere(request, reply, link.kind);
      if (opensPage(request)) {
        if (link.kind === 'held') return toCartPage(reply);
        return sendPersonalPage(reply, 200, cartLinkPage(pageContext(store.config), link.view.cart), cartPagesPolicy(store));
      }
      // The token is a credential for the cart: keep it out of Referer headers sent from the page.
      return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').type(JSON_TYPE).send(JSON.stringify(cartJson(link.view.cart, baseUrl, cartMaxLineQuantity)));
    },
  );

  app.post<{ Params: { token: string } }>(
    '/cart/c/:token',
    {
      config: { rateLimit: 'cart-write', rateLimitKeys: PER_CART },
      schema: {
        operationId: 'takeCartByToken',
        summary: "Take a cart over by its token (a commerce-protocol cart's continue_url): it moves to a new token, set as the `cart` cookie",
        description:
          'Whoever takes the cart gets it under a new token (the Cart\'s `token`, and the `cart` cookie), and the token in the ' +
          'link names no cart again (404 here and for every tool; a cookie holding it gets a new cart). A client whose cookie ' +
          'already holds the cart keeps it. A form or JSON body is not read. A browser posting the link page\'s form gets a 303 to the ' +
          'cart page, /cart; a form from another site is refused (403) and takes nothing; for no live cart, a 404 page in HTML ' +
          '(saying so when the cart was handed over to another browser) or the JSON Error.',
        tags: ['cart'],
        security: SESSION_CART,
        params: linkParams,
        response: { 200: Type.Ref('Cart'), 403: Type.Ref('Error'), 404: Type.Ref('Error'), 429: Type.Ref('Error') },
      },
    },
    async (request, reply) => {
      if (!fromThisStore(request)) {
        if (opensPage(request)) return sendPersonalPage(reply, 403, cartLinkRefusedPage(pageContext(store.config)), cartPagesPolicy(store));
        throw new StorefrontError(403, ErrorMessage.forbidden, 'This request was sent from another website, so it was not accepted.');
      }
      const handOver = await carts.handOver(db, request.params.token, cartFromCookie(request));
      if (handOver.kind === 'handed_over' || handOver.kind === 'none') return noCartHere(request, reply, handOver.kind);
      if (opensPage(request)) {
        setCartCookie(reply, handOver.view.token, baseUrl);
        return toCartPage(reply);
      }
      reply.header('referrer-policy', 'no-referrer');
      // Sets the cookie even when this client already holds the cart, renewing it.
      return answer(request, reply, handOver.view, { setCookie: true });
    },
  );
};

/**
 * JSON as Fastify parses it for the whole app, except that an empty body is `{}`: themes post clear.js with a
 * JSON type and no body. `__proto__` and `constructor.prototype` keys follow the app's one rule (stripped, as
 * the commerce door's bodies are), never a "not valid JSON" refusal.
 */
function installLenientJsonParser(app: FastifyInstance): void {
  const { onProtoPoisoning = 'remove', onConstructorPoisoning = 'remove' } = app.initialConfig;
  const parseJson = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, {});
    return parseJson(request, body as string, done);
  });
}

/**
 * The cart parses JSON, urlencoded and multipart bodies only. Fastify would also parse text/plain, as a string
 * the schema then refused with a misleading 422: it is 415 Unsupported media type, as every other type the
 * cart does not parse is. An empty text/plain body (fetch with `body: ""`) is a post without a body.
 */
function refuseTextBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    done(
      new StorefrontError(
        415,
        ErrorMessage.unsupportedMediaType,
        `Unsupported Content-Type: ${String(request.headers['content-type']).slice(0, 100)}. The cart takes JSON (application/json), ` +
          'a urlencoded form or multipart form data.',
      ),
    );
  });
}

/** A multipart body's text fields in order -> nested fields; file parts are read and ignored. */
async function multipartFields(request: FastifyRequest, bodyLimit: number): Promise<Record<string, unknown>> {
  if (Number(request.headers['content-length'] ?? 0) > bodyLimit) throw new StorefrontError(413, ErrorMessage.payloadTooLarge, 'The request body is too large.');
  const pairs: [string, string][] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        await part.toBuffer();
        continue;
      }
      if (part.valueTruncated || part.fieldnameTruncated) {
        throw new StorefrontError(413, ErrorMessage.payloadTooLarge, `The form field ${part.fieldname.slice(0, 100)} is too large.`);
      }
      pairs.push([part.fieldname, typeof part.value === 'string' ? part.value : String(part.value)]);
    }
  } catch (error) {
    if (error instanceof StorefrontError) throw error;
    const status = (error as { statusCode?: number }).statusCode;
    if (status === 413) throw new StorefrontError(413, ErrorMessage.payloadTooLarge, 'The form has too many fields or files, or one is too large.');
    throw new StorefrontError(400, ErrorMessage.badRequest, 'The multipart form body is malformed.');
  }
  return formFields(pairs);
}
