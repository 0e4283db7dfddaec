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
 *  - a hold about to lapse, uncaptured: the merchant, a day before (the moment in the store's zone), with the
 *    command that captures it.
 *
 * Each merchant's mail names what to do as a command the merchant can type (`npm run storefront -- orders capture
 * 1001` from a checkout) and the order's page in the admin.
 *
 * Pure, like order-mail.ts: what the provider wrote (a reason) is put on one line and escaped in the HTML part; no
 * provider reference (a PaymentIntent id) is shown.
 */
import type { OrderEvent } from '../orders/order-events.js';
import type { Order } from '../orders/orders.js';
import type { MailMessage } from '../outbox/outbox.js';
import { html } from '../markup/html.js';
import {
  actionHtml,
  actionText,
  buyerMail,
  greeting,
  merchantAction,
  merchantMail,
  momentsOf,
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
  type MerchantAction,
} from './mail-parts.js';

/** The events whose mails are made here. */
export type PaymentNewsEvent = Extract<OrderEvent, { type: 'disputed' | 'payment_failed' | 'payment_voided' | 'payment_expiring' }>;

export function paymentNewsMails(event: PaymentNewsEvent, shop: MailShop): MailMessage[] {
  const { order } = event;
  switch (event.type) {
    case 'disputed':
      return merchantMail(shop, disputeNotice(order, event.dispute, shop));
    case 'payment_failed':
      return [...buyerMail(order, shop, buyerNotice(order, shop, 'failed', event.reason)), ...merchantMail(shop, unpaidNotice(order, shop, 'failed', event.reason))];
    case 'payment_voided':
      return [...buyerMail(order, shop, buyerNotice(order, shop, 'voided')), ...merchantMail(shop, unpaidNotice(order, shop, 'voided'))];
    case 'payment_expiring':
      return merchantMail(shop, expiryWarning(order, shop));
  }
}

/** Where the merchant answers for a payment: the provider's dashboard, named when it is Stripe. */
const dashboard = (order: Order) => (order.payment.provider === 'stripe' ? 'your Stripe dashboard' : "your payment provider's dashboard");

/** A provider's code for a reason (`product_not_received`) as words; free text kept as written, on one line. */
const reasonWords = (reason: string) => oneLine(/^[a-z_]+$/.test(reason) ? reason.replace(/_/g, ' ') : reason);

/** Words closed by a stop, once: a provider's reason may end with its own ("Your card was declined."). */
const closed = (words: string) => (/[.!?]$/.test(words) ? words : `${words}.`);

/**
 * A merchant's mail: paragraphs, the same in both parts; an action is its command (code in the HTML part) and the
 * order's admin page.
 */
function merchantContent(subject: string, paragraphs: readonly (string | MerchantAction)[]): MailContent {
  const lines = (part: string | MerchantAction) => (typeof part === 'string' ? [part] : actionText(part));
  return {
    subject,
    text: paragraphs.flatMap((part, index) => (index === 0 ? lines(part) : ['', ...lines(part)])),
    body: html`${paragraphs.map((part) => (typeof part === 'string' ? paragraph(part) : actionHtml(part)))}`,
  };
}

function disputeNotice(order: Order, dispute: { amount: number; reason: string }, shop: MailShop): MailContent {
  const reason = reasonWords(dispute.reason);
  return merchantContent(`payment disputed on order #${order.number}, ${money(order, dispute.amount)}`, [
    `The buyer's bank opened a dispute about ${money(order, dispute.amount)} paid for order #${order.number} (total ${money(order, order.total)}).`,
    ...(reason ? [`Reason the bank gives: ${closed(reason)}`] : []),
    `What to do: answer the dispute in ${dashboard(order)} before the deadline it shows, with what proves the sale (the order, its shipments and their tracking, what the buyer was told). Unanswered, the bank decides for the buyer and takes the money back. The order is flagged as disputed until then; see it with:`,
    merchantAction(order, shop, `orders show ${order.number}`),
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
function unpaidNotice(order: Order, shop: MailShop, how: 'failed' | 'voided', reason?: string): MailContent {
  const why = reason === undefined ? '' : reasonWords(reason);
  const what =
    how === 'failed'
      ? `${closed(`The payment of ${money(order, order.total)} for order #${order.number} failed${why ? `: ${why}` : ''}`)} Nothing was charged.`
      : `The hold of ${money(order, order.payment.authorized)} on the buyer's card for order #${order.number} was released at the payment provider (canceled in ${dashboard(order)}, or by the provider). Nothing was charged, and nothing can be captured any more.`;
  return merchantContent(how === 'failed' ? `payment failed for order #${order.number}` : `payment released for order #${order.number}`, [
    what,
    'The buyer was mailed that the order does not ship unpaid. Do not ship it: cancel it, and the units it took go back in stock:',
    merchantAction(order, shop, `orders cancel ${order.number} --reason "payment not received"`),
  ]);
}

function expiryWarning(order: Order, shop: MailShop): MailContent {
  const until = order.payment.authorizedUntil;
  const lapses = until ? `lapses on ${momentsOf(shop).moment(until)}` : 'lapses soon';
  const atShipment = shop.captureOn === 'fulfillment' ? ' (or ship it: CAPTURE_ON=fulfillment captures at the first shipment)' : '';
  return merchantContent(`capture order #${order.number} before its payment lapses`, [
    `The hold of ${money(order, order.payment.authorized)} on the buyer's card for order #${order.number} ${lapses}, and nothing of it is captured yet.`,
    `Capture it before then${atShipment}:`,
    merchantAction(order, shop, `orders capture ${order.number}`),
    'Once it lapses the buyer is not charged, the payment fails and the order cannot be paid by card any more.',
  ]);
}
