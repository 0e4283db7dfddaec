/**
 * The order page (an order's permalink_url): says what is true of the order now (placed, paid, partly or wholly
 * shipped, canceled, refunded), its payment in the words every surface uses (src/payments/payment-words.ts: for a
 * manual payment, the amount, the instructions, the due date and the order number as the reference), where its mail
 * goes and when to expect the delivery, then the shipments with their tracking, the refunds, the lines, address,
 * shipping and totals, and a way back to the store.
 */
import type { Product } from '../../catalog/types.js';
import { orderLinePlanWords, plainMailAddress } from '../../mail/mail-parts.js';
import type { Order } from '../../orders/orders.js';
import type { CaptureOn } from '../../orders/order-machine.js';
import { PAYMENT_LABELS, paymentContextOf, paymentWords } from '../../payments/payment-words.js';
import { buyerNotes, orderPath, withPlanWords } from './approval-page.js';
import { html, typed, type Html } from '../../markup/html.js';
import { layout, type PageContext } from './layout.js';
import { paymentParagraphs } from './payment-parts.js';
import { addressBlock, addressLines, formatMoney, linesTable, orderLines, totalsList } from './purchase-parts.js';

/** Where the order page's passkey offer asks for options and registers (the enrollment cookie's path is the order's). */
export const passkeyEnrollPaths = (orderId: string) => ({ options: `/orders/${orderId}/passkey/options`, register: `/orders/${orderId}/passkey` });

export interface OrderPageOptions {
  /**
   * This browser just proved the order's email with a code, so it may create a passkey for next time (shown only
   * when the browser runs the store's script; the order is placed either way).
   */
  offerPasskey?: boolean;
  /** How long the order's shipping option takes ("5 to 8 business days"), as the checkout offered it. */
  deliveryEstimate?: string;
  /** The product a line was bought as, from the catalog now: its picture. */
  productOf?: (productId: number) => Product | undefined;
  /** When a card hold is charged (CAPTURE_ON), for the sentence of an authorized payment. */
  captureOn?: CaptureOn;
}

/** The buyer's subscriptions page of an order (its route and page are the subscriptions'). */
export const orderSubscriptionsPath = (orderId: string) => `${orderPath(orderId)}/subscriptions`;

/** The order's lines as the page lists them, a line bought on a plan saying its plan, interval and saving. */
function orderPlanLines(order: Order, productOf: OrderPageOptions['productOf']) {
  return orderLines(order.lines, productOf).map((line, index) => withPlanWords(line, orderLinePlanWords(order.lines[index]!, order.currency)));
}

/** Units neither shipped nor canceled. */
const unitsToShip = (order: Order) => order.lines.reduce((n, line) => n + line.quantity - line.fulfilled - line.canceled, 0);

/** Units shipped so far. */
const unitsShipped = (order: Order) => order.lines.reduce((n, line) => n + line.fulfilled, 0);

/**
 * The headline: what is true of the order now, the most advanced fact first (canceled, refunded, shipped, partly
 * shipped, paid, a failed payment), else that it is placed.
 */
export function orderHeadline(order: Order): string {
  const number = `#${order.number}`;
  if (order.status === 'canceled') return unitsShipped(order) > 0 ? `Part of order ${number} has shipped; the rest is canceled` : `Order ${number} is canceled`;
  if (order.payment.state === 'refunded') return `Order ${number} is refunded`;
  if (unitsShipped(order) > 0) return unitsToShip(order) === 0 ? `Order ${number} has shipped` : `Part of order ${number} has shipped`;
  if (order.payment.state === 'failed') return `The payment for order ${number} failed`;
  if (order.payment.state === 'captured' || order.payment.state === 'partially_refunded') return `Order ${number} is paid`;
  return `Thank you, your order ${number} is placed`;
}

/** Where the order's mail goes, and what it still brings (the mails: src/mail/order-mail.ts, sent through the outbox). */
function mailSentence(order: Order): Html | string {
  if (!plainMailAddress(order.buyerEmail)) return 'No mail is sent about this order: its email is not a single plain address. Keep this page.';
  const next = order.status === 'canceled' || unitsToShip(order) === 0 ? '' : unitsShipped(order) > 0 ? ' We mail you when the rest ships.' : ' We mail you when it ships.';
  return html`Mail about this order goes to ${typed(order.buyerEmail)}.${next}`;
}

