/**
 * The commerce endpoint as UCP clients call it: one raw JSON-RPC POST per call, `Accept: application/json`
 * only, no initialize, no session. Every tool, and every protocol error with its code and HTTP status.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import { agentMeta, callTool, postRpc, postWithHost, startListeningStore, type ListeningStore } from './mcp-harness.js';
import { answerSchemaErrors } from './official-schemas.js';

after(dropTestDatabases);

/** Every JSON-RPC error of a POST is HTTP 200 and the JSON-RPC envelope alone (the spec). */
function assertRpcError(answer: { status: number; body: any }, code: number) {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'id', 'jsonrpc'], JSON.stringify(answer.body));
  assert.equal(answer.body.jsonrpc, '2.0');
  assert.equal(answer.body.error.code, code);
  assert.equal(typeof answer.body.error.message, 'string');
}

/** An answer outside POST (405) is both the storefront Error and a JSON-RPC error. */
function assertDualError(answer: { status: number; body: any }, status: number, code: number) {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body.status, status);
  assert.equal(typeof answer.body.message, 'string');
  assert.equal(typeof answer.body.description, 'string');
  assert.equal(answer.body.jsonrpc, '2.0');
  assert.ok('id' in answer.body);
  assert.equal(answer.body.error.code, code);
  assert.equal(typeof answer.body.error.message, 'string');
}

