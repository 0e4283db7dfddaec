/**
 * The one vocabulary of an order's payment (src/payments/payment-words.ts), pure: each state's label and the buyer's
 * words, for the manual provider and a card hold; the approval page's words before the order exists; the policy
 * pages' terms. No sentence repeats its label, and none says the store "collects" payment.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { momentsIn } from '../../src/markup/moments.js';
import type { OrderPayment } from '../../src/orders/orders.js';
import { PAYMENT_STATES } from '../../src/payments/payment-handlers.js';
import {
  PAYMENT_LABELS,
  approvalPaymentWords,
  oneLineWords,
  paymentLine,
  paymentSentence,
  paymentTerms,
  textLines,
  type PaymentContext,
} from '../../src/payments/payment-words.js';

const DUE = new Date('2026-12-05T15:00:00Z');
const context: PaymentContext = { orderNumber: 1001, currency: 'USD', captureOn: 'fulfillment' };

const manual = (overrides: Partial<OrderPayment> = {}): OrderPayment => ({
  provider: 'manual',
  state: 'pending',
  amount: 2138,
  authorized: 0,
  authorizedUntil: null,
  dueAt: DUE,
  instructions: 'Bank transfer to IBAN DE89 3704 0044 0532 0130 00',
  captured: 0,
  refunded: 0,
  disputed: false,
  ...overrides,
});

const card = (overrides: Partial<OrderPayment> = {}): OrderPayment =>
  manual({ provider: 'stripe', state: 'authorized', authorized: 2138, authorizedUntil: new Date('2026-12-12T15:00:00Z'), dueAt: null, instructions: null, ...overrides });

describe('the buyer’s words for an order’s payment', () => {
  it('pending (manual): the amount, the due date, the instructions and the order number as the reference', () => {
    assert.equal(paymentSentence(manual(), context), 'Pay $21.38 by 5 December 2026 using: Bank transfer to IBAN DE89 3704 0044 0532 0130 00. Quote order #1001 as the payment reference.');
    assert.equal(paymentLine(manual(), context).split(': ')[0], 'Payment pending');
  });

  it("days in the store's zone (STORE_TIMEZONE): a moment late on 5 December in UTC is 6 December in Tokyo, 5 in New York", () => {
    const late = manual({ dueAt: new Date('2026-12-05T20:00:00Z') });
    assert.match(paymentSentence(late, context), / by 5 December 2026 using/);
    assert.match(paymentSentence(late, { ...context, moments: momentsIn('Asia/Tokyo') }), / by 6 December 2026 using/);
    assert.match(paymentSentence(late, { ...context, moments: momentsIn('America/New_York') }), / by 5 December 2026 using/);
    assert.match(paymentSentence(card({ authorizedUntil: new Date('2026-12-12T23:30:00Z') }), { ...context, moments: momentsIn('Europe/Berlin') }), /until 13 December 2026;/);
    const now = new Date('2026-11-28T20:00:00Z');
    const plan = { provider: 'manual' as const, instructions: 'Cash.', dueDays: 7, captureOn: 'fulfillment' as const };
    assert.match(approvalPaymentWords(plan, { total: 2138, currency: 'USD', now, moments: momentsIn('Asia/Tokyo') }).text, / by 6 December 2026 using:$/);
  });

  it('pending on an order with units canceled asks for what it keeps; nothing more when that is received', () => {
    assert.match(paymentSentence(manual(), { ...context, owed: 1500 }), /^Pay \$15\.00 by/);
    assert.equal(paymentSentence(manual({ captured: 1500 }), { ...context, owed: 1500 }), 'Nothing more is due.');
  });

  it('a card hold: how much, until when, and when it is charged as CAPTURE_ON says', () => {
    assert.equal(paymentSentence(card(), context), '$21.38 is held on your card until 12 December 2026; you are charged when the order ships.');
    assert.match(paymentSentence(card(), { ...context, captureOn: 'approval' }), /you are charged as the order is placed\.$/);
    assert.match(paymentSentence(card(), { ...context, captureOn: 'manual' }), /you are charged when the store takes the payment, before the hold ends\.$/);
  });

  it('paid, refunded in part or in full, with the amounts', () => {
    assert.equal(paymentSentence(manual({ state: 'captured', captured: 2138 }), context), 'The store received your payment of $21.38.');
    assert.equal(paymentSentence(card({ state: 'captured', captured: 2000 }), context), '$20.00 was charged to your card; the rest of the hold was released.');
    assert.equal(
      paymentSentence(card({ state: 'partially_refunded', captured: 2138, refunded: 500 }), context),
      '$21.38 was charged to your card; $5.00 of it was refunded to your card.',
    );
    assert.equal(paymentSentence(manual({ state: 'refunded', captured: 2138, refunded: 2138 }), context), 'The store received your payment of $21.38, and all of it was refunded to you.');
  });

  it('a manual payment received in part asks for the rest, by the same date and means', () => {
    assert.equal(
      paymentSentence(manual({ state: 'captured', captured: 1000 }), context),
      'The store received $10.00 of $21.38. Pay the remaining $11.38 by 5 December 2026 using: Bank transfer to IBAN DE89 3704 0044 0532 0130 00. Quote order #1001 as the payment reference.',
    );
  });

  it('voided, failed, disputed', () => {
    assert.equal(paymentSentence(manual({ state: 'voided' }), context), 'Nothing is due, as the order was canceled before it was paid.');
    assert.equal(paymentSentence(card({ state: 'voided' }), context), 'The hold on your card was released; you were not charged.');
    assert.equal(paymentSentence(card({ state: 'failed' }), context), 'Your card payment did not go through, so you were not charged.');
    assert.equal(paymentSentence(card({ state: 'disputed', captured: 2138, disputed: true }), context), 'Your bank opened a dispute about the $21.38 you paid; the store answers it with your bank.');
    assert.match(paymentSentence(card({ state: 'refunded', captured: 2138, refunded: 2138, disputed: true }), context), /Your bank opened a dispute about this payment\.$/);
  });

  it('every state has a label, and no line starts its words with its label’s words or says the store collects payment', () => {
    for (const state of PAYMENT_STATES) {
      for (const payment of [manual({ state, captured: state === 'pending' ? 0 : 2138 }), card({ state, captured: 2138 })]) {
        const label = PAYMENT_LABELS[state];
        assert.ok(label, state);
        const sentence = paymentSentence(payment, context);
        assert.ok(!sentence.toLowerCase().startsWith(label.split(' ')[0]!.toLowerCase()), `${state}: ${sentence}`);
        assert.doesNotMatch(sentence, /collects? payment/);
        assert.equal(paymentLine(payment, context), `${label}: ${sentence}`);
      }
    }
  });

  it('instructions of several lines: one line where a surface has one, their own lines in a text', () => {
    const payment = manual({ instructions: 'Bank transfer\nIBAN: DE89 3704 0044 0532 0130 00\nBIC: COBADEFFXXX.' });
    assert.equal(
      paymentSentence(payment, context),
      'Pay $21.38 by 5 December 2026 using: Bank transfer IBAN: DE89 3704 0044 0532 0130 00 BIC: COBADEFFXXX. Quote order #1001 as the payment reference.',
    );
    assert.deepEqual(textLines({ text: 'Pay $21.38 by 5 December 2026 using:', instructions: payment.instructions!, after: 'Quote order #1001 as the payment reference.' }, 'Payment pending'), [
      'Payment pending: Pay $21.38 by 5 December 2026 using:',
      '  Bank transfer',
      '  IBAN: DE89 3704 0044 0532 0130 00',
      '  BIC: COBADEFFXXX.',
      'Quote order #1001 as the payment reference.',
    ]);
  });
});

describe('before the order: the approval page and the policies', () => {
  const plan = { provider: 'manual' as const, instructions: 'Pay on delivery, in cash', dueDays: 7, captureOn: 'fulfillment' as const };

  it('the approval page says nothing is charged now, the amount, the date the payment would be due, how, and the reference to come', () => {
    assert.equal(
      oneLineWords(approvalPaymentWords(plan, { total: 2138, currency: 'USD', now: new Date('2026-11-28T09:00:00Z') })),
      'Nothing is charged now. Once you approve, pay $21.38 by 5 December 2026 using: Pay on delivery, in cash. Quote the order number you get as the payment reference.',
    );
    assert.equal(
      oneLineWords(approvalPaymentWords({ ...plan, provider: 'stripe' }, { total: 2138, currency: 'USD', now: new Date() })),
      "Once you approve, you pay by card on Stripe's payment page: $21.38 is held on your card and charged when the order ships.",
    );
  });

  it('the policies say how and by when, and where a refund goes', () => {
    const terms = paymentTerms(plan);
    assert.equal(
      oneLineWords(terms.how),
      'Nothing is charged when you approve. You pay within 7 days of the order using: Pay on delivery, in cash. Quote your order number (such as #1001) as the payment reference; the amount and the due date are on your order page and in your order confirmation.',
    );
    assert.match(paymentTerms({ ...plan, provider: 'stripe' }).refunds, /back to the card you paid with/);
  });
});
