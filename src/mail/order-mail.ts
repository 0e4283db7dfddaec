/**
 * The order emails, rendered from an order event: the buyer's confirmation, shipment, cancellation and refund
 * notices, and the merchant's new-order notice. Pure: the subscriber writes them to the outbox, the sender mails
 * them. Whatever a buyer or an agent typed is escaped in the HTML part and never reaches a header: the recipient
 * is a plain address or there is no message, and the subject holds only the store's name, numbers and money. The
 * payment is said in the words every surface uses (src/payments/payment-words.ts), its label once: "Payment pending:
 * Pay $21.38 by December 5, 2026 using: … Quote order #1001 as the payment reference." The payment's news (a
 * dispute, a failure, a hold released or about to lapse) has its mails in payment-mail.ts, made of these parts.
 */
import { formatMoney } from '../catalog/types.js';
import { formatAddress } from '../checkout/shipping.js';
import { parseMailbox } from '../fields/mailbox.js';
import type { Config } from '../config.js';
import type { OrderEvent } from '../orders/order-events.js';
import type { LineQuantity, Order } from '../orders/orders.js';
import type { MailMessage } from '../outbox/outbox.js';
import type { CaptureOn } from '../orders/order-machine.js';
import { PAYMENT_LABELS, oneLineWords, paymentContextOf, paymentWords, textLines, type PaymentWords } from '../payments/payment-words.js';
import { html, type Html } from '../storefront/pages/html.js';
import { paymentNewsMails } from './payment-mail.js';

/** Who the buyer's mail comes from, as its signature says: the store's name, where to write, its postal address. */
export interface MerchantIdentity {
  storeName: string;
  /** STORE_CONTACT_EMAIL: where the buyer writes with a question. */
  contactEmail: string;
  /** STORE_ADDRESS, as lines; none when not configured. */
  address: readonly string[];
}

export interface MailShop extends MerchantIdentity {
  baseUrl: string;
  /** Who is told of each new order; unset, no merchant mail. */
  merchantEmail?: string;
  /** When a card hold is charged (CAPTURE_ON), for the sentence of an authorized payment. */
  captureOn?: CaptureOn;
}

export const merchantIdentity = (config: Config): MerchantIdentity => ({
  storeName: config.storeName,
  contactEmail: config.storeContactEmail,
  address: config.storeAddress,
});

/** What the order mails need from the store's configuration. */
export const mailShop = (config: Config): MailShop => ({
  ...merchantIdentity(config),
  baseUrl: config.baseUrl,
  merchantEmail: config.mail.merchantEmail,
  captureOn: config.payment.captureOn,
});

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

// Control characters (line breaks included), line and paragraph separators, and bidi overrides that could reorder what a reader sees.
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]+/gu;

/** Text on one line: every control character becomes a space, runs of spaces one. What a header or a one-line field may hold. */
export function oneLine(value: string): string {
  return value.replace(UNPRINTABLE, ' ').replace(/\s+/g, ' ').trim();
}

/**
 * The address when `value` is exactly one plain address (`name@example.com`: no display name, no brackets, no
 * quotes, comments, lists or whitespace); undefined otherwise, and then no message is addressed to it. The one
 * email rule (parseMailbox), which the checkout and config also apply where an address enters.
 */
export function plainMailAddress(value: string): string | undefined {
  return value.trim() === value ? parseMailbox(value) : undefined;
}

/** The address of a configured mailbox (`orders@example.com` or `Name <orders@example.com>`); the name never reaches a header. */
function mailboxAddress(value: string): string | undefined {
  const bracketed = /^[^<>]*<([^<>]+)>$/.exec(value.trim());
  return plainMailAddress(bracketed ? bracketed[1]! : value.trim());
}

/** The store's name, its contact address and its postal address (when configured), each on one line. */
function signatureParts(who: MerchantIdentity): { name: string; contact: string | undefined; address: string[] } {
  return { name: oneLine(who.storeName), contact: plainMailAddress(oneLine(who.contactEmail)), address: who.address.map(oneLine).filter(Boolean) };
}

/** The signature a buyer's mail ends with, in the text part: after the usual "-- " line. */
export function signatureText(who: MerchantIdentity): string[] {
  const { name, contact, address } = signatureParts(who);
  return ['', '-- ', ...[name, contact ?? '', ...address].filter(Boolean)];
}

/** The same signature in the HTML part, the contact address a mailto link. */
export function signatureHtml(who: MerchantIdentity): Html {
  const { name, contact, address } = signatureParts(who);
  return html`<p style="margin:24px 0 0;padding-top:12px;border-top:1px solid #dddddd;color:#555555;font-size:13px">${name}${
    contact ? html`<br><a href="mailto:${contact}" style="color:#0645ad">${contact}</a>` : ''
  }${address.map((line) => html`<br>${line}`)}</p>`;
}

/** Where the buyer writes about an order, quoting its number. */
export const questionsLine = (order: Order, shop: MailShop) => `Questions? Write to ${oneLine(shop.contactEmail)} and quote #${order.number}.`;

