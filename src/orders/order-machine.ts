/**
 * The order's states and the moves between them, read at a glance, like the checkout's (src/checkout/machine.ts):
 * one table of the moves each payment state allows, each move with the named guard that may refuse it. A guard
 * returns a coded refusal (a stable code, default words with no protocol in them, and the figures a door needs);
 * `OrderActionRefused` carries it. No I/O here: src/orders/order-actions.ts reads the order, asks, and writes.
 *
 * Payment (one column, `payment_state`):
 *
 *   pending ──capture──> captured ──refund──> partially_refunded ──refund──> refunded
 *     │  (manual: the merchant says the money arrived)   ▲
 *     │                                                  │
 *   authorized ──capture (once; a provider's hold)───────┘
 *     │  ├──void (cancel releases the hold; a canceled manual order before payment)──> voided
 *     │  └──expire (the hold lapsed uncaptured) / fail (the provider says so)──────────> failed
 *   captured, partially_refunded ──dispute──> disputed (the flag stays once raised)
 *
 * Fulfilment is derived from the lines (units shipped, canceled, left): unfulfilled, partially_fulfilled,
 * fulfilled, canceled (nothing shipped, all canceled), partially_canceled (some shipped, the rest canceled).
 *
 * Capture rules (CAPTURE_ON, for a provider that holds the buyer's money): `fulfillment` (the default) captures at the
 * first shipment the amount of everything not canceled; `approval` at once after the order is placed; `manual` only
 * by the merchant's command. A cancel releases the hold (nothing captured) or refunds what was captured beyond what
 * shipped. Refunds never exceed captured − refunded − refunds under way. With the manual provider CAPTURE_ON does
 * not apply: the merchant captures when the money arrived, and a cancel never claims money was given back.
 */
import { formatMoney } from '../catalog/types.js';
import type { PaymentState } from '../payments/payment-handlers.js';
import type { PaymentProviderName } from '../payments/payment-provider.js';
import type { OrderLine, OrderStatus } from './orders.js';

export const CAPTURE_ON = ['fulfillment', 'approval', 'manual'] as const;
export type CaptureOn = (typeof CAPTURE_ON)[number];

/** Why a move on an order is refused: a stable code, default words, and the figures behind them. */
export interface OrderRefusal {
  code: string;
  content: string;
  params?: Record<string, string | number>;
}

export type FulfilmentState = 'unfulfilled' | 'partially_fulfilled' | 'fulfilled' | 'partially_canceled' | 'canceled';

/** What the guards look at: the order, its lines, and its money (with the reservations of calls under way). */
export interface OrderFacts {
  number: number;
  currency: string;
  status: OrderStatus;
  lines: readonly Pick<OrderLine, 'quantity' | 'fulfilled' | 'canceled' | 'unitPrice'>[];
  subtotal: number;
  shipping: number;
  tax: number;
  total: number;
  payment: {
    provider: PaymentProviderName;
    /** The provider holds the buyer's money until captured (Stripe); false for manual. */
    holdsFunds: boolean;
    state: PaymentState;
    authorized: number;
    authorizedUntil: Date | null;
    captured: number;
    refunded: number;
    /** Cents of captures and refunds asked of the provider and not settled yet. */
    capturing: number;
    refunding: number;
  };
  now: Date;
}

export type PaymentMove = 'capture' | 'refund' | 'void' | 'dispute' | 'fail' | 'expire';

type Guard = (facts: OrderFacts, amount: number) => OrderRefusal | undefined;

const money = (facts: OrderFacts, cents: number) => formatMoney(cents, facts.currency);
const order = (facts: OrderFacts) => `order #${facts.number}`;

/** Units of a line still to ship: neither shipped nor canceled. */
const unitsLeft = (line: OrderFacts['lines'][number]) => line.quantity - line.fulfilled - line.canceled;

