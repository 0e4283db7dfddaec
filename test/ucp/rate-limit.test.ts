/**
 * Rate limits on the commerce door: on by default, per client IP; a 429 carries Retry-After and a body
 * that is both the storefront Error and a JSON-RPC error (-32000, data.retry_after, id null: the call is counted
 * before its body is read). create_cart and create_checkout from line items count against the storefront's
 * cart-start budget, and are refused the same way (with the call's id) once it is spent. RATE_LIMIT=off lifts them.
 * create_checkout is called as an agent with a profile (served on loopback): the checkout tools need one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';

import { loadConfig } from '../../src/config.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import { agentMeta } from './mcp-harness.js';

after(dropTestDatabases);

let profiles: AgentProfileServer;
before(async () => {
  profiles = await serveAgentProfiles(['2026-04-08']);
});
after(() => profiles.close());
/** `meta` of an agent with a profile (a 2026-04-08 agent): the checkout tools need one. */
const agent = () => agentMeta(profiles.profileUrl('2026-04-08'));

/** Hourly budgets, small enough to spend quickly: none refills while the test runs. */
const { rateLimits } = loadConfig({ RATE_LIMITS: 'mcp=30/h,profile=10/h,cart-start=40/h' });
const BUDGETS = rateLimits.budgets;
/** The longest Retry-After a budget may give: the time one request's share of it takes to come back. */
const longestWait = (budget: { max: number; periodMs: number }) => Math.ceil(budget.periodMs / budget.max / 1000);

const headers = { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' };
const ping = (id: number) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'lookup_catalog', arguments: { catalog: { ids: ['SLP-60'] } } } });

/** A tools/call; `via: 'sdk'` (a params member the SDK ignores) keeps it off the fast path. */
const toolCall = (id: number, name: string, args: unknown, via?: 'sdk') =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(via ? { via } : {}) } });

function variantId(test: TestStore, sku = 'ESP-RIS-10'): string {
  const variant = test.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  assert.ok(variant, `variant ${sku}`);
  return String(variant.id);
}

/** Stored carts and checkouts: a refused start stores neither. */
async function storedRows(test: TestStore): Promise<{ carts: number; checkouts: number }> {
  const [rows] = await test.store.db.query<{ carts: number; checkouts: number }>(
    'select (select count(*)::int from carts) as carts, (select count(*)::int from checkouts) as checkouts',
  );
  return rows!;
}

/** A tool call's result (a business outcome, not an error). */
function toolResult(response: LightMyRequestResponse): any {
  assert.equal(response.statusCode, 200, response.body);
  const body = JSON.parse(response.body);
  assert.ok(body.result, response.body);
  assert.equal(body.result.isError, false, response.body);
  return body.result.structuredContent;
}

/** The commerce endpoint's 429 for a spent cart-start budget: the call's id, -32000 with data.retry_after = Retry-After. */
function assertStartRefused(response: LightMyRequestResponse, id: number): void {
  assert.equal(response.statusCode, 429, response.body);
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= longestWait(BUDGETS['cart-start']), `Retry-After ${retryAfter}`);
  assert.equal(response.headers['x-ratelimit-limit'], String(BUDGETS['cart-start'].max));
  assert.equal(response.headers['x-ratelimit-remaining'], '0');
  const body = JSON.parse(response.body);
  assert.equal(body.status, 429);
  assert.equal(body.message, 'Too many requests');
  assert.equal(typeof body.description, 'string');
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.id, id);
  assert.equal(body.error.code, -32000);
  assert.equal(body.error.message, 'Rate limit exceeded');
  assert.equal(body.error.data.code, 'rate_limit_exceeded');
  assert.equal(body.error.data.retry_after, retryAfter);
  assert.equal(body.result, undefined);
}

