/**
 * The parts every order mail is made of (order-mail.ts's messages, payment-mail.ts's news): who the mail is from,
 * the recipient and the one-line fields as a header may hold them, the greeting, the order's link, the payment in the
 * words every surface uses, the signature, and the buyer's and merchant's message envelopes.
 */
import { formatMoney, planWords, STORE_CURRENCY, type PlanTerms } from '../catalog/types.js';
import { formatAddress } from '../checkout/shipping.js';
import { parseMailbox } from '../fields/mailbox.js';
import { lineSaving, type LineQuantity, type Order, type OrderLine } from '../orders/orders.js';
import type { MailMessage } from '../outbox/outbox.js';
import type { CaptureOn } from '../orders/order-machine.js';
import { PAYMENT_LABELS, oneLineWords, paymentContextOf, paymentWords, textLines, type PaymentWords } from '../payments/payment-words.js';
import { html, type Html } from '../markup/html.js';
import { momentsIn, type Moments } from '../markup/moments.js';

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
  /** STORE_TIMEZONE: the IANA zone every time in a mail is said in (with the zone named); UTC when absent. */
  timeZone?: string;
  /**
   * How the merchant runs the store's commands, as the merchant's mails name them: `npm run storefront --` from a
   * checkout (when absent), `storefront` where the package is installed.
   */
  command?: string;
}

/** The formatter of the store's zone (STORE_TIMEZONE), UTC when the shop names none. */
export const momentsOf = (shop: MailShop): Moments => momentsIn(shop.timeZone ?? 'UTC');

/** How a checkout runs the CLI: what the merchant's mails name when the store says nothing else. */
export const CHECKOUT_COMMAND = 'npm run storefront --';

/**
 * What the merchant does about an order, in two places: the command as they type it (`npm run storefront -- orders
 * show 1001` from a checkout) and the order's page in the admin.
 */
export interface MerchantAction {
  command: string;
  adminUrl: string;
}

export function merchantAction(order: Order, shop: MailShop, args: string): MerchantAction {
  return { command: `${shop.command ?? CHECKOUT_COMMAND} ${args}`, adminUrl: adminOrderUrl(order, shop) };
}

/** The order's page in the admin: `${BASE_URL}/admin/orders/1001`, by its number. */
export const adminOrderUrl = (order: Order, shop: MailShop) => `${shop.baseUrl.replace(/\/+$/, '')}/admin/orders/${order.number}`;

/** The action in the text part: the command on a line of its own, the admin's page after it. */
export const actionText = (action: MerchantAction): string[] => [action.command, `Or in the admin: ${action.adminUrl}`];

/** The same in the HTML part: the command as code, the admin's page a link. */
export const actionHtml = (action: MerchantAction): Html => paragraph(html`<code>${action.command}</code><br>Or in the admin: ${link(action.adminUrl)}`);

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

/**
 * A line bought on a selling plan, in the words every surface uses: "Delivery every month (every month, save 10%) —
 * you save $0.65" (the plan's name, its interval, its discount, and what the line saved when it saved anything).
 */
export function planSavingWords(plan: Pick<PlanTerms, 'name' | 'intervalUnit' | 'intervalCount' | 'discountPercent'>, savingCents: number, currency = STORE_CURRENCY): string {
  return `${planWords(plan)}${savingCents > 0 ? ` — you save ${formatMoney(savingCents, currency)}` : ''}`;
}

/** An order line's plan in those words; undefined for a one-time line. */
export function orderLinePlanWords(line: Pick<OrderLine, 'sellingPlan' | 'unitPrice' | 'quantity'>, currency = STORE_CURRENCY): string | undefined {
  return line.sellingPlan ? planSavingWords(line.sellingPlan, lineSaving(line), currency) : undefined;
}

/** The cart's note as lines (its own line breaks kept, blank lines dropped), each line as oneLine makes it. */
export function noteLines(note: string | null | undefined): string[] {
  return (note ?? '').split(/\r\n|[\n\r\u2028\u2029]/).map(oneLine).filter(Boolean);
}

