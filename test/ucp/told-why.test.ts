/**
 * An agent is told why, on both backends: a checkout the buyer declined, one that expired, one canceled by the agent
 * or by the store, one whose items sold out as the buyer approved, and a completed one whose order the store canceled
 * each carry a message saying so (a code and plain words) in get_checkout, and the checkout's history (its events)
 * records the code; the order's cancellation is in get_order and in the order event the platform is sent. get_cart on
 * a cart that was checked out says so and names the checkout. complete_checkout's answer and the MCP instructions say
 * what the buyer does on the approval page: prove who they are, then pay as this store takes payment. Every answer
 * validates against the official UCP schemas of its release; the approval is made through the domain, as the
 * approval page calls it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { handlerCapture } from '../../src/payments/payment-handlers.js';
import { buyerStepsWords, paymentStepWords, ucpBuyerApprovalMessage } from '../../src/ucp/checkout/ucp-messages.js';
import { serverInstructions, type StoreIdentity } from '../../src/ucp/mcp/server-identity.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import { agentMeta, injectToolCall } from './mcp-harness.js';

after(dropTestDatabases);

const RELEASES = ['2026-04-08', '2026-08-25'] as const;
type Release = (typeof RELEASES)[number];
const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const FULFILLMENT = { methods: [{ type: 'shipping', destinations: [ADDRESS], groups: [{ selected_option_id: 'standard' }] }] };
/** Not the default ceiling (10): the answers follow CART_MAX_LINE_QUANTITY. */
const CEILING = 7;

