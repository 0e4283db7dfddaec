/**
 * The Stripe provider when things go other than planned, against the Stripe stand-in through the official SDK, on
 * both backends: Stripe not answering when the buyer is sent to pay (nothing held, the page works again when it
 * answers, no second proof); the approval link running out while the buyer pays (the return is refused, the hold
 * released); a payment page that expires (`checkout.session.expired`: the checkout waits for the buyer again and the
 * next approval opens a new page); CAPTURE_ON=approval (captured at once); refunds through Stripe, partial and full,
 * two racing (never above what was captured, and Stripe's `charge.refunded` about the store's own refunds adds
 * nothing); a refund asked while Stripe does not answer (kept, then made once with the same key).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { MAX_CART_LINES } from '../../src/cart/cart.js';
import { OrderActionRefused, OrderActions } from '../../src/orders/order-actions.js';
import { readOrder } from '../../src/orders/orders.js';
import { PaymentSessionRefused } from '../../src/payments/payment-provider.js';
import { lineItems, stripeProvider } from '../../src/payments/stripe-provider.js';
import { backends, dropTestDatabases, getJson, type TestStore } from '../helpers/store.js';
import { approveCheckout as approve, checkoutAwaitingApproval as awaitingApproval, ordersOfCheckout as ordersOf, startStripeStore, STRIPE_TEST_SKU as SKU } from '../helpers/stripe-checkout.js';
import { officialSchemaErrorsFor, OfficialSchemas } from '../ucp/official-schemas.js';
import { startStripeStandIn, type StandInWebhookEndpoint, type StripeStandIn } from '../helpers/stripe-stand-in.js';

after(dropTestDatabases);

const sessionIdOf = (url: string) => url.split('/').at(-1)!;
const statusOf = async (t: TestStore, id: string) => (await t.store.checkouts.get(t.store.db, id))!.view.record.status;

/** A store on the stand-in, its webhook endpoint holding events until a test delivers them. */
async function standInStore(backend: (typeof backends)[number], standIn: StripeStandIn, env: Record<string, string> = {}) {
  const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
  const { t, base } = await startStripeStore(backend, { secretKey: standIn.secretKey, webhookSecret, apiUrl: standIn.apiUrl }, env);
  const endpoint = standIn.webhookEndpoint({ url: `${base}/payments/stripe/webhook`, secret: webhookSecret, hold: true });
  return { t, base, endpoint };
}

