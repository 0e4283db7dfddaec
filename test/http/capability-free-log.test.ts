/**
 * The request log never holds a capability (issue 35, finding 3): a cart token, an approval link's token, a checkout's
 * or an order's id reach no line, whether the request matched its route or not: a wrong method, a doubled slash,
 * another case, a segment too many, a cross-origin preflight, a trailing slash, percent-encoding, a query. Requests go
 * over a real socket (node:http, which sends a path exactly as written) to a store whose log is captured.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../../src/store.js';
import { SHIP_TO, placeOrder } from '../helpers/orders.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

interface Answer {
  status: number;
  id: string;
}

/** Sends `path` as written (no URL normalisation) and reads the whole answer. */
function send(origin: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: hostname, port, method, path, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, id: String(response.headers['x-request-id']) }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

function variantId(store: Store, sku: string): number {
  const found = store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  if (!found) throw new Error(`no variant ${sku}`);
  return found.id;
}

/** Every character percent-encoded: how a client may spell a token so that no byte of it is written plainly. */
const percentEncoded = (text: string) => [...Buffer.from(text)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

for (const backend of backends) {
  describe(`the request log holds no capability (${backend.name})`, () => {
    const lines: string[] = [];
    let t: TestStore;
    let origin: string;
    before(async () => {
      t = await startTestStore(backend, {
        config: { logLevel: 'info' },
        app: {
          logger: { write: (line: string) => lines.push(line) },
          // A handler that answers twice: Fastify's warning about it names the request's URL.
          extend: (app) =>
            app.get('/test/sent-twice/:token', { config: { rateLimit: 'other' } }, (_request, reply) => {
              void reply.send('once');
              void reply.send('twice');
            }),
        },
      });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });
    after(() => t.close());

    it("a line Fastify writes with the request's URL in it (a reply sent twice) names the route, not the token", async () => {
      const token = 'Tok3nWrittenByFastifyItself0123456789abcdef';
      await send(origin, 'GET', `/test/sent-twice/${token}?also=${token}`);
      const warned = lines.filter((line) => line.includes('FST_ERR_REP_ALREADY_SENT'));
      assert.equal(warned.length, 1, lines.join(''));
      assert.ok(warned[0]!.includes('/test/sent-twice/:token'), warned[0]);
      assert.ok(!lines.join('').includes(token), lines.join(''));
    });

    it('no token or id of a real cart, checkout, approval link or order reaches any line, whatever the method or spelling of its path', async () => {
      const { store } = t;
      const added = await t.app.inject({ method: 'POST', url: '/cart/add.js', payload: { id: variantId(store, 'ESP-DEC-10'), quantity: 1 } });
      const cart = /cart=([^;]+)/.exec(String(added.headers['set-cookie']))![1]!;
      const lineItems = [{ variantId: variantId(store, 'ESP-LUN-10'), quantity: 1 }];
      const created = await store.checkouts.create(store.db, { lines: lineItems, buyer: { email: 'ada@example.com' }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
      const approval = asked.approval!.token;
      const checkout = created.view.record.id;
      const order = (await placeOrder(store, lineItems)).id;
      const secrets = { cart, approval, checkout, order };

      // The findings' requests, then every method on every route that takes a token or id, then spellings of each.
      const requests: [method: string, path: string, headers?: Record<string, string>][] = [
        ['PUT', `/checkout/approve/${approval}`],
        ['GET', `//checkout/approve/${approval}`],
        ['GET', `/Checkout/approve/${approval}`],
        ['PUT', `/cart/c/${cart}`],
        ['GET', `/cart/c/${cart}/x`],
        ['POST', `/checkouts/${checkout}`],
        ['OPTIONS', `/checkout/approve/${approval}`, { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST' }],
        ['OPTIONS', `/cart/c/${cart}`, { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' }],
        // A matched route: it takes the cart over, answering its new token in the cookie.
        ['POST', `/cart/c/${cart}`],
      ];
      const capabilityRoutes = [
        `/cart/c/${cart}`,
        `/checkout/approve/${approval}`,
        `/checkout/approve/${approval}/passkey`,
        `/checkouts/${checkout}`,
        `/orders/${order}`,
        `/orders/${order}/passkey`,
        `/orders/${order}/passkey/options`,
      ];
      for (const path of capabilityRoutes) for (const method of METHODS) requests.push([method, path]);
      for (const [name, secret] of Object.entries(secrets)) {
        const path = name === 'cart' ? `/cart/c/${secret}` : name === 'approval' ? `/checkout/approve/${secret}` : name === 'checkout' ? `/checkouts/${secret}` : `/orders/${secret}`;
        const [, first] = path.split('/');
        requests.push(
          ['GET', `${path}/`],
          ['GET', `${path}?again=${secret}`],
          ['GET', `${path}#${secret}`],
          ['GET', path.replace(secret, percentEncoded(secret))],
          ['GET', `${path}%2F`],
          ['GET', `${path};x`],
          ['GET', `${path}%zz`],
          ['GET', path.replace(`/${first}/`, `/${first!.toUpperCase()}/`)],
          ['GET', path.replace(`/${first}/`, `/${first}//`)],
          ['GET', `/${secret}`],
          ['DELETE', `${path}/more/segments`],
          ['POST', `/api/ucp/mcp/${secret}`],
          ['GET', `/api/ucp/mcp?token=${secret}`],
        );
      }

      const answered: Answer[] = [];
      for (const [method, path, headers] of requests) answered.push(await send(origin, method, path, headers));
      const [taken] = await store.db.query<{ handed_to: string }>('select handed_to from closed_cart_tokens where token = $1', [cart]);
      assert.ok(taken?.handed_to, 'POST /cart/c/{token} took the cart over');
      await t.app.close(); // every completion line is written

      const log = lines.join('');
      for (const [name, secret] of Object.entries({ ...secrets, 'taken cart': taken.handed_to })) {
        for (const spelling of [secret, percentEncoded(secret), secret.slice(-12)]) {
          assert.ok(!log.includes(spelling), `the ${name} (${spelling}) is in the log:\n${lines.filter((line) => line.includes(spelling)).join('')}`);
        }
      }
      // Each request has its completion line, and none was a failure of ours.
      const completed = new Map(lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'request completed').map((line) => [line.request_id, line]));
      for (const [index, { status, id }] of answered.entries()) {
        assert.ok(completed.has(id), `${requests[index]!.slice(0, 2).join(' ')}: a completion line`);
        assert.ok(status < 500, `${requests[index]!.slice(0, 2).join(' ')}: ${status}`);
      }
      // A wrong method is named by the route its path names; an unmatched path keeps only the words of the app's routes.
      const pathOf = (index: number) => completed.get(answered[index]!.id)!.path;
      assert.equal(pathOf(0), '/checkout/approve/:token');
      assert.equal(pathOf(1), '//checkout/approve/*');
      assert.equal(pathOf(2), '/*/approve/*');
      assert.equal(pathOf(3), '/cart/c/:token');
      assert.equal(pathOf(4), '/cart/c/*/*');
      assert.equal(pathOf(5), '/checkouts/:id');
      assert.equal(pathOf(6), '/checkout/approve/:token');
      assert.equal(pathOf(8), '/cart/c/:token');
    });
  });
}
