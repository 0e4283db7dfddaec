/**
 * An order's page in the admin: what was bought (lines with what shipped, was canceled or is backordered) and the
 * totals, the buyer and where it ships (text people typed shown as typed), the payment (provider, state, amounts
 * authorized, captured and refunded, when it is due or the card hold lapses), how the buyer approved it, one timeline
 * of everything that happened to it, and the merchant's actions as plain forms (capture, ship, cancel, refund), each
 * with its refusal beside it when one was refused. Pure: the route reads, this renders.
 */
import { noteLines, orderLinePlanWords } from '../mail/mail-parts.js';
import { html, typed, type Html } from '../markup/html.js';
import type { Moments } from '../markup/moments.js';
import { unitsBackordered, unitsToShip } from '../orders/order-actions.js';
import { amountForKeptUnits, fulfilmentState } from '../orders/order-machine.js';
import type { Order, OrderAddress } from '../orders/orders.js';
import { PAYMENT_LABELS } from '../payments/payment-words.js';
import type { Approval, TimelineEntry } from '../reports/order-timeline.js';
import { staffMay, type StaffSession } from '../staff/staff.js';
import { money, notice, postForm, SECTIONS } from './admin-kit.js';
import { orderPath, scrollingTable } from './admin-page-parts.js';
import { FULFILMENT_LABELS, ORDER_STATUS_LABELS, preparedBy } from './order-words.js';

/** The merchant's actions on an order; each is a form posted to `${orderPath}/${action}`. */
export const ORDER_ACTIONS = ['capture', 'fulfil', 'cancel', 'refund'] as const;
export type OrderAction = (typeof ORDER_ACTIONS)[number];

/** An action refused: which, why, and what the person had typed (shown again in its form). */
export interface ActionRefusal {
  action: OrderAction;
  text: string;
  values: Record<string, string>;
}

/** What ?done= says after an action (a fixed sentence per code: nothing from the query is echoed). */
export const DONE: Record<string, string> = {
  captured: 'The payment was captured.',
  fulfilled: 'The shipment was recorded; the buyer is mailed its tracking.',
  canceled: 'The order was canceled; its units not shipped are back in stock.',
  refunded: 'The refund was recorded; the buyer is mailed.',
};

export interface OrderView {
  order: Order;
  approval: Approval | undefined;
  timeline: readonly TimelineEntry[];
  staff: StaffSession;
  moments: Moments;
  /** The provider holds the buyer's money until captured (a card hold), rather than the merchant recording it. */
  holdsFunds: boolean;
  done?: string;
  refusal?: ActionRefusal;
}

const PROVEN_WORDS: Record<Approval['provenBy'], string> = {
  passkey: 'with a passkey',
  code: 'with a code mailed to them',
  link: 'by the approval link alone (no proof was asked)',
};

const PROVIDER_LABELS: Record<string, string> = { manual: 'Manual (the buyer pays by the store’s instructions)', stripe: 'Stripe (a card)' };

function row(label: string, value: Html | string | number): Html {
  return html`<tr><th scope="row">${label}</th><td>${value}</td></tr>`;
}

function addressBlock(address: OrderAddress): Html {
  const name = [address.firstName, address.lastName].filter((part) => part).join(' ');
  const lines: (Html | '')[] = [
    typed(name),
    typed(address.streetAddress),
    typed(address.extendedAddress),
    html`${typed(address.locality)}, ${typed(address.region)} ${typed(address.postalCode)}`,
    typed(address.country),
    typed(address.phoneNumber),
  ];
  return html`<address>${lines.filter((line) => line !== '').map((line, index) => html`${index ? html`<br>` : ''}${line}`)}</address>`;
}

function linesTable(order: Order): Html {
  const m = (cents: number) => money(cents, order.currency);
  return scrollingTable(
    'lines-caption',
    'What was bought',
    html`<tr><th scope="col">Item</th><th scope="col">SKU</th><th scope="col" class="n">Units</th><th scope="col" class="n">Price</th><th scope="col" class="n">Line total</th><th scope="col" class="n">Shipped</th><th scope="col" class="n">Canceled</th><th scope="col" class="n">Backordered</th><th scope="col" class="n">Left to ship</th></tr>`,
    order.lines.map((line) => {
      const properties = Object.entries(line.properties);
      const plan = orderLinePlanWords(line, order.currency);
      return html`<tr><td>${typed(line.title)}${plan ? html`<br><span class="plan">${typed(plan)}</span>` : ''}${
        properties.length ? html`<br><span class="muted">${properties.map(([name, value], index) => html`${index ? '; ' : ''}${typed(name)}: ${typed(value)}`)}</span>` : ''
      }</td><td>${typed(line.sku ?? '')}</td><td class="n">${line.quantity}</td><td class="n">${m(line.unitPrice)}</td><td class="n">${m(line.lineTotal)}</td><td class="n">${
        line.fulfilled
      }</td><td class="n">${line.canceled}</td><td class="n">${unitsBackordered(line)}</td><td class="n">${unitsToShip(line)}</td></tr>`;
    }),
  );
}

