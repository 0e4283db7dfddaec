/**
 * Fuzz, property 3: every storefront endpoint's query string and path segment (bad percent-encoding, NUL as %00, a
 * lone surrogate as %ED%A0%80, odd numbers, repeated and unknown keys), and the cart endpoints' bodies (JSON,
 * urlencoded, multipart, other types, none; arbitrary or a valid body with one field mutated) with a live cart's
 * cookie, none or a forged one. Every answer: never 5xx, JSON (errors the storefront Error `{status, message,
 * description}` with status the HTTP status), nothing internal in its text.
 *
 * The HTML pages (issue [pages]): `/`, `/collections/{h}?page=`, `/products/{h}?variant=&selling_plan=`,
 * `/search?q=&page=`, `/cart`, `/cart/c/{token}` and `/checkout`, as a browser, a script or a crawler asks; POST
 * /checkout with random form fields, from this store, another site or nowhere said; the cart's form posts as a
 * browser's navigation. Every answer: never 5xx, nothing internal, no script element a request put there, a page
 * answered as text/html; reading a page changes nothing and sets no cookie (the hand-off link too: taking its cart is
 * a POST); a refused post changes nothing, and no post to /checkout makes or changes a cart or sets
 * a cookie.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { CHECKOUT_FORM } from '../helpers/orders.js';
import { dropTestDatabases } from '../helpers/store.js';
import { assertNoLeak, assertNoUnstorableTextStored, assertPhonesStoredInE164, assertStorefrontError, backends, excerpt, fuzz, parseJson, startFuzzStore, withRequest, type FuzzStore } from './fuzz-harness.js';
import {
  assertOwnScripts,
  CART_WRITES,
  cartBody,
  checkoutBody,
  FORM_ORIGINS,
  GET_ROUTES,
  isForeign,
  PAGE_HEADERS,
  PAGE_ROUTES,
  pageQueryString,
  queryString,
  send,
  sendPage,
  urlText,
  validCartBodies,
  type CartBody,
  type CartWrite,
} from './storefront-requests.js';
import { variant } from './valid-calls.js';

after(dropTestDatabases);

/** Never 5xx, always JSON (an object), errors the storefront Error, nothing internal. */
export function assertStorefrontAnswer(answer: { status: number; raw: string }, what: string, echoed: string): void {
  try {
    assert.ok(answer.status < 500, `${what}: HTTP ${answer.status} ${excerpt(answer.raw)}`);
    assertNoLeak(answer.raw, what, echoed);
    const body = parseJson(answer.raw);
    assert.ok(typeof body === 'object' && body !== null && !Array.isArray(body), `${what}: HTTP ${answer.status}, not a JSON object: ${excerpt(answer.raw)}`);
    if (answer.status >= 400) assertStorefrontError(answer.status, body, what, answer.raw);
    else assert.equal(answer.status, 200, `${what}: HTTP ${answer.status} ${excerpt(answer.raw)}`);
  } catch (error) {
    throw withRequest(error, echoed);
  }
}

/** Known hard query strings, every run: NUL and a lone surrogate, percent-encoded, in each parameter. */
const HARD_QUERIES = ['q=%00', 'q=%ED%A0%80', 'q=a%', 'limit=%00', 'page=%ED%A0%80', 'product_id=%00', 'intent=%ED%A0%80', 'resources[type]=%00', '%ED%A0%80=1', '%00=%00'];

