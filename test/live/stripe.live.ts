/**
 * `npm run test:stripe`: the approval paying on Stripe itself, in test mode, with the account whose key is in
 * STRIPE_SECRET_KEY (sk_test_… only: it never runs on a live key). Without such a key it says it skipped. Not part of
 * `npm test` (Stripe is not reachable from every machine that runs the suite, CI's included).
 *
 * The store (embedded database, loopback) sends the buyer to a real Stripe Checkout Session; Chromium pays there with
 * Stripe's test card 4242 4242 4242 4242 and comes back to the store, which checks the hold with Stripe and places
 * the order. Then the merchant's moves go to Stripe: the first shipment captures, a partial refund, and on a second
 * order a cancel that releases the hold. Stripe cannot deliver webhooks to a loopback store, so the suite reads
 * Stripe's own events for these payments from the API (`checkout.session.completed`, `charge.refunded`) and posts
 * them to the store's webhook signed with the store's secret, as Stripe would: Stripe's real payloads, read by the
 * store's own code (the order placed once, the store's own refund counted once).
 *
 *   STRIPE_SECRET_KEY=sk_test_… npm run test:stripe
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import Stripe from 'stripe';
import { readOrder } from '../../src/orders/orders.js';
import { launchChromium } from '../helpers/browser.js';
import { backends, dropTestDatabases, type TestStore } from '../helpers/store.js';
import { approveCheckout, checkoutAwaitingApproval, ordersOfCheckout, startStripeStore } from '../helpers/stripe-checkout.js';

const key = process.env.STRIPE_SECRET_KEY ?? '';
const skip = key.startsWith('sk_test_') ? false : 'STRIPE_SECRET_KEY is not a Stripe test-mode key (sk_test_…): nothing was sent to Stripe';
if (skip) console.log(`test:stripe skipped: ${skip}. Set STRIPE_SECRET_KEY=sk_test_… (Stripe dashboard, Developers, API keys, test mode) to run it.`);

/** Stripe's test card, and the page's fields as Stripe Checkout names them. */
const CARD = { number: '4242 4242 4242 4242', expiry: '12 / 34', cvc: '123', name: 'Ana Test', postalCode: '94103' };
const PAGE_TIMEOUT_MS = 60_000;

