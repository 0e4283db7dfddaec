/**
 * The domain's checkout and order as UCP shapes of the caller's release (2026-04-08 or 2026-08-25): a checkout
 * with the fulfillment extension (one shipping method, its destination, one group with the shipping options), totals
 * with exactly one subtotal
 * and one total, the policy links, `continue_url` on every open status (the approval page while the buyer's
 * approval is pending) and the order confirmation once completed; an order with its lines, expectations and
 * totals. Mapping only: every figure comes from the domain. Where the releases differ: from 2026-08-25 a destination
 * says its `type` (`shipping_address`), an option's `description` is a description object (`{plain}`), and the return
 * terms are a structured `policies` entry beside the links.
 */
import type { CheckoutAnswer } from '../../checkout/checkout-service.js';
import { orderCanceledNotice, type CheckoutView } from '../../checkout/checkout.js';
import { isTerminal } from '../../checkout/machine.js';
import type { CheckoutTotals } from '../../checkout/totals.js';
import { planWords, STORE_CURRENCY, type PlanTerms } from '../../catalog/types.js';
import type { AddressKey } from '../../checkout/shipping.js';
import type { ApprovalProofMode, PolicyKind } from '../../config.js';
import type { Order } from '../../orders/orders.js';
import type { PaymentHandler } from '../../payments/payment-handlers.js';
import type { CaptureOn } from '../../orders/order-machine.js';
import { paymentContextOf, paymentLine } from '../../payments/payment-words.js';
import { Capability, type UcpRelease } from '../protocol.js';
import type { UcpMessage } from '../tools/tool.js';
import { ucpBuyerApprovalMessage, ucpMessage } from './ucp-messages.js';

export interface CheckoutMapping {
  /** The UCP release the answer is shaped for. */
  release: UcpRelease;
  baseUrl: string;
  policies: Record<PolicyKind, string>;
  payments: PaymentHandler;
  /** The versions of the capabilities this call negotiated. */
  versions: ReadonlyMap<string, string>;
  /** What the buyer proves on the approval page (APPROVAL_PROOF), told to the agent with the escalation. */
  approvalProof: ApprovalProofMode;
}

/** The UCP postal_address member of each part of an address. */
export const POSTAL_ADDRESS_MEMBERS: Record<AddressKey, string> = {
  firstName: 'first_name',
  lastName: 'last_name',
  streetAddress: 'street_address',
  extendedAddress: 'extended_address',
  locality: 'address_locality',
  region: 'address_region',
  postalCode: 'postal_code',
  country: 'address_country',
  phoneNumber: 'phone_number',
};

export const approvalUrl = (baseUrl: string, token: string) => `${baseUrl}/checkout/approve/${token}`;
export const checkoutPageUrl = (baseUrl: string, id: string) => `${baseUrl}/checkouts/${id}`;
export const orderPageUrl = (baseUrl: string, id: string) => `${baseUrl}/orders/${id}`;

/**
 * A line's item title: the item's name and, for a line bought on a selling plan, the plan with its interval and
 * saving ("Espresso Capsules — Delivery every month (every month, save 10%)"). Neither release's line item has a
 * member of its own for a subscription, so the title, which every platform shows, says it.
 */
export function lineTitle(title: string, plan: PlanTerms | null | undefined): string {
  return plan ? `${title} — ${planWords(plan)}` : title;
}

/** The payment handlers as a checkout's `ucp` block and the profile advertise them. */
export function paymentHandlersEntry(payments: PaymentHandler): Record<string, object[]> {
  return { [payments.name]: [{ id: payments.id, version: payments.version, config: payments.config }] };
}

function totalsJson(totals: CheckoutTotals): object[] {
  return [
    { type: 'subtotal', amount: totals.subtotal },
    ...(totals.shipping === undefined ? [] : [{ type: 'fulfillment', display_text: 'Shipping', amount: totals.shipping }]),
    ...(totals.tax === undefined ? [] : [{ type: 'tax', display_text: 'Sales tax', amount: totals.tax }]),
    { type: 'total', amount: totals.total },
  ];
}

function destinationJson(view: CheckoutView, release: UcpRelease): Record<string, string> | undefined {
  const raw = view.record.destination;
  if (!raw) return undefined;
  return { ...(release === '2026-04-08' ? { id: 'dest_1' } : { id: 'dest_1', type: 'shipping_address' }), ...addressJson(raw) };
}

