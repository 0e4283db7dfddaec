/** The order page (an order's permalink_url): number, date, lines, address, shipping, totals and the payment's state. */
import { formatAddress } from '../../checkout/shipping.js';
import type { Order } from '../../orders/orders.js';
import { formatDate } from './approval-page.js';
import { html } from './html.js';
import { layout, type PageContext } from './layout.js';
import { addressBlock, formatMoney, linesTable, orderLines, totalsList } from './purchase-parts.js';

export function orderPage(context: PageContext, order: Order): string {
  const title = `Order #${order.number}`;
  const option = order.shippingOption;
  const body = html`<h1>${title}</h1>
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
  return layout(context, { title, body, personal: true });
}
