/**
 * The order emails, rendered from an order event: the buyer's confirmation, shipment, cancellation and refund
 * notices, and the merchant's new-order notice. Pure: the subscriber writes them to the outbox, the sender mails
 * them. Whatever a buyer or an agent typed is escaped in the HTML part and never reaches a header: the recipient
 * is a plain address or there is no message, and the subject holds only the store's name, numbers and money. The
 * payment is said in the words every surface uses (src/payments/payment-words.ts), its label once: "Payment pending:
 * Pay $21.38 by 5 December 2026 using: … Quote order #1001 as the payment reference." The payment's news (a
 * dispute, a failure, a hold released or about to lapse) has its mails in payment-mail.ts; both are made of the parts
 * in mail-parts.ts.
 */
import type { OrderEvent } from '../orders/order-events.js';
import type { LineQuantity, Order } from '../orders/orders.js';
import type { MailMessage } from '../outbox/outbox.js';
import { html } from '../markup/html.js';
import {
  actionHtml,
  actionText,
  buyerMail,
  buyerName,
  greeting,
  heading,
  linesHtml,
  linesOf,
  linesText,
  link,
  merchantAction,
  merchantMail,
  money,
  oneLine,
  orderLinkHtml,
  orderLinkText,
  paragraph,
  paymentHtml,
  paymentText,
  plainMailAddress,
  questionsLine,
  stillToShip,
  summaryHtml,
  summaryText,
  type MailContent,
  type MailShop,
} from './mail-parts.js';
import { paymentNewsMails } from './payment-mail.js';

/** The messages an order event sends: none for a capture (the buyer was told of the payment when the order was placed). */
export function orderMails(event: OrderEvent, shop: MailShop): MailMessage[] {
  switch (event.type) {
    case 'placed':
      return [...buyerMail(event.order, shop, confirmation(event.order, shop)), ...merchantMail(shop, newOrderNotice(event.order, shop))];
    case 'fulfilled':
      return buyerMail(event.order, shop, shipment(event.order, event.fulfillment, shop));
    case 'canceled':
      return buyerMail(event.order, shop, cancellation(event.order, event.adjustment.lines, event.adjustment.reason, shop));
    case 'refunded':
      return buyerMail(event.order, shop, refund(event.order, event.adjustment.amount, event.adjustment.lines, event.adjustment.reason, shop));
    case 'captured':
      return [];
    case 'disputed':
    case 'payment_failed':
    case 'payment_voided':
    case 'payment_expiring':
      return paymentNewsMails(event, shop);
    default:
      return noMailFor(event);
  }
}

// A new event type fails to compile here until it is given its mail; at run time it never blocks the order's change.
const noMailFor = (_event: never): MailMessage[] => [];

function confirmation(order: Order, shop: MailShop): MailContent {
  const store = oneLine(shop.storeName);
  const intro = `Thank you for your order #${order.number}${store ? ` with ${store}` : ''}. It is confirmed.`;
  const later = order.lines.some((line) => line.backordered > 0) ? 'Some items are not in stock yet: they ship later, as soon as they arrive.' : undefined;
  return {
    subject: `order #${order.number} confirmed`,
    text: [
      greeting(order),
      '',
      intro,
      '',
      ...paymentText(order, shop),
      ...(later ? ['', later] : []),
      '',
      ...summaryText(order),
      ...orderLinkText(order, shop),
      questionsLine(order, shop),
    ],
    body: html`${paragraph(greeting(order))}
${paragraph(intro)}
${paymentHtml(order, shop)}
${later ? paragraph(later) : ''}
${summaryHtml(order)}
${orderLinkHtml(order, shop)}
${paragraph(questionsLine(order, shop))}`,
  };
}

