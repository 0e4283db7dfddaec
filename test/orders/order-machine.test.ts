/**
 * The order's transition table (src/orders/order-machine.ts), pure: each payment move from each state is allowed or
 * refused with a coded refusal; fulfilment is derived from the lines; what a capture takes, what a cancel does to the
 * money, when a shipment or the approval captures, and the flags the orders list shows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  amountForKeptUnits,
  authorizationNearExpiry,
  cancelRefusal,
  captureAmount,
  captureAtApproval,
  captureAtShipment,
  fulfilmentState,
  fulfilRefusal,
  paymentOnCancel,
  paymentOverdue,
  paymentRefusal,
  paymentStateAfterMoney,
  PAYMENT_TRANSITIONS,
  type OrderFacts,
} from '../../src/orders/order-machine.js';
import { PAYMENT_STATES } from '../../src/payments/payment-handlers.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const DAY = 24 * 60 * 60 * 1000;

/** 2 × $10 and 1 × $5, $5 shipping, $2.50 tax: $32.50, placed, nothing shipped. */
function facts(overrides: Partial<Omit<OrderFacts, 'payment'>> & { payment?: Partial<OrderFacts['payment']> } = {}): OrderFacts {
  const { payment, ...rest } = overrides;
  return {
    number: 1001,
    currency: 'USD',
    status: 'placed',
    lines: [
      { quantity: 2, fulfilled: 0, canceled: 0, unitPrice: 1000 },
      { quantity: 1, fulfilled: 0, canceled: 0, unitPrice: 500 },
    ],
    subtotal: 2500,
    shipping: 500,
    tax: 250,
    total: 3250,
    now: NOW,
    ...rest,
    payment: {
      provider: 'manual',
      holdsFunds: false,
      state: 'pending',
      authorized: 0,
      authorizedUntil: null,
      captured: 0,
      refunded: 0,
      capturing: 0,
      refunding: 0,
      ...payment,
    },
  };
}

const held = (payment: Partial<OrderFacts['payment']> = {}) => ({
  provider: 'stripe' as const,
  holdsFunds: true,
  state: 'authorized' as const,
  authorized: 3250,
  authorizedUntil: new Date(NOW.getTime() + 6 * DAY),
  ...payment,
});