/** The store's return terms as a 2026-08-25 policy, for every line: its refund policy page. */
const returnPolicy = (url: string) => ({
  type: 'dev.ucp.shopping.policy.return',
  description: { plain: "Returns and refunds follow the store's refund policy." },
  url,
});

export function ucpCheckout(answer: CheckoutAnswer, mapping: CheckoutMapping): Record<string, unknown> {
  const { view, approval } = answer;
  const { record } = view;
  const { release } = mapping;
  const version = (capability: string) => mapping.versions.get(capability) ?? release;
  const lineIds = view.lines.map((priced) => priced.line.id);
  const destination = destinationJson(view, release);
  const buyer = Object.fromEntries(
    Object.entries({ email: record.buyer.email, first_name: record.buyer.firstName, last_name: record.buyer.lastName, phone_number: record.buyer.phoneNumber }).filter(
      ([, value]) => value !== undefined,
    ),
  );
  const terminal = isTerminal(record.status);
  const messages: UcpMessage[] = terminal ? [] : view.messages.map((message) => ucpMessage(message, release, view.options));
  if (record.status === 'requires_escalation') messages.unshift(ucpBuyerApprovalMessage(mapping.approvalProof, release, mapping.payments.config));
  // Why it is canceled, why the buyer's approval placed nothing, or that its order was canceled: first.
  if (answer.notice) messages.unshift(ucpMessage(answer.notice, release));
  const continueUrl = terminal
    ? undefined
    : record.status === 'requires_escalation' && approval
      ? approvalUrl(mapping.baseUrl, approval.token)
      : checkoutPageUrl(mapping.baseUrl, record.id);
  return {
    ucp: {
      version: release,
      status: 'success',
      capabilities: {
        [Capability.checkout]: [{ version: version(Capability.checkout) }],
        [Capability.fulfillment]: [{ version: version(Capability.fulfillment) }],
      },
      payment_handlers: paymentHandlersEntry(mapping.payments),
    },
    id: record.id,
    status: record.status,
    currency: STORE_CURRENCY,
    ...(Object.keys(buyer).length > 0 ? { buyer } : {}),
    line_items: view.lines.map((priced) => ({
      id: priced.line.id,
      item: { id: String(priced.line.variantId), title: lineTitle(priced.title, priced.plan), price: priced.unitPrice },
      quantity: priced.line.quantity,
      totals: [
        { type: 'subtotal', amount: priced.lineTotal },
        { type: 'total', amount: priced.lineTotal },
      ],
    })),
    fulfillment: {
      methods: [
        {
          id: 'shipping_1',
          type: 'shipping',
          line_item_ids: lineIds,
          destinations: destination ? [destination] : [],
          selected_destination_id: destination ? destination.id : null,
          groups: [
            {
              id: 'group_1',
              line_item_ids: lineIds,
              options: view.options.map((option) => ({
                id: option.id,
                title: option.title,
                description: release === '2026-04-08' ? option.description : { plain: option.description },
                totals: [{ type: 'total', amount: option.amount }],
              })),
              selected_option_id: view.selectedOption?.id ?? null,
            },
          ],
        },
      ],
    },
    totals: totalsJson(view.totals),
    ...(messages.length > 0 ? { messages } : {}),
    links: Object.entries(mapping.policies).map(([type, url]) => ({ type, url })),
    // 2026-08-25: the return terms as a structured policy too (the links above stay: they are required).
    ...(release === '2026-04-08' ? {} : { policies: [returnPolicy(mapping.policies.refund_policy)] }),
    expires_at: record.expiresAt.toISOString(),
    ...(continueUrl ? { continue_url: continueUrl } : {}),
    ...(record.status === 'completed' && record.orderId ? { order: { id: record.orderId, permalink_url: orderPageUrl(mapping.baseUrl, record.orderId) } } : {}),
  };
}

/** An address (the domain's names) as a UCP postal_address: the parts that are there. */
function addressJson(address: Partial<Record<AddressKey, string>>): Record<string, string> {
  const json: Record<string, string> = {};
  for (const [key, member] of Object.entries(POSTAL_ADDRESS_MEMBERS) as [AddressKey, string][]) {
    const value = address[key];
    if (typeof value === 'string' && value !== '') json[member] = value;
  }
  return json;
}

/** A line's status as UCP derives it from its counts. */
function lineStatus(total: number, fulfilled: number): 'removed' | 'fulfilled' | 'partial' | 'processing' {
  if (total === 0) return 'removed';
  if (fulfilled >= total) return 'fulfilled';
  return fulfilled > 0 ? 'partial' : 'processing';
}

