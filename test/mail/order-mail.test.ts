/**
 * The order emails as pure renderings (src/mail/order-mail.ts): what the buyer's confirmation, shipment,
 * cancellation and refund mails and the merchant's notice say, in both parts; that whatever a buyer or an agent
 * typed is escaped in HTML and never reaches a header; and that a doubtful address gets no mail at all.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shippingOptions } from '../../src/checkout/shipping.js';
import { loadConfig } from '../../src/config.js';
import { oneLine, plainMailAddress } from '../../src/mail/mail-parts.js';
import { orderMails } from '../../src/mail/order-mail.js';
import { orderMailSubscriber } from '../../src/mail/order-mail-subscriber.js';
import type { Queryable } from '../../src/db/database.js';
import type { OrderEvent } from '../../src/orders/order-events.js';
import type { Adjustment, Fulfillment, Order, OrderPayment } from '../../src/orders/orders.js';
import type { MailShop } from '../../src/mail/mail-parts.js';
import { orderFixture, orderLine } from '../helpers/orders.js';

const MERCHANT = { storeName: 'Storefront', contactEmail: 'help@shop.example', address: ['1 Wharf St', 'Portland, ME 04101'] };
const SHOP: MailShop = { ...MERCHANT, baseUrl: 'https://shop.example', merchantEmail: 'merchant@shop.example' };

const line = orderLine;

/** A card payment of the whole total, held until April 15 (a hosted provider's authorization, as the fixture's). */
const held = (overrides: Partial<OrderPayment> = {}): OrderPayment => ({ ...orderFixture().payment, amount: 134_026, authorized: 134_026, ...overrides });

/** A manual payment: the merchant's instructions, due seven days after the order. */
const INSTRUCTIONS = 'Bank transfer to Fizz & Sons, IBAN DE89 3704 0044 0532 0130 00';
const due = (overrides: Partial<OrderPayment> = {}): OrderPayment =>
  held({ provider: 'manual', state: 'pending', authorized: 0, authorizedUntil: null, dueAt: new Date('2026-04-15T12:00:00Z'), instructions: INSTRUCTIONS, ...overrides });

/** Two lines (one partly backordered), tax and shipping: every part of a mail has something to show. */
function order(overrides: Partial<Order> = {}): Order {
  return orderFixture({
    subtotal: 124_500,
    tax: 9026,
    total: 134_026,
    payment: held(),
    lines: [
      line(),
      line({ id: 'line_2', position: 1, productTitle: 'Capsule', variantTitle: 'Default Title', title: 'Capsule', sku: 'CAPSULE', quantity: 5, unitPrice: 24_400, lineTotal: 122_000, backordered: 2 }),
    ],
    ...overrides,
  });
}

const placed = (value: Order = order()): OrderEvent => ({ type: 'placed', order: value });
const buyerMailOf = (event: OrderEvent, shop = SHOP) => orderMails(event, shop).find((mail) => mail.to === event.order.buyerEmail);
const merchantMailOf = (event: OrderEvent, shop = SHOP) => orderMails(event, shop).find((mail) => mail.to === 'merchant@shop.example');

