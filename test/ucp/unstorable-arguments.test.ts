/**
 * Arguments the store cannot keep, at the commerce door: a NUL character or an unpaired surrogate in any id, buyer
 * or address field (PostgreSQL refuses such text, and the error used to escape as HTTP 500 / -32603), and nesting
 * deeper than MAX_INPUT_DEPTH (10,000 levels used to overflow the stack in the idempotency hash: 500). Each is
 * -32602 naming the field, on the fast path and through the SDK, and changes nothing: the checkout is as it was,
 * no order, no idempotency key.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { MAX_INPUT_DEPTH } from '../../src/http/storable-input.js';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { variantId } from '../cart/shopper.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import { agentMeta, postRpc, startListeningStore, type ListeningStore, type RpcAnswer } from './mcp-harness.js';

after(dropTestDatabases);

const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const fulfillment = (address: object, option = 'standard') => ({ methods: [{ type: 'shipping', destinations: [address], groups: [{ selected_option_id: option }] }] });

const PATHS = [
  { name: 'fast path', params: {} },
  { name: 'SDK', params: { via: 'sdk' } },
] as const;

let rpcId = 1;
function call(url: string, name: string, args: unknown, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
  const raw: string[] = [];
  const body = JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name, arguments: args, ...params } }, (_key, value: unknown) =>
    value instanceof RawJson ? `\u0000raw${raw.push(value.text) - 1}` : value,
  );
  return postRpc(url, body.replace(/"\\u0000raw(\d+)"/g, (_match, index: string) => raw[Number(index)]!));
}

/** `depth` objects inside one another (the outermost counting as one) as JSON text: too deep for JSON.stringify. */
const nestedJson = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;

/** JSON text as an argument value: serialised into the call's body as it is. */
class RawJson {
  constructor(readonly text: string) {}
}

for (const backend of backends) {
  describe(`${backend.name}: arguments the store cannot keep`, () => {
    let t: ListeningStore;
    let profiles: AgentProfileServer;
    let meta: ReturnType<typeof agentMeta>;
    let checkoutId: string;
    before(async () => {
      t = await startListeningStore(backend);
      profiles = await serveAgentProfiles(['2026-08-25']);
      meta = agentMeta(profiles.profileUrl('2026-08-25'));
      const created = await call(t.mcpUrl, 'create_checkout', {
        meta,
        checkout: { line_items: [{ item: { id: String(variantId(t, 'ESP-RIS-10')) }, quantity: 1 }], buyer: { email: 'ada@example.com' }, fulfillment: fulfillment(ADDRESS) },
      });
      checkoutId = created.body.result.structuredContent.id;
    });
    after(async () => {
      await profiles.close();
      await t.close();
    });

    const state = async () => ({
      checkout: (await t.store.db.query('select status, buyer, destination, shipping_option, version from checkouts where id = $1', [checkoutId]))[0],
      checkouts: (await t.store.db.query<{ n: number }>('select count(*)::int as n from checkouts'))[0]!.n,
      orders: (await t.store.db.query<{ n: number }>('select count(*)::int as n from orders'))[0]!.n,
      keys: (await t.store.db.query<{ n: number }>('select count(*)::int as n from idempotency_keys'))[0]!.n,
    });

    /** The call is -32602 naming `path`, with nothing internal in it, and nothing changed. */
    async function assertRefused(name: string, args: unknown, path: string, problem: RegExp): Promise<void> {
      for (const { name: via, params } of PATHS) {
        const before = await state();
        const answer = await call(t.mcpUrl, name, args, params);
        const what = `${name} (${via}): ${answer.text.slice(0, 400)}`;
        assert.equal(answer.status, 200, what);
        assert.equal(answer.body.error?.code, -32602, what);
        assert.equal(answer.body.error.data.path, path, what);
        assert.ok(answer.body.error.message.includes(path), what);
        assert.match(answer.body.error.message, problem, what);
        assert.doesNotMatch(answer.text, /postgres|sql|invalid byte sequence|at \w+ \(|\.ts:\d+/i, what);
        assert.deepEqual(await state(), before, `${what}: nothing changed`);
      }
    }

    const texts: [string, string, RegExp][] = [
      ['a NUL', 'a\u0000b', /NUL character/],
      ['a lone surrogate', 'a\ud800b', /unpaired surrogate/],
    ];
    for (const [label, bad, problem] of texts) {
      it(`${label} in a checkout id (get, update, complete, cancel) or an order id is -32602 naming $.id`, async () => {
        const id = `chk_${bad}`;
        await assertRefused('get_checkout', { meta, id }, '$.id', problem);
        await assertRefused('update_checkout', { meta, id, checkout: { line_items: [] } }, '$.id', problem);
        await assertRefused('complete_checkout', { meta: { ...meta, 'idempotency-key': randomUUID() }, id }, '$.id', problem);
        await assertRefused('cancel_checkout', { meta: { ...meta, 'idempotency-key': randomUUID() }, id }, '$.id', problem);
        await assertRefused('get_order', { meta, id: `ord_${bad}` }, '$.id', problem);
        await assertRefused('cancel_cart', { meta: { 'idempotency-key': randomUUID() }, id: bad }, '$.id', problem);
      });

      it(`${label} in a buyer or address field of create or update is -32602 naming the field`, async () => {
        const line = [{ item: { id: String(variantId(t, 'ESP-RIS-10')) }, quantity: 1 }];
        await assertRefused('update_checkout', { meta, id: checkoutId, checkout: { line_items: line, buyer: { email: `ada${bad}@example.com` } } }, '$.checkout.buyer.email', problem);
        await assertRefused(
          'update_checkout',
          { meta, id: checkoutId, checkout: { line_items: line, fulfillment: fulfillment({ ...ADDRESS, street_address: `1 Main${bad} St` }) } },
          '$.checkout.fulfillment.methods[0].destinations[0].street_address',
          problem,
        );
        await assertRefused(
          'create_checkout',
          { meta, checkout: { line_items: line, buyer: { first_name: bad }, fulfillment: fulfillment(ADDRESS, `standard${bad}`) } },
          '$.checkout.buyer.first_name',
          problem,
        );
      });
    }

    it(`nesting deeper than ${MAX_INPUT_DEPTH} levels (10,000 here) is -32602 naming where, in any argument, the payment data included`, async () => {
      await assertRefused(
        'complete_checkout',
        { meta: { ...meta, 'idempotency-key': randomUUID() }, id: checkoutId, checkout: { payment: new RawJson(nestedJson(10_000)) } },
        `$.checkout.payment${'.a'.repeat(MAX_INPUT_DEPTH - 2)}`,
        new RegExp(`nested more than ${MAX_INPUT_DEPTH} levels`),
      );
      // At the limit it is an ordinary call (an ignored payment member): the checkout is asked to complete.
      const atLimit = await call(t.mcpUrl, 'complete_checkout', { meta: { ...meta, 'idempotency-key': randomUUID() }, id: checkoutId, checkout: { payment: new RawJson(nestedJson(MAX_INPUT_DEPTH - 2)) } });
      assert.equal(atLimit.body.result?.structuredContent?.status, 'requires_escalation', atLimit.text.slice(0, 400));
    });
  });
}