/** When to expect the delivery: the shipping option's estimate, while something is still to ship. */
function deliverySentence(order: Order, estimate: string | undefined): Html | string {
  if (order.status === 'canceled' || unitsToShip(order) === 0) return '';
  const later = order.lines.some((line) => line.backordered > 0 && line.fulfilled + line.canceled < line.quantity);
  return html`<p class="delivery">${
    estimate ? `Expect the delivery within ${estimate} (${order.shippingOption.title}).` : `It ships with ${order.shippingOption.title}.`
  }${later ? ' Items on backorder ship when they are back in stock.' : ''}</p>`;
}

export function orderPage(context: PageContext, order: Order, options: OrderPageOptions = {}): string {
  const title = orderHeadline(order);
  const option = order.shippingOption;
  const enroll = passkeyEnrollPaths(order.id);
  const payment = order.payment;
  const body = html`<h1>${title}</h1>
${paymentParagraphs(paymentWords(payment, paymentContextOf(order, options.captureOn, context.moments)), { label: PAYMENT_LABELS[payment.state], className: 'payment' })}
<p class="notice">${mailSentence(order)}</p>
${deliverySentence(order, options.deliveryEstimate)}
${
  options.offerPasskey
    ? html`<section id="passkey-enroll" class="proof" data-options="${enroll.options}" data-register="${enroll.register}" aria-labelledby="passkey-enroll-title" hidden>
<h2 id="passkey-enroll-title">Approve faster next time</h2>
<p>Create a passkey on this device for ${typed(order.buyerEmail)}. Next time an order for this email needs your approval, your passkey (your fingerprint, face or screen lock) confirms it without a code.</p>
<button type="button" id="passkey-create" class="secondary">Create a passkey</button>
<p id="passkey-enroll-status" role="status" aria-live="polite"></p>
</section>`
    : ''
}
<p>Order #${order.number}, placed with ${context.storeName} on <time datetime="${order.createdAt.toISOString()}">${context.moments.moment(order.createdAt)}</time>.</p>
${order.status === 'canceled' ? html`<p class="problem">This order was canceled${order.cancelReason ? html`: ${typed(order.cancelReason)}` : ''}.</p>` : ''}
${
  order.fulfillments.length > 0
    ? html`<h2>Shipments</h2>
<ul>${order.fulfillments.map(
        (shipment) => html`<li><time datetime="${shipment.occurredAt.toISOString()}">${context.moments.moment(shipment.occurredAt)}</time>: ${shipment.lines
          .map((line) => `${line.quantity} × ${order.lines.find((l) => l.id === line.lineId)?.title ?? line.lineId}`)
          .join(', ')}${shipment.carrier ? html` via ${typed(shipment.carrier)}` : ''}${
          shipment.trackingNumber
            ? shipment.trackingUrl
              ? html`, tracking <a href="${shipment.trackingUrl}">${typed(shipment.trackingNumber)}</a>`
              : html`, tracking ${typed(shipment.trackingNumber)}`
            : shipment.trackingUrl
              ? html`, <a href="${shipment.trackingUrl}">track the parcel</a>`
              : ''
        }</li>`,
      )}</ul>`
    : ''
}
${
  order.adjustments.some((a) => a.type === 'refund')
    ? html`<h2>Refunds</h2>
<ul>${order.adjustments
        .filter((a) => a.type === 'refund')
        .map((a) => html`<li><time datetime="${a.occurredAt.toISOString()}">${context.moments.moment(a.occurredAt)}</time>: ${formatMoney(-a.amount)}${a.reason ? html` (${typed(a.reason)})` : ''}</li>`)}</ul>`
    : ''
}
${linesTable('Items', orderPlanLines(order, options.productOf))}
${
  order.lines.some((line) => line.sellingPlan)
    ? html`<p class="subscriptions">Items bought on a plan come again at its interval, each delivery once you approve it. <a href="${orderSubscriptionsPath(order.id)}">Manage your subscription</a></p>`
    : ''
}
${buyerNotes(order.note, order.attributes)}
<h2>Ship to</h2>
${addressBlock(addressLines(order.shippingAddress))}
<p>Email for this order: ${typed(order.buyerEmail)}</p>
<h2>Shipping</h2>
<p>${option.title}: ${formatMoney(option.amount)}</p>
<h2>Total</h2>
${totalsList({ subtotal: order.subtotal, shipping: order.shipping, tax: order.tax, total: order.total }, option.title)}
<p>Keep this page's address: it is the link to your order. Questions? Write to <a href="mailto:${context.contactEmail}">${context.contactEmail}</a> and quote #${order.number}.</p>
<p><a href="/">Continue shopping</a></p>`;
  return layout(context, { title, body, path: orderPath(order.id), personal: true, scripts: options.offerPasskey ?? false });
}