export function fulfilmentState(lines: OrderFacts['lines']): FulfilmentState {
  const sum = (units: (line: OrderFacts['lines'][number]) => number) => lines.reduce((total, line) => total + units(line), 0);
  const shipped = sum((line) => line.fulfilled);
  const canceled = sum((line) => line.canceled);
  if (sum(unitsLeft) > 0) return shipped > 0 ? 'partially_fulfilled' : 'unfulfilled';
  if (shipped === 0) return 'canceled';
  return canceled > 0 ? 'partially_canceled' : 'fulfilled';
}

/**
 * What the order asks for what is not canceled: the kept units' prices, shipping when anything is kept, and the tax
 * in proportion (rounded down, so the buyer is never asked a cent more). Nothing canceled: the total.
 */
export function amountForKeptUnits(facts: Pick<OrderFacts, 'lines' | 'subtotal' | 'shipping' | 'tax' | 'total'>): number {
  const kept = facts.lines.reduce((sum, line) => sum + (line.quantity - line.canceled) * line.unitPrice, 0);
  if (facts.lines.every((line) => line.canceled === 0)) return facts.total;
  if (kept === 0) return 0;
  const tax = facts.subtotal > 0 ? Math.floor((facts.tax * kept) / facts.subtotal) : 0;
  return Math.min(facts.total, kept + facts.shipping + tax);
}

/** What a capture with no amount takes: what is owed for the kept units and not captured yet (and, for a hold, held). */
export function captureAmount(facts: OrderFacts): number {
  const { payment } = facts;
  const owed = amountForKeptUnits(facts) - payment.captured - payment.capturing;
  return Math.max(0, payment.holdsFunds ? Math.min(owed, payment.authorized) : owed);
}

/** What may still be refunded: captured, less refunded, less refunds under way. */
export const refundable = (facts: OrderFacts) => facts.payment.captured - facts.payment.refunded - facts.payment.refunding;

const wholeCents: Guard = (_facts, amount) =>
  Number.isSafeInteger(amount) && amount > 0 ? undefined : { code: 'invalid_amount', content: 'The amount must be a positive whole number of cents', params: { amount } };

const captureGuard: Guard = (facts, amount) => {
  const { payment } = facts;
  const shipped = facts.lines.some((line) => line.fulfilled > 0);
  if (facts.status === 'canceled' && !shipped) {
    return { code: 'order_canceled', content: `${order(facts)} was canceled before anything shipped; there is no payment to capture`, params: { number: facts.number } };
  }
  const left = captureAmount(facts);
  if (left === 0 && (payment.captured > 0 || payment.capturing > 0)) {
    return {
      code: 'already_captured',
      content: `${order(facts)} is already paid (${money(facts, payment.captured + payment.capturing)} captured)`,
      params: { number: facts.number, captured: payment.captured + payment.capturing },
    };
  }
  if (payment.holdsFunds) {
    if (payment.captured > 0 || payment.capturing > 0) {
      return { code: 'already_captured', content: `${order(facts)}'s authorization was captured already (a hold is captured once)`, params: { number: facts.number } };
    }
    if (payment.authorizedUntil !== null && payment.authorizedUntil <= facts.now) {
      return { code: 'authorization_expired', content: `${order(facts)}'s authorization lapsed before it was captured; nothing is held any more`, params: { number: facts.number } };
    }
  }
  const refused = wholeCents(facts, amount);
  if (refused) return refused;
  if (amount > left) {
    return {
      code: 'capture_exceeds',
      content: `a capture of ${money(facts, amount)} is more than ${order(facts)} has to capture: ${money(facts, left)}`,
      params: { number: facts.number, amount, left },
    };
  }
  return undefined;
};

const refundGuard: Guard = (facts, amount) => {
  const refused = wholeCents(facts, amount);
  if (refused) return { ...refused, content: 'The refund must be a positive amount' };
  if (facts.payment.captured === 0) {
    return { code: 'not_captured', content: `${order(facts)} has no captured payment to refund (capture it first)`, params: { number: facts.number } };
  }
  const left = refundable(facts);
  if (amount > left) {
    return {
      code: 'refund_exceeds',
      content: `a refund of ${money(facts, amount)} is more than ${order(facts)} can give back: ${money(facts, left)} of ${money(facts, facts.payment.captured)} captured is not refunded yet`,
      params: { number: facts.number, amount, left, captured: facts.payment.captured },
    };
  }
  return undefined;
};