describe('the buyer’s confirmation', () => {
  const mail = buyerMailOf(placed())!;

  it('goes to the buyer, with the store’s name and the order number in the subject', () => {
    assert.equal(mail.to, 'ada@example.com');
    assert.equal(mail.subject, 'Storefront: order #1001 confirmed');
  });

  it('lists each line with its title, quantity, unit price and line price, in both parts', () => {
    assert.match(mail.text, /- Drink stick - Mango\n {2}2 × \$12\.50 = \$25\.00/);
    assert.match(mail.text, /- Capsule\n {2}5 × \$244\.00 = \$1,220\.00/);
    for (const expected of ['Drink stick - Mango', '>2<', '$12.50', '$25.00', 'Capsule', '>5<', '$244.00', '$1,220.00']) {
      assert.ok(mail.html.includes(expected), `the HTML part has ${expected}`);
    }
  });

  it('gives the subtotal, shipping, tax and total as money', () => {
    // A label, then its amount: after a colon in the text part, in the next cell in the HTML part.
    const amount = (label: string, money: string) => new RegExp(`${label}(?::\\s|(?:<[^>]*>)+)${money.replace(/[$.]/g, '\\$&')}`);
    for (const part of [mail.text, mail.html]) {
      assert.match(part, amount('Subtotal', '$1,245.00'));
      assert.match(part, amount('Shipping', '$5.00'));
      assert.match(part, amount('Tax', '$90.26'));
      assert.match(part, amount('Total', '$1,340.26'));
    }
  });

  it('gives the address, the shipping option with its delivery estimate, the payment in words and the order link', () => {
    for (const part of [mail.text, mail.html]) {
      for (const expected of [
        'Ada Lovelace',
        '1 Market St',
        'San Francisco, CA 94105',
        'United States',
        'Standard shipping, 5 to 8 business days',
        'Payment authorized:',
        '$1,340.26 is held on your card until 15 April 2026',
      ]) {
        assert.ok(part.includes(expected), `${expected} in ${part === mail.text ? 'text' : 'HTML'}`);
      }
      assert.ok(part.includes('https://shop.example/orders/ord_abc123'));
    }
    assert.ok(mail.html.includes('href="https://shop.example/orders/ord_abc123"'));
  });

  it('says how many units of a backordered line ship later', () => {
    assert.match(mail.text, /- Capsule\n.*\n {2}2 of 5 ship later/);
    assert.ok(mail.html.includes('2 of 5 ship later'));
    assert.ok(!buyerMailOf(placed(order({ lines: [line()] })))!.text.includes('ship later'));
  });

  it('gives express shipping its own estimate, the one the checkout offered', () => {
    const express = buyerMailOf(placed(order({ shippingOption: { id: 'express', title: 'Express shipping', amount: 1500 } })))!;
    assert.ok(express.text.includes('Delivery: Express shipping, 2 business days ($15.00)'));
  });

  it('uses the same delivery estimates as the checkout’s shipping options', () => {
    for (const option of shippingOptions(loadConfig({}).checkout, 0)) {
      const mail = buyerMailOf(placed(order({ shippingOption: { id: option.id, title: option.title, amount: option.amount } })))!;
      assert.ok(mail.text.includes(`${option.title}, ${option.description}`), option.id);
    }
  });

  it('shows a line’s properties', () => {
    const engraved = buyerMailOf(placed(order({ lines: [line({ properties: { Engraving: 'For Ada' } })] })))!;
    assert.ok(engraved.text.includes('  Engraving: For Ada'));
    assert.ok(engraved.html.includes('Engraving: For Ada'));
  });

  it('tells the buyer where to write, quoting the number, and is signed by the store: its name, contact and address', () => {
    assert.ok(mail.text.includes('Questions? Write to help@shop.example and quote #1001.'));
    assert.ok(mail.text.endsWith('\n-- \nStorefront\nhelp@shop.example\n1 Wharf St\nPortland, ME 04101\n'), mail.text);
    assert.ok(mail.html.includes('Storefront<br><a href="mailto:help@shop.example" style="color:#0645ad">help@shop.example</a><br>1 Wharf St<br>Portland, ME 04101</p>'));
    const noAddress = buyerMailOf(placed(), { ...SHOP, address: [] })!;
    assert.ok(noAddress.text.endsWith('\n-- \nStorefront\nhelp@shop.example\n'), noAddress.text);
  });

  it('is a whole HTML document and a text part that reads on its own', () => {
    assert.match(mail.html, /^<!DOCTYPE html>/);
    assert.ok(mail.html.includes('<title>Storefront: order #1001 confirmed</title>'));
    assert.ok(!/<[a-z]/i.test(mail.text), 'no markup in the text part');
  });
});