for (const backend of backends) {
  describe(`${backend.name}: rate limits on the commerce endpoint`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(backend, { config: { rateLimit: true, rateLimits, allowInsecureProfiles: true } });
    });
    after(() => test.close());

    it(`the MCP endpoint answers ${BUDGETS.mcp.max} calls an hour from one IP, then 429 with Retry-After`, async () => {
      for (let i = 0; i < BUDGETS.mcp.max; i++) {
        const response = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(i), remoteAddress: '203.0.113.7' });
        assert.equal(response.statusCode, 200, `call ${i}`);
      }
      const limited = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(4242), remoteAddress: '203.0.113.7' });
      assert.equal(limited.statusCode, 429);
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= longestWait(BUDGETS.mcp));
      const body = JSON.parse(limited.body);
      assert.equal(body.status, 429);
      assert.equal(body.message, 'Too many requests');
      assert.equal(typeof body.description, 'string');
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, null);
      assert.equal(body.error.code, -32000);
      assert.equal(body.error.message, 'Rate limit exceeded');
      assert.equal(body.error.data.code, 'rate_limit_exceeded');
      assert.equal(body.error.data.retry_after, retryAfter);
    });

    it('a batch is refused (HTTP 200, -32600) and counts as the one request it is: none of its calls run', async () => {
      const ip = '203.0.113.77';
      const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => JSON.parse(ping(i))));
      const refused = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: batch, remoteAddress: ip });
      assert.equal(refused.statusCode, 200);
      const body = JSON.parse(refused.body);
      assert.equal(body.status, undefined);
      assert.equal(body.error.code, -32600);
      assert.ok(!Array.isArray(body));
      // The rest of the budget, one call less, is answered; then the calls are refused: the batch counted once.
      for (let i = 1; i < BUDGETS.mcp.max; i++) {
        const next = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(i), remoteAddress: ip });
        assert.equal(next.statusCode, 200, `call ${i + 1}`);
      }
      const over = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(0), remoteAddress: ip });
      assert.equal(over.statusCode, 429);
    });

    it('another client IP still gets answers', async () => {
      const response = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(1), remoteAddress: '198.51.100.9' });
      assert.equal(response.statusCode, 200);
    });

    it(`the profile answers ${BUDGETS.profile.max} reads an hour from one IP, then the storefront 429`, async () => {
      for (let i = 0; i < BUDGETS.profile.max; i++) {
        const response = await test.app.inject({ url: '/.well-known/ucp', remoteAddress: '192.0.2.44' });
        assert.equal(response.statusCode, 200);
      }
      const limited = await test.app.inject({ url: '/.well-known/ucp', remoteAddress: '192.0.2.44' });
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.deepEqual(Object.keys(JSON.parse(limited.body)).sort(), ['description', 'message', 'status']);
    });

    it("the endpoint's budget is its own: a storefront read from the same IP is still answered", async () => {
      const response = await test.app.inject({ url: '/products/decaf-capsules.js', remoteAddress: '203.0.113.7' });
      assert.equal(response.statusCode, 200);
    });

    describe(`the cart-start budget (${BUDGETS['cart-start'].max} new carts an hour per address), shared with the storefront`, () => {
      const remoteAddress = '203.0.113.90';
      const mcp = (id: number, name: string, args: unknown, via?: 'sdk') =>
        test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: toolCall(id, name, args, via), remoteAddress });
      const addWithoutCookie = () => test.app.inject({ method: 'POST', url: '/cart/add.js', payload: { id: Number(variantId(test)), quantity: 1 }, remoteAddress });
      const lineItems = () => [{ item: { id: variantId(test) }, quantity: 1 }];
      const cartIds: string[] = [];

      it('create_cart and create_checkout from line items each count one start with the storefront\'s; the last start is answered', async () => {
        const mcpCarts = 5;
        const storefrontAdds = 5;
        for (let i = 0; i < mcpCarts; i++) cartIds.push(toolResult(await mcp(i, 'create_cart', { cart: { line_items: lineItems() } })).id);
        for (let i = 0; i < storefrontAdds; i++) assert.equal((await addWithoutCookie()).statusCode, 200, `add ${i}`);
        assert.equal(toolResult(await mcp(10, 'create_checkout', { meta: agent(), checkout: { line_items: lineItems() } })).status, 'incomplete');
        // The rest of the budget but one as the storefront spends it cheaply: a cart read without a cookie hands out a new
        // token (each is a start, and none stores a cart, so the test does not write hundreds of carts).
        const reads = BUDGETS['cart-start'].max - mcpCarts - storefrontAdds - 1 - 1;
        for (let i = 0; i < reads; i++) assert.equal((await test.app.inject({ url: '/cart.js', remoteAddress })).statusCode, 200, `read ${i}`);
        cartIds.push(toolResult(await mcp(11, 'create_cart', { cart: { line_items: lineItems() } })).id);
      });

      it('then create_cart (fast path and SDK) and create_checkout from line items are 429, -32000 with Retry-After, and store nothing', async () => {
        const before = await storedRows(test);
        assertStartRefused(await mcp(20, 'create_cart', { cart: { line_items: lineItems() } }), 20);
        assertStartRefused(await mcp(21, 'create_cart', { cart: { line_items: lineItems() } }, 'sdk'), 21);
        assertStartRefused(await mcp(22, 'create_checkout', { meta: agent(), checkout: { line_items: lineItems() } }), 22);
        assert.deepEqual(await storedRows(test), before);
      });

      it('the storefront counts the endpoint\'s starts: an add without a cookie is refused too', async () => {
        const before = await storedRows(test);
        const refused = await addWithoutCookie();
        assert.equal(refused.statusCode, 429);
        assert.equal(refused.headers['x-ratelimit-limit'], String(BUDGETS['cart-start'].max));
        assert.deepEqual(await storedRows(test), before);
      });

      it('carts that exist go on: get_cart, update_cart and a checkout of an existing cart are answered', async () => {
        const [first, last] = [cartIds[0]!, cartIds.at(-1)!];
        assert.equal(toolResult(await mcp(30, 'get_cart', { id: first })).id, first);
        const updated = toolResult(await mcp(31, 'update_cart', { id: first, cart: { line_items: [{ item: { id: variantId(test) }, quantity: 3 }] } }));
        assert.equal(updated.line_items[0].quantity, 3);
        assert.equal(toolResult(await mcp(32, 'get_cart', { id: last }, 'sdk')).id, last);
        assert.equal(toolResult(await mcp(33, 'create_checkout', { meta: agent(), checkout: { cart_id: first } })).status, 'incomplete');
      });

      it('another address still starts carts', async () => {
        const response = await test.app.inject({
          method: 'POST',
          url: '/api/ucp/mcp',
          headers,
          payload: toolCall(40, 'create_cart', { cart: { line_items: lineItems() } }),
          remoteAddress: '198.51.100.90',
        });
        assert.ok(toolResult(response).id);
      });
    });
  });

  describe(`${backend.name}: RATE_LIMIT=off`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(backend, { config: { rateLimit: false, rateLimits, allowInsecureProfiles: true } });
    });
    after(() => test.close());

    it('never answers 429', async () => {
      for (let i = 0; i <= BUDGETS.mcp.max; i++) {
        const response = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(i), remoteAddress: '203.0.113.8' });
        assert.equal(response.statusCode, 200);
      }
    });

    it('never counts cart starts: after more than the budget of new carts, create_cart and create_checkout are answered', async () => {
      const remoteAddress = '203.0.113.91';
      // New tokens handed out without storing carts, then carts through the commerce endpoint.
      for (let i = 0; i <= BUDGETS['cart-start'].max; i++) assert.equal((await test.app.inject({ url: '/cart.js', remoteAddress })).statusCode, 200);
      const mcp = (id: number, name: string, args: unknown) =>
        test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: toolCall(id, name, args), remoteAddress });
      const lineItems = [{ item: { id: variantId(test) }, quantity: 1 }];
      const before = await storedRows(test);
      for (let i = 0; i < 3; i++) assert.ok(toolResult(await mcp(i, 'create_cart', { cart: { line_items: lineItems } })).id);
      assert.equal(toolResult(await mcp(3, 'create_checkout', { meta: agent(), checkout: { line_items: lineItems } })).status, 'incomplete');
      assert.deepEqual(await storedRows(test), { carts: before.carts + 3, checkouts: before.checkouts + 1 });
    });
  });
}