/** Void: nothing was captured (or is being), nothing shipped is left unpaid for. */
const voidGuard: Guard = (facts) =>
  facts.payment.captured > 0 || facts.payment.capturing > 0
    ? { code: 'already_captured', content: `${order(facts)} has a captured payment; refund it instead`, params: { number: facts.number } }
    : undefined;

const disputeGuard: Guard = () => undefined;

const failGuard: Guard = (facts) =>
  facts.payment.captured > 0 ? { code: 'already_captured', content: `${order(facts)} has a captured payment; it cannot fail now`, params: { number: facts.number } } : undefined;

const expireGuard: Guard = (facts) => {
  const until = facts.payment.authorizedUntil;
  if (until === null || until > facts.now) return { code: 'authorization_current', content: `${order(facts)}'s authorization has not lapsed`, params: { number: facts.number } };
  return failGuard(facts, 0);
};

/** Every allowed payment move from each state, and its guard. A move not in this table is refused. */
export const PAYMENT_TRANSITIONS: Readonly<Record<PaymentState, Partial<Record<PaymentMove, Guard>>>> = {
  pending: { capture: captureGuard, void: voidGuard, fail: failGuard },
  authorized: { capture: captureGuard, void: voidGuard, fail: failGuard, expire: expireGuard },
  captured: { capture: captureGuard, refund: refundGuard, dispute: disputeGuard },
  partially_refunded: { refund: refundGuard, dispute: disputeGuard },
  refunded: {},
  voided: {},
  failed: {},
  disputed: { refund: refundGuard },
};

const PAYMENT_WORDS: Record<PaymentState, string> = {
  pending: 'pending',
  authorized: 'authorized',
  captured: 'captured',
  partially_refunded: 'partially refunded',
  refunded: 'refunded',
  voided: 'voided',
  failed: 'failed',
  disputed: 'disputed',
};

/** Why `move` is refused on this order (with this amount, when it moves money), or undefined when it is allowed. */
export function paymentRefusal(move: PaymentMove, facts: OrderFacts, amount = 0): OrderRefusal | undefined {
  const guard = PAYMENT_TRANSITIONS[facts.payment.state][move];
  if (guard) return guard(facts, amount);
  // Not a move from this state; a guard that knows why in the merchant's terms says it (no capture before a refund,
  // already paid, canceled before anything shipped), else the state is named.
  const known = move === 'refund' ? refundGuard(facts, amount) : move === 'capture' ? captureGuard(facts, amount) : undefined;
  if (known && known.code !== 'invalid_amount' && known.code !== 'capture_exceeds') return known;
  return {
    code: 'payment_state',
    content: `${order(facts)}'s payment is ${PAYMENT_WORDS[facts.payment.state]}; it cannot be ${MOVE_WORDS[move]}`,
    params: { number: facts.number, state: facts.payment.state, move },
  };
}

const MOVE_WORDS: Record<PaymentMove, string> = {
  capture: 'captured',
  refund: 'refunded',
  void: 'voided',
  dispute: 'disputed',
  fail: 'marked failed',
  expire: 'expired',
};

/** Fulfil: an order that is not canceled (what ships, and whether it may, the shipment itself checks). */
export function fulfilRefusal(facts: Pick<OrderFacts, 'number' | 'status'>): OrderRefusal | undefined {
  return facts.status === 'canceled'
    ? { code: 'order_canceled', content: `order #${facts.number} is canceled; nothing can ship`, params: { number: facts.number } }
    : undefined;
}

/**
 * Cancel: what has not shipped, once. Not while the provider has not answered a capture or refund: what a cancel
 * gives back depends on what that move took (a capture of everything still under way would otherwise keep the
 * canceled units' money).
 */
