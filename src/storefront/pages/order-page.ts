/**
 * The order page (an order's permalink_url): thanks the buyer, says what mail was sent and when to expect the
 * delivery, then the number, date, lines, address, shipping, totals and the payment's state.
 */
import type { Product } from '../../catalog/types.js';
import { plainMailAddress } from '../../mail/order-mail.js';
import type { Order } from '../../orders/orders.js';
import { formatDate, orderPath } from './approval-page.js';
import { html, typed, type Html } from './html.js';
import { layout, type PageContext } from './layout.js';
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
}

/** Units neither shipped nor canceled. */
const unitsToShip = (order: Order) => order.lines.reduce((n, line) => n + line.quantity - line.fulfilled - line.canceled, 0);

/**
 * What is mailed to the buyer and what comes next (the order mails: src/mail/order-mail.ts). The confirmation goes
 * out through the outbox after the order's transaction, so the page right after the approval says it is on its way,
 * not that it arrived.
 */
function mailSentence(order: Order): Html | string {
  if (!plainMailAddress(order.buyerEmail)) return 'No confirmation was mailed: the email for this order is not a single plain address. Keep this page.';
  const next = order.status === 'canceled' ? ' We mailed you when it was canceled.' : unitsToShip(order) > 0 ? ' We mail you again when it ships.' : '';
  return html`The order confirmation is on its way to ${typed(order.buyerEmail)}.${next}`;
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
  const title = order.status === 'canceled' ? `Order #${order.number} is canceled` : `Thank you, your order #${order.number} is placed`;
  const option = order.shippingOption;
  const enroll = passkeyEnrollPaths(order.id);
  const body = html`<h1>${title}</h1>
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
<p>Order #${order.number}, placed with ${context.storeName} on <time datetime="${order.createdAt.toISOString()}">${formatDate(order.createdAt)}</time>.</p>
${order.status === 'canceled' ? html`<p class="problem">This order was canceled${order.cancelReason ? html`: ${typed(order.cancelReason)}` : ''}.</p>` : ''}
<p>${order.paymentSummary}${order.refunded > 0 ? html` ${formatMoney(order.refunded)} refunded.` : ''}</p>
${linesTable('Items', orderLines(order.lines, options.productOf))}
${
  order.fulfillments.length > 0
    ? html`<h2>Shipments</h2>
<ul>${order.fulfillments.map(
        (shipment) => html`<li><time datetime="${shipment.occurredAt.toISOString()}">${formatDate(shipment.occurredAt)}</time>: ${shipment.lines
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
        .map((a) => html`<li><time datetime="${a.occurredAt.toISOString()}">${formatDate(a.occurredAt)}</time>: ${formatMoney(-a.amount)}${a.reason ? html` (${typed(a.reason)})` : ''}</li>`)}</ul>`
    : ''
}
<h2>Ship to</h2>
${addressBlock(addressLines(order.shippingAddress))}
<p>Email for this order: ${typed(order.buyerEmail)}</p>
<h2>Shipping</h2>
<p>${option.title}: ${formatMoney(option.amount)}</p>
<h2>Total</h2>
${totalsList({ subtotal: order.subtotal, shipping: order.shipping, tax: order.tax, total: order.total }, option.title)}
<p>Keep this page's address: it is the link to your order. Questions? Write to <a href="mailto:${context.contactEmail}">${context.contactEmail}</a> and quote #${order.number}.</p>`;
  return layout(context, { title, body, path: orderPath(order.id), personal: true, scripts: options.offerPasskey ?? false });
}