for (const backend of backends) {
  describe(`Stripe when things go otherwise (${backend.name})`, () => {
    let standIn: StripeStandIn;
    let t: TestStore;
    let base: string;
    let endpoint: StandInWebhookEndpoint;
    let atApproval: TestStore;

    before(async () => {
      standIn = await startStripeStandIn();
      ({ t, base, endpoint } = await standInStore(backend, standIn));
      ({ t: atApproval } = await standInStore(backend, standIn, { CAPTURE_ON: 'approval' }));
    });
    after(async () => {
      await t?.close();
      await atApproval?.close();
      await standIn?.close();
    });
    beforeEach(async () => {
      standIn.down(false);
      await standIn.deliverHeld(endpoint);
      await t.store.inventory.setOnHand(t.store.db, SKU, 50);
    });

    const get = (url: string) => fetch(url.startsWith('http') ? url : `${base}${url}`, { redirect: 'manual' });

    /** Approved, paid and back: the order, its PaymentIntent. */
    async function paidOrder(store: TestStore, quantity = 2) {
      const a = await awaitingApproval(store, quantity);
      const begun = await approve(store, a);
      assert.equal(begun.kind, 'paying', JSON.stringify(begun));
      const sessionId = sessionIdOf((begun as { url: string }).url);
      const paid = standIn.pay(sessionId);
      const outcome = await store.store.approvals.completePayment(store.store.db, sessionId);
      assert.equal(outcome.kind, 'placed', JSON.stringify(outcome));
      assert.ok(paid.redirect);
      const orderId = (outcome as { order: { id: string } }).order.id;
      return { orderId, intent: String(standIn.session(sessionId).payment_intent), checkoutId: a.id };
    }

    it('Stripe does not answer when the buyer is sent to pay: nothing held, the page asks again; when it answers, the buyer goes on without a second proof', async () => {
      const a = await awaitingApproval(t, 1);
      const sessionsBefore = standIn.sessions().length;
      standIn.down();
      const refused = await approve(t, a);
      assert.equal(refused.kind, 'unavailable', JSON.stringify(refused));
      assert.match((refused as { reason: string }).reason, /could not be opened.*nothing was charged/i);
      assert.equal(standIn.sessions().length, sessionsBefore, 'no payment page exists');
      assert.equal(await statusOf(t, a.id), 'requires_escalation', 'the checkout waits for the buyer again');
      const page = await get(`/checkout/approve/${a.token}`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /Continue to payment/);
      standIn.down(false);
      const begun = await approve(t, a);
      assert.equal(begun.kind, 'paying', JSON.stringify(begun));
      assert.equal(await statusOf(t, a.id), 'complete_in_progress');
      assert.equal(standIn.sessions().length, sessionsBefore + 1);
    });

    it('the approval link runs out while the buyer pays: the return is refused, the hold released, nothing placed', async () => {
      const a = await awaitingApproval(t, 1);
      const begun = await approve(t, a);
      const sessionId = sessionIdOf((begun as { url: string }).url);
      // APPROVAL_TTL may be shorter than the payment page's 30 minutes: the link's time passes while the buyer is on it.
      await t.store.db.query(`update checkout_approvals set expires_at = now() - interval '1 second' where token = $1`, [a.token]);
      const paid = standIn.pay(sessionId);
      const back = await get(paid.redirect!);
      assert.equal(back.status, 409);
      const text = (await back.text()).replace(/<style>[^]*?<\/style>/, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
      assert.match(text, /expired/i, text);
      assert.match(text, /hold on your card was released/, text);
      assert.equal(standIn.paymentIntent(String(standIn.session(sessionId).payment_intent)).status, 'canceled');
      assert.deepEqual(await ordersOf(t, a.id), []);
      // Stripe's event of that session places nothing either.
      const deliveries = await standIn.deliverHeld(endpoint);
      assert.ok(deliveries.every((d) => d.status === 200), JSON.stringify(deliveries));
      assert.deepEqual(await ordersOf(t, a.id), []);
    });

    it('checkout.session.expired: the checkout waits for the buyer again, and the next approval opens a new payment page', async () => {
      const a = await awaitingApproval(t, 1);
      const first = sessionIdOf(((await approve(t, a)) as { url: string }).url);
      // Expired by Stripe (its dashboard, or the API): the event arrives.
      const stripe = new (await import('stripe')).default(standIn.secretKey, standIn.sdkOptions);
      await stripe.checkout.sessions.expire(first);
      const deliveries = await standIn.deliverHeld(endpoint);
      const expired = deliveries.find((d) => d.type === 'checkout.session.expired');
      assert.equal(expired?.status, 200, JSON.stringify(deliveries));
      assert.match(expired!.body, /released/);
      assert.equal(await statusOf(t, a.id), 'requires_escalation');
      // Delivered again: nothing more.
      assert.match((await standIn.deliver(expired!.eventId, { endpoint })).body, /duplicate/);
      const again = await approve(t, a);
      assert.equal(again.kind, 'paying', JSON.stringify(again));
      const second = sessionIdOf((again as { url: string }).url);
      assert.notEqual(second, first, 'a new payment page, not the expired one');
      assert.equal(standIn.session(second).status, 'open');
      standIn.pay(second);
      const outcome = await t.store.approvals.completePayment(t.store.db, second);
      assert.equal(outcome.kind, 'placed');
      assert.equal((await ordersOf(t, a.id)).length, 1);
    });

    it('a payment page about to end is closed at Stripe before another opens: the buyer can never pay two; one paid meanwhile places the order', async () => {
      const a = await awaitingApproval(t, 1);
      const first = sessionIdOf(((await approve(t, a)) as { url: string }).url);
      const endsSoon = () => t.store.db.query(`update checkout_approvals set payment_session_expires_at = now() + interval '2 minutes' where token = $1`, [a.token]);
      await endsSoon();
      // The approval page offers the button (a new page), not the link to the one about to end.
      const page = await (await get(`/checkout/approve/${a.token}`)).text();
      assert.ok(!page.includes(standIn.session(first).url!), 'no link to the page about to end');
      const again = await approve(t, a);
      assert.equal(again.kind, 'paying', JSON.stringify(again));
      const second = sessionIdOf((again as { url: string }).url);
      assert.notEqual(second, first);
      assert.equal(standIn.session(first).status, 'expired', 'the first page takes no payment any more');
      // The second one paid in another tab just before it was to be replaced: that payment places the order.
      await endsSoon();
      standIn.holdRedirects();
      assert.equal(standIn.pay(second).status, 'authorized');
      const placed = await approve(t, a);
      assert.equal(placed.kind, 'placed', JSON.stringify(placed));
      assert.equal((await ordersOf(t, a.id)).length, 1);
      assert.equal(standIn.sessions().filter((session) => session.metadata?.checkout_id === a.id).length, 2, 'no third page');
      standIn.holdRedirects(false);
    });

    it('an old payment page paid after the agent changed the checkout: its hold released, the buyer’s new link untouched', async () => {
      const a = await awaitingApproval(t, 1);
      const old = sessionIdOf(((await approve(t, a)) as { url: string }).url);
      // The buyer leaves the payment page; the agent changes the checkout and asks again: a new link.
      assert.equal((await get(standIn.session(old).cancel_url!)).status, 303);
      const variantId = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === SKU)!.id;
      const before = (await t.store.checkouts.get(t.store.db, a.id))!.view.record;
      await t.store.checkouts.update(
        t.store.db,
        a.id,
        { lines: [{ variantId, quantity: 2 }], buyer: before.buyer, destination: before.destination, shippingOption: before.shippingOption },
        'agent',
      );
      const asked = await t.store.checkouts.requestCompletion(t.store.db, a.id, 'agent');
      const fresh = asked.approval!;
      assert.notEqual(fresh.token, a.token);
      // The old page still takes payment at Stripe; the buyer pays it and comes back.
      const back = await get(standIn.pay(old).redirect!);
      assert.equal(back.status, 409);
      assert.match(await back.text(), /hold on your card was released/);
      assert.equal(standIn.paymentIntent(String(standIn.session(old).payment_intent)).status, 'canceled');
      assert.deepEqual(await ordersOf(t, a.id), []);
      assert.equal(await statusOf(t, a.id), 'requires_escalation', 'the checkout still waits on the new link');
      const link = await t.store.db.query<{ voided_at: Date | null }>('select voided_at from checkout_approvals where token = $1', [fresh.token]);
      assert.equal(link[0]!.voided_at, null, 'the new link still works');
      const paying = await approve(t, { token: fresh.token, formSecret: fresh.formSecret, digest: fresh.digest });
      assert.equal(paying.kind, 'paying', JSON.stringify(paying));
    });

    it('the checkout runs out while the buyer is on the payment page: the return releases the hold, Cancel answers a page, the checkout is canceled', async () => {
      for (const way of ['paid', 'canceled'] as const) {
        const a = await awaitingApproval(t, 1);
        const sessionId = sessionIdOf(((await approve(t, a)) as { url: string }).url);
        await t.store.db.query(`update checkouts set expires_at = now() - interval '1 second' where id = $1`, [a.id]);
        if (way === 'paid') {
          const back = await get(standIn.pay(sessionId).redirect!);
          assert.equal(back.status, 409, way);
          assert.match(await back.text(), /expired[^]*hold on your card was released/);
          assert.equal(standIn.paymentIntent(String(standIn.session(sessionId).payment_intent)).status, 'canceled');
        } else {
          const back = await get(standIn.session(sessionId).cancel_url!);
          assert.ok(back.status < 500, `${way}: ${back.status}`);
        }
        assert.deepEqual(await ordersOf(t, a.id), [], way);
        assert.equal((await t.store.db.query<{ status: string }>('select status from checkouts where id = $1', [a.id]))[0]!.status, 'canceled', way);
      }
    });

    it('Stripe’s payment_intent.canceled about the store’s own release tells no one the hold was released at Stripe', async () => {
      const { orderId } = await paidOrder(t, 1);
      await standIn.deliverHeld(endpoint);
      await t.store.orders.cancel(t.store.db, orderId, 'the buyer asked');
      const deliveries = await standIn.deliverHeld(endpoint);
      assert.ok(deliveries.some((d) => d.type === 'payment_intent.canceled' && d.status === 200), JSON.stringify(deliveries));
      const topics = await t.store.db.query<{ topic: string }>(`select topic from outbox where order_id = $1 and kind = 'mail'`, [orderId]);
      assert.ok(topics.some((row) => row.topic === 'order.canceled'), JSON.stringify(topics));
      assert.ok(!topics.some((row) => row.topic === 'order.payment_voided'), JSON.stringify(topics));
      assert.equal((await readOrder(t.store.db, orderId))!.paymentState, 'voided');
    });

    it('the profile tells agents the buyer pays on a hosted page, and when the money is taken (CAPTURE_ON), valid against UCP’s schema', async () => {
      for (const [store, capture, when] of [
        [t, 'on_fulfillment', 'when the order ships'],
        [atApproval, 'on_approval', 'as the order is placed'],
      ] as const) {
        const { body } = await getJson(store.app, '/.well-known/ucp');
        assert.deepEqual(officialSchemaErrorsFor('2026-08-25', OfficialSchemas['2026-08-25'].businessProfile, body), []);
        const [name, ...others] = Object.keys(body.ucp.payment_handlers);
        assert.deepEqual(others, []);
        assert.match(name!, /\.stripe$/);
        const [handler] = body.ucp.payment_handlers[name!];
        assert.equal(handler.id, 'stripe');
        assert.equal(handler.config.paid_on, 'hosted_payment_page');
        assert.equal(handler.config.capture, capture);
        assert.ok(handler.config.description.includes(when), handler.config.description);
      }
    });

    it('a checkout of 100 lines and tax (past Stripe’s 100 line items) opens a payment page for its exact total', async () => {
      const provider = stripeProvider({ secretKey: standIn.secretKey, webhookSecret: 'whsec_lines', ...standIn.sdkOptions });
      const lines = Array.from({ length: MAX_CART_LINES }, (_, i) => ({ title: `Item ${i + 1}`, quantity: 1 + (i % 3), unitAmount: 100 + i }));
      const subtotal = lines.reduce((sum, line) => sum + line.quantity * line.unitAmount, 0);
      const request = {
        checkoutId: 'chk_many_lines',
        digest: 'digest',
        idempotencyKey: `many-lines-${backend.name}`,
        currency: 'USD',
        buyerEmail: 'ana@example.com',
        lines,
        shipping: { title: 'Standard', amount: 500 },
        tax: 731,
        total: subtotal + 500 + 731,
        expiresAt: new Date(Date.now() + 35 * 60 * 1000),
        successUrl: 'http://127.0.0.1/paid?session_id={CHECKOUT_SESSION_ID}',
        cancelUrl: 'http://127.0.0.1/payment-canceled',
        metadata: {},
      };
      const items = lineItems(request);
      assert.equal(items.length, 100);
      assert.equal(items.at(-2)!.price_data!.product_data!.name, '2 more items (4 units)');
      const step = await provider.begin(request);
      assert.equal(step.kind, 'redirect');
      assert.equal(standIn.session((step as { sessionId: string }).sessionId).amount_total, request.total);
      // Under Stripe's minimum charge: refused with the buyer's reason, nothing asked of Stripe.
      const sessions = standIn.sessions().length;
      const tiny = { ...request, idempotencyKey: `tiny-${backend.name}`, lines: [{ title: 'Sample', quantity: 1, unitAmount: 40 }], shipping: { title: 'Pickup', amount: 0 }, tax: 0, total: 40 };
      await assert.rejects(provider.begin(tiny), (error: unknown) => error instanceof PaymentSessionRefused && /\$0\.50/.test(error.message));
      assert.equal(standIn.sessions().length, sessions);
    });

    it('CAPTURE_ON=approval: the hold is captured as the order is placed, or by the sweep when the process stopped between', async () => {
      const { orderId, intent } = await paidOrder(atApproval, 1);
      const order = (await readOrder(atApproval.store.db, orderId))!;
      assert.equal(order.paymentState, 'captured');
      assert.equal(order.captured, order.total);
      assert.equal(standIn.paymentIntent(intent).status, 'succeeded');
      assert.equal(standIn.paymentIntent(intent).amount_received, order.total);
      // A process that stopped between placing an order and capturing it: the sweep captures it, once.
      const missed = await paidOrder(t, 1);
      const sweep = new OrderActions({ inventory: t.store.inventory, subscribers: [], provider: t.store.paymentProvider, captureOn: 'approval' });
      // (This store's other held orders, of earlier tests, are swept too.)
      assert.ok((await sweep.captureMissedAtApproval(t.store.db, 0)) >= 1);
      assert.equal(await sweep.captureMissedAtApproval(t.store.db, 0), 0, 'once');
      assert.equal((await readOrder(t.store.db, missed.orderId))!.paymentState, 'captured');
      assert.equal(standIn.paymentIntent(missed.intent).status, 'succeeded');
    });

    it('refunds through Stripe: partial, two racing for the rest (one refused), never above what was captured; Stripe’s charge.refunded about them adds nothing', async () => {
      const { orderId, intent } = await paidOrder(t, 2);
      const captured = (await t.store.orders.capture(t.store.db, orderId)).captured;
      assert.equal(standIn.paymentIntent(intent).status, 'succeeded');
      const partial = await t.store.orders.refund(t.store.db, orderId, 500, 'one dented box');
      assert.equal(partial.refunded, 500);
      assert.equal(partial.paymentState, 'partially_refunded');
      const rest = captured - 500;
      const racing = await Promise.allSettled([t.store.orders.refund(t.store.db, orderId, rest), t.store.orders.refund(t.store.db, orderId, rest)]);
      assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 1, JSON.stringify(racing.map((r) => r.status)));
      const rejected = racing.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
      assert.ok(rejected.reason instanceof OrderActionRefused, String(rejected.reason));
      const stripeRefunds = standIn.refunds().filter((r) => r.payment_intent === intent);
      assert.deepEqual(stripeRefunds.map((r) => r.amount).sort((x, y) => x - y), [500, rest].sort((x, y) => x - y));
      assert.equal(standIn.charge(String(standIn.paymentIntent(intent).latest_charge)).amount_refunded, captured);
      // Stripe tells of those refunds too: counted once.
      const events = (await standIn.deliverHeld(endpoint)).filter((d) => d.type === 'charge.refunded');
      assert.ok(events.length >= 2, JSON.stringify(events));
      assert.ok(events.every((d) => d.status === 200));
      const order = (await readOrder(t.store.db, orderId))!;
      assert.equal(order.refunded, captured);
      assert.equal(order.paymentState, 'refunded');
      await assert.rejects(t.store.orders.refund(t.store.db, orderId, 1), OrderActionRefused);
    });

    it('a refund asked while Stripe does not answer is kept, then made once with its key when Stripe answers again', async () => {
      const { orderId, intent } = await paidOrder(t, 1);
      await t.store.orders.capture(t.store.db, orderId);
      standIn.down();
      await assert.rejects(t.store.orders.refund(t.store.db, orderId, 300), (error: unknown) => error instanceof OrderActionRefused && error.code === 'provider_unavailable');
      let order = (await readOrder(t.store.db, orderId))!;
      assert.equal(order.refunded, 0, 'not recorded as made');
      // Meanwhile the reservation counts: a refund of everything is refused.
      await assert.rejects(t.store.orders.refund(t.store.db, orderId, order.captured), OrderActionRefused);
      assert.equal(await t.store.orders.settleUnsettled(t.store.db, 0), 0, 'still no answer: nothing settled');
      standIn.down(false);
      assert.equal(await t.store.orders.settleUnsettled(t.store.db, 0), 1);
      assert.equal(await t.store.orders.settleUnsettled(t.store.db, 0), 0, 'settled once');
      order = (await readOrder(t.store.db, orderId))!;
      assert.equal(order.refunded, 300);
      assert.deepEqual(standIn.refunds().filter((r) => r.payment_intent === intent).map((r) => r.amount), [300], 'one refund at Stripe');
    });
  });
}
