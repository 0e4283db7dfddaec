/**
 * Rate limits on the commerce door: on by default, per client IP; a 429 carries Retry-After and a body
 * that is both the storefront Error and a JSON-RPC error (-32000, data.retry_after, id null: the call is counted
 * before its body is read). RATE_LIMIT=off lifts them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BUDGETS } from '../../src/http/rate-limit.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const headers = { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' };
const ping = (id: number) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'lookup_catalog', arguments: { catalog: { ids: ['SLP-60'] } } } });

for (const backend of backends) {
  describe(`${backend.name}: rate limits on the commerce endpoint`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(backend, { config: { rateLimit: true } });
    });
    after(() => test.close());

    it(`the MCP endpoint answers ${BUDGETS.mcp.max} calls a minute from one IP, then 429 with Retry-After`, async () => {
      for (let i = 0; i < BUDGETS.mcp.max; i++) {
        const response = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(i), remoteAddress: '203.0.113.7' });
        assert.equal(response.statusCode, 200, `call ${i}`);
      }
      const limited = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(4242), remoteAddress: '203.0.113.7' });
      assert.equal(limited.statusCode, 429);
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60);
      const body = JSON.parse(limited.body);
      assert.equal(body.status, 429);
      assert.equal(body.message, 'Too many requests');
      assert.equal(typeof body.description, 'string');
      assert.equal(body.jsonrpc, '2.0');
      assert.equal(body.id, null);
      assert.equal(body.error.code, -32000);
      assert.equal(body.error.data.retry_after, retryAfter);
    });

    it('a batch is refused (400, -32600) and counts as the one request it is: none of its calls run', async () => {
      const ip = '203.0.113.77';
      const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => JSON.parse(ping(i))));
      const refused = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: batch, remoteAddress: ip });
      assert.equal(refused.statusCode, 400);
      const body = JSON.parse(refused.body);
      assert.equal(body.status, 400);
      assert.equal(body.error.code, -32600);
      assert.ok(!Array.isArray(body));
      assert.equal(refused.headers['x-ratelimit-remaining'], String(BUDGETS.mcp.max - 1));
      const next = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(1), remoteAddress: ip });
      assert.equal(next.statusCode, 200);
      assert.equal(next.headers['x-ratelimit-remaining'], String(BUDGETS.mcp.max - 2));
    });

    it('another client IP still gets answers', async () => {
      const response = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(1), remoteAddress: '198.51.100.9' });
      assert.equal(response.statusCode, 200);
    });

    it(`the profile answers ${BUDGETS.profile.max} reads a minute from one IP, then the storefront 429`, async () => {
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
  });

  describe(`${backend.name}: RATE_LIMIT=off`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(backend, { config: { rateLimit: false } });
    });
    after(() => test.close());

    it('never answers 429', async () => {
      for (let i = 0; i <= BUDGETS.mcp.max; i++) {
        const response = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers, payload: ping(i), remoteAddress: '203.0.113.8' });
        assert.equal(response.statusCode, 200);
      }
    });
  });
}