/** The buyer's note (its line breaks kept) and the cart's attributes, as they were typed; nothing when the cart had none. */
function notePanel(order: Order): Html | '' {
  const note = noteLines(order.note);
  const attributes = Object.entries(order.attributes ?? {});
  if (note.length === 0 && attributes.length === 0) return '';
  return html`<section class="panel" aria-labelledby="note-heading"><h2 id="note-heading">Note from the buyer</h2>
${note.length ? html`<p>${note.map((line, index) => html`${index ? html`<br>` : ''}${typed(line)}`)}</p>` : ''}
${attributes.length ? html`<table aria-label="Attributes"><tbody>${attributes.map(([name, value]) => html`<tr><th scope="row">${typed(name)}</th><td>${typed(value)}</td></tr>`)}</tbody></table>` : ''}
</section>`;
}

function totalsTable(order: Order): Html {
  const m = (cents: number) => money(cents, order.currency);
  return html`<table aria-labelledby="totals-heading"><tbody>
${row('Subtotal', m(order.subtotal))}
${row(`Shipping (${order.shippingOption.title})`, m(order.shipping))}
${row('Tax', m(order.tax))}
${row('Total', html`<strong>${m(order.total)}</strong>`)}
</tbody></table>`;
}

function paymentTable(order: Order, moments: Moments): Html {
  const { payment } = order;
  const m = (cents: number) => money(cents, order.currency);
  return html`<table aria-labelledby="payment-heading"><tbody>
${row('Provider', PROVIDER_LABELS[payment.provider] ?? payment.provider)}
${row('State', html`${PAYMENT_LABELS[payment.state]}${payment.disputed ? html` <strong>(disputed by the buyer’s bank)</strong>` : ''}`)}
${row('Asked', m(payment.amount))}
${payment.provider === 'manual' ? '' : row('Authorized (held)', m(payment.authorized))}
${row('Captured', m(payment.captured))}
${row('Refunded', m(payment.refunded))}
${payment.dueAt ? row('Due by', moments.moment(payment.dueAt)) : ''}
${payment.authorizedUntil ? row('Card hold lapses', moments.moment(payment.authorizedUntil)) : ''}
${payment.instructions ? row('Instructions given', typed(payment.instructions)) : ''}
</tbody></table>`;
}

function approvalPanel(approval: Approval | undefined, moments: Moments): Html {
  if (!approval) return html`<p>No approval is recorded for this order.</p>`;
  return html`<p>The buyer approved it ${PROVEN_WORDS[approval.provenBy]}, ${moments.moment(approval.provenAt)}.</p>
<p>What they approved (its digest): <code class="digest">${approval.digest}</code></p>`;
}

function timelineList(entries: readonly TimelineEntry[], moments: Moments): Html {
  if (entries.length === 0) return html`<p>Nothing is recorded yet.</p>`;
  return html`<ol class="timeline">${entries.map(
    (entry) => html`<li><time datetime="${entry.at.toISOString()}">${moments.moment(entry.at)}</time>: ${typed(entry.what)}${
      entry.by ? html` <span class="muted">by ${typed(entry.by)}</span>` : ''
    }${entry.attempts ? html` <span class="muted">(${entry.attempts} attempt${entry.attempts === 1 ? '' : 's'})</span>` : ''}${
      entry.detail ? html`<br><span class="muted">${typed(entry.detail)}</span>` : ''
    }</li>`,
  )}</ol>`;
}

function shipmentsList(order: Order, moments: Moments): Html {
  if (order.fulfillments.length === 0) return html``;
  const title = (lineId: string) => order.lines.find((line) => line.id === lineId)?.title ?? lineId;
  return html`<h3>Shipments</h3><ul>${order.fulfillments.map(
    (shipment) => html`<li>${moments.moment(shipment.occurredAt)}: ${shipment.lines.map((line, index) => html`${index ? ', ' : ''}${line.quantity} × ${typed(title(line.lineId))}`)}${
      shipment.carrier ? html`, ${typed(shipment.carrier)}` : ''
    }${shipment.trackingNumber ? html`, tracking ${typed(shipment.trackingNumber)}` : ''}${
      // Only a web address becomes a link (the actions refuse any other when it is typed; a row kept from before is text).
      shipment.trackingUrl && /^https?:\/\//i.test(shipment.trackingUrl)
        ? html` (<a href="${shipment.trackingUrl}" rel="noreferrer noopener">track the parcel</a>)`
        : shipment.trackingUrl
          ? html` (tracking at ${typed(shipment.trackingUrl)})`
          : ''
    }</li>`,
  )}</ul>`;
}

