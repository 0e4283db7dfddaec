/**
 * What a buyer and an agent see once an order is placed: the cart it was bought from is closed (the storefront
 * cookie gets a fresh empty cart, get_cart answers not found), and units sold beyond stock under a continue-selling
 * policy are visible at every step (a message on the checkout, a line on the approval page, the order's backordered
 * count, the order page, get_order's expectations) while stock stops at zero. The approval is made through the
 * domain, as the approval page calls it. Every UCP answer validates against the official schemas.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { serveAgentProfiles, type AgentProfileServer } from '../ucp/agent-profile-server.js';
import { agentMeta, injectToolCall } from '../ucp/mcp-harness.js';

after(dropTestDatabases);

const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const FULFILLMENT = { methods: [{ type: 'shipping', destinations: [ADDRESS], groups: [{ selected_option_id: 'standard' }] }] };

for (const backend of backends) {
  describe(`after the order (${backend.name})`, () => {
    let test: TestStore;
    let profiles: AgentProfileServer;
    before(async () => {
      // The agent names its profile (served on loopback): checkout and order tools need one.
      profiles = await serveAgentProfiles(['2026-08-25']);
      test = await startTestStore(backend, { config: { allowInsecureProfiles: true } });
    });
    after(async () => {
      await test.close();
      await profiles.close();
    });

    const call = (name: string, args: Record<string, unknown>) =>
      injectToolCall(test.app, name, { ...args, meta: { ...(args.meta as object | undefined), ...agentMeta(profiles.profileUrl('2026-08-25')) } });
    const variantOf = (sku: string) => {
      for (const product of test.store.catalog.snapshot.products) for (const variant of product.variants) if (variant.sku === sku) return variant.id;
      throw new Error(`no variant ${sku}`);
    };
    /** The agent asks to complete; the buyer approves what the approval page shows (through the domain). */
    async function completeAndApprove(checkoutId: string) {
      const escalated = await call('complete_checkout', { id: checkoutId, meta: { 'idempotency-key': randomUUID() } });
      assert.equal(escalated.status, 'requires_escalation');
      const token = new URL(escalated.continue_url).pathname.split('/').pop()!;
      const state = await test.store.checkouts.approvalState(test.store.db, token);
      assert.equal(state.kind, 'pending');
      if (state.kind !== 'pending') throw new Error('not pending');
      const page = await test.app.inject({ url: `/checkout/approve/${token}` });
      const outcome = await test.store.checkouts.approve(test.store.db, token, state.approval.formSecret, state.approval.digest, { kind: 'none' });
      assert.equal(outcome.kind, 'placed');
      if (outcome.kind !== 'placed') throw new Error('not placed');
      return { order: outcome.order, approvalPage: page.body };
    }

    it('the cart an order was bought from is closed: the cookie gets a fresh empty cart, get_cart answers not found', async () => {
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: String(variantOf('ESP-CLA-10')) }, quantity: 2 }] } });
      const before = JSON.parse((await test.app.inject({ url: '/cart.js', cookies: { cart: cart.id } })).body);
      assert.equal(before.item_count, 2);
      const checkout = await call('create_checkout', { checkout: { cart_id: cart.id, buyer: { email: 'closed@example.com' }, fulfillment: FULFILLMENT } });
      assert.equal(checkout.status, 'ready_for_complete');
      await completeAndApprove(checkout.id);

      const browser = JSON.parse((await test.app.inject({ url: '/cart.js', cookies: { cart: cart.id } })).body);
      assert.equal(browser.item_count, 0);
      assert.deepEqual(browser.items, []);
      assert.notEqual(browser.token, cart.id);
      const gone = await call('get_cart', { id: cart.id });
      assert.equal(gone.ucp.status, 'error');
      assert.equal(gone.messages[0].code, 'not_found');
      // The checkout it became stays completed with its order.
      const completed = await call('get_checkout', { id: checkout.id });
      assert.equal(completed.status, 'completed');
    });

    it('units sold beyond stock are shown on the checkout, the approval page, the order and get_order, and stock stops at zero', async () => {
      const sku = 'ESP-RIS-10';
      const variantId = variantOf(sku);
      // The merchant sells it past zero (Shopify's "continue selling when out of stock"), as an import would set it.
      await test.store.db.transaction(async (tx) => {
        await tx.query(`update variants set inventory_policy = 'continue' where id = $1`, [variantId]);
        await tx.query('update catalog_version set version = version + 1');
      });
      await test.store.catalog.refresh(test.store.db);
      await test.store.inventory.setOnHand(test.store.db, sku, 2);
      const checkout = await call('create_checkout', {
        checkout: { line_items: [{ item: { id: String(variantId) }, quantity: 5 }], buyer: { email: 'later@example.com' }, fulfillment: FULFILLMENT },
      });
      assert.equal(checkout.status, 'ready_for_complete');
      const warning = checkout.messages.find((message: any) => message.code === 'backordered');
      assert.ok(warning, JSON.stringify(checkout.messages));
      assert.equal(warning.type, 'warning');
      assert.match(warning.content, /^3 of 5 .* ship later/);

      const { order, approvalPage } = await completeAndApprove(checkout.id);
      assert.match(approvalPage, /3 of 5 ship later \(backordered\)/);
      assert.equal(order.lines[0]!.backordered, 3);
      const [level] = await test.store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variantId]);
      assert.equal(level!.on_hand, 0);
      const [stored] = await test.store.db.query<{ backordered: number }>('select backordered from order_lines where order_id = $1', [order.id]);
      assert.equal(stored!.backordered, 3);

      const orderPage = await test.app.inject({ url: `/orders/${order.id}` });
      assert.match(orderPage.body, /3 of 5 ship later \(backordered\)/);
      const ucpOrder = await call('get_order', { id: order.id });
      const expectations = ucpOrder.fulfillment.expectations;
      assert.deepEqual(
        expectations.map((e: any) => e.line_items),
        [[{ id: order.lines[0]!.id, quantity: 2 }], [{ id: order.lines[0]!.id, quantity: 3 }]],
      );
      assert.match(expectations[1].description, /Backordered/);
    });

    it("the merchant's moves show on the order page and in get_order: shipments with tracking, refunds, a cancellation", async () => {
      const checkout = await call('create_checkout', {
        checkout: {
          line_items: [
            { item: { id: String(variantOf('ESP-CLA-10')) }, quantity: 2 },
            { item: { id: String(variantOf('ESP-DEC-10')) }, quantity: 1 },
          ],
          buyer: { email: 'moves@example.com' },
          fulfillment: FULFILLMENT,
        },
      });
      const { order } = await completeAndApprove(checkout.id);
      await test.store.orders.capture(test.store.db, order.id);
      await test.store.orders.fulfill(test.store.db, order.id, {
        lines: new Map([[order.lines[0]!.id, 2]]),
        trackingNumber: '1Z<b>9',
        trackingUrl: 'https://carrier.example/track?n=1Z9',
        carrier: 'UPS',
      });
      await test.store.orders.refund(test.store.db, order.id, 150, 'late <delivery>');
      await test.store.orders.cancel(test.store.db, order.id, 'out of decaf');

      const page = (await test.app.inject({ url: `/orders/${order.id}` })).body;
      assert.match(page, /<h2>Shipments<\/h2>/);
      assert.match(page, /via <bdi>UPS<\/bdi>, tracking <a href="https:\/\/carrier\.example\/track\?n=1Z9"><bdi>1Z&lt;b&gt;9<\/bdi><\/a>/);
      assert.match(page, /<h2>Refunds<\/h2>[\s\S]*\$1\.50 \(<bdi>late &lt;delivery&gt;<\/bdi>\)/);
      assert.match(page, /This order was canceled: <bdi>out of decaf<\/bdi>\./);
      assert.match(page, /2 of 2 shipped/);
      assert.match(page, /1 of 1 canceled/);

      const ucpOrder = await call('get_order', { id: order.id });
      const [shipped, canceled] = ucpOrder.line_items;
      assert.deepEqual([shipped.quantity, shipped.status], [{ original: 2, total: 2, fulfilled: 2 }, 'fulfilled']);
      assert.deepEqual([canceled.quantity, canceled.status], [{ original: 1, total: 0, fulfilled: 0 }, 'removed']);
      assert.deepEqual(ucpOrder.fulfillment.events.map((e: any) => [e.type, e.line_items, e.tracking_number, e.tracking_url, e.carrier]), [
        ['shipped', [{ id: shipped.id, quantity: 2 }], '1Z<b>9', 'https://carrier.example/track?n=1Z9', 'UPS'],
      ]);
      assert.deepEqual(
        ucpOrder.adjustments.map((a: any) => [a.type, a.status, a.totals, a.line_items, a.description]),
        [
          ['refund', 'completed', [{ type: 'total', amount: -150 }], undefined, 'late <delivery>'],
          ['cancellation', 'completed', undefined, [{ id: canceled.id, quantity: -1 }], 'out of decaf'],
        ],
      );
    });
  });
}
