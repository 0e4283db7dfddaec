/**
 * tools/list stays small enough for an agent's context: lean input schemas of what each tool reads and lean output
 * schemas naming the UCP response (src/ucp/tools/tool-schemas.ts), not the official schemas made self-contained.
 * The input schemas are liberal (no id of a line, fulfillment method or group is required to update a checkout), and
 * a call with several bad arguments hears of all of them at once, each with its JSONPath.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { argumentProblems, updateCheckoutInput } from '../../src/ucp/tools/tool-schemas.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';
import { json, platformProfile, startProfileServer, type ProfileServer } from './mcp-harness.js';

const MAX_TOOLS_LIST_BYTES = 64 * 1024;
const HEADERS = { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' };

const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };

/** An update as an agent writes it knowing no ids: lines by variant, one shipping method, the chosen option. */
const updateWithoutIds = {
  line_items: [{ item: { id: '42100000001' }, quantity: 2 }],
  buyer: { email: 'ann@example.com' },
  fulfillment: { methods: [{ type: 'shipping', destinations: [{ type: 'shipping_address', ...ADDRESS }], groups: [{ selected_option_id: 'standard' }] }] },
};

const pglite = backends.find((backend) => backend.name === 'pglite')!;

describe('tools/list and tool arguments', () => {
  let test: TestStore;
  let profiles: ProfileServer;
  let nextId = 1;
  const post = async (body: Record<string, unknown>) => {
    const response = await test.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers: HEADERS, payload: JSON.stringify({ jsonrpc: '2.0', id: nextId++, ...body }) });
    return { status: response.statusCode, text: response.body, body: JSON.parse(response.body) };
  };
  /** tools/call as a UCP client posts it (the fast path), or with an extra params member the SDK ignores (the SDK's path). */
  const call = (name: string, args: unknown, via: 'fast' | 'sdk' = 'fast') =>
    post({ method: 'tools/call', params: { name, arguments: args, ...(via === 'sdk' ? { via: 'sdk' } : {}) } });

  before(async () => {
    test = await startTestStore(pglite, { config: { allowInsecureProfiles: true } });
    profiles = await startProfileServer({
      '/agent.json': json(
        platformProfile(['dev.ucp.shopping.catalog.search', 'dev.ucp.shopping.catalog.lookup', 'dev.ucp.shopping.cart', 'dev.ucp.shopping.checkout', 'dev.ucp.shopping.fulfillment', 'dev.ucp.shopping.order']),
      ),
    });
  });
  after(async () => {
    await profiles?.close();
    await test?.close();
  });

  it(`is at most ${MAX_TOOLS_LIST_BYTES} bytes of JSON for all tools, each with a description and object input and output schemas`, async () => {
    const { status, text, body } = await post({ method: 'tools/list' });
    assert.equal(status, 200);
    const tools = body.result.tools as { name: string; description: string; inputSchema: any; outputSchema: any }[];
    assert.equal(tools.length, 13);
    const bytes = Buffer.byteLength(text);
    assert.ok(bytes <= MAX_TOOLS_LIST_BYTES, `tools/list is ${bytes} bytes: ${tools.map((t) => `${t.name} ${JSON.stringify(t).length}`).join(', ')}`);
    // The MCP SDK's client validates structuredContent against outputSchema with a draft-07 Ajv: each must compile there.
    const clientAjv = new Ajv({ strict: false, validateSchema: false });
    for (const tool of tools) {
      assert.equal(typeof tool.description, 'string', tool.name);
      assert.ok(tool.description.length > 20, tool.name);
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema.type, 'object', tool.name);
      assert.match(tool.outputSchema.description, /UCP/, tool.name);
      assert.doesNotThrow(() => clientAjv.compile(tool.outputSchema), tool.name);
    }
  });

  it('an update_checkout without any id of a line, fulfillment method or group passes validation', async () => {
    assert.deepEqual(argumentProblems(updateCheckoutInput, { id: 'chk_unknown', checkout: updateWithoutIds }), []);
    const meta = { 'ucp-agent': { profile: profiles.url('/agent.json') } };
    for (const via of ['fast', 'sdk'] as const) {
      const answer = await call('update_checkout', { meta, id: 'chk_unknown', checkout: updateWithoutIds }, via);
      assert.notEqual(answer.body.error?.code, -32602, answer.text);
    }
    // The control: the same call with a bad quantity is refused by validation.
    const bad = { ...updateWithoutIds, line_items: [{ item: { id: '42100000001' }, quantity: 0 }] };
    const refused = await call('update_checkout', { meta, id: 'chk_unknown', checkout: bad });
    assert.equal(refused.body.error?.code, -32602, refused.text);
    assert.deepEqual(refused.body.error.data.errors, [
      { path: '$.checkout.line_items[0].quantity', message: '$.checkout.line_items[0].quantity must be at least 1.' },
    ]);
  });

  it('a call with several bad arguments gets all of them at once, each with its JSONPath (-32602)', async () => {
    const args = {
      meta: { 'idempotency-key': 'not-a-uuid' },
      cart: { line_items: [{ item: { id: 42100000001 }, quantity: 0 }, { item: {}, quantity: 'two' }, { quantity: 1 }] },
    };
    const expected = [
      '$.meta["idempotency-key"]',
      '$.cart.line_items[0].item.id',
      '$.cart.line_items[0].quantity',
      '$.cart.line_items[1].item.id',
      '$.cart.line_items[1].quantity',
      '$.cart.line_items[2].item',
    ];
    for (const via of ['fast', 'sdk'] as const) {
      const { status, body, text } = await call('create_cart', args, via);
      assert.equal(status, 200, text);
      assert.equal(body.error.code, -32602, text);
      const errors = body.error.data.errors as { path: string; message: string }[];
      assert.deepEqual(errors.map((e) => e.path).sort(), [...expected].sort(), text);
      for (const error of errors) assert.ok(error.message.startsWith(`${error.path} `) && error.message.endsWith('.'), error.message);
      assert.equal(body.error.data.path, errors[0]!.path);
      assert.ok(body.error.message.includes(errors[0]!.message), body.error.message);
      assert.match(body.error.message, /5 more problems/);
    }
    const quantity = (await call('create_cart', args)).body.error.data.errors.find((e: { path: string }) => e.path === '$.cart.line_items[1].quantity');
    assert.equal(quantity.message, '$.cart.line_items[1].quantity must be an integer.');
  });

  it('a missing argument is named with its path', async () => {
    const { body } = await call('search_catalog', {});
    assert.equal(body.error.code, -32602);
    assert.deepEqual(body.error.data.errors, [{ path: '$.catalog', message: '$.catalog is required.' }]);
  });
});
