/**
 * The payment's news as pure renderings (src/mail/payment-mail.ts, reached through orderMails as the subscriber
 * does): who each event mails, that what the provider wrote (a reason) is escaped in the HTML part and never reaches
 * a subject or a second line, that a store without MERCHANT_EMAIL mails the merchant nothing and a doubtful buyer
 * address gets no mail, the warning's moment in the store's zone (UTC unless STORE_TIMEZONE says), and the command
 * and admin page each merchant's mail names. What each mail says to whom, once, on both backends, is
 * test/orders/payment-news.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MailShop } from '../../src/mail/mail-parts.js';
import { orderMails } from '../../src/mail/order-mail.js';
import type { OrderEvent } from '../../src/orders/order-events.js';
import type { Order } from '../../src/orders/orders.js';
import { orderFixture } from '../helpers/orders.js';

const SHOP: MailShop = { storeName: 'Storefront', contactEmail: 'help@shop.example', address: [], baseUrl: 'https://shop.example', merchantEmail: 'Shop <merchant@shop.example>' };
const BUYER = 'ada@example.com';
const MERCHANT = 'merchant@shop.example';

/** A card hold of the whole total, as a hosted provider's approval leaves an order. */
const held = (overrides: Partial<Order> = {}): Order => {
  const order = orderFixture(overrides);
  return { ...order, payment: { ...order.payment, provider: 'stripe', state: 'authorized', authorized: order.total, authorizedUntil: new Date('2026-04-15T09:05:00Z') } };
};

const recipients = (event: OrderEvent, shop: MailShop = SHOP) => orderMails(event, shop).map((mail) => mail.to);

describe('who the payment’s news mails', () => {
  const order = held();
  it('a dispute: the merchant alone; a failure and a released hold: the buyer and the merchant; a hold lapsing: the merchant', () => {
    assert.deepEqual(recipients({ type: 'disputed', order, dispute: { amount: 500, reason: 'fraudulent' } }), [MERCHANT]);
    assert.deepEqual(recipients({ type: 'payment_failed', order, reason: 'declined' }), [BUYER, MERCHANT]);
    assert.deepEqual(recipients({ type: 'payment_voided', order }), [BUYER, MERCHANT]);
    assert.deepEqual(recipients({ type: 'payment_expiring', order }), [MERCHANT]);
  });

  it('no MERCHANT_EMAIL: the merchant is mailed nothing; a buyer address that is not one plain address: the buyer neither', () => {
    const { merchantEmail: _unset, ...noMerchant } = SHOP;
    assert.deepEqual(recipients({ type: 'disputed', order, dispute: { amount: 500, reason: 'fraudulent' } }, noMerchant), []);
    assert.deepEqual(recipients({ type: 'payment_failed', order: held({ buyerEmail: 'Ada <ada@example.com>, eve@example.com' }), reason: 'declined' }), [MERCHANT]);
  });
});

describe('what the provider wrote', () => {
  const hostile = 'Declined <script>alert(1)</script>\r\nBcc: eve@example.com';
  const mails = orderMails({ type: 'payment_failed', order: held(), reason: hostile }, SHOP);

  it('is escaped in the HTML part and kept on one line in the text part', () => {
    for (const mail of mails) {
      assert.ok(mail.html.includes('Declined &lt;script&gt;alert(1)&lt;/script&gt; Bcc: eve@example.com'), mail.to);
      assert.ok(!mail.html.includes('<script>'), mail.to);
      assert.doesNotMatch(mail.text, /^Bcc:/m, mail.to);
    }
  });

  it('never reaches a subject', () => {
    for (const mail of mails) assert.doesNotMatch(mail.subject, /Declined|script|Bcc/, mail.subject);
  });
});

describe('the warning of a hold about to lapse', () => {
  it('says when, in UTC, and the command that captures it; with CAPTURE_ON=manual it does not offer shipping as a way', () => {
    const [mail] = orderMails({ type: 'payment_expiring', order: held() }, { ...SHOP, captureOn: 'manual' });
    assert.match(mail!.text, /lapses on 15 April 2026, 09:05 UTC, and nothing of it is captured yet\./);
    assert.match(mail!.text, /^npm run storefront -- orders capture 1001\nOr in the admin: https:\/\/shop\.example\/admin\/orders\/1001$/m);
    assert.doesNotMatch(mail!.text, /ship it/);
  });

  it('STORE_TIMEZONE=Europe/Berlin: the moment shifted, with its zone (CEST in April, CET in winter)', () => {
    const [april] = orderMails({ type: 'payment_expiring', order: held() }, { ...SHOP, timeZone: 'Europe/Berlin' });
    assert.match(april!.text, /lapses on 15 April 2026, 11:05 CEST, and nothing/);
    assert.match(april!.html, /lapses on 15 April 2026, 11:05 CEST, and nothing/);
    const winter = held();
    const december: Order = { ...winter, payment: { ...winter.payment, authorizedUntil: new Date('2026-12-31T23:30:00Z') } };
    const [mail] = orderMails({ type: 'payment_expiring', order: december }, { ...SHOP, timeZone: 'Europe/Berlin' });
    assert.match(mail!.text, /lapses on 1 January 2027, 00:30 CET, and nothing/);
    const [newYork] = orderMails({ type: 'payment_expiring', order: december }, { ...SHOP, timeZone: 'America/New_York' });
    assert.match(newYork!.text, /lapses on 31 December 2026, 18:30 (?:EST|GMT-5), and nothing/);
  });
});

describe('the commands the merchant’s mails name', () => {
  const order = held();
  const merchantText = (event: OrderEvent, shop: MailShop = SHOP) => orderMails(event, shop).find((mail) => mail.to === MERCHANT)!;
  const cases: [string, OrderEvent, string][] = [
    ['a dispute', { type: 'disputed', order, dispute: { amount: 500, reason: 'fraudulent' } }, 'orders show 1001'],
    ['a failed payment', { type: 'payment_failed', order, reason: 'declined' }, 'orders cancel 1001 --reason "payment not received"'],
    ['a released hold', { type: 'payment_voided', order }, 'orders cancel 1001 --reason "payment not received"'],
    ['a hold about to lapse', { type: 'payment_expiring', order }, 'orders capture 1001'],
  ];

  for (const [what, event, args] of cases) {
    it(`${what}: \`npm run storefront -- ${args}\` as a checkout runs it, and the order's page in the admin`, () => {
      const mail = merchantText(event);
      assert.ok(mail.text.includes(`\nnpm run storefront -- ${args}\nOr in the admin: https://shop.example/admin/orders/1001\n`), mail.text);
      assert.ok(mail.html.includes(`<code>npm run storefront -- ${args.replace(/"/g, '&quot;')}</code><br>Or in the admin: <a href="https://shop.example/admin/orders/1001"`), mail.html);
      // Never the bare binary's name, which a checkout does not have on its PATH.
      assert.doesNotMatch(mail.text, /^storefront /m);
      const installed = merchantText(event, { ...SHOP, command: 'storefront' });
      assert.ok(installed.text.includes(`\nstorefront ${args}\n`), installed.text);
    });
  }
});
