/**
 * The words for an order's payment, one vocabulary for every surface that tells a buyer about it: the approval page
 * (before the order exists: how and by when they will pay), the order page, the order mails, the policy pages, and
 * the order as the commerce door shows it (an agent's order lookup, the platform's order webhooks). Each state has a short label ("Payment
 * pending", "Paid", …) and a sentence that says what is true and what the buyer does next ("Pay $21.38 by 5
 * December 2026 using: … Quote order #1001 as the payment reference."). A sentence never repeats its label, so a surface
 * shows either, or the label then the sentence. Pure: no I/O, no clock but the one passed in.
 */
import { formatMoney } from '../catalog/types.js';
import { momentsIn, type Moments } from '../markup/moments.js';
import type { PaymentConfig } from './payment-options.js';
import { amountForKeptUnits, type CaptureOn } from '../orders/order-machine.js';
import type { Order, OrderPayment } from '../orders/orders.js';
import type { PaymentState } from './payment-handlers.js';

/** What the sentences need beside the payment: the number quoted as the reference, the currency, when a hold is charged. */
export interface PaymentContext {
  orderNumber: number;
  currency: string;
  /** CAPTURE_ON; when not known the sentence for a hold does not say when it is charged beyond "before it ends". */
  captureOn?: CaptureOn;
  /** What the order asks for the units not canceled (a manual payment due is that, less what was received); the payment's amount when absent. */
  owed?: number;
  /** The store's time zone (STORE_TIMEZONE) a due day is said in; UTC when absent. */
  moments?: Moments;
}

/** The context of an order's own payment: its number, currency, and what it asks for the units not canceled. */
export function paymentContextOf(order: Order, captureOn?: CaptureOn, moments?: Moments): PaymentContext {
  return { orderNumber: order.number, currency: order.currency, captureOn, owed: amountForKeptUnits(order), moments };
}

/**
 * How orders will be paid, before there is an order (the approval page, the policies): the provider, the manual
 * provider's PAYMENT_INSTRUCTIONS and PAYMENT_DUE_DAYS, and CAPTURE_ON.
 */
export type PaymentPlan = Pick<PaymentConfig, 'provider' | 'instructions' | 'dueDays' | 'captureOn'>;

/** The short label of each state: the orders list, a status line, the label a page or mail puts before the sentence. */
export const PAYMENT_LABELS: Record<PaymentState, string> = {
  pending: 'Payment pending',
  authorized: 'Payment authorized',
  captured: 'Paid',
  partially_refunded: 'Partially refunded',
  refunded: 'Refunded',
  voided: 'Payment voided',
  failed: 'Payment failed',
  disputed: 'Payment disputed',
};

// The formatters are made once per zone and kept (momentsIn): making one costs about a millisecond (measured: a
// fifth of a second of every 200 orders' mails in the checkout bench's profile).
const UTC_MOMENTS = momentsIn('UTC');

