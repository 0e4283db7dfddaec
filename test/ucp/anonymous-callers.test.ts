/**
 * A caller that names no agent profile (no `meta["ucp-agent"]`) is anonymous: it may find products and keep a cart,
 * and nothing more. Every checkout and order tool refuses it with JSON-RPC -32001 `invalid_profile_url` (HTTP 200)
 * (its message names `meta["ucp-agent"].profile`) before anything is read or stored: no checkout, order or
 * idempotency key is written, and an existing checkout is left as it was. Without a profile there is no negotiation,
 * so leaving it out must not grant what a profile would be refused: an agent whose profile declares only the catalog
 * capabilities is answered `capabilities_incompatible` by create_checkout, and creates nothing either.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { variantId } from '../cart/shopper.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import {
  agentMeta,
  json,
  platformProfile,
  postRpc,
  startListeningStore,
  startProfileServer,
  type ListeningStore,
  type ProfileServer,
  type RpcAnswer,
} from './mcp-harness.js';

after(dropTestDatabases);

const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const FULFILLMENT = { methods: [{ type: 'shipping', destinations: [ADDRESS], groups: [{ selected_option_id: 'standard' }] }] };
const CATALOG_ONLY = '/catalog-only.json';

/** Both ways a call is served: the fast path, and the SDK's (an extra params member the SDK ignores keeps it off the fast path). */
const PATHS = [
  { name: 'fast path', params: {} },
  { name: 'SDK', params: { via: 'sdk' } },
] as const;

let rpcId = 1;
function tools(url: string, name: string, args: unknown, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
  return postRpc(url, { jsonrpc: '2.0', id: rpcId++, method: 'tools/call', params: { name, arguments: args, ...params } });
}

/** The answer is a tool result that is not an error (a UCP resource, `ucp.status` success). */
function assertAnswered(answer: RpcAnswer, what: string): any {
  assert.equal(answer.status, 200, `${what}: ${answer.text.slice(0, 600)}`);
  assert.ok(answer.body?.result, `${what}: ${answer.text.slice(0, 600)}`);
  assert.equal(answer.body.result.isError, false, `${what}: ${answer.text.slice(0, 600)}`);
  assert.equal(answer.body.result.structuredContent.ucp.status, 'success', what);
  return answer.body.result.structuredContent;
}

