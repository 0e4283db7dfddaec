/**
 * The order page says what is true of the order now (issue [payments], item 6): placed with its payment pending (the
 * amount, the merchant's instructions, the due date and the order number as the reference), paid, partly shipped
 * and shipped with tracking, canceled, partly and wholly refunded; and it offers "Continue shopping". Orders are
 * placed through the real checkout and moved by the merchant's actions (OrderActions), through the real app, on
 * both backends. The confirmation mail written for the order says the same payment.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { amountForKeptUnits } from '../../src/orders/order-machine.js';
import { readOrder, type Order } from '../../src/orders/orders.js';
import type { MailMessage } from '../../src/outbox/outbox.js';
import { formatDay } from '../../src/payments/payment-words.js';
import { orderPage } from '../../src/storefront/pages/order-page.js';
import { pageContext } from '../../src/storefront/pages/layout.js';
import { orderFixture, placeOrder } from '../helpers/orders.js';
import { backends, dropTestDatabases, startTestStore, testConfig, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const INSTRUCTIONS = 'Bank transfer to Ridge & Co, IBAN DE89 3704 0044 0532 0130 00';
const ESCAPED_INSTRUCTIONS = 'Bank transfer to Ridge &amp; Co, IBAN DE89 3704 0044 0532 0130 00';
const DUE_DAYS = 3;
const DAY_MS = 24 * 3600 * 1000;

/** The page's main text as a reader sees it: tags dropped, the usual entities read, spaces collapsed. */
const readable = (html: string) =>
  (/<main[^>]*>([\s\S]*)<\/main>/.exec(html)?.[1] ?? '')
    .replace(/<[^>]+>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ');

const headline = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];