describe('the merchant’s notice', () => {
  it('gives the number, the buyer’s email and name, the total, the lines and the command that shows the order', () => {
    const mail = merchantMailOf(placed())!;
    assert.equal(mail.subject, 'Storefront: new order #1001, $1,340.26');
    for (const part of [mail.text, mail.html]) {
      for (const expected of ['#1001', 'ada@example.com', 'Ada Lovelace', '$1,340.26', 'Drink stick - Mango', 'Capsule', 'npm run storefront -- orders show 1001', 'https://shop.example/admin/orders/1001']) {
        assert.ok(part.includes(expected), `${expected} in ${part === mail.text ? 'text' : 'HTML'}`);
      }
    }
  });

  it('names the command as a checkout runs it (or as the installed binary), and the order’s page in the admin beside it', () => {
    const mail = merchantMailOf(placed())!;
    assert.ok(mail.text.includes('See it:\nnpm run storefront -- orders show 1001\nOr in the admin: https://shop.example/admin/orders/1001\n'), mail.text);
    assert.ok(mail.html.includes('<code>npm run storefront -- orders show 1001</code><br>Or in the admin: <a href="https://shop.example/admin/orders/1001"'));
    const installed = merchantMailOf(placed(), { ...SHOP, command: 'storefront' })!;
    assert.match(installed.text, /^storefront orders show 1001$/m);
    assert.doesNotMatch(installed.text, /npm run/);
  });

  it('says whether an agent or a browser prepared the checkout', () => {
    assert.match(merchantMailOf(placed())!.text, /Checkout prepared by: an agent/);
    const browser = merchantMailOf(placed(order({ channel: 'browser' })))!;
    assert.match(browser.text, /Checkout prepared by: a browser/);
    assert.ok(!browser.text.includes('agent'));
  });

  it('is not written without a merchant address', () => {
    const mails = orderMails(placed(), { ...MERCHANT, baseUrl: 'https://shop.example' });
    assert.deepEqual(
      mails.map((mail) => mail.to),
      ['ada@example.com'],
    );
  });

  it('goes to the merchant’s address alone when the configured mailbox has a name', () => {
    const mails = orderMails(placed(), { ...SHOP, merchantEmail: 'Shop Owner <owner@shop.example>' });
    assert.deepEqual(
      mails.map((mail) => mail.to),
      ['ada@example.com', 'owner@shop.example'],
    );
  });

  it('tells the merchant when the buyer got no confirmation', () => {
    const mails = orderMails(placed(order({ buyerEmail: 'ada@example.com>, eve@example.com' })), SHOP);
    assert.deepEqual(
      mails.map((mail) => mail.to),
      ['merchant@shop.example'],
    );
    assert.match(mails[0]!.text, /No confirmation was mailed/);
  });
});

describe('what a buyer or an agent typed', () => {
  const hostile = order({
    buyer: { email: 'ada@example.com', firstName: '<script>alert(1)</script>', lastName: 'Lovelace\r\nBcc: x@y' },
    shippingAddress: {
      firstName: '<script>alert(1)</script>',
      lastName: 'Lovelace\r\nBcc: x@y',
      streetAddress: '1 <b>Market</b> St',
      locality: 'San Francisco',
      region: 'CA',
      postalCode: '94105',
      country: 'US',
    },
    lines: [line({ title: 'Stick <img src=x onerror=alert(1)>', properties: { '<i>Note</i>': '"quoted" & <u>underlined</u>' } })],
  });

  it('is escaped in the HTML part', () => {
    for (const mail of orderMails(placed(hostile), SHOP)) {
      assert.ok(!mail.html.includes('<script>'), mail.to);
      assert.ok(!mail.html.includes('<img'), mail.to);
      assert.ok(!mail.html.includes('<b>Market'), mail.to);
      assert.ok(!mail.html.includes('<i>Note'), mail.to);
      assert.ok(!mail.html.includes('<u>'), mail.to);
      assert.ok(mail.html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), mail.to);
      assert.ok(mail.html.includes('&lt;i&gt;Note&lt;/i&gt;: &quot;quoted&quot; &amp; &lt;u&gt;underlined&lt;/u&gt;'), mail.to);
    }
  });

  it('never reaches a header: the subject is one line without a name, and the recipient is the plain address', () => {
    const mails = orderMails(placed(hostile), SHOP);
    assert.equal(mails.length, 2);
    for (const mail of mails) {
      assert.ok(!/[\r\n]/.test(mail.subject) && !/[\r\n]/.test(mail.to));
      assert.ok(!mail.subject.includes('Lovelace') && !mail.subject.includes('script') && !mail.subject.includes('Bcc'));
      assert.ok(!mail.to.includes('Lovelace') && !mail.to.includes('<'));
    }
    assert.deepEqual(
      mails.map((mail) => mail.to),
      ['ada@example.com', 'merchant@shop.example'],
    );
  });

  it('keeps a name on one line in the bodies', () => {
    const mail = buyerMailOf(placed(hostile))!;
    assert.ok(mail.text.includes('Lovelace Bcc: x@y'));
    assert.ok(!/\r/.test(mail.text));
    assert.ok(!/^Bcc:/m.test(mail.text));
  });

  it('a store name with line breaks becomes one line in the subject', () => {
    const mail = buyerMailOf(placed(), { ...SHOP, storeName: 'Shop\r\nBcc: x@y\u202e' })!;
    assert.equal(mail.subject, 'Shop Bcc: x@y: order #1001 confirmed');
  });

  for (const email of ['ada@example.com\r\nBcc: x@y', 'ada@example.com\nx', 'Ada <ada@example.com>', 'ada@example.com, eve@example.com', '<ada@example.com>', 'ada@example', '"ada"@example.com', 'ada(x)@example.com', '']) {
    it(`gets no mail at ${JSON.stringify(email)}`, () => {
      const mails = orderMails(placed(order({ buyerEmail: email })), SHOP);
      assert.deepEqual(
        mails.map((mail) => mail.to),
        ['merchant@shop.example'],
      );
      for (const type of ['fulfilled', 'canceled', 'refunded'] as const) {
        const event = eventOf(type);
        event.order.buyerEmail = email;
        assert.deepEqual(orderMails(event, SHOP), [], type);
      }
    });
  }

  it('plain addresses pass as they are, international ones included', () => {
    for (const email of ['ada@example.com', 'ada.lovelace+orders@mail.example.co.uk', 'o\'brien@example.ie', 'zoë@exämple.de']) {
      assert.equal(plainMailAddress(email), email);
    }
  });

  it('oneLine turns every control character into one space', () => {
    assert.equal(oneLine(' a\r\n\tb\u0000c\u2028d\u202ee '), 'a b c d e');
  });
});