/** A day as the buyer reads it, in the store's time zone (UTC unless given), the same on every instance: "5 December 2026". */
export function formatDay(date: Date, moments: Moments = UTC_MOMENTS): string {
  return moments.day(date);
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A payment said in words. Most are one sentence (`text`); a payment still to be made by the merchant's instructions
 * has them apart, as written (they may hold several lines: bank details), between the words that lead to them
 * (ending "using:") and the words after them (the payment reference), so a page or a mail can set them on lines of
 * their own and a one-line surface can join them.
 */
export interface PaymentWords {
  text: string;
  instructions?: string;
  after?: string;
}

/** "Pay $21.38 by 5 December 2026 using:" + the instructions + `after`; `lead` is what comes before the amount. */
function payBy(amount: string, dueAt: Date | null, instructions: string, after: string, moments: Moments | undefined, lead = 'Pay'): PaymentWords {
  return { text: `${lead} ${amount}${dueAt ? ` by ${formatDay(dueAt, moments)}` : ''} using:`, instructions, after };
}

/** The words on one line: the instructions' lines joined, closed by a stop. */
export function oneLineWords(words: PaymentWords): string {
  if (words.instructions === undefined) return words.text;
  const line = words.instructions.replace(/\s+/g, ' ').trim();
  return [words.text, /[.!?]$/.test(line) ? line : `${line}.`, words.after].filter(Boolean).join(' ');
}

/**
 * The words as lines of plain text (a mail's text part), after `label` when given: one line, or, when the
 * instructions have several lines, each on a line of its own, indented.
 */
export function textLines(words: PaymentWords, label?: string): string[] {
  const lead = (text: string) => (label ? `${label}: ${text}` : text);
  if (words.instructions === undefined || !words.instructions.includes('\n')) return [lead(oneLineWords(words))];
  return [lead(words.text), ...words.instructions.split('\n').map((line) => `  ${line.trim()}`), ...(words.after ? [words.after] : [])];
}

/** When a hold is charged, as CAPTURE_ON says: "… is charged when the order ships". */
export function chargedWhen(captureOn: CaptureOn | undefined): string {
  switch (captureOn) {
    case 'fulfillment':
      return 'when the order ships';
    case 'approval':
      return 'as the order is placed';
    case 'manual':
    case undefined:
      return 'when the store takes the payment, before the hold ends';
  }
}

/** What the buyer paid: by card (a provider), or received by the store (manual). */
function paid(payment: OrderPayment, owed: number, money: (cents: number) => string): string {
  if (payment.provider === 'manual') {
    return payment.captured < owed
      ? `The store received ${money(payment.captured)} of ${money(owed)}`
      : `The store received your payment of ${money(payment.captured)}`;
  }
  return `${money(payment.captured)} was charged to your card`;
}

/** What a manual payment asks when the merchant's instructions were not kept (an order placed before they were). */
const NO_INSTRUCTIONS = 'the payment details the store sends you';

/**
 * The buyer's words for an order's payment: what is true now and what they do next. They never start with the
 * label's words, and never say the store "collects" payment without saying how and by when.
 */
export function paymentWords(payment: OrderPayment, context: PaymentContext): PaymentWords {
  const money = (cents: number) => formatMoney(cents, context.currency);
  const reference = `Quote order #${context.orderNumber} as the payment reference.`;
  const instructions = payment.instructions ?? NO_INSTRUCTIONS;
  const owed = context.owed ?? payment.amount;
  const dispute = payment.disputed && payment.state !== 'disputed' ? ' Your bank opened a dispute about this payment.' : '';
  const toYou = payment.provider === 'manual' ? ' to you' : ' to your card';
  switch (payment.state) {
    case 'pending':
      if (payment.provider !== 'manual') return { text: `Your card payment of ${money(payment.amount)} is not confirmed yet; nothing is charged until it is.` };
      if (owed <= payment.captured) return { text: 'Nothing more is due.' };
      return payBy(money(owed - payment.captured), payment.dueAt, instructions, reference, context.moments);
    case 'authorized': {
      const until = payment.authorizedUntil ? ` until ${formatDay(payment.authorizedUntil, context.moments)}` : '';
      return { text: `${money(payment.authorized)} is held on your card${until}; you are charged ${chargedWhen(context.captureOn)}.` };
    }
    case 'captured': {
      if (payment.provider === 'manual' && payment.captured < owed) {
        return payBy(`the remaining ${money(owed - payment.captured)}`, payment.dueAt, instructions, `${reference}${dispute}`, context.moments, `${paid(payment, owed, money)}. Pay`);
      }
      const released = payment.provider !== 'manual' && payment.authorized > payment.captured ? '; the rest of the hold was released' : '';
      return { text: `${paid(payment, owed, money)}${released}.${dispute}` };
    }
    case 'partially_refunded':
      return { text: `${paid(payment, owed, money)}; ${money(payment.refunded)} of it was refunded${toYou}.${dispute}` };
    case 'refunded':
      return { text: `${paid(payment, owed, money)}, and all of it was refunded${toYou}.${dispute}` };
    case 'voided':
      return {
        text: payment.provider === 'manual' ? 'Nothing is due, as the order was canceled before it was paid.' : 'The hold on your card was released; you were not charged.',
      };
    case 'failed':
      return {
        text: payment.provider === 'manual' ? 'The store did not receive the payment, and the order will not ship.' : 'Your card payment did not go through, so you were not charged.',
      };
    case 'disputed':
      return { text: `Your bank opened a dispute about the ${money(payment.captured)} you paid; the store answers it with your bank.` };
  }
}

/** The words on one line (the commerce door, a status). */
export function paymentSentence(payment: OrderPayment, context: PaymentContext): string {
  return oneLineWords(paymentWords(payment, context));
}

/** The label, then the sentence: "Payment pending: Pay $21.38 by …". */
export function paymentLine(payment: OrderPayment, context: PaymentContext): string {
  return `${PAYMENT_LABELS[payment.state]}: ${paymentSentence(payment, context)}`;
}

/**
 * The approval page's words, before the order exists: how the buyer will pay `total` if they approve `now`, and by
 * when (the day in the store's zone, `moments`); for the manual provider, that the order number they get is the
 * payment reference.
 */
export function approvalPaymentWords(plan: PaymentPlan, order: { total: number; currency: string; now: Date; moments?: Moments }): PaymentWords {
  const amount = formatMoney(order.total, order.currency);
  if (plan.provider === 'manual') {
    const dueAt = new Date(order.now.getTime() + plan.dueDays * DAY_MS);
    return payBy(amount, dueAt, plan.instructions, 'Quote the order number you get as the payment reference.', order.moments, 'Nothing is charged now. Once you approve, pay');
  }
  return { text: `Once you approve, you pay by card on Stripe's payment page: ${amount} is held on your card and charged ${chargedWhen(plan.captureOn)}.` };
}

/** The terms of payment, for the policy pages: how and when the buyer pays, and where a refund goes. */
export function paymentTerms(plan: PaymentPlan): { how: PaymentWords; refunds: string } {
  if (plan.provider === 'manual') {
    const days = `${plan.dueDays} ${plan.dueDays === 1 ? 'day' : 'days'}`;
    return {
      how: {
        text: `Nothing is charged when you approve. You pay within ${days} of the order using:`,
        instructions: plan.instructions,
        after: 'Quote your order number (such as #1001) as the payment reference; the amount and the due date are on your order page and in your order confirmation.',
      },
      refunds: 'A refund is paid back to you by the store; your order page and a mail say how much was refunded.',
    };
  }
  return {
    how: {
      text: `You pay by card on Stripe's payment page when you approve: the amount is held on your card and charged ${chargedWhen(plan.captureOn)}. An order canceled before it is charged releases the hold, and you are not charged.`,
    },
    refunds: 'A refund goes back to the card you paid with; your order page and a mail say how much was refunded.',
  };
}