describe('the order machine', () => {
  it('lists a row for every payment state; refunded, voided and failed allow no move', () => {
    assert.deepEqual(Object.keys(PAYMENT_TRANSITIONS).sort(), [...PAYMENT_STATES].sort());
    for (const closed of ['refunded', 'voided', 'failed'] as const) assert.deepEqual(Object.keys(PAYMENT_TRANSITIONS[closed]), [], closed);
  });

  describe('capture', () => {
    it('a pending manual payment captures what is owed; a second capture is refused already_captured', () => {
      assert.equal(paymentRefusal('capture', facts(), 3250), undefined);
      assert.equal(captureAmount(facts()), 3250);
      const paid = facts({ payment: { state: 'captured', captured: 3250 } });
      assert.equal(paymentRefusal('capture', paid, captureAmount(paid))?.code, 'already_captured');
    });

    it('part of it, then the rest (a manual payment arriving in parts); more than is left is capture_exceeds', () => {
      assert.equal(paymentRefusal('capture', facts(), 1000), undefined);
      const part = facts({ payment: { state: 'captured', captured: 1000 } });
      assert.equal(captureAmount(part), 2250);
      assert.equal(paymentRefusal('capture', part, 2250), undefined);
      const over = paymentRefusal('capture', part, 2251);
      assert.equal(over?.code, 'capture_exceeds');
      assert.deepEqual(over?.params, { number: 1001, amount: 2251, left: 2250 });
      assert.match(over!.content, /\$22\.51 is more than order #1001 has to capture: \$22\.50/);
    });

    it('a capture under way counts: the same amount again is refused', () => {
      const underWay = facts({ payment: { capturing: 3250 } });
      assert.equal(paymentRefusal('capture', underWay, 3250)?.code, 'already_captured');
    });

    it("a provider's hold is captured once, before it lapses, for at most what it holds", () => {
      const hold = facts({ payment: held() });
      assert.equal(paymentRefusal('capture', hold, 3250), undefined);
      assert.equal(paymentRefusal('capture', hold, 3251)?.code, 'capture_exceeds');
      const lapsed = facts({ payment: held({ authorizedUntil: new Date(NOW.getTime() - 1) }) });
      assert.equal(paymentRefusal('capture', lapsed, 3250)?.code, 'authorization_expired');
      const once = facts({ payment: held({ state: 'captured', captured: 2000 }) });
      assert.equal(paymentRefusal('capture', once, 1250)?.code, 'already_captured');
    });

    it('an order canceled before anything shipped has nothing to capture; voided and failed payments are named', () => {
      const canceled = facts({ status: 'canceled', lines: [{ quantity: 2, fulfilled: 0, canceled: 2, unitPrice: 1000 }], payment: { state: 'voided' } });
      assert.equal(paymentRefusal('capture', canceled, 100)?.code, 'order_canceled');
      const failed = paymentRefusal('capture', facts({ payment: held({ state: 'failed' }) }), 100);
      assert.equal(failed?.code, 'payment_state');
      assert.match(failed!.content, /payment is failed; it cannot be captured/);
    });

    it('an amount that is not a positive whole number of cents is invalid_amount', () => {
      for (const amount of [0, -1, 1.5, Number.NaN]) assert.equal(paymentRefusal('capture', facts(), amount)?.code, 'invalid_amount', String(amount));
    });
  });

  describe('refund', () => {
    it('nothing captured: not_captured, whatever the state', () => {
      for (const state of ['pending', 'authorized', 'voided', 'failed'] as const) {
        assert.equal(paymentRefusal('refund', facts({ payment: { state } }), 100)?.code, 'not_captured', state);
      }
    });

    it('never above captured − refunded − refunds under way', () => {
      const paid = facts({ payment: { state: 'partially_refunded', captured: 3250, refunded: 1000, refunding: 1000 } });
      assert.equal(paymentRefusal('refund', paid, 1250), undefined);
      const over = paymentRefusal('refund', paid, 1251);
      assert.equal(over?.code, 'refund_exceeds');
      assert.deepEqual(over?.params, { number: 1001, amount: 1251, left: 1250, captured: 3250 });
      const done = facts({ payment: { state: 'refunded', captured: 3250, refunded: 3250 } });
      assert.equal(paymentRefusal('refund', done, 1)?.code, 'refund_exceeds');
    });

    it('a disputed payment may still be refunded', () => {
      assert.equal(paymentRefusal('refund', facts({ payment: { state: 'disputed', captured: 3250 } }), 100), undefined);
    });
  });

  describe('void, fail, expire, dispute', () => {
    it('void only when nothing is captured', () => {
      assert.equal(paymentRefusal('void', facts()), undefined);
      assert.equal(paymentRefusal('void', facts({ payment: held() })), undefined);
      assert.equal(paymentRefusal('void', facts({ payment: { capturing: 100 } }))?.code, 'already_captured');
      assert.equal(paymentRefusal('void', facts({ payment: { state: 'captured', captured: 3250 } }))?.code, 'payment_state');
    });

    it('expire only once the hold lapsed', () => {
      assert.equal(paymentRefusal('expire', facts({ payment: held() }))?.code, 'authorization_current');
      assert.equal(paymentRefusal('expire', facts({ payment: held({ authorizedUntil: NOW }) })), undefined);
      assert.equal(paymentRefusal('expire', facts())?.code, 'payment_state');
    });

    it('dispute a captured payment; fail one not captured', () => {
      assert.equal(paymentRefusal('dispute', facts({ payment: { state: 'captured', captured: 3250 } })), undefined);
      assert.equal(paymentRefusal('dispute', facts())?.code, 'payment_state');
      assert.equal(paymentRefusal('fail', facts({ payment: held() })), undefined);
      assert.equal(paymentRefusal('fail', facts({ payment: { state: 'captured', captured: 1 } }))?.code, 'payment_state');
    });
  });

  describe('fulfilment and cancel', () => {
    it('fulfilment is derived from the lines', () => {
      const line = (fulfilled: number, canceled: number) => ({ quantity: 2, fulfilled, canceled, unitPrice: 1 });
      assert.equal(fulfilmentState([line(0, 0)]), 'unfulfilled');
      assert.equal(fulfilmentState([line(1, 0)]), 'partially_fulfilled');
      assert.equal(fulfilmentState([line(2, 0), line(0, 0)]), 'partially_fulfilled');
      assert.equal(fulfilmentState([line(2, 0)]), 'fulfilled');
      assert.equal(fulfilmentState([line(1, 1)]), 'partially_canceled');
      assert.equal(fulfilmentState([line(0, 2)]), 'canceled');
    });

    it('a canceled order cannot ship or be canceled again; one shipped in full cannot be canceled', () => {
      assert.equal(fulfilRefusal(facts({ status: 'canceled' }))?.code, 'order_canceled');
      assert.equal(fulfilRefusal(facts()), undefined);
      assert.equal(cancelRefusal(facts({ status: 'canceled' }))?.code, 'already_canceled');
      const shipped = facts({ lines: [{ quantity: 2, fulfilled: 2, canceled: 0, unitPrice: 1000 }] });
      assert.equal(cancelRefusal(shipped)?.code, 'shipped_in_full');
      assert.equal(cancelRefusal(facts()), undefined);
      // A capture the provider has not answered: what the cancel gives back is not known yet.
      assert.equal(cancelRefusal(facts({ payment: { holdsFunds: true, state: 'authorized', authorized: 3250, capturing: 3250 } }))?.code, 'payment_under_way');
      assert.equal(cancelRefusal(facts({ payment: { holdsFunds: true, state: 'captured', captured: 3250, refunding: 500 } }))?.code, 'payment_under_way');
    });

    it('what the kept units ask: their prices, the shipping and their share of the tax (rounded down); nothing kept asks nothing', () => {
      assert.equal(amountForKeptUnits(facts()), 3250);
      const oneShipped = facts({
        lines: [
          { quantity: 2, fulfilled: 1, canceled: 1, unitPrice: 1000 },
          { quantity: 1, fulfilled: 0, canceled: 1, unitPrice: 500 },
        ],
      });
      assert.equal(amountForKeptUnits(oneShipped), 1000 + 500 + 100);
      assert.equal(amountForKeptUnits(facts({ lines: [{ quantity: 2, fulfilled: 0, canceled: 2, unitPrice: 1000 }] })), 0);
    });

    it('a cancel releases a hold, captures what shipped from one, refunds what a provider captured beyond what shipped', () => {
      const all = [
        { quantity: 2, fulfilled: 0, canceled: 2, unitPrice: 1000 },
        { quantity: 1, fulfilled: 0, canceled: 1, unitPrice: 500 },
      ];
      const part = [
        { quantity: 2, fulfilled: 1, canceled: 1, unitPrice: 1000 },
        { quantity: 1, fulfilled: 0, canceled: 1, unitPrice: 500 },
      ];
      assert.deepEqual(paymentOnCancel(facts({ status: 'canceled', lines: all, payment: held() })), { kind: 'void' });
      assert.deepEqual(paymentOnCancel(facts({ status: 'canceled', lines: all })), { kind: 'void' });
      assert.deepEqual(paymentOnCancel(facts({ status: 'canceled', lines: part, payment: held() })), { kind: 'capture', amount: 1600 });
      assert.deepEqual(paymentOnCancel(facts({ status: 'canceled', lines: part, payment: held({ state: 'captured', captured: 3250 }) })), { kind: 'refund', amount: 1650 });
      // The manual provider: the merchant gives money back and records it; nothing is claimed for them.
      assert.deepEqual(paymentOnCancel(facts({ status: 'canceled', lines: part, payment: { state: 'captured', captured: 3250 } })), { kind: 'none' });
      assert.deepEqual(paymentOnCancel(facts({ status: 'canceled', lines: part })), { kind: 'none' });
    });
  });

  describe('when a hold is captured (CAPTURE_ON)', () => {
    it('fulfillment: at the first shipment, everything not canceled; never for the manual provider or a second time', () => {
      assert.equal(captureAtShipment(facts({ payment: held() }), 'fulfillment'), 3250);
      assert.equal(captureAtShipment(facts({ payment: held() }), 'manual'), 0);
      assert.equal(captureAtShipment(facts({ payment: held() }), 'approval'), 0);
      assert.equal(captureAtShipment(facts(), 'fulfillment'), 0);
      assert.equal(captureAtShipment(facts({ payment: held({ state: 'captured', captured: 3250 }) }), 'fulfillment'), 0);
      assert.equal(captureAtShipment(facts({ payment: held({ authorizedUntil: NOW }) }), 'fulfillment'), 0, 'a lapsed hold');
    });

    it('approval: at once after placing', () => {
      assert.equal(captureAtApproval(facts({ payment: held() }), 'approval'), 3250);
      assert.equal(captureAtApproval(facts({ payment: held() }), 'fulfillment'), 0);
      assert.equal(captureAtApproval(facts(), 'approval'), 0);
    });
  });

  it('the state once money moved', () => {
    assert.equal(paymentStateAfterMoney('pending', 3250, 0), 'captured');
    assert.equal(paymentStateAfterMoney('captured', 3250, 1), 'partially_refunded');
    assert.equal(paymentStateAfterMoney('partially_refunded', 3250, 3250), 'refunded');
    assert.equal(paymentStateAfterMoney('authorized', 0, 0), 'authorized');
    assert.equal(paymentStateAfterMoney('disputed', 3250, 3250), 'disputed');
  });

  it('flags: a manual payment past its due date; a hold lapsing within the warning window', () => {
    assert.equal(paymentOverdue({ state: 'pending', dueAt: new Date(NOW.getTime() - 1), captured: 0 }, NOW), true);
    assert.equal(paymentOverdue({ state: 'pending', dueAt: new Date(NOW.getTime() + 1), captured: 0 }, NOW), false);
    assert.equal(paymentOverdue({ state: 'captured', dueAt: new Date(NOW.getTime() - 1), captured: 1 }, NOW), false);
    const hold = (until: number) => ({ payment: { state: 'authorized' as const, captured: 0, authorizedUntil: new Date(NOW.getTime() + until) }, now: NOW });
    assert.equal(authorizationNearExpiry(hold(DAY - 1), DAY), true);
    assert.equal(authorizationNearExpiry(hold(DAY + 1), DAY), false);
  });
});
