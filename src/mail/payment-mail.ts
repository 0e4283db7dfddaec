/**
 * The mails of an order's payment news, rendered from its event (src/orders/order-events.ts) with the order mails'
 * parts (order-mail.ts): who is told, and what they read.
 *
 *  - a dispute: the merchant, with the order, the amount disputed, the bank's reason and what to do (answer it at the
 *    provider with the order's proof of delivery, before the bank's deadline);
 *  - a failed payment (the provider said so, or the hold lapsed uncaptured): the buyer (not charged; the order does
 *    not ship unpaid) and the merchant (do not ship; cancel it so its units go back in stock);
 *  - a hold released at the provider (canceled in its dashboard, or by the provider): the buyer and the merchant, as
 *    for a failure;
 *  - a hold about to lapse, uncaptured: the merchant, a day before, with the command that captures it.
 *
 * Pure, like order-mail.ts: what the provider wrote (a reason) is put on one line and escaped in the HTML part; no
 * provider reference (a PaymentIntent id) is shown.
 */
import type { OrderEvent } from '../orders/order-events.js';
import type { Order } from '../orders/orders.js';
import type { MailMessage } from '../outbox/outbox.js';
import { formatDay } from '../payments/payment-words.js';
import { html } from '../markup/html.js';
import {
  buyerMail,
  greeting,
  merchantMail,
  money,
  oneLine,
  orderLinkHtml,
  orderLinkText,
  paragraph,
  paymentHtml,
  paymentText,
  questionsLine,
  type MailContent,
  type MailShop,
} from './mail-parts.js';

/** The events whose mails are made here. */
export type PaymentNewsEvent = Extract<OrderEvent, { type: 'disputed' | 'payment_failed' | 'payment_voided' | 'payment_expiring' }>;

export function paymentNewsMails(event: PaymentNewsEvent, shop: MailShop): MailMessage[] {
  const { order } = event;
  switch (event.type) {
    case 'disputed':
      return merchantMail(shop, disputeNotice(order, event.dispute));
    case 'payment_failed':
      return [...buyerMail(order, shop, buyerNotice(order, shop, 'failed', event.reason)), ...merchantMail(shop, unpaidNotice(order, 'failed', event.reason))];
    case 'payment_voided':
      return [...buyerMail(order, shop, buyerNotice(order, shop, 'voided')), ...merchantMail(shop, unpaidNotice(order, 'voided'))];
    case 'payment_expiring':
      return merchantMail(shop, expiryWarning(order, shop));
  }
}

const TIME_FORMAT = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' });

/** A moment as the merchant reads it, in UTC: "December 5, 2026, 14:03 UTC". */
function momentUtc(date: Date): string {
  const time = TIME_FORMAT.format(date);
  return `${formatDay(date)}, ${time} UTC`;
}

/** Where the merchant answers for a payment: the provider's dashboard, named when it is Stripe. */
const dashboard = (order: Order) => (order.payment.provider === 'stripe' ? 'your Stripe dashboard' : "your payment provider's dashboard");

/** A provider's code for a reason (`product_not_received`) as words; free text kept as written, on one line. */
const reasonWords = (reason: string) => oneLine(/^[a-z_]+$/.test(reason) ? reason.replace(/_/g, ' ') : reason);

/** Words closed by a stop, once: a provider's reason may end with its own ("Your card was declined."). */
const closed = (words: string) => (/[.!?]$/.test(words) ? words : `${words}.`);

/** A merchant's mail: paragraphs, the same in both parts; `command` lines are shown as code in the HTML part. */
function merchantContent(subject: string, paragraphs: readonly (string | { command: string })[]): MailContent {
  const words = (part: string | { command: string }) => (typeof part === 'string' ? part : part.command);
  return {
    subject,
    text: paragraphs.flatMap((part, index) => (index === 0 ? [words(part)] : ['', words(part)])),
    body: html`${paragraphs.map((part) => (typeof part === 'string' ? paragraph(part) : paragraph(html`<code>${part.command}</code>`)))}`,
  };
}

