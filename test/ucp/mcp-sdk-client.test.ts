/**
 * The commerce endpoint driven by the MCP SDK's own clients over Streamable HTTP, v1 (MCP 2025-11-25: initialize) and
 * v2 (MCP 2026-07-28: server/discover, `_meta` on each request): tools/list, every tool through tools/call (the SDK
 * clients validate structuredContent against each outputSchema), and ping on 2025-11-25 (2026-07-28 removed it).
 * Every result also validates against the official UCP schemas.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import { agentMeta, startListeningStore, type ListeningStore } from './mcp-harness.js';
import { connectAgentClient, MCP_CLIENTS, type AgentClient } from './mcp-clients.js';
import { officialSchemaErrors, resultSchemaFor } from './official-schemas.js';

after(dropTestDatabases);

for (const backend of backends) {
  for (const { kind, label, protocolVersion } of MCP_CLIENTS) {
  describe(`${backend.name}: ${label} on /api/ucp/mcp`, () => {
    let store: ListeningStore;
    let client: AgentClient;
    let profiles: AgentProfileServer;

    before(async () => {
      profiles = await serveAgentProfiles(['2026-04-08']);
      store = await startListeningStore(backend);
      client = await connectAgentClient(kind, store.mcpUrl);
    });
    after(async () => {
      await client.close();
      await store.close();
      await profiles.close();
    });

    it(`the client and the store agree on ${protocolVersion}; the store names itself and says how to buy`, () => {
      assert.equal(client.protocolVersion(), protocolVersion);
      assert.equal(client.serverName(), 'storefront');
      assert.match(client.instructions() ?? '', /search_catalog/);
      assert.ok(client.statuses.every((status) => status === 200 || status === 202), String(client.statuses));
    });

    it('tools/list gives every tool a description, an inputSchema and an outputSchema', async () => {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      assert.deepEqual(names.sort(), [
        'cancel_cart',
        'cancel_checkout',
        'complete_checkout',
        'create_cart',
        'create_checkout',
        'get_cart',
        'get_checkout',
        'get_order',
        'get_product',
        'lookup_catalog',
        'search_catalog',
        'update_cart',
        'update_checkout',
      ]);
      for (const tool of tools) {
        assert.ok(tool.description && tool.description.length > 20, `${tool.name} description`);
        assert.equal(tool.inputSchema.type, 'object');
        assert.equal(tool.outputSchema?.type, 'object');
        assert.ok(tool.annotations, `${tool.name} annotations`);
      }
    });

    it('search_catalog finds products; its structuredContent and text content are the same UCP payload', async () => {
      const result = await client.callTool({ name: 'search_catalog', arguments: { catalog: { query: 'espresso' } } });
      const structured = result.structuredContent as any;
      assert.equal(result.isError, false);
      assert.deepEqual(officialSchemaErrors(resultSchemaFor('search_catalog', structured), structured), []);
      assert.deepEqual(JSON.parse((result.content as { type: string; text: string }[])[0]!.text), structured);
      assert.ok(structured.products.some((p: any) => p.handle === 'espresso-capsules'));
    });

    it('lookup_catalog and get_product answer with valid UCP payloads', async () => {
      const lookup = await client.callTool({ name: 'lookup_catalog', arguments: { catalog: { ids: ['hydration-drink-stick', 'ESP-CLA-10'] } } });
      assert.deepEqual(officialSchemaErrors(resultSchemaFor('lookup_catalog', lookup.structuredContent as any), lookup.structuredContent), []);
      assert.equal((lookup.structuredContent as any).products.length, 2);
      const product = await client.callTool({ name: 'get_product', arguments: { catalog: { id: 'sleep-capsules' } } });
      assert.deepEqual(officialSchemaErrors(resultSchemaFor('get_product', product.structuredContent as any), product.structuredContent), []);
      assert.equal((product.structuredContent as any).product.handle, 'sleep-capsules');
    });

    it('the cart tools create, read, replace and cancel one cart, from a variant id search returned', async () => {
      const found = await client.callTool({ name: 'search_catalog', arguments: { catalog: { query: 'sleep capsules' } } });
      const variant = (found.structuredContent as any).products[0].variants[0].id;
      const results = [];
      const created = await client.callTool({ name: 'create_cart', arguments: { cart: { line_items: [{ item: { id: variant }, quantity: 1 }] } } });
      const id = (created.structuredContent as any).id;
      results.push(['create_cart', created]);
      results.push(['get_cart', await client.callTool({ name: 'get_cart', arguments: { id } })]);
      results.push(['update_cart', await client.callTool({ name: 'update_cart', arguments: { id, cart: { line_items: [{ item: { id: variant }, quantity: 2 }] } } })]);
      results.push([
        'cancel_cart',
        await client.callTool({ name: 'cancel_cart', arguments: { meta: { 'idempotency-key': '6d1f3b4e-2a6c-4d8e-9f10-1a2b3c4d5e6f' }, id } }),
      ]);
      for (const [name, result] of results as [string, any][]) {
        assert.equal(result.isError, false, name);
        assert.equal(result.structuredContent.id, id, name);
        assert.deepEqual(officialSchemaErrors(resultSchemaFor(name, result.structuredContent), result.structuredContent), [], name);
      }
      assert.equal((results[2]![1] as any).structuredContent.line_items[0].quantity, 2);
    });

    it('a business outcome (unknown product) is a result with ucp.status error, not a JSON-RPC error', async () => {
      const result = await client.callTool({ name: 'get_product', arguments: { catalog: { id: 'no-such-product' } } });
      const structured = result.structuredContent as any;
      assert.equal(result.isError, true);
      assert.equal(structured.ucp.status, 'error');
      assert.equal(structured.messages[0].code, 'not_found');
      assert.equal(structured.messages[0].severity, 'unrecoverable');
      assert.deepEqual(officialSchemaErrors(resultSchemaFor('get_product', structured), structured), []);
    });

    it('an unknown tool and invalid arguments are JSON-RPC -32602 errors', async () => {
      // With a profile (a checkout tool needs one), so that only the arguments are at fault.
      const meta = agentMeta(profiles.profileUrl('2026-04-08'));
      await assert.rejects(client.callTool({ name: 'create_checkout', arguments: { meta } }), (error: any) => error.code === -32602);
      await assert.rejects(
        client.callTool({ name: 'search_catalog', arguments: { catalog: { pagination: { limit: 0 } } } }),
        (error: any) => error.code === -32602 && /pagination\.limit/.test(error.message),
      );
    });

    if (kind === 'v1') {
      it('ping answers an empty result', async () => {
        assert.deepEqual(await client.ping(), {});
      });
    }

    if (kind === 'v1') for (const version of ['2025-06-18', '2025-03-26']) {
      it(`a client speaking only ${version} gets ${version}`, async () => {
        const response = await fetch(store.mcpUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'old', version: '0' } },
          }),
        });
        assert.equal(response.status, 200);
        assert.equal(((await response.json()) as any).result.protocolVersion, version);
      });
    }

    if (kind === 'v1') it('a client asking for a version the server does not speak is offered the latest 2025 revision', async () => {
      const response = await fetch(store.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'older', version: '0' } },
        }),
      });
      assert.equal(((await response.json()) as any).result.protocolVersion, '2025-11-25');
    });
  });
  }
}