for (const backend of backends) {
  describe(`fuzz: storefront endpoints (${backend.name})`, () => {
    let t: FuzzStore;
    let variantIds: number[];
    let cookie: string;
    let lineKey: string;
    before(async () => {
      t = await startFuzzStore(backend);
      variantIds = ['ESP-RIS-10', 'HYD-LEMONLIME-10'].map((sku) => Number(variant(t, sku)));
      const added = await send(t.app, 'POST', '/cart/add.js', {
        body: { contentType: 'application/json', payload: JSON.stringify({ items: [{ id: variantIds[0], quantity: 1 }] }), kind: 'setup' },
      });
      assert.equal(added.status, 200, added.raw);
      cookie = `cart=${added.setCookie}`;
      lineKey = JSON.parse(added.raw).items[0].key;
    });
    after(() => t.close());

    const cookies = () => fc.constantFrom<string | undefined>(cookie, undefined, 'cart=0000', 'cart=%00', 'cart=%ED%A0%80', `${cookie}; cart=x`);

    it('GET endpoints: random query strings and path segments', async (c) => {
      const request = fc.record({
        route: fc.nat({ max: GET_ROUTES.length - 1 }),
        segment: urlText,
        query: queryString,
        cookie: cookies(),
      });
      const examples = HARD_QUERIES.flatMap((query) => GET_ROUTES.map((_, route) => ({ route, segment: '%00%ED%A0%80', query, cookie })));
      await fuzz(
        c,
        backend,
        request,
        async ({ route, segment, query, cookie: sent }) => {
          const url = `${GET_ROUTES[route]!(segment)}${query ? `?${query}` : ''}`;
          const answer = await send(t.app, 'GET', url, { cookie: sent });
          assertStorefrontAnswer(answer, `GET ${GET_ROUTES[route]!(':segment')}`, `GET ${url} cookie ${sent}`);
        },
        { weight: 2, examples },
      );
    });

    for (const route of CART_WRITES) {
      it(`POST ${route}: random bodies, query strings and cookies`, async (c) => {
        const valid = validCartBodies(variantIds, lineKey)[route as CartWrite];
        const request = fc.record({ body: cartBody(route, valid, variantIds), query: fc.oneof(fc.constant(''), queryString), cookie: cookies() });
        const json = (value: unknown): CartBody => ({ contentType: 'application/json', payload: JSON.stringify(value), kind: 'JSON, known hard' });
        const examples = [
          { body: json({ items: [{ id: variantIds[0], quantity: 1, properties: { 'a\u0000': '\ud800' } }], note: '\u0000', attributes: { '\ud800': 'x' } }), query: '', cookie },
          { body: json({ updates: { '\u0000': 1, [lineKey]: 1 }, note: '\ud800' }), query: '', cookie },
          { body: json({ id: `${lineKey}\u0000`, quantity: 1 }), query: '', cookie },
          { body: { contentType: 'application/json', payload: `{"items":${'['.repeat(10_000)}${']'.repeat(10_000)}}`, kind: 'JSON 10,000 deep' }, query: '', cookie },
          { body: { contentType: 'application/x-www-form-urlencoded', payload: 'id=%00&quantity=1&properties[%ED%A0%80]=%ED%A0%80&note=%00', kind: 'form, known hard' }, query: '', cookie },
        ];
        await fuzz(
          c,
          backend,
          request,
          async ({ body, query, cookie: sent }) => {
            const url = `${route}${query ? `?${query}` : ''}`;
            const answer = await send(t.app, 'POST', url, { cookie: sent, body, accept: 'application/json' });
            const described = `POST ${url} cookie ${sent} (${body.kind}) content-type ${body.contentType} body ${body.payload}`;
            assertStorefrontAnswer(answer, `POST ${route} (${body.kind})`, described);
          },
          { examples },
        );
      });
    }

    /** What a request may change: the carts, the checkouts (and their moves and approvals), the orders. */
    const state = async () =>
      (
        await t.store.db.query(
          `select (select count(*)::int from carts) as carts, (select coalesce(sum(version), 0)::int from carts) as cart_versions,
                  (select count(*)::int from checkouts) as checkouts, (select coalesce(sum(version), 0)::int from checkouts) as checkout_versions,
                  (select count(*)::int from checkout_transitions) as transitions, (select count(*)::int from checkout_approvals) as approvals,
                  (select count(*)::int from orders) as orders`,
        )
      )[0] as Record<string, number>;

    /** Never 5xx, nothing internal, no script a request put there; JSON answers as the storefront's. */
    const assertPageAnswer = (answer: { status: number; raw: string; contentType: string }, what: string, echoed: string) => {
      try {
        assert.ok(answer.status < 500, `${what}: HTTP ${answer.status} ${excerpt(answer.raw)}`);
        assertNoLeak(answer.raw, what, echoed);
        if (answer.contentType.startsWith('text/html')) assertOwnScripts(answer.raw, what);
        else if (answer.raw !== '') assertStorefrontAnswer(answer, what, echoed);
      } catch (error) {
        throw withRequest(error, echoed);
      }
    };

    it('the HTML pages: random paths, query strings, cookies and headers; reading changes nothing', async (c) => {
      const snapshot = t.store.catalog.snapshot;
      const ids = snapshot.products.flatMap((p) => [...p.variants.map((v) => String(v.id)), ...p.sellingPlanGroups.flatMap((g) => g.plans.map((plan) => String(plan.id)))]);
      const token = cookie.slice('cart='.length);
      const request = fc.record({
        route: fc.nat({ max: PAGE_ROUTES.length - 1 }),
        segment: fc.oneof({ weight: 3, arbitrary: urlText }, { weight: 1, arbitrary: fc.constantFrom(token, 'decaf-capsules', 'espresso-capsules', 'capsules', 'all') }),
        query: pageQueryString(ids),
        cookie: cookies(),
        headers: fc.constantFrom(...PAGE_HEADERS),
      });
      const search = PAGE_ROUTES.findIndex((route) => route('') === '/search');
      const handOff = PAGE_ROUTES.findIndex((route) => route('x') === '/cart/c/x');
      const examples = [
        ...['q=%00', 'q=%ED%A0%80', `q=${'a'.repeat(199)}%F0%9F%98%80`, 'q=%3C%2Fscript%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E', 'page=0', 'page=%ED%A0%80'].map((query) => ({
          route: search,
          segment: '',
          query,
          cookie,
          headers: PAGE_HEADERS[0]!,
        })),
        { route: handOff, segment: token, query: '', cookie: undefined, headers: PAGE_HEADERS[0]! },
      ];
      await fuzz(
        c,
        backend,
        request,
        async ({ route, segment, query, cookie: sent, headers }) => {
          const url = `${PAGE_ROUTES[route]!(segment)}${query ? `?${query}` : ''}`;
          const before = await state();
          const answer = await sendPage(t.app, 'GET', url, { cookie: sent, headers });
          const described = `GET ${url} cookie ${sent} headers ${JSON.stringify(headers)}`;
          assertPageAnswer(answer, `GET ${PAGE_ROUTES[route]!(':segment')}`, described);
          try {
            const isHandOff = url.startsWith('/cart/c/');
            // A page answers HTML (the hand-off answers a script's request with the Cart in JSON).
            if (answer.status === 200 && !isHandOff) assert.equal(answer.contentType, 'text/html; charset=utf-8', `a page answers HTML: ${excerpt(answer.raw)}`);
            if (isHandOff && answer.status === 303) assert.equal(answer.location, '/cart');
            // No read sets a cookie or changes anything: the hand-off link too (taking the cart is a POST).
            assert.deepEqual(answer.cookies, [], 'no cookie');
            assert.deepEqual(await state(), before, 'reading a page changes nothing');
          } catch (error) {
            throw withRequest(error, described);
          }
        },
        { weight: 2, examples },
      );
    });

    it('POST /checkout: random form fields, bodies, origins and cookies; a refused post changes nothing', async (c) => {
      // A cart of its own: the checkout these posts make and change is that cart's.
      const added = await send(t.app, 'POST', '/cart/add.js', {
        body: { contentType: 'application/json', payload: JSON.stringify({ items: [{ id: variantIds[0], quantity: 1 }] }), kind: 'setup' },
      });
      assert.equal(added.status, 200, added.raw);
      const checkoutCookie = `cart=${added.setCookie}`;
      const request = fc.record({
        body: checkoutBody,
        headers: fc.constantFrom(...FORM_ORIGINS),
        cookie: fc.constantFrom<string | undefined>(checkoutCookie, checkoutCookie, undefined, 'cart=0000', 'cart=CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC'),
      });
      const form = (fields: Record<string, string>): CartBody => ({
        contentType: 'application/x-www-form-urlencoded',
        payload: new URLSearchParams(fields).toString(),
        kind: 'form, known hard',
      });
      const own = FORM_ORIGINS[0]!;
      const examples = [
        { body: form(CHECKOUT_FORM), headers: own, cookie: checkoutCookie },
        { body: form({ ...CHECKOUT_FORM, email: 'x'.repeat(300) }), headers: own, cookie: checkoutCookie },
        { body: form({ ...CHECKOUT_FORM, zip: '\u0000', state: '\ud800' }), headers: own, cookie: checkoutCookie },
        { body: form({ ...CHECKOUT_FORM, phone: 'abc' }), headers: own, cookie: checkoutCookie },
        { body: form({ ...CHECKOUT_FORM, phone: '(415) 555-0100' }), headers: own, cookie: checkoutCookie },
        { body: form({ ...CHECKOUT_FORM, email: '<script>alert(1)</script>', city: '"><script>alert(1)</script>' }), headers: own, cookie: checkoutCookie },
        { body: form(CHECKOUT_FORM), headers: FORM_ORIGINS[3]!, cookie: checkoutCookie },
      ];
      await fuzz(
        c,
        backend,
        request,
        async ({ body, headers, cookie: sent }) => {
          const before = await state();
          const answer = await sendPage(t.app, 'POST', '/checkout', { cookie: sent, body, headers });
          const described = `POST /checkout cookie ${sent} headers ${JSON.stringify(headers)} (${body.kind}) content-type ${body.contentType} body ${body.payload}`;
          assertPageAnswer(answer, `POST /checkout (${body.kind})`, described);
          try {
            const after = await state();
            assert.deepEqual(answer.cookies, [], 'no cookie');
            assert.equal(after.carts, before.carts, 'no cart is made');
            assert.equal(after.cart_versions, before.cart_versions, 'no cart is changed');
            assert.equal(after.orders, before.orders, 'no order is placed');
            if (answer.status !== 303) assert.equal(answer.contentType, 'text/html; charset=utf-8', `a page: ${excerpt(answer.raw)}`);
            const approval = answer.status === 303 && /^\/checkout\/approve\/[A-Za-z0-9_-]{43}$/.test(answer.location ?? '');
            if (answer.status === 303 && !approval) assert.equal(answer.location, '/cart');
            if (!approval) assert.equal(after.approvals, before.approvals, 'no approval is asked for');
            // A refused post (another site, no cart, a body that is no form, a field too long, a checkout that
            // refuses) changes nothing; a 200 is the form again, the details kept, saying what is still needed.
            if (isForeign(headers)) assert.ok(answer.status >= 400 && answer.status < 500, `a post from another site is refused: HTTP ${answer.status}`);
            if ((answer.status === 303 && !approval) || answer.status >= 400) assert.deepEqual(after, before, 'a refused post changes nothing');
          } catch (error) {
            throw withRequest(error, described);
          }
        },
        { examples },
      );
    });

    it("the cart's form posts as a browser's navigation: a redirect to the cart page, or the cart page saying why not", async (c) => {
      const request = fc
        .record({
          route: fc.constantFrom(...CART_WRITES),
          headers: fc.constantFrom(...FORM_ORIGINS.slice(0, 3)),
          cookie: cookies(),
        })
        .chain((base) => cartBody(base.route, validCartBodies(variantIds, lineKey)[base.route as CartWrite], variantIds).map((body) => ({ ...base, body })));
      await fuzz(c, backend, request, async ({ route, headers, cookie: sent, body }) => {
        const path = route.replace(/\.js$/, '');
        const answer = await sendPage(t.app, 'POST', path, { cookie: sent, body, headers: { accept: 'text/html,application/xhtml+xml', ...headers } });
        const described = `POST ${path} cookie ${sent} headers ${JSON.stringify(headers)} (${body.kind}) content-type ${body.contentType} body ${body.payload}`;
        assertPageAnswer(answer, `POST ${path} (${body.kind})`, described);
        try {
          if (answer.status < 400) assert.equal(answer.location, '/cart', `a form post lands on the cart page: HTTP ${answer.status}`);
          else if (headers['sec-fetch-mode'] === 'navigate') assert.equal(answer.contentType, 'text/html; charset=utf-8', `a refusal is the cart page: ${excerpt(answer.raw)}`);
        } catch (error) {
          throw withRequest(error, described);
        }
      });
    });

    it('no control, bidi or invisible character sent above reached a cart, a checkout or an order', async () => {
      await assertNoUnstorableTextStored(t.store);
    });

    it('every phone sent above that was kept is stored in E.164', async () => {
      await assertPhonesStoredInE164(t.store);
    });
  });
}
