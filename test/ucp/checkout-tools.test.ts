/**
 * The checkout tools through the MCP SDK's own client: an agent creates, updates and asks to complete a
 * checkout, and is answered requires_escalation with the approval link, never an order; the buyer's approval
 * (here through the domain, as the approval page calls it) completes it; get_checkout then shows completed and
 * get_order the order. Every answer validates against the official UCP schemas (checkout with the fulfillment
 * extension, order, error response). Idempotency keys on complete and cancel replay and conflict. The agent names
 * its profile (a 2026-04-08 agent, served on loopback) on every checkout and order call: they need one.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { variantId } from '../cart/shopper.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import { agentMeta, callTool, startListeningStore, type ListeningStore } from './mcp-harness.js';
import { OfficialSchema, officialSchemaErrors, resultSchemaFor } from './official-schemas.js';

after(dropTestDatabases);

const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };

/** The fulfillment of a create request (create view: type, destinations, groups' selected option). */
const shipping = (address: object | undefined, option?: string) => ({
  methods: [
    {
      type: 'shipping',
      ...(address ? { destinations: [address] } : {}),
      ...(option ? { groups: [{ selected_option_id: option }] } : {}),
    },
  ],
});

/** The same in an update request, whose view names the method's lines and the group (as the answer gave them). */
const shippingUpdate = (lineIds: string[], address: object, option: string) => ({
  methods: [{ id: 'shipping_1', type: 'shipping', line_item_ids: lineIds, destinations: [address], groups: [{ id: 'group_1', selected_option_id: option }] }],
});

