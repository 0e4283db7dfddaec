/** The order page (an order's permalink_url): number, date, lines, address, shipping, totals and the payment's state. */
import { formatAddress } from '../../checkout/shipping.js';
import type { Order } from '../../orders/orders.js';
import { formatDate } from './approval-page.js';
import { html } from './html.js';
import { layout, type PageContext } from './layout.js';
import { addressBlock, formatMoney, linesTable, orderLines, totalsList } from './purchase-parts.js';

/** Where the order page's passkey offer asks for options and registers (the enrollment cookie's path is the order's). */
export const passkeyEnrollPaths = (orderId: string) => ({ options: `/orders/${orderId}/passkey/options`, register: `/orders/${orderId}/passkey` });

/**
 * `offerPasskey`: this browser just proved the order's email with a code, so it may create a passkey for next
 * time (shown only when the browser runs the store's script; the order is placed either way).
 */
export function orderPage(context: PageContext, order: Order, options: { offerPasskey?: boolean } = {}): string {
  const title = `Order #${order.number}`;
  const option = order.shippingOption;
  const enroll = passkeyEnrollPaths(order.id);
  const body = html`<h1>${title}</h1>
${
  options.offerPasskey
    ? html`<section id="passkey-enroll" class="proof" data-options="${enroll.options}" data-register="${enroll.register}" aria-labelledby="passkey-enroll-title" hidden>
<h2 id="passkey-enroll-title">Approve faster next time</h2>
<p>Create a passkey on this device for ${order.buyerEmail}. Next time an order for this email needs your approval, your passkey (your fingerprint, face or screen lock) confirms it without a code.</p>
<button type="button" id="passkey-create" class="secondary">Create a passkey</button>
<p id="passkey-enroll-status" role="status" aria-live="polite"></p>
</section>`
    : ''
}
<p>Placed with ${context.storeName} on <time datetime="${order.createdAt.toISOString()}">${formatDate(order.createdAt)}</time>.</p>
${order.status === 'canceled' ? html`<p class="problem">This order was canceled${order.cancelReason ? html`: ${order.cancelReason}` : ''}.</p>` : ''}
<p class="notice">${order.paymentSummary}${order.refunded > 0 ? html` ${formatMoney(order.refunded)} refunded.` : ''}</p>
${linesTable('Items', orderLines(order.lines))}
${
  order.fulfillments.length > 0
    ? html`<h2>Shipments</h2>
<ul>${order.fulfillments.map(
        (shipment) => html`<li><time datetime="${shipment.occurredAt.toISOString()}">${formatDate(shipment.occurredAt)}</time>: ${shipment.lines
          .map((line) => `${line.quantity} × ${order.lines.find((l) => l.id === line.lineId)?.title ?? line.lineId}`)
          .join(', ')}${shipment.carrier ? html` via ${shipment.carrier}` : ''}${
          shipment.trackingNumber
            ? shipment.trackingUrl
              ? html`, tracking <a href="${shipment.trackingUrl}">${shipment.trackingNumber}</a>`
              : html`, tracking ${shipment.trackingNumber}`
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
        .map((a) => html`<li><time datetime="${a.occurredAt.toISOString()}">${formatDate(a.occurredAt)}</time>: ${formatMoney(-a.amount)}${a.reason ? html` (${a.reason})` : ''}</li>`)}</ul>`
    : ''
}
<h2>Ship to</h2>
${addressBlock(formatAddress({ ...order.shippingAddress, country: 'US' }))}
<p>Email for this order: ${order.buyerEmail}</p>
<h2>Shipping</h2>
<p>${option.title}: ${formatMoney(option.amount)}</p>
<h2>Total</h2>
${totalsList({ subtotal: order.subtotal, shipping: order.shipping, tax: order.tax, total: order.total }, option.title)}
<p>Keep this page's address: it is the link to your order. Quote #${order.number} when you contact the store.</p>`;
  return layout(context, { title, body, personal: true, scripts: options.offerPasskey ?? false });
}