for (const backend of backends) {
  describe(`the order page says what is true now (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      const base = testConfig();
      t = await startTestStore(backend, { config: { payment: { ...base.payment, provider: 'manual', instructions: INSTRUCTIONS, instructionsSet: true, dueDays: DUE_DAYS } } });
    });
    after(() => t.close());

    const variant = (sku: string): number => {
      const found = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
      if (!found) throw new Error(`no variant ${sku}`);
      return found.id;
    };

    /** Two units of one line and one of another, placed through the checkout and the buyer's approval. */
    const placed = () =>
      placeOrder(t.store, [
        { variantId: variant('HYD-LEMONLIME-30'), quantity: 2 },
        { variantId: variant('ESP-DEC-10'), quantity: 1 },
      ]);

    async function page(order: Pick<Order, 'id'>): Promise<{ html: string; text: string; title: string | undefined }> {
      const response = await t.app.inject({ method: 'GET', url: `/orders/${order.id}` });
      assert.equal(response.statusCode, 200, response.body);
      return { html: response.body, text: readable(response.body), title: headline(response.body) };
    }

    const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;

    it('placed, payment pending: the amount, the instructions, the due date and the order number as the reference; where mail goes; Continue shopping', async () => {
      const order = await placed();
      assert.equal(order.payment.provider, 'manual');
      assert.equal(order.payment.dueAt!.getTime(), order.createdAt.getTime() + DUE_DAYS * DAY_MS);
      const { html, text, title } = await page(order);
      assert.equal(title, `Thank you, your order #${order.number} is placed`);
      const pay = `Pay ${money(order.total)} by ${formatDay(order.payment.dueAt!)} using: ${ESCAPED_INSTRUCTIONS}. Quote order #${order.number} as the payment reference.`;
      assert.ok(html.includes(`<p class="payment"><strong>Payment pending:</strong> ${pay}</p>`), html);
      assert.match(text, /Mail about this order goes to buyer@example\.com\. We mail you when it ships\./);
      assert.ok(html.includes('<p><a href="/">Continue shopping</a></p>'));
      assert.doesNotMatch(text, /confirmation is on its way|collects payment/);
    });

    it('the confirmation mail of that order says the same: amount, instructions, reference and due date', async () => {
      const order = await placed();
      const [row] = await t.store.db.query<{ payload: MailMessage | string }>(
        `select payload from outbox where order_id = $1 and kind = 'mail' and topic = 'order.placed' order by id limit 1`,
        [order.id],
      );
      const mail = (typeof row!.payload === 'string' ? JSON.parse(row!.payload) : row!.payload) as MailMessage;
      assert.equal(mail.to, 'buyer@example.com');
      assert.ok(
        mail.text.includes(`Payment pending: Pay ${money(order.total)} by ${formatDay(order.payment.dueAt!)} using: ${INSTRUCTIONS}. Quote order #${order.number} as the payment reference.`),
        mail.text,
      );
    });

    it('paid: says the store received the payment, and asks for nothing more', async () => {
      const order = await placed();
      await t.store.orders.capture(t.store.db, order.id);
      const { text, title } = await page(order);
      assert.equal(title, `Order #${order.number} is paid`);
      assert.ok(text.includes(`Paid: The store received your payment of ${money(order.total)}.`), text);
      assert.doesNotMatch(text, /Pay \$|payment reference/);
    });

    it('partly shipped, then shipped: the headline follows, the shipment shows its carrier and tracking link', async () => {
      const order = await placed();
      await t.store.orders.capture(t.store.db, order.id);
      const first = order.lines[0]!;
      await t.store.orders.fulfill(t.store.db, order.id, {
        lines: new Map([[first.id, 1]]),
        carrier: 'UPS',
        trackingNumber: '1Z999AA10123456784',
        trackingUrl: 'https://carrier.example/track?n=1Z999AA10123456784',
      });
      const part = await page(order);
      assert.equal(part.title, `Part of order #${order.number} has shipped`);
      assert.ok(part.html.includes('via <bdi>UPS</bdi>, tracking <a href="https://carrier.example/track?n=1Z999AA10123456784"><bdi>1Z999AA10123456784</bdi></a>'), part.html);
      assert.match(part.text, /We mail you when the rest ships\./);

      await t.store.orders.fulfill(t.store.db, order.id);
      const whole = await page(order);
      assert.equal(whole.title, `Order #${order.number} has shipped`);
      assert.doesNotMatch(whole.text, /We mail you when|Expect the delivery/);
    });

    it('canceled before it was paid: says so, and that nothing is due', async () => {
      const order = await placed();
      await t.store.orders.cancel(t.store.db, order.id, 'Asked by the buyer');
      const { text, title } = await page(order);
      assert.equal(title, `Order #${order.number} is canceled`);
      assert.match(text, /This order was canceled: Asked by the buyer\./);
      assert.ok(text.includes('Payment voided: Nothing is due, as the order was canceled before it was paid.'), text);
      assert.doesNotMatch(text, /Pay \$|We mail you when/);
    });

    it('shipped in part, the rest canceled: says both, and a payment still due asks only for what was kept', async () => {
      const order = await placed();
      await t.store.orders.fulfill(t.store.db, order.id, { lines: new Map([[order.lines[0]!.id, 2]]) });
      await t.store.orders.cancel(t.store.db, order.id);
      const after = (await readOrder(t.store.db, order.id))!;
      assert.equal(after.payment.state, 'pending');
      const kept = amountForKeptUnits(after);
      assert.ok(kept < order.total, `${kept} < ${order.total}`);
      const { text, title } = await page(order);
      assert.equal(title, `Part of order #${order.number} has shipped; the rest is canceled`);
      assert.ok(text.includes(`Payment pending: Pay ${money(kept)} by ${formatDay(after.payment.dueAt!)} using: ${INSTRUCTIONS}. Quote order #${order.number} as the payment reference.`), text);
    });

    it('refunded in part, then in full: the amounts, and the headline once all of it is given back', async () => {
      const order = await placed();
      await t.store.orders.capture(t.store.db, order.id);
      await t.store.orders.refund(t.store.db, order.id, 500, 'A crushed pack');
      const part = await page(order);
      assert.equal(part.title, `Order #${order.number} is paid`);
      assert.ok(part.text.includes(`Partially refunded: The store received your payment of ${money(order.total)}; $5.00 of it was refunded to you.`), part.text);
      assert.match(part.text, /Refunds .*: \$5\.00 \(A crushed pack\)/);

      await t.store.orders.refund(t.store.db, order.id, order.total - 500);
      const whole = await page(order);
      assert.equal(whole.title, `Order #${order.number} is refunded`);
      assert.ok(whole.text.includes(`Refunded: The store received your payment of ${money(order.total)}, and all of it was refunded to you.`), whole.text);
      assert.equal((await readOrder(t.store.db, order.id))!.payment.state, 'refunded');
    });
  });
}

describe('the order page, rendered', () => {
  const context = pageContext(testConfig());

  it('sets instructions of several lines on lines of their own, between the amount due and the reference', () => {
    const order = orderFixture({
      paymentState: 'pending',
      payment: {
        provider: 'manual',
        state: 'pending',
        amount: 3000,
        authorized: 0,
        authorizedUntil: null,
        dueAt: new Date('2026-12-05T12:00:00Z'),
        instructions: 'Bank transfer to Ridge & Co\nIBAN: DE89 3704 0044 0532 0130 00\nBIC: COBADEFFXXX',
        captured: 0,
        refunded: 0,
        disputed: false,
      },
    });
    const html = orderPage(context, order);
    assert.ok(
      html.includes(`<div class="payment">
<p><strong>Payment pending:</strong> Pay $30.00 by 5 December 2026 using:</p>
<p class="instructions">Bank transfer to Ridge &amp; Co<br>IBAN: DE89 3704 0044 0532 0130 00<br>BIC: COBADEFFXXX</p>
<p>Quote order #1001 as the payment reference.</p>
</div>`),
      html,
    );
  });

  it('a card hold says how much is held, until when, and when it is charged (CAPTURE_ON)', () => {
    const html = orderPage(context, orderFixture(), { captureOn: 'fulfillment' });
    assert.ok(
      html.includes('<p class="payment"><strong>Payment authorized:</strong> $30.00 is held on your card until 15 April 2026; you are charged when the order ships.</p>'),
      html,
    );
  });
});