export function cancelRefusal(facts: Pick<OrderFacts, 'number' | 'status' | 'lines' | 'payment'>): OrderRefusal | undefined {
  if (facts.status === 'canceled') return { code: 'already_canceled', content: `order #${facts.number} is already canceled`, params: { number: facts.number } };
  if (facts.lines.every((line) => unitsLeft(line) === 0)) {
    return { code: 'shipped_in_full', content: `order #${facts.number} has shipped in full; nothing is left to cancel (refund instead)`, params: { number: facts.number } };
  }
  if (facts.payment.capturing > 0 || facts.payment.refunding > 0) {
    return {
      code: 'payment_under_way',
      content: `order #${facts.number} has a payment the provider has not answered yet; the store asks again every few minutes: cancel once it is settled`,
      params: { number: facts.number },
    };
  }
  return undefined;
}

/**
 * What a cancel does to the money, given the lines as they are once canceled: release the hold when nothing is
 * captured or shipped; capture what shipped from a hold not captured yet; refund what was captured beyond what
 * shipped (a provider holding money only: with the manual provider the merchant gives money back, then records it).
 */
export type CancelPayment =
  | { kind: 'void' }
  | { kind: 'capture'; amount: number }
  | { kind: 'refund'; amount: number }
  | { kind: 'none' };

export function paymentOnCancel(canceled: OrderFacts): CancelPayment {
  const { payment } = canceled;
  const kept = amountForKeptUnits(canceled);
  if (payment.captured === 0 && payment.capturing === 0) {
    if (kept === 0) return payment.state === 'pending' || payment.state === 'authorized' ? { kind: 'void' } : { kind: 'none' };
    return payment.holdsFunds && payment.state === 'authorized' ? { kind: 'capture', amount: Math.min(kept, payment.authorized) } : { kind: 'none' };
  }
  const over = refundable(canceled) - kept;
  return payment.holdsFunds && over > 0 ? { kind: 'refund', amount: over } : { kind: 'none' };
}

/**
 * Whether a shipment captures now: a provider's hold, CAPTURE_ON=fulfillment, nothing captured or under way; the
 * amount is everything not canceled (the first shipment captures it all: a hold is captured once).
 */
export function captureAtShipment(facts: OrderFacts, captureOn: CaptureOn): number {
  const { payment } = facts;
  if (!payment.holdsFunds || captureOn !== 'fulfillment' || payment.state !== 'authorized') return 0;
  if (payment.captured > 0 || payment.capturing > 0) return 0;
  return paymentRefusal('capture', facts, captureAmount(facts)) ? 0 : captureAmount(facts);
}

/** Whether placing the order captures at once (CAPTURE_ON=approval, a provider's hold). */
export function captureAtApproval(facts: OrderFacts, captureOn: CaptureOn): number {
  const { payment } = facts;
  if (!payment.holdsFunds || captureOn !== 'approval' || payment.state !== 'authorized' || payment.captured > 0 || payment.capturing > 0) return 0;
  return paymentRefusal('capture', facts, captureAmount(facts)) ? 0 : captureAmount(facts);
}

/** The payment's state once money moved: refunded in full, in part, captured, or as it was (nothing captured yet). */
export function paymentStateAfterMoney(state: PaymentState, captured: number, refunded: number): PaymentState {
  if (state === 'disputed') return state;
  if (captured === 0) return state;
  if (refunded >= captured) return 'refunded';
  return refunded > 0 ? 'partially_refunded' : 'captured';
}

/** An authorization that lapses within `withinMs` (and has not been captured): `storefront orders` flags it. */
export function authorizationNearExpiry(
  facts: { payment: Pick<OrderFacts['payment'], 'state' | 'captured' | 'authorizedUntil'>; now: Date },
  withinMs: number,
): boolean {
  const { payment } = facts;
  return (
    payment.state === 'authorized' &&
    payment.captured === 0 &&
    payment.authorizedUntil !== null &&
    payment.authorizedUntil.getTime() - facts.now.getTime() <= withinMs
  );
}

/** A manual payment not received by its due date. */
export function paymentOverdue(payment: { state: PaymentState; dueAt: Date | null; captured: number }, now: Date): boolean {
  return payment.state === 'pending' && payment.captured === 0 && payment.dueAt !== null && payment.dueAt <= now;
}