const shipped: Fulfillment = {
  id: 'ful_1',
  type: 'shipped',
  lines: [
    { lineId: 'line_1', quantity: 2 },
    { lineId: 'line_2', quantity: 3 },
  ],
  trackingNumber: '1Z999AA10123456784',
  trackingUrl: 'https://carrier.example/track?n=1Z999AA10123456784',
  carrier: 'UPS',
  occurredAt: new Date('2026-04-09T12:00:00Z'),
};

const adjustment = (overrides: Partial<Adjustment>): Adjustment => ({
  id: 'adj_1',
  type: 'refund',
  amount: -2500,
  lines: [],
  reason: null,
  occurredAt: new Date('2026-04-10T12:00:00Z'),
  ...overrides,
});

function eventOf(type: 'fulfilled' | 'canceled' | 'refunded'): OrderEvent {
  if (type === 'fulfilled') {
    const after = order();
    after.lines[0]!.fulfilled = 2;
    after.lines[1]!.fulfilled = 3;
    return { type, order: after, fulfillment: shipped };
  }
  if (type === 'canceled') {
    const after = order({ status: 'canceled', paymentState: 'voided', payment: due({ state: 'voided' }), cancelReason: 'Out of <stock>' });
    after.lines.forEach((each) => (each.canceled = each.quantity));
    return {
      type,
      order: after,
      // As OrderActions.cancel records it: the units canceled, as negative quantities.
      adjustment: adjustment({ type: 'cancellation', amount: 0, reason: 'Out of <stock>', lines: after.lines.map((each) => ({ lineId: each.id, quantity: -each.quantity })) }),
    };
  }
  return {
    type,
    order: order({ paymentState: 'partially_refunded', captured: 134_026, refunded: 4000, payment: held({ state: 'partially_refunded', captured: 134_026, refunded: 4000 }) }),
    adjustment: adjustment({ amount: -2500, reason: 'Damaged in <transit>', lines: [{ lineId: 'line_1', quantity: 2 }] }),
  };
}

