/**
 * Fuzz, property 3: every storefront endpoint's query string and path segment (bad percent-encoding, NUL as %00, a
 * lone surrogate as %ED%A0%80, odd numbers, repeated and unknown keys), and the cart endpoints' bodies (JSON,
 * urlencoded, multipart, other types, none; arbitrary or a valid body with one field mutated) with a live cart's
 * cookie, none or a forged one. Every answer: never 5xx, JSON (errors the storefront Error `{status, message,
 * description}` with status the HTTP status), nothing internal in its text.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { dropTestDatabases } from '../helpers/store.js';
import { assertNoLeak, assertStorefrontError, backends, excerpt, fuzz, parseJson, startFuzzStore, withRequest, type FuzzStore } from './fuzz-harness.js';
import { CART_WRITES, cartBody, GET_ROUTES, queryString, send, urlText, validCartBodies, type CartBody, type CartWrite } from './storefront-requests.js';
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
  });
}
