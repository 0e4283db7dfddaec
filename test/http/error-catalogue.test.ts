/**
 * One catalogue of error classes for both doors (src/http/errors.ts): the same HTTP status carries the same
 * `message` on the storefront and on the commerce endpoint (whose non-200 answers are 405 outside POST and 429);
 * 422 keeps the spec's classes (Errors) exactly. The JSON-RPC codes are the commerce door's own table and do not
 * enter the catalogue; every JSON-RPC error of a POST is HTTP 200 (the spec).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { STATUS_MESSAGE, UNPROCESSABLE_MESSAGES, errorBody } from '../../src/http/errors.js';
import { errorResponseBody } from '../../src/ucp/jsonrpc-errors.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { startProfileServer, type ProfileServer } from '../ucp/mcp-harness.js';

after(dropTestDatabases);

const SPEC_422 = ['Cart Error', 'Missing parameter error', 'Invalid parameter error'];

describe('the error catalogue', () => {
  it("keeps the spec's 422 classes exactly", () => {
    assert.deepEqual([...UNPROCESSABLE_MESSAGES].sort(), [...SPEC_422].sort());
    assert.equal(STATUS_MESSAGE[422], 'Invalid parameter error');
  });

  it('gives each status one message, the same in the storefront Error and the commerce error body', () => {
    for (const [key, message] of Object.entries(STATUS_MESSAGE)) {
      const status = Number(key);
      assert.equal(errorBody(status, 'x').message, message);
      assert.equal(errorResponseBody(status, 1, { code: -32000, message: 'JSON-RPC text' }).message, message, String(status));
    }
  });

  it('a 422 may carry another of the spec classes; no other status can carry a foreign message', () => {
    assert.equal(errorBody(422, 'x', 'Cart Error').message, 'Cart Error');
    assert.equal(errorBody(422, 'x', 'Missing parameter error').message, 'Missing parameter error');
    assert.equal(errorBody(422, 'x', 'Unprocessable entity').message, 'Invalid parameter error');
    assert.equal(errorBody(404, 'x', 'Cart Error').message, 'Not found');
  });
});

const MCP = { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' };
const rpc = (args: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_catalog', arguments: args } });

for (const backend of backends) {
  describe(`the same status, the same message, in both doors (${backend.name})`, () => {
    let t: TestStore;
    let profiles: ProfileServer;
    before(async () => {
      t = await startTestStore(backend, { config: { rateLimit: false, allowInsecureProfiles: true } });
      profiles = await startProfileServer({
        '/null.json': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('null'),
        '/broken.json': (_request, response) => response.writeHead(500).end(),
      });
    });
    after(async () => {
      await profiles.close();
      await t.close();
    });

    const storefront = async (method: 'GET' | 'POST', url: string, payload?: string, headers: Record<string, string> = {}) => {
      const response = await t.app.inject({ method, url, payload, headers: { 'content-type': 'application/json', ...headers } });
      return { status: response.statusCode, body: JSON.parse(response.body) };
    };
    const mcp = async (payload: string, headers: Record<string, string> = {}, method: 'POST' | 'GET' = 'POST') => {
      const response = await t.app.inject({ method, url: '/api/ucp/mcp', payload, headers: { ...MCP, ...headers } });
      return { status: response.statusCode, body: JSON.parse(response.body) };
    };

    it('each error status either door answers carries the catalogue message; the commerce door\'s JSON-RPC errors are HTTP 200', async () => {
      const storefrontAnswers = [
        await storefront('POST', '/cart/add.js', '{"items": ['),
        await storefront('GET', '/no/such/page'),
        await storefront('POST', '/products.json', '{}'),
        await storefront('POST', '/cart/add.js', JSON.stringify({ pad: 'x'.repeat(300 * 1024) })),
        await storefront('POST', '/cart/add.js', '<a/>', { 'content-type': 'application/xml' }),
        await mcp('', {}, 'GET'),
      ];
      const seen = new Set<number>();
      for (const { status, body } of storefrontAnswers) {
        assert.ok(status >= 400, JSON.stringify(body));
        assert.equal(body.status, status);
        assert.equal(body.message, STATUS_MESSAGE[status as keyof typeof STATUS_MESSAGE], `${status}: ${JSON.stringify(body)}`);
        seen.add(status);
      }
      assert.deepEqual([...seen].sort(), [400, 404, 405, 413, 415]);
      // The spec: a POST to the commerce endpoint answers 200 with the JSON-RPC envelope alone, whatever went wrong.
      const rpcAnswers = [
        await mcp('{"jsonrpc": '),
        await mcp('{"jsonrpc":"2.0","id":1,"method":"ping"}', { host: 'evil.example' }),
        await mcp('{"jsonrpc":"2.0","id":1,"method":"ping"}', { accept: 'text/event-stream' }),
        await mcp(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(300 * 1024) } })),
        await mcp('ping', { 'content-type': 'text/plain' }),
        await mcp(rpc({ meta: { 'ucp-agent': { profile: profiles.url('/broken.json') } }, catalog: {} })),
        await mcp(rpc({ meta: { 'ucp-agent': { profile: profiles.url('/null.json') } }, catalog: {} })),
      ];
      for (const { status, body } of rpcAnswers) {
        assert.equal(status, 200, JSON.stringify(body));
        assert.deepEqual(Object.keys(body).sort(), ['error', 'id', 'jsonrpc'], JSON.stringify(body));
        assert.equal(typeof body.error.code, 'number');
      }
      assert.equal(rpcAnswers.at(-2)!.body.error.data.code, 'profile_unreachable');
      assert.equal(rpcAnswers.at(-1)!.body.error.data.code, 'profile_malformed');
    });
  });
}