/** The cart's attributes as "name: value", each on one line. */
export function attributeLines(attributes: Record<string, string> | undefined): string[] {
  return Object.entries(attributes ?? {}).map(([name, value]) => oneLine(`${name}: ${value}`));
}

function pricedLines(order: Order): MailLine[] {
  return order.lines.map((line) => {
    const plan = orderLinePlanWords(line, order.currency);
    return {
      title: oneLine(line.title),
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      lineTotal: line.lineTotal,
      details: [
        ...(plan ? [oneLine(plan)] : []),
        ...Object.entries(line.properties).map(([name, value]) => oneLine(`${name}: ${value}`)),
        ...(line.backordered > 0 ? [`${line.backordered} of ${line.quantity} ship later`] : []),
      ],
    };
  });
}

/** The lines an event concerns (a shipment's, a cancellation's), with their titles from the order. */
export function linesOf(order: Order, quantities: readonly LineQuantity[]): MailLine[] {
  return quantities
    .filter((entry) => entry.quantity > 0)
    .map((entry) => ({ title: oneLine(order.lines.find((line) => line.id === entry.lineId)?.title ?? 'An item'), quantity: entry.quantity, details: [] }));
}

/** Units neither shipped nor canceled yet. */
export function stillToShip(order: Order): MailLine[] {
  return order.lines
    .map((line) => ({ title: oneLine(line.title), quantity: line.quantity - line.fulfilled - line.canceled, details: [] }))
    .filter((line) => line.quantity > 0);
}

export function linesText(order: Order, lines: readonly MailLine[]): string[] {
  return lines.flatMap((line) => [
    line.unitPrice === undefined || line.lineTotal === undefined
      ? `- ${line.quantity} × ${line.title}`
      : `- ${line.title}\n  ${line.quantity} × ${money(order, line.unitPrice)} = ${money(order, line.lineTotal)}`,
    ...line.details.map((detail) => `  ${detail}`),
  ]);
}

const CELL = 'padding:6px 8px;border-bottom:1px solid #dddddd;vertical-align:top';
const NUMBER_CELL = `${CELL};text-align:right;white-space:nowrap`;

export function linesHtml(order: Order, lines: readonly MailLine[]): Html {
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

/** Lines in one paragraph, each on its own line: an address, a note. */
const linesParagraph = (lines: readonly string[]) => html`<p style="margin:0 0 16px">${lines.map((line, index) => html`${index > 0 ? html`<br>` : ''}${line}`)}</p>`;

export const heading = (text: string) => html`<h2 style="font-size:17px;margin:20px 0 4px">${text}</h2>`;
export const paragraph = (text: string | Html) => html`<p style="margin:0 0 12px">${text}</p>`;
export const link = (url: string) => html`<a href="${url}" style="color:#0645ad">${url}</a>`;

export function buyerName(order: Order): string {
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
    words: paymentWords(order.payment, paymentContextOf(order, shop.captureOn, momentsOf(shop))),
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

/** The buyer's note and the cart's attributes (from the cart's note and cart/update.js), under their headings; none when empty. */
function notesOf(order: Order): { title: string; lines: string[] }[] {
  return [
    { title: 'Note', lines: noteLines(order.note) },
    { title: 'Additional details', lines: attributeLines(order.attributes) },
  ].filter((part) => part.lines.length > 0);
}

/** What the buyer's confirmation and the merchant's notice both show: items, totals, address, delivery, the note and details. */
export function summaryText(order: Order): string[] {
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
    ...notesOf(order).flatMap(({ title, lines }) => ['', title, ...lines.map((line) => `  ${line}`)]),
  ];
}

export function summaryHtml(order: Order): Html {
  return html`${heading('Items')}
${linesHtml(order, pricedLines(order))}
${totalsHtml(order)}
${heading('Ship to')}
${linesParagraph(addressLines(order))}
${paragraph(`Delivery: ${shippingWords(order)}`)}
${notesOf(order).map(({ title, lines }) => html`${heading(title)}
${linesParagraph(lines)}`)}`;
}