/** What one mail says, before it is addressed: the subject's words after the store's name, the text part's lines, the HTML body. */
export interface MailContent {
  subject: string;
  text: string[];
  body: Html;
}

function addressed(to: string, shop: MailShop, content: MailContent): MailMessage {
  const store = oneLine(shop.storeName);
  const subject = oneLine(store ? `${store}: ${content.subject}` : content.subject);
  return { to, subject, text: `${content.text.join('\n')}\n`, html: htmlDocument(subject, content.body) };
}

/** A mail to the buyer: addressed only to a plain address, and signed by the store. */
export function buyerMail(order: Order, shop: MailShop, content: MailContent): MailMessage[] {
  const to = plainMailAddress(order.buyerEmail);
  const signed: MailContent = {
    ...content,
    text: [...content.text, ...signatureText(shop)],
    body: html`${content.body}
${signatureHtml(shop)}`,
  };
  return to ? [addressed(to, shop, signed)] : [];
}

/** A mail to the merchant (MERCHANT_EMAIL); none when it is not set. */
export function merchantMail(shop: MailShop, content: MailContent): MailMessage[] {
  const to = shop.merchantEmail ? mailboxAddress(shop.merchantEmail) : undefined;
  return to ? [addressed(to, shop, content)] : [];
}

function htmlDocument(title: string, body: Html): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head>
<body style="margin:0;padding:16px;font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.5;color:#111111;background:#ffffff">
${body}
</body>
</html>
`.text;
}

/** A line as a mail lists it; prices only where the mail is about money (the confirmation, the merchant's notice). */
interface MailLine {
  title: string;
  quantity: number;
  unitPrice?: number;
  lineTotal?: number;
  details: string[];
}

const orderUrl = (order: Order, shop: MailShop) => `${shop.baseUrl.replace(/\/+$/, '')}/orders/${encodeURIComponent(order.id)}`;
export const money = (order: Order, cents: number) => formatMoney(cents, order.currency);

function pricedLines(order: Order): MailLine[] {
  return order.lines.map((line) => ({
    title: oneLine(line.title),
    quantity: line.quantity,
    unitPrice: line.unitPrice,
    lineTotal: line.lineTotal,
    details: [
      ...Object.entries(line.properties).map(([name, value]) => oneLine(`${name}: ${value}`)),
      ...(line.backordered > 0 ? [`${line.backordered} of ${line.quantity} ship later`] : []),
    ],
  }));
}

/** The lines an event concerns (a shipment's, a cancellation's), with their titles from the order. */
function linesOf(order: Order, quantities: readonly LineQuantity[]): MailLine[] {
  return quantities
    .filter((entry) => entry.quantity > 0)
    .map((entry) => ({ title: oneLine(order.lines.find((line) => line.id === entry.lineId)?.title ?? 'An item'), quantity: entry.quantity, details: [] }));
}

/** Units neither shipped nor canceled yet. */
function stillToShip(order: Order): MailLine[] {
  return order.lines
    .map((line) => ({ title: oneLine(line.title), quantity: line.quantity - line.fulfilled - line.canceled, details: [] }))
    .filter((line) => line.quantity > 0);
}

function linesText(order: Order, lines: readonly MailLine[]): string[] {
  return lines.flatMap((line) => [
    line.unitPrice === undefined || line.lineTotal === undefined
      ? `- ${line.quantity} × ${line.title}`
      : `- ${line.title}\n  ${line.quantity} × ${money(order, line.unitPrice)} = ${money(order, line.lineTotal)}`,
    ...line.details.map((detail) => `  ${detail}`),
  ]);
}

const CELL = 'padding:6px 8px;border-bottom:1px solid #dddddd;vertical-align:top';
const NUMBER_CELL = `${CELL};text-align:right;white-space:nowrap`;

function linesHtml(order: Order, lines: readonly MailLine[]): Html {
  const priced = lines.some((line) => line.unitPrice !== undefined);
  return html`<table role="presentation" cellpadding="0" cellspacing="0" style="border-collapse:collapse;margin:8px 0 16px">
<tr><th align="left" style="${CELL}">Item</th><th align="right" style="${NUMBER_CELL}">Quantity</th>${
    priced ? html`<th align="right" style="${NUMBER_CELL}">Price</th><th align="right" style="${NUMBER_CELL}">Total</th>` : ''
  }</tr>
${lines.map(
  (line) => html`<tr><td style="${CELL}">${line.title}${line.details.map((detail) => html`<br><span style="color:#555555;font-size:13px">${detail}</span>`)}</td><td align="right" style="${NUMBER_CELL}">${line.quantity}</td>${
    priced
      ? html`<td align="right" style="${NUMBER_CELL}">${line.unitPrice === undefined ? '' : money(order, line.unitPrice)}</td><td align="right" style="${NUMBER_CELL}">${line.lineTotal === undefined ? '' : money(order, line.lineTotal)}</td>`
      : ''
  }</tr>
`,
)}</table>`;
}

function totalsRows(order: Order): [string, string][] {
  return [
    ['Subtotal', money(order, order.subtotal)],
    ['Shipping', money(order, order.shipping)],
    ['Tax', money(order, order.tax)],
    ['Total', money(order, order.total)],
  ];
}

function totalsHtml(order: Order): Html {
  return html`<table role="presentation" cellpadding="0" cellspacing="0" style="border-collapse:collapse;margin:0 0 16px">