describe('the approval pays on Stripe in test mode', { skip }, () => {
  const webhookSecret = `whsec_${randomBytes(24).toString('hex')}`;
  const stripe = new Stripe(key || 'sk_test_unused', { maxNetworkRetries: 2 });
  const startedAt = Math.floor(Date.now() / 1000) - 60;
  let t: TestStore;
  let base: string;
  let browser: Browser;

  before(async () => {
    ({ t, base } = await startStripeStore(backends[0]!, { secretKey: key, webhookSecret }));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await dropTestDatabases();
  });

  /** Pays on Stripe's hosted page with the test card; resolves on the store's page the buyer is sent back to. */
  async function payOnStripe(page: Page, url: string): Promise<void> {
    await page.goto(url, { timeout: PAGE_TIMEOUT_MS });
    // Checkout may list payment methods as an accordion; the card's is opened when it is there.
    const cardChoice = page.locator('[data-testid="card-accordion-item-button"]');
    if (await cardChoice.isVisible().catch(() => false)) await cardChoice.click();
    await page.locator('#cardNumber').fill(CARD.number, { timeout: PAGE_TIMEOUT_MS });
    await page.locator('#cardExpiry').fill(CARD.expiry);
    await page.locator('#cardCvc').fill(CARD.cvc);
    await page.locator('#billingName').fill(CARD.name);
    const postal = page.locator('#billingPostalCode');
    if (await postal.isVisible().catch(() => false)) await postal.fill(CARD.postalCode);
    await Promise.all([page.waitForURL((at) => at.href.startsWith(base), { timeout: PAGE_TIMEOUT_MS }), page.locator('button[type="submit"]').first().click()]);
  }

  /** Stripe's own event of `type` about `objectId` since the suite began (Stripe may take a moment to list it). */
  async function stripeEvent(type: string, matches: (object: Record<string, unknown>) => boolean): Promise<Stripe.Event> {
    for (let attempt = 0; attempt < 20; attempt++) {
      for await (const event of stripe.events.list({ type, created: { gte: startedAt }, limit: 100 })) {
        if (matches(event.data.object as unknown as Record<string, unknown>)) return event;
      }
      await new Promise((resolve) => setTimeout(resolve, 1500));
    }
    throw new Error(`Stripe listed no ${type} event for this payment within 30 s`);
  }

  /** Posts Stripe's event to the store's webhook as Stripe would, signed with the store's secret. */
  async function deliver(event: Stripe.Event): Promise<{ status: number; body: string }> {
    const payload = JSON.stringify(event, null, 2);
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
    const response = await fetch(`${base}/payments/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
    return { status: response.status, body: await response.text() };
  }

  async function paidOrder(quantity: number, email: string) {
    const a = await checkoutAwaitingApproval(t, quantity, email);
    const begun = await approveCheckout(t, a);
    assert.equal(begun.kind, 'paying', JSON.stringify(begun));
    const url = (begun as { url: string }).url;
    assert.ok(url.startsWith('https://checkout.stripe.com/'), url);
    const page = await browser.newPage();
    try {
      await payOnStripe(page, url);
      assert.match(new URL(page.url()).pathname, /^\/orders\/ord_/, page.url());
    } finally {
      await page.close();
    }
    const [orderId] = await ordersOfCheckout(t, a.id);
    assert.ok(orderId, 'the return placed the order');
    const order = (await readOrder(t.store.db, orderId))!;
    assert.equal(order.paymentState, 'authorized');
    assert.equal(order.payment.authorized, a.total);
    const [{ payment_reference: intentId }] = (await t.store.db.query<{ payment_reference: string }>('select payment_reference from orders where id = $1', [orderId])) as [{ payment_reference: string }];
    const intent = await stripe.paymentIntents.retrieve(intentId);
    assert.equal(intent.status, 'requires_capture');
    assert.equal(intent.amount_capturable, a.total);
    return { checkoutId: a.id, orderId, intentId, total: a.total };
  }

  it('the test card on Stripe Checkout, back on the order page authorized; shipping captures, a partial refund; Stripe’s own events change nothing more', async () => {
    const { checkoutId, orderId, intentId, total } = await paidOrder(2, 'live-pay@example.com');
    const completed = await stripeEvent('checkout.session.completed', (session) => session.payment_intent === intentId);
    const delivered = await deliver(completed);
    assert.equal(delivered.status, 200, delivered.body);
    assert.match(delivered.body, /already_placed/);
    assert.deepEqual(await ordersOfCheckout(t, checkoutId), [orderId]);

    const shipped = await t.store.orders.fulfill(t.store.db, orderId);
    assert.equal(shipped.paymentState, 'captured');
    assert.equal((await stripe.paymentIntents.retrieve(intentId)).amount_received, total);
    const refunded = await t.store.orders.refund(t.store.db, orderId, 100, 'live suite');
    assert.equal(refunded.refunded, 100);
    assert.equal(refunded.paymentState, 'partially_refunded');
    const refunds = await stripe.refunds.list({ payment_intent: intentId });
    assert.deepEqual(refunds.data.map((r) => r.amount), [100]);
    const refundEvent = await stripeEvent('charge.refunded', (charge) => charge.payment_intent === intentId);
    assert.equal((await deliver(refundEvent)).status, 200);
    assert.equal((await readOrder(t.store.db, orderId))!.refunded, 100, 'the store’s own refund counted once');
  });

  it('a cancel before shipping releases the hold on Stripe', async () => {
    const { orderId, intentId } = await paidOrder(1, 'live-cancel@example.com');
    const canceled = await t.store.orders.cancel(t.store.db, orderId, 'live suite');
    assert.equal(canceled.paymentState, 'voided');
    assert.equal((await stripe.paymentIntents.retrieve(intentId)).status, 'canceled');
  });
});
