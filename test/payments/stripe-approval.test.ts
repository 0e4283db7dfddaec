/**
 * The approval with PAYMENT_PROVIDER=stripe, against the Stripe stand-in (test/helpers/stripe-stand-in.ts) through the
 * store's own provider (the official SDK), on both backends, the store listening on loopback so the stand-in's
 * signed events reach its webhook. The buyer's proof (link mode here: the proof has its own tests) sends the buyer to
 * the payment page; the checkout is complete_in_progress meanwhile; the return and the webhook each place the order
 * (exactly one, racing or not); a cancel on the payment page gives the approval page back; stock sold out while the
 * buyer pays releases the hold; forged, stale and tampered webhooks change nothing, an event delivered twice is
 * applied once; after the sale, capture at the first shipment, a dashboard refund and a dispute arrive by webhook.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { readApproval } from '../../src/checkout/checkout-store.js';
import { readOrder } from '../../src/orders/orders.js';
import { backends, dropTestDatabases, type TestStore } from '../helpers/store.js';
import { checkoutAwaitingApproval, ordersOfCheckout, startStripeStore, STRIPE_TEST_SKU as SKU } from '../helpers/stripe-checkout.js';
import { startStripeStandIn, type StandInWebhookEndpoint, type StripeStandIn } from '../helpers/stripe-stand-in.js';

after(dropTestDatabases);


for (const backend of backends) {
  describe(`the approval pays on Stripe (${backend.name})`, () => {
    let t: TestStore;
    let standIn: StripeStandIn;
    let endpoint: StandInWebhookEndpoint;
    let base: string;

    before(async () => {
      standIn = await startStripeStandIn();
      const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
      ({ t, base } = await startStripeStore(backend, { secretKey: standIn.secretKey, webhookSecret, apiUrl: standIn.apiUrl }));
      endpoint = standIn.webhookEndpoint({ url: `${base}/payments/stripe/webhook`, secret: webhookSecret, hold: true });
    });
    after(async () => {
      await t?.close();
      await standIn?.close();
    });
    beforeEach(async () => {
      // Each test delivers what it means to; what earlier tests left held is delivered and forgotten.
      await standIn.deliverHeld(endpoint);
      standIn.holdRedirects(false);
      await t.store.inventory.setOnHand(t.store.db, SKU, 50);
    });

    const awaitingApproval = (quantity = 2) => checkoutAwaitingApproval(t, quantity);

    /** The buyer proved it is them (link mode): the approval sends them to the payment page. */
    async function approveAndPayPage(token: string, formSecret: string, digest: string): Promise<string> {
      const outcome = await t.store.approvals.approve(t.store.db, token, formSecret, digest, { kind: 'none' });
      assert.equal(outcome.kind, 'paying', JSON.stringify(outcome));
      return (outcome as { url: string }).url;
    }

    const sessionIdOf = (url: string) => url.split('/').at(-1)!;
    const status = async (id: string) => (await t.store.checkouts.get(t.store.db, id))!.view.record.status;
    const ordersOf = (checkoutId: string) => ordersOfCheckout(t, checkoutId);
    const get = (url: string) => fetch(url.startsWith('http') ? url : `${base}${url}`, { redirect: 'manual' });

    it('proof, payment page, Pay, back: one order with its payment authorized; the webhook after it changes nothing', async () => {
      const { id, token, formSecret, digest, total } = await awaitingApproval();
      const url = await approveAndPayPage(token, formSecret, digest);
      assert.ok(url.startsWith(standIn.checkoutOrigin), url);
      assert.equal(await status(id), 'complete_in_progress', 'complete_in_progress while the buyer pays');
      // The approval page links to the payment page; its policy names no other origin.
      const page = await get(`/checkout/approve/${token}`);
      assert.equal(page.status, 200);
      const text = await page.text();
      assert.ok(text.includes(`href="${url}"`), 'the page links to the payment page');
      assert.doesNotMatch(page.headers.get('content-security-policy') ?? '', new RegExp(standIn.checkoutOrigin));
      const session = standIn.session(sessionIdOf(url));
      assert.equal(session.amount_total, total);
      assert.equal(session.metadata?.checkout_id, id);
      assert.equal(session.customer_email, 'ana@example.com');

      const paid = standIn.pay(session.id);
      assert.equal(paid.status, 'authorized');
      const back = await get(paid.redirect!);
      assert.equal(back.status, 303);
      const orderPath = back.headers.get('location')!;
      assert.match(orderPath, /^\/orders\/ord_/);
      const [orderId] = await ordersOf(id);
      const order = (await readOrder(t.store.db, orderId!))!;
      assert.equal(order.paymentState, 'authorized');
      assert.equal(order.payment.authorized, total);
      assert.equal(await status(id), 'completed');
      // The event arrives after the return: acknowledged, nothing more placed.
      const deliveries = await standIn.deliverHeld(endpoint);
      const completed = deliveries.find((d) => d.type === 'checkout.session.completed')!;
      assert.equal(completed.status, 200);
      assert.match(completed.body, /already_placed/);
      assert.deepEqual(await ordersOf(id), [orderId]);
      // The return again (a reload): the same order.
      assert.equal((await get(paid.redirect!)).headers.get('location'), orderPath);
    });

    it('the browser never comes back: the webhook places the order once, and its second delivery is applied once', async () => {
      const { id, token, formSecret, digest } = await awaitingApproval(1);
      const url = await approveAndPayPage(token, formSecret, digest);
      standIn.holdRedirects();
      assert.equal(standIn.pay(sessionIdOf(url)).status, 'authorized');
      assert.deepEqual(await ordersOf(id), []);
      const deliveries = await standIn.deliverHeld(endpoint);
      const completed = deliveries.find((d) => d.type === 'checkout.session.completed')!;
      assert.equal(completed.status, 200, completed.body);
      assert.match(completed.body, /"placed"/);
      assert.equal((await ordersOf(id)).length, 1);
      const again = await standIn.deliver(completed.eventId, { endpoint });
      assert.equal(again.status, 200);
      assert.match(again.body, /duplicate/);
      assert.equal((await ordersOf(id)).length, 1);
      assert.equal(await status(id), 'completed');
    });

    it('the return and the webhook racing place one order', async () => {
      const { id, token, formSecret, digest } = await awaitingApproval(1);
      const url = await approveAndPayPage(token, formSecret, digest);
      const paid = standIn.pay(sessionIdOf(url));
      const [back, deliveries] = await Promise.all([get(paid.redirect!), standIn.deliverHeld(endpoint)]);
      assert.equal(back.status, 303);
      assert.ok(deliveries.every((d) => d.status === 200), JSON.stringify(deliveries));
      assert.equal((await ordersOf(id)).length, 1);
    });

    it('Cancel on the payment page: nothing placed, the approval page works again and sends the buyer to the same page', async () => {
      const { id, token, formSecret, digest } = await awaitingApproval(1);
      const url = await approveAndPayPage(token, formSecret, digest);
      const cancel = standIn.session(sessionIdOf(url)).cancel_url!;
      const back = await get(cancel);
      assert.equal(back.status, 303);
      assert.equal(back.headers.get('location'), `/checkout/approve/${token}`);
      assert.equal(await status(id), 'requires_escalation');
      assert.deepEqual(await ordersOf(id), []);
      const page = await get(`/checkout/approve/${token}`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /Continue to payment/);
      // Approving again asks no proof and opens the same session.
      assert.equal(await approveAndPayPage(token, formSecret, digest), url);
      assert.equal(standIn.requests('POST', '/v1/checkout/sessions'), standIn.sessions().length);
    });

    it('stock sells out while the buyer pays: the hold is released, no order, and the buyer reads why', async () => {
      const { id, token, formSecret, digest } = await awaitingApproval(2);
      const url = await approveAndPayPage(token, formSecret, digest);
      await t.store.inventory.setOnHand(t.store.db, SKU, 1);
      const paid = standIn.pay(sessionIdOf(url));
      const back = await get(paid.redirect!);
      assert.equal(back.status, 409);
      const text = (await back.text()).replace(/<style>[^]*?<\/style>/, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
      assert.match(text, /sold out|only \d+ of .* left/i, text);
      assert.match(text, /hold on your card was released/, text);
      assert.deepEqual(await ordersOf(id), []);
      const intent = standIn.paymentIntent(String(standIn.session(sessionIdOf(url)).payment_intent));
      assert.equal(intent.status, 'canceled');
      assert.notEqual(await status(id), 'complete_in_progress');
      // The agent is told why (get_checkout's first message): items sold out while the buyer was asked.
      assert.equal((await t.store.checkouts.get(t.store.db, id))!.notice?.code, 'sold_out_at_approval');
      assert.ok((await readApproval(t.store.db, token))!.voidedAt, 'the link no longer places the order');
      // The webhook of that session changes nothing more.
      const deliveries = await standIn.deliverHeld(endpoint);
      assert.ok(deliveries.every((d) => d.status === 200), JSON.stringify(deliveries));
      assert.deepEqual(await ordersOf(id), []);
    });

    it('a forged, tampered or stale webhook answers 400 and changes nothing', async () => {
      const { id, token, formSecret, digest } = await awaitingApproval(1);
      const url = await approveAndPayPage(token, formSecret, digest);
      standIn.holdRedirects();
      standIn.pay(sessionIdOf(url));
      const event = standIn.events('checkout.session.completed').find((e) => (e.data.object as { id: string }).id === sessionIdOf(url))!;
      const forged = await standIn.deliver(event.id, { endpoint, secret: 'whsec_forged' });
      const tampered = await standIn.deliver(event.id, { endpoint, tamper: (payload) => payload.replace('"livemode": false', '"livemode": true') });
      const stale = await standIn.deliver(event.id, { endpoint, timestamp: Math.floor(Date.now() / 1000) - 3600 });
      const unsigned = await fetch(`${base}/payments/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      for (const delivery of [forged, tampered, stale]) assert.equal(delivery.status, 400, delivery.body);
      assert.equal(unsigned.status, 400);
      assert.deepEqual(await ordersOf(id), []);
      assert.equal(await status(id), 'complete_in_progress');
      // Stripe's own delivery places it.
      assert.equal((await standIn.deliver(event.id, { endpoint })).status, 200);
      assert.equal((await ordersOf(id)).length, 1);
    });

    it('after the sale: the first shipment captures, a dashboard refund and a dispute arrive by webhook', async () => {
      const { id, token, formSecret, digest, total } = await awaitingApproval(2);
      const url = await approveAndPayPage(token, formSecret, digest);
      await get(standIn.pay(sessionIdOf(url)).redirect!);
      const [orderId] = await ordersOf(id);
      await standIn.deliverHeld(endpoint);
      const shipped = await t.store.orders.fulfill(t.store.db, orderId!);
      assert.equal(shipped.paymentState, 'captured');
      assert.equal(shipped.captured, total);
      const reference = String(standIn.session(sessionIdOf(url)).payment_intent);
      assert.equal(standIn.paymentIntent(reference).status, 'succeeded');
      standIn.refundFromDashboard(reference, 500);
      const refunded = (await standIn.deliverHeld(endpoint)).filter((d) => d.type === 'charge.refunded');
      assert.equal(refunded.length, 1);
      assert.match(refunded[0]!.body, /applied/);
      let order = (await readOrder(t.store.db, orderId!))!;
      assert.equal(order.refunded, 500);
      assert.equal(order.paymentState, 'partially_refunded');
      // Delivered twice: applied once.
      assert.match((await standIn.deliver(refunded[0]!.eventId, { endpoint })).body, /duplicate/);
      assert.equal((await readOrder(t.store.db, orderId!))!.refunded, 500);
      standIn.openDispute(reference);
      await standIn.deliverHeld(endpoint);
      order = (await readOrder(t.store.db, orderId!))!;
      assert.equal(order.paymentState, 'disputed');
    });
  });
}