for (const backend of backends) {
  describe(`an agent is told why (${backend.name})`, () => {
    let test: TestStore;
    let profiles: AgentProfileServer;
    before(async () => {
      profiles = await serveAgentProfiles([...RELEASES]);
      test = await startTestStore(backend, { config: { allowInsecureProfiles: true, cartMaxLineQuantity: CEILING } });
    });
    after(async () => {
      await test.close();
      await profiles.close();
    });

    const call = (name: string, args: Record<string, unknown>, release: Release = '2026-08-25') =>
      injectToolCall(test.app, name, { ...args, meta: { ...(args.meta as object | undefined), ...agentMeta(profiles.profileUrl(release)) } });
    const variantOf = (sku: string) => {
      for (const product of test.store.catalog.snapshot.products) for (const variant of product.variants) if (variant.sku === sku) return variant.id;
      throw new Error(`no variant ${sku}`);
    };
    const lastMove = async (id: string) => (await test.store.checkouts.transitions(test.store.db, id)).at(-1)!;

    async function readyCheckout(release: Release = '2026-08-25', sku = 'ESP-CLA-10'): Promise<any> {
      const checkout = await call(
        'create_checkout',
        { checkout: { line_items: [{ item: { id: String(variantOf(sku)) }, quantity: 1 }], buyer: { email: 'told@example.com' }, fulfillment: FULFILLMENT } },
        release,
      );
      assert.equal(checkout.status, 'ready_for_complete', JSON.stringify(checkout.messages));
      return checkout;
    }

    /** The agent asks to complete; answers the escalation and the approval the page shows. */
    async function escalate(id: string, release: Release = '2026-08-25') {
      const asked = await call('complete_checkout', { id, meta: { 'idempotency-key': randomUUID() } }, release);
      assert.equal(asked.status, 'requires_escalation');
      const token = new URL(asked.continue_url).pathname.split('/').pop()!;
      const state = await test.store.checkouts.approvalState(test.store.db, token);
      if (state.kind !== 'pending') throw new Error(`the approval is ${state.kind}`);
      return { asked, token, approval: state.approval };
    }

    it('a checkout the buyer declined answers canceled with checkout_declined first, in both releases; its history keeps the code', async () => {
      for (const release of RELEASES) {
        const checkout = await readyCheckout(release);
        const { token, approval } = await escalate(checkout.id, release);
        assert.equal((await test.store.checkouts.decline(test.store.db, token, approval.formSecret)).kind, 'declined');
        const read = await call('get_checkout', { id: checkout.id }, release);
        assert.equal(read.status, 'canceled');
        assert.deepEqual([read.messages[0].type, read.messages[0].code], ['info', 'checkout_declined'], release);
        assert.equal(
          read.messages[0].content,
          "The buyer declined this order on the store's approval page: nothing was ordered or charged, and this checkout cannot change any more. If the buyer still wants to buy, start a new checkout (create_checkout).",
        );
        assert.equal(read.messages.length, 1, 'a closed checkout lists nothing still to fix');
        const move = await lastMove(checkout.id);
        assert.deepEqual([move.to, move.actor, move.code], ['canceled', 'buyer', 'checkout_declined']);
      }
    });

    it('a checkout that expired answers canceled with checkout_expired; its history keeps the code', async () => {
      const checkout = await readyCheckout();
      await test.store.db.query(`update checkouts set expires_at = now() - interval '1 minute' where id = $1`, [checkout.id]);
      const read = await call('get_checkout', { id: checkout.id });
      assert.equal(read.status, 'canceled');
      assert.deepEqual([read.messages[0].type, read.messages[0].code], ['info', 'checkout_expired']);
      assert.match(read.messages[0].content, /^This checkout expired before the buyer placed the order: nothing was ordered or charged.*start a new checkout \(create_checkout\)\.$/);
      const move = await lastMove(checkout.id);
      assert.deepEqual([move.to, move.actor, move.code], ['canceled', 'system', 'checkout_expired']);
    });

    it('a checkout canceled by the agent, or by the store, says who canceled it (checkout_canceled)', async () => {
      const byAgent = await readyCheckout();
      const canceled = await call('cancel_checkout', { id: byAgent.id, meta: { 'idempotency-key': randomUUID() } });
      assert.equal(canceled.status, 'canceled');
      assert.equal(canceled.messages[0].code, 'checkout_canceled');
      assert.match(canceled.messages[0].content, /^This checkout was canceled with cancel_checkout: nothing was ordered or charged/);
      assert.deepEqual((await call('get_checkout', { id: byAgent.id })).messages, canceled.messages);

      const byStore = await readyCheckout('2026-04-08');
      await test.store.checkouts.cancel(test.store.db, byStore.id, 'merchant', 'canceled by the merchant');
      const read = await call('get_checkout', { id: byStore.id }, '2026-04-08');
      assert.deepEqual([read.status, read.messages[0].code], ['canceled', 'checkout_canceled']);
      assert.match(read.messages[0].content, /^The store canceled this checkout: nothing was ordered or charged/);
      const move = await lastMove(byStore.id);
      assert.deepEqual([move.actor, move.code], ['merchant', 'checkout_canceled']);
    });

    it('items that sell out as the buyer approves: the checkout is open again, sold_out_at_approval first, then what to change; a fix clears it', async () => {
      const sku = 'ESP-DEC-10';
      const { previous } = await test.store.inventory.setOnHand(test.store.db, sku, 1);
      try {
        const checkout = await readyCheckout('2026-08-25', sku);
        const { token, approval } = await escalate(checkout.id);
        await test.store.inventory.setOnHand(test.store.db, sku, 0);
        const outcome = await test.store.checkouts.approve(test.store.db, token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'refused');
        const read = await call('get_checkout', { id: checkout.id });
        assert.equal(read.status, 'incomplete');
        assert.deepEqual([read.messages[0].type, read.messages[0].code], ['warning', 'sold_out_at_approval']);
        assert.equal(
          read.messages[0].content,
          "Items sold out while this checkout waited for the buyer's approval, so nothing was ordered or charged and that approval link (continue_url) no longer works. Change the line items as the other messages say, then call complete_checkout for a new continue_url to give the buyer.",
        );
        assert.ok(read.messages.some((message: any) => message.code === 'out_of_stock'), JSON.stringify(read.messages));
        assert.equal((await lastMove(checkout.id)).code, 'sold_out_at_approval');

        // The agent changes the lines: the checkout is ready again and the warning is history.
        const fixed = await call('update_checkout', {
          id: checkout.id,
          checkout: {
            line_items: [{ item: { id: String(variantOf('ESP-CLA-10')) }, quantity: 1 }],
            buyer: { email: 'told@example.com' },
            fulfillment: { methods: [{ id: 'shipping_1', type: 'shipping', line_item_ids: ['li_1'], destinations: [ADDRESS], groups: [{ id: 'group_1', selected_option_id: 'standard' }] }] },
          },
        });
        assert.equal(fixed.status, 'ready_for_complete');
        assert.equal(fixed.messages, undefined);
      } finally {
        await test.store.inventory.setOnHand(test.store.db, sku, previous);
      }
    });

    it('an order the store canceled after it was placed says so in get_checkout, get_order and the order event sent to the platform', async () => {
      const checkout = await readyCheckout();
      // The platform asked to hear of the order (its profile's order webhook), as an agent's profile would set it.
      await test.store.db.query('update checkouts set webhook_url = $2 where id = $1', [checkout.id, 'https://platform.example/ucp/orders']);
      const { token, approval } = await escalate(checkout.id);
      const placed = await test.store.checkouts.approve(test.store.db, token, approval.formSecret, approval.digest, { kind: 'none' });
      if (placed.kind !== 'placed') throw new Error(`not placed: ${placed.kind}`);
      assert.equal((await call('get_checkout', { id: checkout.id })).messages, undefined, 'a placed order says nothing more');

      await test.store.orders.cancel(test.store.db, placed.order.id, 'The parcel was lost before it shipped.');
      const expected = `The store canceled order #${placed.order.number} after it was placed: The parcel was lost before it shipped.`;
      const read = await call('get_checkout', { id: checkout.id });
      assert.equal(read.status, 'completed');
      assert.deepEqual([read.messages[0].type, read.messages[0].code], ['info', 'order_canceled']);
      assert.ok(read.messages[0].content.startsWith(`${expected} Nothing more of it ships`), read.messages[0].content);

      const order = await call('get_order', { id: placed.order.id });
      assert.equal(order.messages[0].code, 'order_canceled');
      assert.ok(order.messages[0].content.startsWith(expected));
      assert.match(order.messages[1].code, /^payment_/, 'the payment still says what happens to the money');

      const [event] = await test.store.db.query<{ payload: { body: string } }>(`select payload from outbox where order_id = $1 and kind = 'webhook' and topic = 'order.canceled'`, [placed.order.id]);
      assert.ok(event, 'the cancellation is an order event for the platform');
      const sent = JSON.parse(event.payload.body);
      assert.deepEqual([sent.messages[0].code, sent.messages[0].content], [order.messages[0].code, order.messages[0].content]);
    });

    it('get_cart on a cart that was checked out says so and names the checkout that placed the order', async () => {
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: String(variantOf('ESP-CLA-10')) }, quantity: 1 }] } });
      const checkout = await call('create_checkout', { checkout: { cart_id: cart.id, buyer: { email: 'cart@example.com' }, fulfillment: FULFILLMENT } });
      const { token, approval } = await escalate(checkout.id);
      assert.equal((await test.store.checkouts.approve(test.store.db, token, approval.formSecret, approval.digest, { kind: 'none' })).kind, 'placed');

      const gone = await call('get_cart', { id: cart.id });
      assert.equal(gone.ucp.status, 'error');
      assert.deepEqual([gone.messages[0].code, gone.messages[0].severity], ['not_found', 'unrecoverable']);
      assert.equal(
        gone.messages[0].content,
        `This cart was checked out: the buyer approved its checkout ${checkout.id} and the order was placed, so the cart is closed. get_checkout with that id shows the checkout and its order; to buy more, create a new cart.`,
      );
      // A cart that was never checked out (canceled, or unknown) is not said to have been.
      const canceled = await call('create_cart', { cart: { line_items: [{ item: { id: String(variantOf('ESP-CLA-10')) }, quantity: 1 }] } });
      await call('cancel_cart', { id: canceled.id, meta: { 'idempotency-key': randomUUID() } });
      assert.match((await call('get_cart', { id: canceled.id })).messages[0].content, /may have expired or been canceled/);
    });

    it("complete_checkout's answer and the MCP instructions say what the buyer does on the page: prove, then pay as this store takes payment", async () => {
      const { payments, config } = test.store;
      const checkout = await readyCheckout();
      const { asked } = await escalate(checkout.id);
      const escalation = asked.messages.find((message: any) => message.code === 'buyer_approval_required');
      // This store (APPROVAL_PROOF=link, the manual provider): no proof asked, the order placed on approval, paid by the instructions.
      assert.equal(payments.config.paid_on, 'instructions');
      assert.match(escalation.content, /this store asks no further proof there \(development mode\)/);
      assert.ok(escalation.content.endsWith(paymentStepWords(payments.config)), escalation.content);
      assert.match(escalation.content, /Approving places the order and charges nothing: the buyer then pays the store as its payment instructions say, by the due date/);

      const response = await test.app.inject({
        method: 'POST',
        url: '/api/ucp/mcp',
        headers: { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'told-why', version: '1' } } }),
      });
      const { instructions } = JSON.parse(response.body).result as { instructions: string };
      assert.ok(instructions.includes(buyerStepsWords(config.checkout.approvalProof, payments.config)), instructions);
      assert.match(instructions, /why there is none \(checkout_declined, checkout_expired, checkout_canceled, sold_out_at_approval\)/);
      assert.doesNotMatch(instructions, /arranged on the approval page/);
    });

    it('quantity_rule.max in the product and cart JSON, and in each UCP variant, is the ceiling the cart enforces', async () => {
      const product = JSON.parse((await test.app.inject({ url: '/products/espresso-capsules.js' })).body);
      assert.ok(product.variants.length > 0);
      for (const variant of product.variants) assert.deepEqual(variant.quantity_rule, { min: 1, max: CEILING, increment: 1 });

      const variantId = product.variants[0].id as number;
      const add = (quantity: number, cookie?: string) =>
        test.app.inject({ method: 'POST', url: '/cart/add.js', headers: cookie ? { cookie } : {}, payload: { items: [{ id: variantId, quantity }] } });
      const full = await add(CEILING);
      assert.equal(full.statusCode, 200, full.body);
      const cookie = String(full.headers['set-cookie']).split(';')[0]!;
      const cart = JSON.parse((await test.app.inject({ url: '/cart.js', headers: { cookie } })).body);
      assert.deepEqual(cart.items[0].quantity_rule, { min: 1, max: CEILING, increment: 1 });
      const over = await add(1, cookie);
      assert.equal(over.statusCode, 422, 'one unit more than quantity_rule.max is refused');

      for (const release of RELEASES) {
        const ucp = await call('get_product', { catalog: { id: String(product.id) } }, release);
        for (const variant of ucp.product.variants) assert.deepEqual(variant.metadata.quantity_rule, { min: 1, max: CEILING, increment: 1 }, release);
        const found = await call('search_catalog', { catalog: { query: 'espresso' } }, release);
        assert.ok(found.products.length > 0);
        for (const variant of found.products.flatMap((p: any) => p.variants)) assert.equal(variant.metadata.quantity_rule.max, CEILING, release);
      }
      const refused = await call('create_cart', { cart: { line_items: [{ item: { id: String(variantId) }, quantity: CEILING + 1 }] } });
      assert.equal(refused.messages[0].code, 'quantity_limit');
    });
  });
}

