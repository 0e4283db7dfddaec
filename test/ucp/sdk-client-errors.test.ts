/**
 * The errors of the commerce door as an agent developer meets them, through the official MCP clients (v1 on MCP
 * 2025-11-25, v2 on 2026-07-28): each UCP error the door can give (a missing, unreachable or malformed agent profile;
 * a UCP version the store does not speak; an idempotency key reused with other arguments) reaches the client as its
 * protocol error (v1: McpError) with the JSON-RPC code and the UCP code in `data.code`, and travelled with HTTP 200
 * (the spec). A rate-limited call is the one exception: HTTP 429 with Retry-After, and `error.data.retry_after`.
 */
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError } from '@modelcontextprotocol/client';
import { loadConfig } from '../../src/config.js';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { agentMeta, json, platformProfile, postRpc, startListeningStore, startProfileServer, type ListeningStore, type ProfileServer } from './mcp-harness.js';
import { connectAgentClient, MCP_CLIENTS, type AgentClient } from './mcp-clients.js';

after(dropTestDatabases);

const ALL = ['dev.ucp.shopping.catalog.search', 'dev.ucp.shopping.catalog.lookup', 'dev.ucp.shopping.cart', 'dev.ucp.shopping.checkout'];

/** The error the client threw, checked to be the client's own protocol error class. */
async function protocolError(kind: 'v1' | 'v2', call: Promise<unknown>): Promise<{ code: number; data: any; message: string }> {
  try {
    await call;
  } catch (error) {
    assert.ok(kind === 'v1' ? error instanceof McpError : error instanceof ProtocolError, `${kind}: ${String(error)}`);
    return error as { code: number; data: any; message: string };
  }
  assert.fail('the call succeeded');
}

for (const backend of backends) {
  for (const { kind, label } of MCP_CLIENTS) {
    describe(`${backend.name}: ${label} reads every UCP error of the door`, () => {
      let store: ListeningStore;
      let profiles: ProfileServer;
      let client: AgentClient;

      before(async () => {
        profiles = await startProfileServer({
          '/agent.json': json(platformProfile(ALL)),
          '/null.json': json(null),
          '/old-version.json': json(platformProfile(ALL, '2026-01-11')),
          '/broken.json': (_request, response) => response.writeHead(500).end(),
        });
        // One cart start per client address this hour: the second create_cart is rate limited.
        const { rateLimits } = loadConfig({ BASE_URL: 'http://store.test', DATA_DIR: 'unused', RATE_LIMITS: 'cart-start=1/h' });
        store = await startListeningStore(backend, { rateLimit: true, rateLimits });
        client = await connectAgentClient(kind, store.mcpUrl);
      });
      after(async () => {
        await client.close();
        await store.close();
        await profiles.close();
      });

      /** Calls a tool expecting a protocol error; asserts the answer travelled with HTTP 200. */
      async function refused(name: string, args: Record<string, unknown>) {
        const error = await protocolError(kind, client.callTool({ name, arguments: args }));
        assert.equal(client.statuses.at(-1), 200, `${name}: HTTP ${client.statuses.at(-1)}`);
        return error;
      }

      const cases: [string, () => Record<string, unknown>, string][] = [
        ['no agent profile', () => ({}), 'invalid_profile_url'],
        ['an unreachable profile (500)', () => agentMeta(profiles.url('/broken.json')), 'profile_unreachable'],
        ['a malformed profile (JSON null)', () => agentMeta(profiles.url('/null.json')), 'profile_malformed'],
        ['a profile on a UCP version the store does not speak', () => agentMeta(profiles.url('/old-version.json')), 'version_unsupported'],
      ];
      for (const [what, meta, code] of cases) {
        it(`${what}: -32001 with data.code ${code}, HTTP 200`, async () => {
          const args = Object.keys(meta()).length ? { meta: meta() } : {};
          const error = await refused('get_checkout', { ...args, id: 'chk_missing' });
          assert.equal(error.code, -32001);
          assert.equal(error.data?.code, code);
          assert.equal(typeof error.data?.content, 'string');
        });
      }

      it('an idempotency key reused with other arguments: -32000 with data.code idempotency_conflict, HTTP 200', async () => {
        const key = randomUUID();
        const meta = { ...agentMeta(profiles.url('/agent.json')), 'idempotency-key': key };
        const first = await client.callTool({ name: 'cancel_checkout', arguments: { meta, id: 'chk_one' } });
        assert.equal(first.structuredContent.ucp.status, 'error', 'an unknown checkout: a business outcome, not a protocol error');
        const error = await refused('cancel_checkout', { meta, id: 'chk_two' });
        assert.equal(error.code, -32000);
        assert.equal(error.data?.code, 'idempotency_conflict');
      });

      it('a rate-limited call: HTTP 429 with Retry-After, and -32000 rate_limit_exceeded with data.retry_after', async () => {
        const found = await client.callTool({ name: 'search_catalog', arguments: { catalog: { query: 'espresso' } } });
        const line = { cart: { line_items: [{ item: { id: found.structuredContent.products[0].variants[0].id }, quantity: 1 }] } };
        // The budget is per client address and shared by both clients of a backend: the first start may be spent.
        await client.callTool({ name: 'create_cart', arguments: line }).catch(() => undefined);
        await assert.rejects(client.callTool({ name: 'create_cart', arguments: line }));
        assert.equal(client.statuses.at(-1), 429);
        const retryAfter = Number(client.lastHeaders()?.get('retry-after'));
        assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${retryAfter}`);
        // The same answer read raw: both retry signals, and the storefront Error beside the JSON-RPC error.
        const raw = await postRpc(store.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'create_cart', arguments: line } });
        assert.equal(raw.status, 429);
        assert.equal(raw.body.status, 429);
        assert.equal(raw.body.error.code, -32000);
        assert.equal(raw.body.error.data.code, 'rate_limit_exceeded');
        assert.equal(raw.body.error.data.retry_after, Number(raw.headers.get('retry-after')));
      });
    });
  }
}