/** What a capture with no amount would take now: what the kept units ask, less what was captured (and, for a hold, at most what is held). */
export function owedNow(order: Order, holdsFunds: boolean): number {
  const owed = Math.max(0, amountForKeptUnits(order) - order.captured);
  return holdsFunds ? Math.min(owed, order.payment.authorized) : owed;
}

const shippedAny = (order: Order) => order.lines.some((line) => line.fulfilled > 0);
const leftToShip = (order: Order) => order.lines.some((line) => unitsToShip(line) > 0);

/** Whether canceling the order would give money back (what was captured and not refunded): then it is a refund too, the owner's. */
export const cancelGivesMoneyBack = (order: Order) => order.captured - order.refunded > 0;

/** Which actions the order offers now (the domain decides on the POST; these only spare the merchant a form that cannot work). */
function offered(view: OrderView): Record<OrderAction, boolean> {
  const { order } = view;
  const state = order.paymentState;
  return {
    capture: (state === 'pending' || state === 'authorized' || state === 'captured') && (order.status !== 'canceled' || shippedAny(order)) && owedNow(order, view.holdsFunds) > 0,
    fulfil: order.status !== 'canceled' && leftToShip(order),
    cancel: order.status !== 'canceled' && leftToShip(order) && (!cancelGivesMoneyBack(order) || staffMay(view.staff.role, 'refund')),
    refund: staffMay(view.staff.role, 'refund') && order.captured - order.refunded > 0,
  };
}

function refusalOf(view: OrderView, action: OrderAction): Html | '' {
  return view.refusal?.action === action ? notice('refused', view.refusal.text) : '';
}

/** A value typed before a refusal, shown again; else the default. */
function typedBefore(view: OrderView, action: OrderAction, name: string, fallback = ''): string {
  return view.refusal?.action === action ? (view.refusal.values[name] ?? fallback) : fallback;
}

function textField(id: string, name: string, label: string, value: string, options: { hint?: string; inputmode?: string; type?: string; maxlength?: number } = {}): Html {
  return html`<div class="field"><label for="${id}">${label}</label><input id="${id}" name="${name}" type="${options.type ?? 'text'}" value="${value}"${
    options.inputmode ? html` inputmode="${options.inputmode}"` : ''
  } maxlength="${options.maxlength ?? 255}"${options.hint ? html` aria-describedby="${id}-hint"` : ''} autocomplete="off">${
    options.hint ? html`<span class="muted" id="${id}-hint">${options.hint}</span>` : ''
  }</div>`;
}

function captureAction(view: OrderView, path: string): Html {
  const { order } = view;
  const owed = money(owedNow(order, view.holdsFunds), order.currency);
  const hint = view.holdsFunds ? `Leave empty to capture ${owed} from the card hold (a hold is captured once).` : `Leave empty to record all ${owed} received.`;
  return html`<section class="panel" aria-labelledby="capture-heading"><h3 id="capture-heading">Capture the payment</h3>
${refusalOf(view, 'capture')}
${postForm(view.staff, `${path}/capture`, textField('capture-amount', 'amount', 'Amount (dollars and cents)', typedBefore(view, 'capture', 'amount'), { hint, inputmode: 'decimal', maxlength: 20 }), 'Capture')}
</section>`;
}

function fulfilAction(view: OrderView, path: string): Html {
  const { order } = view;
  const open = order.lines.filter((line) => unitsToShip(line) > 0);
  const quantities = html`<fieldset><legend>Units to ship now (0 to leave a line for later)</legend>${open.map((line) => {
    const name = `qty_${line.id}`;
    return html`<div class="field"><label for="fulfil-${line.id}">${typed(line.title)}${line.sku ? html` <span class="muted">(${typed(line.sku)})</span>` : ''}, ${unitsToShip(line)} left</label><input id="fulfil-${line.id}" name="${name}" type="number" min="0" max="${unitsToShip(line)}" step="1" value="${typedBefore(view, 'fulfil', name, String(unitsToShip(line)))}"></div>`;
  })}</fieldset>`;
  const fields = html`${quantities}
${textField('fulfil-tracking-number', 'tracking_number', 'Tracking number', typedBefore(view, 'fulfil', 'tracking_number'), { maxlength: 255 })}
${textField('fulfil-tracking-url', 'tracking_url', 'Tracking URL', typedBefore(view, 'fulfil', 'tracking_url'), { type: 'url', maxlength: 2000 })}
${textField('fulfil-carrier', 'carrier', 'Carrier', typedBefore(view, 'fulfil', 'carrier'), { maxlength: 255 })}`;
  return html`<section class="panel" aria-labelledby="fulfil-heading"><h3 id="fulfil-heading">Ship</h3>
${refusalOf(view, 'fulfil')}
${postForm(view.staff, `${path}/fulfil`, fields, 'Record the shipment')}
</section>`;
}