for (const backend of backends) {
  describe(`${backend.name}: raw JSON-RPC on /api/ucp/mcp`, () => {
    let store: ListeningStore;
    let profiles: AgentProfileServer;
    before(async () => {
      profiles = await serveAgentProfiles(['2026-04-08']);
      store = await startListeningStore(backend);
    });
    after(async () => {
      await store.close();
      await profiles.close();
    });

    describe('tools without initialize, Accept: application/json only', () => {
      it('tools/list answers in application/json', async () => {
        const answer = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 'list', method: 'tools/list' });
        assert.equal(answer.status, 200);
        assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
        assert.equal(answer.body.id, 'list');
        assert.ok(answer.body.result.tools.length >= 3);
      });

      it('tools/list tolerates the UCP meta a UCP client sends with it', async () => {
        const answer = await postRpc(store.mcpUrl, {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/list',
          params: { arguments: { meta: { 'ucp-agent': { profile: 'https://agent.example/profile.json' } } } },
        });
        assert.equal(answer.status, 200);
        assert.ok(answer.body.result.tools.length >= 3);
      });

      const calls: [string, unknown][] = [
        ['search_catalog', { catalog: { query: 'drink stick', pagination: { limit: 1 } } }],
        ['search_catalog', { catalog: {} }],
        ['search_catalog', { catalog: { query: 'zzzzqqq' } }],
        ['lookup_catalog', { catalog: { ids: ['energy-drink-stick', 'SLP-120', 'no-such-id'] } }],
        ['get_product', { catalog: { id: 'espresso-capsules', selected: [{ name: 'Roast', label: 'Lungo' }] } }],
        ['get_product', { catalog: { id: 'no-such-product' } }],
        ['create_cart', { cart: { line_items: [{ item: { id: '42100000001' }, quantity: 1 }] } }],
        ['create_cart', { cart: { line_items: [{ item: { id: 'no-such-variant' }, quantity: 1 }] } }],
        ['get_cart', { id: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
        ['update_cart', { id: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', cart: { line_items: [] } }],
        ['cancel_cart', { meta: { 'idempotency-key': '1b4e28ba-2fa1-41d2-883f-0016d3cca427' }, id: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
      ];
      for (const [name, args] of calls) {
        it(`${name} ${JSON.stringify(args)} answers a UCP payload valid against the official schema`, async () => {
          const answer = await callTool(store.mcpUrl, name, args);
          assert.equal(answer.status, 200);
          const { structuredContent, content, isError } = answer.body.result;
          assert.deepEqual(answerSchemaErrors(name, structuredContent), []);
          assert.deepEqual(JSON.parse(content[0].text), structuredContent);
          assert.equal(isError, structuredContent.ucp.status === 'error');
          // An anonymous caller is answered in the newest release.
          assert.equal(structuredContent.ucp.version, '2026-08-25');
        });
      }

      it('the same call answers the same through the SDK as through the fast path', async () => {
        // An extra params member the SDK ignores keeps the call off the fast path.
        const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search_catalog', arguments: { catalog: { query: 'capsules' } } } };
        const fast = await postRpc(store.mcpUrl, call);
        const viaSdk = await postRpc(store.mcpUrl, { ...call, params: { ...call.params, via: 'sdk' } });
        assert.equal(viaSdk.status, 200);
        assert.equal(fast.text, viaSdk.text, 'byte for byte');
        const business = { ...call, params: { name: 'get_product', arguments: { catalog: { id: 'no-such-product' } } } };
        assert.equal((await postRpc(store.mcpUrl, business)).text, (await postRpc(store.mcpUrl, { ...business, params: { ...business.params, via: 'sdk' } })).text);
        const unknownFast = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'nope', arguments: {} } });
        const unknownSdk = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'nope', arguments: {}, via: 'sdk' } });
        assert.equal(unknownFast.text, unknownSdk.text);
        const badProfileSdk = await postRpc(store.mcpUrl, {
          jsonrpc: '2.0', id: 9, method: 'tools/call',
          params: { name: 'search_catalog', arguments: { meta: { 'ucp-agent': { profile: 'not a url' } }, catalog: {} }, via: 'sdk' },
        });
        assertRpcError(badProfileSdk, -32001);
        assert.equal(badProfileSdk.body.error.data.code, 'invalid_profile_url');
      });

      it('a _meta the SDK refuses (a progressToken that is an object) is refused, not run by the fast path', async () => {
        const answer = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'search_catalog', arguments: { catalog: {} }, _meta: { progressToken: {} } } });
        assertRpcError(answer, -32600);
        const fine = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'search_catalog', arguments: { catalog: {} }, _meta: { progressToken: 'p1' } } });
        assert.ok(fine.body.result, fine.text);
      });

      it('a bare tools/list answered from the prepared body is the SDK\'s answer byte for byte, whatever the id', async () => {
        for (const id of [1, 'list-2', 9_007_199_254_740_991]) {
          const prepared = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id, method: 'tools/list' });
          const viaSdk = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id, method: 'tools/list', params: {} });
          assert.equal(prepared.status, 200);
          assert.equal(prepared.text, viaSdk.text, String(id));
          assert.equal(prepared.body.id, id);
        }
      });

      it('ping answers {}', async () => {
        const answer = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'ping' });
        assert.deepEqual(answer.body, { jsonrpc: '2.0', id: 3, result: {} });
      });

      it('a notification is accepted with 202 and no body', async () => {
        const answer = await postRpc(store.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' });
        assert.equal(answer.status, 202);
        assert.equal(answer.text, '');
      });
    });

    describe('MCP 2026-07-28: stateless, `_meta` on every request', () => {
      const META = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
      };
      const modern = (id: number, method: string, params: Record<string, unknown> = {}, name?: string) =>
        postRpc(store.mcpUrl, { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } }, {
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
          ...(name ? { 'mcp-name': name } : {}),
        });

      it('server/discover names the revision, the tools capability and the instructions; cacheable', async () => {
        const answer = await modern(1, 'server/discover');
        assert.equal(answer.status, 200, answer.text);
        const { result } = answer.body;
        assert.deepEqual(result.supportedVersions, ['2026-07-28']);
        assert.ok(result.capabilities.tools);
        assert.match(result.instructions, /search_catalog/);
        assert.equal(result.resultType, 'complete');
        assert.equal(result.cacheScope, 'public');
        assert.ok(result.ttlMs > 0);
      });

      it('tools/list is the same list as 2025 clients get, cacheable by anyone for an hour', async () => {
        const answer = await modern(2, 'tools/list');
        const legacy = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
        assert.deepEqual(answer.body.result.tools, legacy.body.result.tools);
        assert.equal(answer.body.result.resultType, 'complete');
        assert.equal(answer.body.result.cacheScope, 'public');
        assert.equal(answer.body.result.ttlMs, 3_600_000);
      });

      it('a tools/call in the exact envelope (the fast path) answers what the SDK answers, byte for byte', async () => {
        const calls = [
          { name: 'search_catalog', arguments: { catalog: { query: 'capsules' } } },
          { name: 'get_product', arguments: { catalog: { id: 'no-such-product' } } },
          { name: 'nope', arguments: {} },
          { name: 'get_checkout', arguments: { id: 'chk_x' } },
        ];
        for (const [index, params] of calls.entries()) {
          const fast = await modern(20 + index, 'tools/call', params, params.name);
          const viaSdk = await modern(20 + index, 'tools/call', { ...params, via: 'sdk' }, params.name);
          assert.equal(fast.status, 200);
          assert.equal(fast.text, viaSdk.text, params.name);
        }
      });

      it('a tools/call whose headers are missing or name another tool is the SDK\'s to refuse (-32020): the tool does not run', async () => {
        const params = { name: 'create_cart', arguments: { cart: { line_items: [{ item: { id: 'no-such-variant' }, quantity: 1 }] } }, _meta: META };
        const body = { jsonrpc: '2.0', id: 30, method: 'tools/call', params };
        const cases: Record<string, string>[] = [
          { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'search_catalog' },
          { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' },
          {},
        ];
        for (const headers of cases) {
          const answer = await postRpc(store.mcpUrl, body, headers);
          assertRpcError(answer, -32020);
        }
      });

      it('subscriptions/listen: -32601 in JSON (the store sends no notifications), not an event stream', async () => {
        const answer = await modern(31, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
        assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
        assertRpcError(answer, -32601);
      });

      it('tools/call answers the same UCP payload as on 2025-11-25, with resultType', async () => {
        const args = { catalog: { query: 'capsules' } };
        const answer = await modern(3, 'tools/call', { name: 'search_catalog', arguments: args }, 'search_catalog');
        const legacy = await callTool(store.mcpUrl, 'search_catalog', args);
        assert.equal(answer.body.result.resultType, 'complete');
        assert.deepEqual(answer.body.result.structuredContent, legacy.body.result.structuredContent);
      });

      it('a header that contradicts the body, a missing _meta, initialize: JSON-RPC errors with HTTP 200', async () => {
        const mismatch = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: META } }, {
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
        });
        assertRpcError(mismatch, -32020);
        const noMeta = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
        assertRpcError(noMeta, -32602);
        assertRpcError(await modern(6, 'initialize', { protocolVersion: '2026-07-28', capabilities: {}, clientInfo: { name: 'x', version: '0' } }), -32601);
        const unsupported = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } }, { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' });
        assert.equal(unsupported.status, 200, unsupported.text);
        assert.ok(unsupported.body.error, unsupported.text);
      });
    });

    describe('JSON-RPC errors', () => {
      it('malformed JSON: HTTP 200, -32700', async () => {
        assertRpcError(await postRpc(store.mcpUrl, '{"jsonrpc": "2.0", "id": 1, "method": '), -32700);
      });

      it('an empty body: HTTP 200, -32700', async () => {
        assertRpcError(await postRpc(store.mcpUrl, ''), -32700);
      });

      it('JSON that is no JSON-RPC message: HTTP 200, -32600', async () => {
        assertRpcError(await postRpc(store.mcpUrl, { hello: 'world' }), -32600);
      });

      it('an unknown method: -32601', async () => {
        const answer = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'checkout/teleport' });
        assert.equal(answer.status, 200);
        assert.equal(answer.body.id, 4);
        assert.equal(answer.body.error.code, -32601);
      });

      it('an unknown tool: -32602 naming the tool', async () => {
        // With a profile (a checkout tool needs one), so that only the arguments are at fault.
        const answer = await callTool(store.mcpUrl, 'complete_checkout', { meta: agentMeta(profiles.profileUrl('2026-04-08')), id: 'x' });
        assert.equal(answer.body.error.code, -32602);
        assert.match(answer.body.error.message, /complete_checkout/);
      });

      const invalid: [string, unknown, RegExp][] = [
        ['search_catalog', {}, /catalog/],
        ['search_catalog', { catalog: { query: 42 } }, /query/],
        ['search_catalog', { catalog: { pagination: { limit: 0 } } }, /limit/],
        ['search_catalog', { catalog: { filters: { price: { min: -1 } } } }, /\$\.catalog\.filters\.price\.min/],
        ['search_catalog', { catalog: { pagination: { cursor: 'not-ours' } } }, /cursor/],
        ['lookup_catalog', { catalog: { ids: [] } }, /ids/],
        ['lookup_catalog', { catalog: { ids: Array.from({ length: 51 }, (_, i) => `id-${i}`) } }, /ids/],
        ['get_product', { catalog: { id: 7 } }, /id/],
        ['create_cart', { cart: { line_items: [{ item: { id: '42100000001' }, quantity: 0 }] } }, /quantity/],
        ['create_cart', { cart: {} }, /line_items/],
        ['get_cart', {}, /id/],
        ['update_cart', { id: 'x' }, /cart/],
        ['cancel_cart', { id: 'x' }, /meta/],
        ['cancel_cart', { id: 'x', meta: { 'idempotency-key': 'not-a-uuid' } }, /idempotency-key/],
      ];
      for (const [name, args, names] of invalid) {
        it(`invalid params for ${name} ${JSON.stringify(args).slice(0, 80)}: -32602 naming the field`, async () => {
          const answer = await callTool(store.mcpUrl, name, args);
          assert.equal(answer.status, 200);
          assert.equal(answer.body.error.code, -32602, JSON.stringify(answer.body));
          assert.match(answer.body.error.message + JSON.stringify(answer.body.error.data ?? {}), names);
        });
      }

      it('initialize with params the SDK refuses: -32602 naming the field, not the SDK\'s -32603 with its issue list', async () => {
        const answer = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
        assertRpcError(answer, -32602);
        assert.match(answer.body.error.message, /^Invalid params: params\.protocolVersion: /);
      });

      it('a number beyond a double (1e400, parsed as Infinity) is invalid params naming the field, not a quantity', async () => {
        for (const via of ['', ',"via":"sdk"']) {
          const answer = await postRpc(
            store.mcpUrl,
            `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_cart","arguments":{"cart":{"line_items":[{"item":{"id":"42100000001"},"quantity":1e400}]}}${via}}}`,
          );
          assert.equal(answer.status, 200);
          assert.equal(answer.body.error?.code, -32602, answer.text);
          assert.match(answer.body.error.message + JSON.stringify(answer.body.error.data ?? {}), /quantity/);
        }
      });

      const badProfiles: unknown[] = [
        { profile: 'not a url' }, { profile: '' }, { profile: '/relative/profile.json' }, { profile: 'http//agent.example' },
        { profile: 'ftp://agent.example/p.json' }, { profile: 'https://user:pw@agent.example/p.json' }, { profile: 'javascript:alert(1)' },
        { profile: 42 }, { profile: null }, {}, null, 'https://agent.example/p.json',
      ];
      for (const agent of badProfiles) {
        it(`a malformed agent profile ${JSON.stringify(agent)}: HTTP 200, -32001 invalid_profile_url (not -32602)`, async () => {
          for (const [name, args] of [
            ['search_catalog', { meta: { 'ucp-agent': agent }, catalog: {} }],
            ['create_cart', { meta: { 'ucp-agent': agent }, cart: {} }],
          ] as const) {
            const answer = await callTool(store.mcpUrl, name, args);
            assertRpcError(answer, -32001);
            assert.equal(answer.body.error.data.code, 'invalid_profile_url');
            assert.equal(typeof answer.body.error.data.content, 'string');
          }
        });
      }

      it('without ucp-agent the call stays anonymous', async () => {
        const answer = await callTool(store.mcpUrl, 'search_catalog', { meta: {}, catalog: { query: 'capsules' } });
        assert.equal(answer.status, 200);
        assert.equal(answer.body.result.structuredContent.ucp.status, 'success');
      });

      const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
      const createCart = (id: number) => ({
        jsonrpc: '2.0', id, method: 'tools/call',
        params: { name: 'create_cart', arguments: { cart: { line_items: [{ item: { id: '42100000001' }, quantity: 1 }] } } },
      });
      const batches: [string, unknown[], Record<string, string>][] = [
        ['an empty batch', [], {}],
        ['a batch of one', [ping], {}],
        ['a batch of calls', [createCart(1), createCart(2), createCart(3)], {}],
        ['a batch declared as MCP 2025-06-18', [ping, ping], { 'mcp-protocol-version': '2025-06-18' }],
        ['a batch declared as MCP 2025-03-26 (refused as well)', [ping, ping], { 'mcp-protocol-version': '2025-03-26' }],
        ['a batch of initialize', [{ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } }], {}],
        ['a batch of notifications', [{ jsonrpc: '2.0', method: 'notifications/initialized' }], {}],
      ];
      for (const [what, batch, headers] of batches) {
        it(`${what}: HTTP 200, -32600, one error object (no array)`, async () => {
          const answer = await postRpc(store.mcpUrl, batch, headers);
          assertRpcError(answer, -32600);
          assert.equal(answer.body.id, null);
          assert.match(answer.body.error.message, /batch/);
        });
      }

      it('a refused batch runs none of its calls', async () => {
        const carts = async () => (await store.store.db.query<{ count: number }>('select count(*)::int as count from carts'))[0]!.count;
        const before = await carts();
        const answer = await postRpc(store.mcpUrl, Array.from({ length: 5 }, (_, i) => createCart(100 + i)));
        assertRpcError(answer, -32600);
        assert.equal(await carts(), before);
      });

      it('a Host not allowed: HTTP 200, -32000 (DNS-rebinding protection)', async () => {
        const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
        assertRpcError(await postWithHost(store.mcpUrl, 'evil.example.com', ping), -32000);
        assertRpcError(await postWithHost(store.mcpUrl, 'evil.example.com:80', ping), -32000);
        assert.equal((await postWithHost(store.mcpUrl, 'store.test', ping)).status, 200, "BASE_URL's host is always allowed");
      });

      it('an Origin not allowed: HTTP 200, -32000; an allowed Origin passes', async () => {
        const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
        assertRpcError(await postRpc(store.mcpUrl, ping, { origin: 'http://evil.example.com' }), -32000);
        assertRpcError(await postRpc(store.mcpUrl, ping, { origin: 'null' }), -32000);
        assert.equal((await postRpc(store.mcpUrl, ping, { origin: store.origin })).status, 200);
      });

      for (const method of ['GET', 'DELETE']) {
        it(`${method}: HTTP 405 with a JSON body and Allow: POST`, async () => {
          const response = await fetch(store.mcpUrl, { method, headers: { accept: 'application/json, text/event-stream' } });
          const body = await response.json();
          assertDualError({ status: response.status, body }, 405, -32000);
          assert.equal(response.headers.get('allow'), 'POST');
        });
      }

      it('a client that does not accept JSON: HTTP 200, -32000', async () => {
        assertRpcError(await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, { accept: 'text/event-stream' }), -32000);
      });

      it('a body that is not JSON: HTTP 200, -32000', async () => {
        assertRpcError(await postRpc(store.mcpUrl, 'ping', { 'content-type': 'text/plain' }), -32000);
        assertRpcError(await postRpc(store.mcpUrl, '<a/>', { 'content-type': 'application/xml' }), -32000);
      });

      it('a body over the size limit: HTTP 200, -32000', async () => {
        const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(300 * 1024) } });
        assertRpcError(await postRpc(store.mcpUrl, big), -32000);
      });

      it('an unsupported MCP-Protocol-Version header: HTTP 200, -32000', async () => {
        const answer = await callTool(store.mcpUrl, 'search_catalog', { catalog: {} }, { 'mcp-protocol-version': '1999-01-01' });
        assertRpcError(answer, -32000);
      });

      it('nothing a client sends causes a 5xx, and no answer carries a stack or a path', async () => {
        const bodies: unknown[] = [
          null, 42, 'text', [], [1, 2], {}, { jsonrpc: '2.0' }, { jsonrpc: '1.0', id: 1, method: 'ping' },
          { jsonrpc: '2.0', id: {}, method: 'tools/call' }, { jsonrpc: '2.0', id: 1, method: 'tools/call' },
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: [] }, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 5 } },
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_catalog', arguments: [] } },
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_catalog', arguments: { catalog: { query: '\u0000'.repeat(5000) } } } },
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_product', arguments: { catalog: { id: '__proto__' } } } },
          { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'lookup_catalog', arguments: { catalog: { ids: ['constructor', 'toString'] } } } },
          { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 5 } },
          { jsonrpc: '2.0', id: 1, result: {} }, { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } },
          { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'nonsense' } },
          '{"__proto__": {"polluted": true}}', '{"constructor": {"prototype": {"polluted": true}}}',
        ];
        for (const body of bodies) {
          const answer = await postRpc(store.mcpUrl, typeof body === 'string' && body.startsWith('{') ? body : JSON.stringify(body));
          assert.ok(answer.status < 500, `${JSON.stringify(body).slice(0, 80)} -> ${answer.status} ${answer.text.slice(0, 200)}`);
          assert.doesNotMatch(answer.text, /\n\s+at |node_modules|\/src\/|\.ts:\d+/);
        }
        assert.equal(({} as any).polluted, undefined);
      });
    });
  });
}