/** The merchant's notice: the buyer, who prepared the checkout, the order, and the payment as the buyer was told it. */
function newOrderNotice(order: Order, shop: MailShop): MailContent {
  const name = buyerName(order);
  const email = oneLine(order.buyerEmail);
  const buyer = name ? `${name}, ${email}` : email;
  const preparedBy = order.channel === 'agent' ? 'an agent (the buyer approved it)' : 'a browser';
  const unmailed = plainMailAddress(order.buyerEmail) ? undefined : "No confirmation was mailed: the buyer's email is not a single plain address.";
  const action = merchantAction(order, shop, `orders show ${order.number}`);
  return {
    subject: `new order #${order.number}, ${money(order, order.total)}`,
    text: [
      `New order #${order.number}: ${money(order, order.total)}`,
      '',
      `Buyer: ${buyer}`,
      `Checkout prepared by: ${preparedBy}`,
      ...(unmailed ? [unmailed] : []),
      '',
      ...summaryText(order),
      ...paymentText(order, shop),
      '',
      'See it:',
      ...actionText(action),
    ],
    body: html`${paragraph(`New order #${order.number}: ${money(order, order.total)}`)}
${paragraph(`Buyer: ${buyer}`)}
${paragraph(`Checkout prepared by: ${preparedBy}`)}
${unmailed ? paragraph(unmailed) : ''}
${summaryHtml(order)}
${paymentHtml(order, shop)}
${paragraph('See it:')}
${actionHtml(action)}`,
  };
}

/** An http(s) address to link to; anything else (a `javascript:` URL, text) is not shown. */
function webUrl(value: string | null): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value.trim());
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function shipment(order: Order, fulfillment: Extract<OrderEvent, { type: 'fulfilled' }>['fulfillment'], shop: MailShop): MailContent {
  const shipped = linesOf(order, fulfillment.lines);
  const remaining = stillToShip(order);
  const tracking: [string, string][] = [
    ...(fulfillment.carrier && oneLine(fulfillment.carrier) ? [['Carrier', oneLine(fulfillment.carrier)] as [string, string]] : []),
    ...(fulfillment.trackingNumber && oneLine(fulfillment.trackingNumber) ? [['Tracking number', oneLine(fulfillment.trackingNumber)] as [string, string]] : []),
  ];
  const trackingUrl = webUrl(fulfillment.trackingUrl);
  const intro = remaining.length > 0 ? `Part of your order #${order.number} has shipped.` : `Your order #${order.number} has shipped.`;
  const done = 'Everything in this order has now shipped.';
  return {
    subject: remaining.length > 0 ? `part of order #${order.number} shipped` : `order #${order.number} shipped`,
    text: [
      greeting(order),
      '',
      intro,
      '',
      'Shipped',
      ...linesText(order, shipped),
      ...(tracking.length > 0 || trackingUrl ? [''] : []),
      ...tracking.map(([label, value]) => `${label}: ${value}`),
      ...(trackingUrl ? [`Track it: ${trackingUrl}`] : []),
      '',
      ...(remaining.length > 0 ? ['Still to ship', ...linesText(order, remaining)] : [done]),
      ...orderLinkText(order, shop),
    ],
    body: html`${paragraph(greeting(order))}
${paragraph(intro)}
${heading('Shipped')}
${linesHtml(order, shipped)}
${tracking.map(([label, value]) => paragraph(`${label}: ${value}`))}
${trackingUrl ? paragraph(html`Track it: ${link(trackingUrl)}`) : ''}
${remaining.length > 0 ? html`${heading('Still to ship')}${linesHtml(order, remaining)}` : paragraph(done)}
${orderLinkHtml(order, shop)}`,
  };
}

function cancellation(order: Order, quantities: readonly LineQuantity[], reason: string | null, shop: MailShop): MailContent {
  const whole = order.status === 'canceled';
  const canceled =
    // An adjustment's quantities are signed (a cancellation's are negative): the mail lists the units canceled.
    quantities.length > 0
      ? linesOf(order, quantities.map((entry) => ({ lineId: entry.lineId, quantity: Math.abs(entry.quantity) })))
      : linesOf(order, order.lines.map((line) => ({ lineId: line.id, quantity: line.canceled })));
  const why = oneLine(reason ?? order.cancelReason ?? '');
  const intro = whole ? `Your order #${order.number} is canceled.` : `Part of your order #${order.number} is canceled.`;
  return {
    subject: whole ? `order #${order.number} canceled` : `part of order #${order.number} canceled`,
    text: [
      greeting(order),
      '',
      intro,
      ...(why ? [`Reason: ${why}`] : []),
      ...(canceled.length > 0 ? ['', 'Canceled', ...linesText(order, canceled)] : []),
      '',
      ...paymentText(order, shop),
      ...orderLinkText(order, shop),
    ],
    body: html`${paragraph(greeting(order))}
${paragraph(intro)}
${why ? paragraph(`Reason: ${why}`) : ''}
${canceled.length > 0 ? html`${heading('Canceled')}${linesHtml(order, canceled)}` : ''}
${paymentHtml(order, shop)}
${orderLinkHtml(order, shop)}`,
  };
}

function refund(order: Order, amount: number, quantities: readonly LineQuantity[], reason: string | null, shop: MailShop): MailContent {
  // A refund's adjustment is negative cents (money given back); the buyer reads the amount they get.
  const refunded = money(order, Math.abs(amount));
  const why = oneLine(reason ?? '');
  const lines = linesOf(order, quantities);
  const intro = `We refunded ${refunded} for your order #${order.number}.`;
  const soFar = `Refunded so far, in all: ${money(order, order.refunded)}.`;
  return {
    subject: `refund of ${refunded} for order #${order.number}`,
    text: [
      greeting(order),
      '',
      intro,
      ...(why ? [`Reason: ${why}`] : []),
      ...(lines.length > 0 ? ['', 'Refunded items', ...linesText(order, lines)] : []),
      '',
      soFar,
      ...paymentText(order, shop),
      ...orderLinkText(order, shop),
    ],
    body: html`${paragraph(greeting(order))}
${paragraph(intro)}
${why ? paragraph(`Reason: ${why}`) : ''}
${lines.length > 0 ? html`${heading('Refunded items')}${linesHtml(order, lines)}` : ''}
${paragraph(soFar)}
${paymentHtml(order, shop)}
${orderLinkHtml(order, shop)}`,
  };
}