${totalsRows(order).map(
  ([label, amount]) =>
    html`<tr><td style="padding:2px 16px 2px 0${label === 'Total' ? ';font-weight:bold' : ''}">${label}</td><td align="right" style="padding:2px 0;text-align:right${label === 'Total' ? ';font-weight:bold' : ''}">${amount}</td></tr>
`,
)}</table>`;
}

// The order keeps the option's id, title and price, not its estimate: these are shippingOptions' descriptions (src/checkout/shipping.ts).
const DELIVERY_ESTIMATES: Record<string, string> = { standard: '5 to 8 business days', express: '2 business days' };

function shippingWords(order: Order): string {
  const option = order.shippingOption;
  const estimate = DELIVERY_ESTIMATES[option.id];
  return `${oneLine(option.title)}${estimate ? `, ${estimate}` : ''} (${money(order, option.amount)})`;
}

const addressLines = (order: Order) => formatAddress(order.shippingAddress).map(oneLine).filter(Boolean);

const addressHtml = (lines: readonly string[]) => html`<p style="margin:0 0 16px">${lines.map((line, index) => html`${index > 0 ? html`<br>` : ''}${line}`)}</p>`;

const heading = (text: string) => html`<h2 style="font-size:17px;margin:20px 0 4px">${text}</h2>`;
export const paragraph = (text: string | Html) => html`<p style="margin:0 0 12px">${text}</p>`;
const link = (url: string) => html`<a href="${url}" style="color:#0645ad">${url}</a>`;

function buyerName(order: Order): string {
  const name = [order.buyer.firstName, order.buyer.lastName].filter(Boolean).join(' ') || [order.shippingAddress.firstName, order.shippingAddress.lastName].filter(Boolean).join(' ');
  return oneLine(name);
}

export function greeting(order: Order): string {
  const first = oneLine(order.buyer.firstName ?? order.shippingAddress.firstName ?? '');
  return first ? `Hello ${first},` : 'Hello,';
}

export function orderLinkText(order: Order, shop: MailShop): string[] {
  return ['', `Your order: ${orderUrl(order, shop)}`];
}

export function orderLinkHtml(order: Order, shop: MailShop): Html {
  return paragraph(html`Your order: ${link(orderUrl(order, shop))}`);
}

/** The order's payment in the words of every surface, and its label. */
function payment(order: Order, shop: MailShop): { label: string; words: PaymentWords } {
  return {
    label: PAYMENT_LABELS[order.payment.state],
    words: paymentWords(order.payment, paymentContextOf(order, shop.captureOn)),
  };
}

/**
 * The payment in the text part, its label once: "Payment pending: Pay $21.38 by … using: … Quote order #1001 as the
 * payment reference.", the merchant's instructions on lines of their own when they have several.
 */
export const paymentText = (order: Order, shop: MailShop): string[] => {
  const { label, words } = payment(order, shop);
  return textLines(words, label).map((line) => (line.startsWith('  ') ? `  ${oneLine(line)}` : oneLine(line)));
};

/** The same in the HTML part: the label in bold, the instructions' lines kept. */
export function paymentHtml(order: Order, shop: MailShop): Html {
  const { label, words } = payment(order, shop);
  const lines = words.instructions?.split('\n').map(oneLine) ?? [];
  if (lines.length <= 1) return paragraph(html`<strong>${label}:</strong> ${oneLine(oneLineWords(words))}`);
  return paragraph(html`<strong>${label}:</strong> ${oneLine(words.text)}${lines.map((line) => html`<br>${line}`)}${words.after ? html`<br>${oneLine(words.after)}` : ''}`);
}

/** What the buyer's confirmation and the merchant's notice both show: items, totals, address, delivery. */
function summaryText(order: Order): string[] {
  return [
    'Items',
    ...linesText(order, pricedLines(order)),
    '',
    ...totalsRows(order).map(([label, amount]) => `${label}: ${amount}`),
    '',
    'Ship to',
    ...addressLines(order),
    '',
    `Delivery: ${shippingWords(order)}`,
  ];
}

function summaryHtml(order: Order): Html {
  return html`${heading('Items')}
${linesHtml(order, pricedLines(order))}
${totalsHtml(order)}
${heading('Ship to')}
${addressHtml(addressLines(order))}
${paragraph(`Delivery: ${shippingWords(order)}`)}`;
}

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
  const command = `storefront orders show ${order.number}`;
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
      `See it: ${command}`,
    ],
    body: html`${paragraph(`New order #${order.number}: ${money(order, order.total)}`)}
${paragraph(`Buyer: ${buyer}`)}
${paragraph(`Checkout prepared by: ${preparedBy}`)}
${unmailed ? paragraph(unmailed) : ''}
${summaryHtml(order)}
${paymentHtml(order, shop)}
${paragraph(html`See it: <code>${command}</code>`)}`,
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