describe('what the agent is told the buyer does, for every store', () => {
  const store = (approvalProof: StoreIdentity['checkout']['approvalProof'], provider: 'manual' | 'stripe', captureOn: 'fulfillment' | 'approval' | 'manual' = 'fulfillment'): StoreIdentity => ({
    storeName: 'Tea',
    storeDescription: 'Tea is an online store.',
    storeContactEmail: 'help@tea.example',
    checkout: { approvalProof },
    payment: { provider, captureOn },
  });
  const stripe = (captureOn: 'fulfillment' | 'approval' | 'manual') => ({ paid_on: 'hosted_payment_page' as const, capture: handlerCapture(captureOn), provider: 'stripe' });

  it('the instructions name the proof APPROVAL_PROOF asks, then how PAYMENT_PROVIDER and CAPTURE_ON take the money', () => {
    const passkeyAndCard = serverInstructions(store('passkey-or-code', 'stripe'));
    assert.match(passkeyAndCard, /they prove who they are with a passkey registered to the checkout's email, or a 6-digit code the store emails/);
    assert.match(passkeyAndCard, /Then the buyer pays by card on Stripe's secure payment page: the amount is held on their card, the order is placed once Stripe confirms the hold, and the card is charged when the order ships\./);
    assert.match(passkeyAndCard, /If they leave that page without paying, nothing is ordered/);

    const codeAndInstructions = serverInstructions(store('code', 'manual'));
    assert.match(codeAndInstructions, /with a 6-digit code the store emails to the checkout's address/);
    assert.doesNotMatch(codeAndInstructions, /passkey|Stripe/);
    assert.match(codeAndInstructions, /Approving places the order and charges nothing: the buyer then pays the store as its payment instructions say, by the due date/);

    assert.match(serverInstructions(store('code', 'stripe', 'approval')), /the card is charged as the order is placed\./);
  });

  it("complete_checkout's escalation says the proof, then the payment of the store's handler", () => {
    const card = ucpBuyerApprovalMessage('passkey-or-code', '2026-08-25', stripe('manual')).content;
    assert.match(card, /passkey registered to the checkout's email, or a 6-digit code/);
    assert.ok(card.endsWith(paymentStepWords(stripe('manual'))));
    assert.match(card, /charged when the store takes the payment, before the hold ends/);
    const manual = ucpBuyerApprovalMessage('code', '2026-04-08', { paid_on: 'instructions', capture: 'manual', provider: 'manual' }).content;
    assert.match(manual, /No tool can request, read or skip this step; nothing is charged until then\. Approving places the order and charges nothing/);
  });
});