for (const backend of backends) {
  describe(`checkout tools (${backend.name})`, () => {
    let t: ListeningStore;
    let client: Client;
    let profiles: AgentProfileServer;
    before(async () => {
      profiles = await serveAgentProfiles(['2026-04-08']);
      t = await startListeningStore(backend);
      client = new Client({ name: 'storefront-checkout-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(t.mcpUrl)));
    });
    after(async () => {
      await client.close();
      await t.close();
      await profiles.close();
    });

    const item = (sku = 'ESP-RIS-10') => String(variantId(t, sku));
    /** The arguments with the agent's profile in `meta` (merged into a `meta` that carries an idempotency key). */
    const asAgent = (args: Record<string, unknown>) => ({
      ...args,
      meta: { ...(args.meta as Record<string, unknown> | undefined), ...agentMeta(profiles.profileUrl('2026-04-08')) },
    });
    async function call(name: string, args: Record<string, unknown>): Promise<any> {
      const result = (await client.callTool({ name, arguments: asAgent(args) })) as { structuredContent: any; isError?: boolean };
      const structured = result.structuredContent;
      assert.deepEqual(officialSchemaErrors(resultSchemaFor(name, structured), structured), [], `${name}: ${JSON.stringify(structured).slice(0, 800)}`);
      return structured;
    }
    const onHand = (sku: string) => t.store.inventory.onHand(variantId(t, sku));
    const orderCount = async () => (await t.store.db.query<{ n: number }>('select count(*)::int as n from orders'))[0]!.n;

    it('tools/list offers the checkout tools and the profile advertises checkout, fulfillment, order and the payment handler', async () => {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      for (const name of ['create_checkout', 'get_checkout', 'update_checkout', 'complete_checkout', 'cancel_checkout', 'get_order']) assert.ok(names.includes(name), name);
      const profile = (await (await fetch(`${t.origin}/.well-known/ucp`)).json()) as any;
      assert.deepEqual(officialSchemaErrors(OfficialSchema.businessProfile, profile), []);
      for (const capability of ['dev.ucp.shopping.checkout', 'dev.ucp.shopping.fulfillment', 'dev.ucp.shopping.order']) {
        assert.ok(profile.ucp.capabilities[capability], capability);
      }
      assert.equal(profile.ucp.capabilities['dev.ucp.shopping.fulfillment'][0].extends, 'dev.ucp.shopping.checkout');
      const handlers = Object.entries(profile.ucp.payment_handlers) as [string, any[]][];
      assert.equal(handlers.length, 1);
      assert.match(handlers[0]![0], /\.manual_capture$/);
      assert.equal(handlers[0]![1][0].id, 'manual_capture');
    });

    it('a new checkout says what is missing, each with the path of its field, and becomes ready when nothing is', async () => {
      const created = await call('create_checkout', { checkout: { line_items: [{ item: { id: item() }, quantity: 2 }] } });
      assert.equal(created.status, 'incomplete');
      assert.equal(created.currency, 'USD');
      assert.equal(created.line_items[0].item.price * 2, created.line_items[0].totals.find((x: any) => x.type === 'total').amount);
      const paths = created.messages.map((m: any) => m.path).sort();
      assert.deepEqual(paths, ['$.buyer.email', '$.fulfillment.methods[0].destinations[0]', '$.fulfillment.methods[0].groups[0].selected_option_id']);
      assert.ok(created.continue_url.startsWith(`${t.store.config.baseUrl}/checkouts/`));
      assert.deepEqual(created.links.map((l: any) => l.type).sort(), ['privacy_policy', 'refund_policy', 'shipping_policy', 'terms_of_service']);
      assert.equal(created.totals.filter((x: any) => x.type === 'subtotal').length, 1);
      assert.equal(created.totals.filter((x: any) => x.type === 'total').length, 1);

      const updated = await call('update_checkout', {
        id: created.id,
        checkout: { line_items: [{ item: { id: item() }, quantity: 2 }], buyer: { email: 'ann@example.com' }, fulfillment: shippingUpdate(['li_1'], ADDRESS, 'standard') },
      });
      assert.equal(updated.status, 'ready_for_complete', JSON.stringify(updated.messages));
      assert.equal(updated.messages, undefined);
      const byType = Object.fromEntries(updated.totals.map((x: any) => [x.type, x.amount]));
      assert.equal(byType.total, byType.subtotal + byType.fulfillment + (byType.tax ?? 0));
      assert.equal(updated.fulfillment.methods[0].groups[0].selected_option_id, 'standard');

      // Full replacement: the buyer left out is cleared.
      const cleared = await call('update_checkout', { id: created.id, checkout: { line_items: [{ item: { id: item() }, quantity: 1 }], fulfillment: shippingUpdate(['li_1'], ADDRESS, 'express') } });
      assert.equal(cleared.status, 'incomplete');
      assert.deepEqual(cleared.messages.map((m: any) => m.path), ['$.buyer.email']);
    });

    it('complete_checkout never places an order: it escalates to the buyer with an approval link, and the approval completes it', async () => {
      const stockBefore = onHand('ESP-RIS-10');
      const ordersBefore = await orderCount();
      const created = await call('create_checkout', {
        checkout: { line_items: [{ item: { id: item() }, quantity: 3 }], buyer: { email: 'bo@example.com' }, fulfillment: shipping(ADDRESS, 'standard') },
      });
      assert.equal(created.status, 'ready_for_complete');
      const key = randomUUID();
      const payment = { instruments: [{ id: 'x', handler_id: 'manual_capture', type: 'card', credential: { type: 'token', token: 'SECRET-TOKEN' } }] };
      const asked = await call('complete_checkout', { meta: { 'idempotency-key': key }, id: created.id, checkout: { payment } });
      assert.equal(asked.status, 'requires_escalation');
      assert.deepEqual(
        asked.messages.filter((m: any) => m.code === 'buyer_approval_required').map((m: any) => [m.type, m.severity]),
        [['error', 'requires_buyer_review']],
      );
      assert.match(asked.continue_url, /\/checkout\/approve\/[A-Za-z0-9_-]{43,}$/);
      assert.equal(asked.order, undefined);
      assert.ok(!JSON.stringify(asked).includes('SECRET-TOKEN'), 'payment credentials are never echoed');
      assert.equal(await orderCount(), ordersBefore, 'no order from an agent');
      assert.equal(onHand('ESP-RIS-10'), stockBefore, 'no stock taken for an agent');

      // The key binds the whole arguments: the same ones (keys in any order) replay the answer; the same key with other
      // arguments (without the payment data, another id) is a conflict (-32000 idempotency_conflict, HTTP 200) and changes nothing.
      const again = await call('complete_checkout', { checkout: { payment }, id: created.id, meta: { 'idempotency-key': key } });
      assert.deepEqual(again, asked);
      for (const other of [{ id: created.id }, { id: 'chk_other', checkout: { payment } }]) {
        const conflict = await callTool(t.mcpUrl, 'complete_checkout', asAgent({ meta: { 'idempotency-key': key }, ...other }));
        assert.equal(conflict.status, 200, conflict.text);
        assert.equal(conflict.body.error.data.code, 'idempotency_conflict');
        assert.equal(conflict.body.error.code, -32000);
      }
      const unchanged = await call('get_checkout', { id: created.id });
      assert.equal(unchanged.status, 'requires_escalation');
      assert.equal(unchanged.continue_url, asked.continue_url);

      // No argument completes it: complete again with a new key gives a new link, still no order.
      const stillAsking = await call('complete_checkout', { meta: { 'idempotency-key': randomUUID() }, id: created.id });
      assert.equal(stillAsking.status, 'requires_escalation');
      assert.notEqual(stillAsking.continue_url, asked.continue_url);
      assert.equal(await orderCount(), ordersBefore);

      // The buyer approves on the store's page (the page calls this).
      const token = stillAsking.continue_url.split('/').pop();
      const pending = await t.store.checkouts.approvalState(t.store.db, token);
      assert.equal(pending.kind, 'pending');
      if (pending.kind !== 'pending') return;
      const placed = await t.store.checkouts.approve(t.store.db, token, pending.approval.formSecret, pending.approval.digest, { kind: 'none' });
      assert.equal(placed.kind, 'placed');

      const completed = await call('get_checkout', { id: created.id });
      assert.equal(completed.status, 'completed');
      assert.equal(completed.continue_url, undefined);
      assert.match(completed.order.permalink_url, /\/orders\/ord_[A-Za-z0-9_-]{22}$/);
      assert.equal(onHand('ESP-RIS-10'), stockBefore - 3);

      const order = await call('get_order', { id: completed.order.id });
      assert.equal(order.id, completed.order.id);
      assert.equal(order.checkout_id, created.id);
      assert.equal(order.line_items[0].quantity.total, 3);
      assert.deepEqual(order.totals, completed.totals);
      assert.match(order.messages[0].content, /pending/i);

      // Completed is immutable.
      const refused = await call('update_checkout', { id: created.id, checkout: { line_items: [{ item: { id: item() }, quantity: 1 }] } });
      assert.equal(refused.ucp.status, 'error');
      assert.equal(refused.messages[0].code, 'checkout_closed');
      const notCanceled = await call('cancel_checkout', { meta: { 'idempotency-key': randomUUID() }, id: created.id });
      assert.equal(notCanceled.ucp.status, 'error');
    });

    it('complete_checkout on an incomplete checkout keeps it incomplete and says what is missing; no link', async () => {
      const created = await call('create_checkout', { checkout: { line_items: [{ item: { id: item() }, quantity: 1 }] } });
      const asked = await call('complete_checkout', { meta: { 'idempotency-key': randomUUID() }, id: created.id });
      assert.equal(asked.status, 'incomplete');
      assert.ok(asked.messages.some((m: any) => m.path === '$.buyer.email'));
      assert.ok(!asked.continue_url.includes('/checkout/approve/'));
    });

    it('an update after the link was issued voids it; cancel_checkout cancels and replays', async () => {
      const created = await call('create_checkout', {
        checkout: { line_items: [{ item: { id: item() }, quantity: 1 }], buyer: { email: 'cy@example.com' }, fulfillment: shipping(ADDRESS, 'standard') },
      });
      const asked = await call('complete_checkout', { meta: { 'idempotency-key': randomUUID() }, id: created.id });
      const token = asked.continue_url.split('/').pop();
      const updated = await call('update_checkout', {
        id: created.id,
        checkout: { line_items: [{ item: { id: item() }, quantity: 2 }], buyer: { email: 'cy@example.com' }, fulfillment: shippingUpdate(['li_1'], ADDRESS, 'standard') },
      });
      assert.equal(updated.status, 'ready_for_complete');
      const state = await t.store.checkouts.approvalState(t.store.db, token);
      assert.equal(state.kind, 'closed');

      const key = randomUUID();
      const canceled = await call('cancel_checkout', { meta: { 'idempotency-key': key }, id: created.id });
      assert.equal(canceled.status, 'canceled');
      assert.equal(canceled.continue_url, undefined);
      const replay = await call('cancel_checkout', { meta: { 'idempotency-key': key }, id: created.id });
      assert.deepEqual(replay, canceled);
    });

    it('a checkout from a cart uses the cart’s lines, and the cart’s open checkout is answered again', async () => {
      const cart = (await client.callTool({ name: 'create_cart', arguments: { cart: { line_items: [{ item: { id: item('ESP-DEC-10') }, quantity: 2 }] } } })) as any;
      const cartId = cart.structuredContent.id as string;
      const first = await call('create_checkout', { checkout: { cart_id: cartId, line_items: [{ item: { id: item() }, quantity: 9 }] } });
      assert.deepEqual(first.line_items.map((l: any) => [l.item.id, l.quantity]), [[item('ESP-DEC-10'), 2]]);
      const second = await call('create_checkout', { checkout: { cart_id: cartId } });
      assert.equal(second.id, first.id);
      const unknown = await call('create_checkout', { checkout: { cart_id: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
      assert.equal(unknown.messages[0].code, 'not_found');
    });

    it('unknown ids and bad items are UCP error results; get_order never answers an order number', async () => {
      const missing = await call('get_checkout', { id: 'chk_nope' });
      assert.equal(missing.messages[0].code, 'not_found');
      const bad = await call('create_checkout', { checkout: { line_items: [{ item: { id: '0x2721' }, quantity: 1 }] } });
      assert.equal(bad.messages[0].path, '$.line_items[0].item.id');
      const unknownVariant = await call('create_checkout', { checkout: { line_items: [{ item: { id: '999999999' }, quantity: 1 }] } });
      assert.equal(unknownVariant.messages[0].code, 'not_found');
      const byNumber = await call('get_order', { id: '1001' });
      assert.equal(byNumber.messages[0].code, 'not_found');
    });
  });
}