function cancelAction(view: OrderView, path: string): Html {
  return html`<section class="panel" aria-labelledby="cancel-heading"><h3 id="cancel-heading">Cancel</h3>
<p class="muted">Cancels every unit not shipped yet; those taken from stock go back, and the payment follows (an unpaid one is voided).</p>
${refusalOf(view, 'cancel')}
${postForm(view.staff, `${path}/cancel`, textField('cancel-reason', 'reason', 'Reason (told to the buyer)', typedBefore(view, 'cancel', 'reason')), 'Cancel the order', { danger: true })}
</section>`;
}

function refundAction(view: OrderView, path: string): Html {
  const { order } = view;
  const left = money(order.captured - order.refunded, order.currency);
  const fields = html`${textField('refund-amount', 'amount', 'Amount (dollars and cents)', typedBefore(view, 'refund', 'amount'), {
    hint: `Up to ${left}.`,
    inputmode: 'decimal',
    maxlength: 20,
  })}${textField('refund-reason', 'reason', 'Reason (told to the buyer)', typedBefore(view, 'refund', 'reason'))}`;
  return html`<section class="panel" aria-labelledby="refund-heading"><h3 id="refund-heading">Refund</h3>
${view.holdsFunds ? '' : html`<p class="muted">Give the money back first (by the means the buyer paid), then record it here.</p>`}
${refusalOf(view, 'refund')}
${postForm(view.staff, `${path}/refund`, fields, 'Refund', { danger: true })}
</section>`;
}

function actionsSection(view: OrderView): Html {
  const path = orderPath(view.order.number);
  const offers = offered(view);
  // A refusal is shown beside its form, even when the order no longer offers it (someone else moved it meanwhile).
  const shown = (action: OrderAction) => offers[action] || (view.refusal?.action === action && (action !== 'refund' || staffMay(view.staff.role, 'refund')));
  const forms = [
    shown('capture') ? captureAction(view, path) : '',
    shown('fulfil') ? fulfilAction(view, path) : '',
    shown('cancel') ? cancelAction(view, path) : '',
    shown('refund') ? refundAction(view, path) : '',
  ].filter((form) => form !== '');
  return html`<h2 id="actions">Actions</h2>
${forms.length ? html`<div class="grid">${forms}</div>` : html`<p>Nothing is left to do on this order${staffMay(view.staff.role, 'refund') ? '' : ' that your role allows'}.</p>`}`;
}

/** The body of GET /admin/orders/:number (and of the page again after a refused action). */
export function orderPageBody(view: OrderView): Html {
  const { order, moments } = view;
  const buyerName = [order.buyer.firstName, order.buyer.lastName].filter((part) => part).join(' ');
  return html`<p><a href="${SECTIONS.orders.path}">All orders</a></p>
<h1>Order #${order.number}</h1>
${view.done && Object.hasOwn(DONE, view.done) ? notice('done', DONE[view.done]!) : ''}
<p>${ORDER_STATUS_LABELS[order.status]} ${moments.moment(order.createdAt)} · prepared by ${preparedBy(order.channel, order.agentPlatform ?? null)} · ${PAYMENT_LABELS[order.paymentState]} · ${
    FULFILMENT_LABELS[fulfilmentState(order.lines)]
  }${order.canceledAt ? html` · canceled ${moments.moment(order.canceledAt)}${order.cancelReason ? html` (${typed(order.cancelReason)})` : ''}` : ''}</p>
${actionsSection(view)}
<h2 id="lines">Lines</h2>
${linesTable(order)}
${shipmentsList(order, moments)}
<div class="grid">
<section class="panel" aria-labelledby="totals-heading"><h2 id="totals-heading">Totals</h2>${totalsTable(order)}</section>
<section class="panel" aria-labelledby="payment-heading"><h2 id="payment-heading">Payment</h2>${paymentTable(order, moments)}</section>
<section class="panel" aria-labelledby="buyer-heading"><h2 id="buyer-heading">Buyer</h2>
<p>${typed(order.buyerEmail)}${buyerName ? html`<br>${typed(buyerName)}` : ''}${order.buyer.phoneNumber ? html`<br>${typed(order.buyer.phoneNumber)}` : ''}</p>
<h3>Ships to</h3>${addressBlock(order.shippingAddress)}</section>
<section class="panel" aria-labelledby="approval-heading"><h2 id="approval-heading">Approval</h2>${approvalPanel(view.approval, moments)}</section>
${notePanel(order)}
</div>
<h2 id="timeline">Timeline</h2>
<p class="muted">Times in ${moments.timeZone}.</p>
${timelineList(view.timeline, moments)}`;
}