/**
 * The promise to the buyer, by line: what ships with the chosen option, and what is backordered and ships later.
 * The units taken from stock ship first, so a line's backordered units still to come are the last ones.
 */
function expectations(order: Order): Record<string, unknown>[] {
  const destination = addressJson(order.shippingAddress);
  const split = order.lines.map((line) => {
    const total = line.quantity - line.canceled;
    const later = Math.min(line.backordered, line.quantity - line.fulfilled - line.canceled);
    return { id: line.id, now: total - later, later };
  });
  const inStock = split.filter((entry) => entry.now > 0).map((entry) => ({ id: entry.id, quantity: entry.now }));
  const later = split.filter((entry) => entry.later > 0).map((entry) => ({ id: entry.id, quantity: entry.later }));
  return [
    ...(inStock.length
      ? [{ id: 'exp_1', line_items: inStock, method_type: 'shipping', destination, description: order.shippingOption.title, fulfillable_on: 'now' }]
      : []),
    ...(later.length
      ? [{ id: 'exp_backorder', line_items: later, method_type: 'shipping', destination, description: 'Backordered: ships when back in stock.' }]
      : []),
  ];
}

/**
 * The order as UCP shows it (get_order, the platform's webhooks): lines with their counts, shipments, adjustments
 * (refunds, cancellations). The order schema has no member for the payment, so its state travels as an info message,
 * code `payment_<state>`, in the words the buyer's pages and mails use (src/payments/payment-words.ts).
 */
export function ucpOrder(order: Order, mapping: Pick<CheckoutMapping, 'release' | 'baseUrl' | 'versions'> & { captureOn?: CaptureOn }): Record<string, unknown> {
  const { release } = mapping;
  return {
    ucp: { version: release, status: 'success', capabilities: { [Capability.order]: [{ version: mapping.versions.get(Capability.order) ?? release }] } },
    id: order.id,
    label: `#${order.number}`,
    checkout_id: order.checkoutId,
    permalink_url: orderPageUrl(mapping.baseUrl, order.id),
    currency: order.currency,
    line_items: order.lines.map((line) => ({
      id: line.id,
      item: { id: String(line.variantId), title: lineTitle(line.title, line.sellingPlan), price: line.unitPrice },
      quantity: { original: line.quantity, total: line.quantity - line.canceled, fulfilled: line.fulfilled },
      totals: [
        { type: 'subtotal', amount: line.lineTotal },
        { type: 'total', amount: line.lineTotal },
      ],
      status: lineStatus(line.quantity - line.canceled, line.fulfilled),
    })),
    fulfillment: {
      expectations: expectations(order),
      events: order.fulfillments.map((fulfillment) => ({
        id: fulfillment.id,
        occurred_at: fulfillment.occurredAt.toISOString(),
        type: fulfillment.type,
        line_items: fulfillment.lines.map((line) => ({ id: line.lineId, quantity: line.quantity })),
        ...(fulfillment.trackingNumber ? { tracking_number: fulfillment.trackingNumber } : {}),
        ...(fulfillment.trackingUrl ? { tracking_url: fulfillment.trackingUrl } : {}),
        ...(fulfillment.carrier ? { carrier: fulfillment.carrier } : {}),
      })),
    },
    adjustments: order.adjustments.map((adjustment) => ({
      id: adjustment.id,
      type: adjustment.type,
      occurred_at: adjustment.occurredAt.toISOString(),
      status: 'completed',
      ...(adjustment.lines.length ? { line_items: adjustment.lines.map((line) => ({ id: line.lineId, quantity: line.quantity })) } : {}),
      ...(adjustment.amount !== 0 ? { totals: [{ type: 'total', amount: adjustment.amount }] } : {}),
      ...(adjustment.reason ? { description: adjustment.reason } : {}),
    })),
    totals: totalsJson({ subtotal: order.subtotal, shipping: order.shipping, tax: order.tax, total: order.total }),
    messages: [
      // A canceled order says so first, with the merchant's reason (the order event of the cancel carries it too).
      ...(order.status === 'canceled' ? [ucpMessage(orderCanceledNotice({ number: order.number, reason: order.cancelReason }), release)] : []),
      {
        type: 'info',
        code: `payment_${order.payment.state}`,
        content: paymentLine(order.payment, paymentContextOf(order, mapping.captureOn)),
      },
    ],
  };
}