for (const backend of backends) {
  describe(`${backend.name}: anonymous callers`, () => {
    let t: ListeningStore;
    let profiles: AgentProfileServer;
    let catalogOnly: ProfileServer;
    /** A checkout open for change (incomplete), one waiting for the buyer, an order, and a live cart. */
    let openCheckout: string;
    let escalatedCheckout: string;
    let orderId: string;
    let cartId: string;

    const agent = () => agentMeta(profiles.profileUrl('2026-04-08'));
    const item = (sku = 'ESP-RIS-10') => String(variantId(t, sku));
    const call = (name: string, args: unknown, params: Record<string, unknown> = {}) => tools(t.mcpUrl, name, args, params);

    /** What the checkout and order tools could write or change: the rows of each table, and each checkout as it is. */
    async function written(): Promise<{ checkouts: number; orders: number; keys: number; states: string }> {
      const [counts] = await t.store.db.query<{ checkouts: number; orders: number; keys: number }>(
        `select (select count(*)::int from checkouts) as checkouts, (select count(*)::int from orders) as orders,
                (select count(*)::int from idempotency_keys) as keys`,
      );
      const states = await t.store.db.query<{ id: string; status: string; updated_at: unknown }>('select id, status, updated_at from checkouts order by id');
      return { ...counts!, states: JSON.stringify(states) };
    }

    before(async () => {
      profiles = await serveAgentProfiles(['2026-04-08']);
      catalogOnly = await startProfileServer({
        [CATALOG_ONLY]: json(platformProfile(['dev.ucp.shopping.catalog.search', 'dev.ucp.shopping.catalog.lookup'])),
      });
      t = await startListeningStore(backend);

      // An agent with a profile makes what the anonymous calls below name: checkouts and an order.
      const open = assertAnswered(await call('create_checkout', { meta: agent(), checkout: { line_items: [{ item: { id: item() }, quantity: 1 }] } }), 'create_checkout');
      openCheckout = open.id;
      const ready = { meta: agent(), checkout: { line_items: [{ item: { id: item() }, quantity: 1 }], buyer: { email: 'ann@example.com' }, fulfillment: FULFILLMENT } };
      const escalated = assertAnswered(await call('create_checkout', ready), 'create_checkout');
      escalatedCheckout = escalated.id;
      const asked = assertAnswered(await call('complete_checkout', { meta: { ...agent(), 'idempotency-key': randomUUID() }, id: escalatedCheckout }), 'complete_checkout');
      assert.equal(asked.status, 'requires_escalation');

      const bought = assertAnswered(await call('create_checkout', ready), 'create_checkout');
      const link = assertAnswered(await call('complete_checkout', { meta: { ...agent(), 'idempotency-key': randomUUID() }, id: bought.id }), 'complete_checkout');
      const token = String(link.continue_url).split('/').pop()!;
      const pending = await t.store.checkouts.approvalState(t.store.db, token);
      if (pending.kind !== 'pending') throw new Error(`the approval is ${pending.kind}`);
      const placed = await t.store.checkouts.approve(t.store.db, token, pending.approval.formSecret, pending.approval.digest, { kind: 'none' });
      if (placed.kind !== 'placed') throw new Error(`the approval was ${placed.kind}`);
      orderId = placed.order.id;

      cartId = assertAnswered(await call('create_cart', { cart: { line_items: [{ item: { id: item() }, quantity: 1 }] } }), 'create_cart').id;
    });
    after(async () => {
      await t?.close();
      await profiles?.close();
      await catalogOnly?.close();
    });

    /** Each checkout and order tool with arguments that are valid but for the missing profile (with and without a `meta`). */
    const anonymousCalls = (): [string, Record<string, unknown>][] => [
      ['create_checkout', { checkout: { line_items: [{ item: { id: item() }, quantity: 1 }] } }],
      ['create_checkout', { meta: {}, checkout: { line_items: [{ item: { id: item() }, quantity: 1 }], buyer: { email: 'bo@example.com' }, fulfillment: FULFILLMENT } }],
      ['create_checkout', { checkout: { cart_id: cartId } }],
      ['get_checkout', { id: openCheckout }],
      ['get_checkout', { meta: {}, id: escalatedCheckout }],
      ['update_checkout', { id: openCheckout, checkout: { line_items: [{ item: { id: item('ESP-DEC-10') }, quantity: 2 }], buyer: { email: 'cy@example.com' } } }],
      ['complete_checkout', { meta: { 'idempotency-key': randomUUID() }, id: openCheckout, checkout: { payment: {} } }],
      ['complete_checkout', { meta: { 'idempotency-key': randomUUID() }, id: escalatedCheckout }],
      ['cancel_checkout', { meta: { 'idempotency-key': randomUUID() }, id: openCheckout }],
      ['cancel_checkout', { meta: { 'idempotency-key': randomUUID() }, id: escalatedCheckout }],
      ['get_order', { id: orderId }],
      ['get_order', { meta: {}, id: orderId }],
    ];

    for (const path of PATHS) {
      it(`(${path.name}) every checkout and order tool without meta["ucp-agent"].profile: HTTP 200, -32001 invalid_profile_url, nothing read or stored`, async () => {
        const before = await written();
        for (const [name, args] of anonymousCalls()) {
          const what = `${name} ${JSON.stringify(args).slice(0, 120)}`;
          const answer = await call(name, args, path.params);
          assert.equal(answer.status, 200, `${what}: ${answer.text.slice(0, 600)}`);
          assert.equal(answer.body.jsonrpc, '2.0', what);
          assert.equal(answer.body.result, undefined, what);
          assert.equal(answer.body.error.code, -32001, what);
          assert.equal(answer.body.error.data.code, 'invalid_profile_url', what);
          assert.ok(String(answer.body.error.data.content).includes('meta["ucp-agent"].profile'), `${what}: ${answer.body.error.data.content}`);
          // Only the JSON-RPC envelope: no storefront Error fields beside it (the spec's 200).
          assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'id', 'jsonrpc'], what);
        }
        assert.deepEqual(await written(), before, 'no checkout, order or idempotency key was written or changed');
        const open = await t.store.checkouts.get(t.store.db, openCheckout);
        assert.equal(open?.view.record.status, 'incomplete');
        const escalated = await t.store.checkouts.get(t.store.db, escalatedCheckout);
        assert.equal(escalated?.view.record.status, 'requires_escalation');
      });
    }

    it('the catalog and cart tools still answer anonymous callers', async () => {
      const search = assertAnswered(await call('search_catalog', { catalog: { query: 'espresso' } }), 'search_catalog');
      assert.ok(search.products.length > 0);
      assert.equal(assertAnswered(await call('lookup_catalog', { catalog: { ids: ['ESP-RIS-10'] } }), 'lookup_catalog').products.length, 1);
      assert.equal(assertAnswered(await call('get_product', { meta: {}, catalog: { id: 'espresso-capsules' } }), 'get_product').product.handle, 'espresso-capsules');
      const cart = assertAnswered(await call('create_cart', { cart: { line_items: [{ item: { id: item() }, quantity: 1 }] } }), 'create_cart');
      assert.equal(assertAnswered(await call('get_cart', { id: cart.id }), 'get_cart').id, cart.id);
      const updated = assertAnswered(await call('update_cart', { id: cart.id, cart: { line_items: [{ item: { id: item() }, quantity: 3 }] } }), 'update_cart');
      assert.equal(updated.line_items[0].quantity, 3);
      const canceled = assertAnswered(await call('cancel_cart', { meta: { 'idempotency-key': randomUUID() }, id: cart.id }, { via: 'sdk' }), 'cancel_cart');
      assert.equal(canceled.id, cart.id);
    });

    it('a profile declaring only the catalog capabilities: create_checkout is a capabilities_incompatible error result, and creates nothing', async () => {
      const meta = agentMeta(catalogOnly.url(CATALOG_ONLY));
      // The profile negotiates: its capabilities are answered.
      assertAnswered(await call('search_catalog', { meta, catalog: { query: 'espresso' } }), 'search_catalog with the catalog-only profile');
      const before = await written();
      for (const args of [
        { meta, checkout: { line_items: [{ item: { id: item() }, quantity: 1 }] } },
        { meta, checkout: { cart_id: cartId } },
      ]) {
        for (const path of PATHS) {
          const answer = await call('create_checkout', args, path.params);
          assert.equal(answer.status, 200, answer.text.slice(0, 600));
          const result = answer.body.result;
          assert.equal(result.isError, true, answer.text.slice(0, 600));
          assert.equal(result.structuredContent.ucp.status, 'error');
          assert.deepEqual(
            result.structuredContent.messages.map((message: { code: string }) => message.code),
            ['capabilities_incompatible'],
          );
          assert.equal(result.structuredContent.id, undefined, 'no checkout');
        }
      }
      assert.deepEqual(await written(), before, 'no checkout was created');
    });
  });
}