function disputeNotice(order: Order, dispute: { amount: number; reason: string }): MailContent {
  const reason = reasonWords(dispute.reason);
  return merchantContent(`payment disputed on order #${order.number}, ${money(order, dispute.amount)}`, [
    `The buyer's bank opened a dispute about ${money(order, dispute.amount)} paid for order #${order.number} (total ${money(order, order.total)}).`,
    ...(reason ? [`Reason the bank gives: ${closed(reason)}`] : []),
    `What to do: answer the dispute in ${dashboard(order)} before the deadline it shows, with what proves the sale (the order, its shipments and their tracking, what the buyer was told). Unanswered, the bank decides for the buyer and takes the money back. The order is flagged as disputed until then; see it with:`,
    { command: `storefront orders show ${order.number}` },
  ]);
}

/** The buyer's notice of a payment that will not be taken: failed, or the hold released at the provider. */
function buyerNotice(order: Order, shop: MailShop, how: 'failed' | 'voided', reason?: string): MailContent {
  const intro =
    how === 'failed' ? `We could not take the payment for your order #${order.number}.` : `The hold on your card for order #${order.number} was released.`;
  const why = reason === undefined ? '' : reasonWords(reason);
  const next = 'The order does not ship unpaid. If you still want it, write to us as below.';
  return {
    subject: how === 'failed' ? `payment for order #${order.number} did not go through` : `payment for order #${order.number} released`,
    text: [greeting(order), '', intro, ...(why ? [`Reason: ${closed(why)}`] : []), '', ...paymentText(order, shop), '', next, ...orderLinkText(order, shop), questionsLine(order, shop)],
    body: html`${paragraph(greeting(order))}
${paragraph(intro)}
${why ? paragraph(`Reason: ${closed(why)}`) : ''}
${paymentHtml(order, shop)}
${paragraph(next)}
${orderLinkHtml(order, shop)}
${paragraph(questionsLine(order, shop))}`,
  };
}

/** The merchant's notice of an order left unpaid: what happened, and to cancel it rather than ship it. */
function unpaidNotice(order: Order, how: 'failed' | 'voided', reason?: string): MailContent {
  const why = reason === undefined ? '' : reasonWords(reason);
  const what =
    how === 'failed'
      ? `${closed(`The payment of ${money(order, order.total)} for order #${order.number} failed${why ? `: ${why}` : ''}`)} Nothing was charged.`
      : `The hold of ${money(order, order.payment.authorized)} on the buyer's card for order #${order.number} was released at the payment provider (canceled in ${dashboard(order)}, or by the provider). Nothing was charged, and nothing can be captured any more.`;
  return merchantContent(how === 'failed' ? `payment failed for order #${order.number}` : `payment released for order #${order.number}`, [
    what,
    'The buyer was mailed that the order does not ship unpaid. Do not ship it: cancel it, and the units it took go back in stock:',
    { command: `storefront orders cancel ${order.number} --reason "payment not received"` },
  ]);
}

function expiryWarning(order: Order, shop: MailShop): MailContent {
  const until = order.payment.authorizedUntil;
  const lapses = until ? `lapses on ${momentUtc(until)}` : 'lapses soon';
  const atShipment = shop.captureOn === 'fulfillment' ? ' (or ship it: CAPTURE_ON=fulfillment captures at the first shipment)' : '';
  return merchantContent(`capture order #${order.number} before its payment lapses`, [
    `The hold of ${money(order, order.payment.authorized)} on the buyer's card for order #${order.number} ${lapses}, and nothing of it is captured yet.`,
    `Capture it before then${atShipment}:`,
    { command: `storefront orders capture ${order.number}` },
    'Once it lapses the buyer is not charged, the payment fails and the order cannot be paid by card any more.',
  ]);
}