describe('after the order is placed', () => {
  it('a shipment tells the buyer what shipped, the tracking, what is still to ship, and the order link', () => {
    const [mail, ...others] = orderMails(eventOf('fulfilled'), SHOP);
    assert.equal(others.length, 0, 'the merchant is not mailed');
    assert.equal(mail!.to, 'ada@example.com');
    assert.equal(mail!.subject, 'Storefront: part of order #1001 shipped');
    assert.match(mail!.text, /Shipped\n- 2 × Drink stick - Mango\n- 3 × Capsule/);
    assert.match(mail!.text, /Carrier: UPS\nTracking number: 1Z999AA10123456784\nTrack it: https:\/\/carrier\.example\/track\?n=1Z999AA10123456784/);
    assert.match(mail!.text, /Still to ship\n- 2 × Capsule/);
    assert.ok(mail!.text.includes('https://shop.example/orders/ord_abc123'));
    assert.ok(mail!.html.includes('href="https://carrier.example/track?n=1Z999AA10123456784"'));
    assert.ok(mail!.html.includes('Still to ship'));
  });

  it('the last shipment says everything has shipped', () => {
    const event = eventOf('fulfilled') as Extract<OrderEvent, { type: 'fulfilled' }>;
    event.order.lines[1]!.fulfilled = 3;
    event.order.lines[1]!.canceled = 2;
    const [mail] = orderMails(event, SHOP);
    assert.equal(mail!.subject, 'Storefront: order #1001 shipped');
    assert.ok(mail!.text.includes('Everything in this order has now shipped.'));
    assert.ok(!mail!.text.includes('Still to ship'));
  });

  it('a shipment without tracking says nothing of it, and a tracking address that is not a web page is not linked', () => {
    const event = eventOf('fulfilled') as Extract<OrderEvent, { type: 'fulfilled' }>;
    const [plain] = orderMails({ ...event, fulfillment: { ...shipped, trackingNumber: null, trackingUrl: null, carrier: null } }, SHOP);
    assert.ok(!/Carrier|Tracking|Track it/.test(plain!.text));
    const [hostile] = orderMails({ ...event, fulfillment: { ...shipped, trackingUrl: 'javascript:alert(1)', carrier: '<b>UPS</b>' } }, SHOP);
    assert.ok(!hostile!.html.includes('javascript:'));
    assert.ok(!hostile!.text.includes('javascript:'));
    assert.ok(hostile!.html.includes('&lt;b&gt;UPS&lt;/b&gt;'));
  });

  it('a cancellation says the order is canceled, why, what, and the payment’s state, promising no refund', () => {
    const [mail, ...others] = orderMails(eventOf('canceled'), SHOP);
    assert.equal(others.length, 0);
    assert.equal(mail!.subject, 'Storefront: order #1001 canceled');
    assert.ok(mail!.text.includes('Your order #1001 is canceled.'));
    assert.ok(mail!.text.includes('Reason: Out of <stock>'));
    assert.ok(mail!.html.includes('Reason: Out of &lt;stock&gt;'));
    assert.match(mail!.text, /Canceled\n- 2 × Drink stick - Mango\n- 5 × Capsule/);
    assert.ok(mail!.text.includes('\nPayment voided: Nothing is due, as the order was canceled before it was paid.\n'), mail!.text);
    assert.ok(!/will be refunded|refund/i.test(mail!.text));
    assert.ok(mail!.text.includes('https://shop.example/orders/ord_abc123'));
  });

  it('a cancellation of some units says part of the order is canceled', () => {
    const after = order();
    after.lines[1]!.canceled = 2;
    const [mail] = orderMails({ type: 'canceled', order: after, adjustment: adjustment({ type: 'cancellation', amount: 0, lines: [{ lineId: 'line_2', quantity: -2 }] }) }, SHOP);
    assert.equal(mail!.subject, 'Storefront: part of order #1001 canceled');
    assert.match(mail!.text, /Canceled\n- 2 × Capsule\n\n/);
    assert.ok(!mail!.text.includes('Reason:'));
  });

  it('a refund gives the amount as a positive sum, the reason and the total refunded so far', () => {
    const [mail, ...others] = orderMails(eventOf('refunded'), SHOP);
    assert.equal(others.length, 0);
    assert.equal(mail!.subject, 'Storefront: refund of $25.00 for order #1001');
    assert.ok(mail!.text.includes('We refunded $25.00 for your order #1001.'));
    assert.ok(!mail!.text.includes('-$25.00'));
    assert.ok(mail!.text.includes('Reason: Damaged in <transit>'));
    assert.ok(mail!.html.includes('Reason: Damaged in &lt;transit&gt;'));
    assert.ok(mail!.text.includes('Refunded so far, in all: $40.00.'));
    assert.ok(mail!.text.includes('\nPartially refunded: $1,340.26 was charged to your card; $40.00 of it was refunded to your card.\n'), mail!.text);
    assert.ok(mail!.text.includes('https://shop.example/orders/ord_abc123'));
  });

  it('every mail to the buyer is signed by the store; the merchant’s notice is not', () => {
    for (const type of ['fulfilled', 'canceled', 'refunded'] as const) {
      const [mail] = orderMails(eventOf(type), SHOP);
      assert.ok(mail!.text.includes('\n-- \nStorefront\nhelp@shop.example\n1 Wharf St\n'), type);
      assert.ok(mail!.html.includes('href="mailto:help@shop.example"'), type);
    }
    assert.ok(!merchantMailOf(placed())!.text.includes('\n-- \n'));
  });

  it('a capture mails no one', () => {
    assert.deepEqual(orderMails({ type: 'captured', order: order({ captured: 134_026, paymentState: 'captured', payment: held({ state: 'captured', captured: 134_026 }) }) }, SHOP), []);
  });
});

describe('a manual payment in the mails', () => {
  const manual = order({ paymentState: 'pending', payment: due() });
  const words = `Pay $1,340.26 by 15 April 2026 using: ${INSTRUCTIONS}. Quote order #1001 as the payment reference.`;
  const inHtml = `<strong>Payment pending:</strong> ${words.replace('&', '&amp;')}`;

  it('the confirmation says, after its first lines, the amount due, the due date, the instructions and the order number as the reference', () => {
    const mail = buyerMailOf(placed(manual))!;
    assert.ok(mail.text.includes(`It is confirmed.\n\nPayment pending: ${words}\n\nSome items`), mail.text);
    assert.ok(mail.html.includes(inHtml), mail.html);
  });

  it('the merchant’s notice says what the buyer was asked to pay, and by when', () => {
    const mail = merchantMailOf(placed(manual))!;
    assert.ok(mail.text.includes(`\nPayment pending: ${words}\n`), mail.text);
    assert.ok(mail.html.includes(inHtml));
  });

  it('instructions of several lines keep their lines, indented in the text part, each on its own line in the HTML part', () => {
    const bank = order({ paymentState: 'pending', payment: due({ instructions: 'Bank transfer to Fizz & Sons\nIBAN: DE89 3704 0044 0532 0130 00\nBIC: COBADEFFXXX' }) });
    const mail = buyerMailOf(placed(bank))!;
    assert.ok(
      mail.text.includes(
        'Payment pending: Pay $1,340.26 by 15 April 2026 using:\n  Bank transfer to Fizz & Sons\n  IBAN: DE89 3704 0044 0532 0130 00\n  BIC: COBADEFFXXX\nQuote order #1001 as the payment reference.\n',
      ),
      mail.text,
    );
    assert.ok(
      mail.html.includes(
        '<strong>Payment pending:</strong> Pay $1,340.26 by 15 April 2026 using:<br>Bank transfer to Fizz &amp; Sons<br>IBAN: DE89 3704 0044 0532 0130 00<br>BIC: COBADEFFXXX<br>Quote order #1001 as the payment reference.',
      ),
      mail.html,
    );
  });

  it("the due day is the store's (STORE_TIMEZONE): 23:30 UTC on 15 April is 16 April in Berlin, 15 April in New York", () => {
    const late = order({ paymentState: 'pending', payment: due({ dueAt: new Date('2026-04-15T23:30:00Z') }) });
    assert.match(buyerMailOf(placed(late))!.text, /Pay \$1,340\.26 by 15 April 2026 using/);
    assert.match(buyerMailOf(placed(late), { ...SHOP, timeZone: 'Europe/Berlin' })!.text, /Pay \$1,340\.26 by 16 April 2026 using/);
    assert.match(merchantMailOf(placed(late), { ...SHOP, timeZone: 'Europe/Berlin' })!.text, /Pay \$1,340\.26 by 16 April 2026 using/);
    assert.match(buyerMailOf(placed(late), { ...SHOP, timeZone: 'America/New_York' })!.text, /Pay \$1,340\.26 by 15 April 2026 using/);
  });

  it('a payment received in part asks for the rest, by the same date and the same means', () => {
    const part = order({ paymentState: 'captured', payment: due({ state: 'captured', captured: 34_026 }) });
    const [mail] = orderMails({ type: 'canceled', order: part, adjustment: adjustment({ type: 'cancellation', amount: 0, lines: [] }) }, SHOP);
    assert.ok(
      mail!.text.includes(`Paid: The store received $340.26 of $1,340.26. Pay the remaining $1,000.00 by 15 April 2026 using: ${INSTRUCTIONS}. Quote order #1001 as the payment reference.`),
      mail!.text,
    );
  });
});

/** The lines of a mail's text part, and of its HTML part as a reader sees them (tags dropped, entities read). */
function readLines(mail: { text: string; html: string }): string[] {
  const html = mail.html
    .replace(/<(br|\/p|\/tr|\/h2|\/td)[^>]*>/g, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
  return [...mail.text.split('\n'), ...html.split('\n')].map((line) => line.trim());
}

/** A line "Label: value" whose value starts with its label's first word ("Payment: Payment pending: …"). */
function repeatsItsLabel(line: string): boolean {
  const match = /^([A-Za-z][^:]{0,40}): (.+)$/.exec(line);
  if (!match) return false;
  const firstWord = (text: string) => /[a-z]+/.exec(text.toLowerCase())?.[0];
  return firstWord(match[1]!) === firstWord(match[2]!);
}

describe('the payment’s words in every mail', () => {
  const STATES = ['pending', 'authorized', 'captured', 'partially_refunded', 'refunded', 'voided', 'failed', 'disputed'] as const;
  const payments = STATES.flatMap((state) => [
    due({ state, captured: state === 'pending' ? 0 : 134_026, refunded: state === 'refunded' ? 134_026 : state === 'partially_refunded' ? 4000 : 0 }),
    held({ state, captured: ['pending', 'authorized', 'voided', 'failed'].includes(state) ? 0 : 134_026, refunded: state === 'refunded' ? 134_026 : state === 'partially_refunded' ? 4000 : 0 }),
  ]);
  const mailsOf = (payment: OrderPayment) => {
    const events: OrderEvent[] = [placed(order({ paymentState: payment.state, payment })), ...(['fulfilled', 'canceled', 'refunded'] as const).map(eventOf)];
    for (const event of events.slice(1)) event.order.payment = payment;
    return events.flatMap((event) => orderMails(event, SHOP));
  };

  it('the check finds a line that repeats its label', () => {
    assert.ok(repeatsItsLabel('Payment: Payment pending: the store collects payment after the order is placed.'));
    assert.ok(!repeatsItsLabel('Payment pending: Pay $21.38 by 5 December 2026 using: bank transfer.'));
  });

  it('no line of any mail, in either part, repeats its label, whatever the payment’s state and provider', () => {
    for (const payment of payments) {
      for (const mail of mailsOf(payment)) {
        const repeated = readLines(mail).filter(repeatsItsLabel);
        assert.deepEqual(repeated, [], `${payment.provider} ${payment.state}: ${mail.subject}`);
      }
    }
  });

  it('no mail says the store collects payment, and every mail that speaks of a pending payment says how and by when', () => {
    for (const payment of payments) {
      for (const mail of mailsOf(payment)) {
        assert.doesNotMatch(mail.text, /collects? payment/i, `${payment.provider} ${payment.state}: ${mail.subject}`);
        assert.doesNotMatch(mail.html, /collects? payment/i);
      }
      if (payment.provider === 'manual' && payment.state === 'pending') {
        for (const mail of orderMails(placed(order({ paymentState: 'pending', payment })), SHOP)) {
          assert.match(mail.text, /Pay \$1,340\.26 by 15 April 2026 using: Bank transfer/, mail.subject);
        }
      }
    }
  });
});

describe('the mail subscriber', () => {
  it('writes each mail of an event to the outbox in the event’s transaction, with its order, topic and deadline', async () => {
    const writes: (readonly unknown[])[] = [];
    const tx: Queryable = {
      query: async <T,>(_sql: string, params: readonly unknown[] = []) => {
        writes.push(params);
        return [] as T[];
      },
    };
    const subscriber = orderMailSubscriber(SHOP, 259_200);
    await subscriber(tx, placed());
    await subscriber(tx, { type: 'captured', order: order() });
    assert.deepEqual(
      writes.map(([kind, topic, , orderId, payload, deadline]) => [kind, topic, orderId, (JSON.parse(payload as string) as { to: string }).to, deadline]),
      [
        ['mail', 'order.placed', 'ord_abc123', 'ada@example.com', 259_200],
        ['mail', 'order.placed', 'ord_abc123', 'merchant@shop.example', 259_200],
      ],
    );
  });
});
