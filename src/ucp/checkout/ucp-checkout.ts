/**
 * The domain's checkout and order as UCP 2026-04-08 shapes: a checkout with the fulfillment extension (one
 * shipping method, its destination, one group with the shipping options), totals with exactly one subtotal
 * and one total, the policy links, `continue_url` on every open status (the approval page while the buyer's
 * approval is pending) and the order confirmation once completed; an order with its lines, expectations and
 * totals. Mapping only: every figure comes from the domain.
 */
import { APPROVAL_PROOF_WORDS } from '../../checkout/buyer-proof.js';
import type { CheckoutAnswer } from '../../checkout/checkout-service.js';
import type { CheckoutView } from '../../checkout/checkout.js';
import { isTerminal } from '../../checkout/machine.js';
import type { CheckoutTotals } from '../../checkout/totals.js';
import { STORE_CURRENCY } from '../../catalog/types.js';
import type { ApprovalProofMode, PolicyKind } from '../../config.js';
import type { Order, OrderAddress } from '../../orders/orders.js';
import type { PaymentHandler } from '../../payments/payment-handlers.js';
import { Capability, UCP_VERSION } from '../protocol.js';
import type { UcpMessage } from '../tools/tool.js';

export interface CheckoutMapping {
  baseUrl: string;
  policies: Record<PolicyKind, string>;
  payments: PaymentHandler;
  /** The versions of the capabilities this call negotiated. */
  versions: ReadonlyMap<string, string>;
  /** What the buyer proves on the approval page (APPROVAL_PROOF), told to the agent with the escalation. */
  approvalProof: ApprovalProofMode;
}

const ADDRESS_FIELDS = [
  'first_name',
  'last_name',
  'street_address',
  'extended_address',
  'address_locality',
  'address_region',
  'postal_code',
  'address_country',
  'phone_number',
] as const;

export const approvalUrl = (baseUrl: string, token: string) => `${baseUrl}/checkout/approve/${token}`;
export const checkoutPageUrl = (baseUrl: string, id: string) => `${baseUrl}/checkouts/${id}`;
export const orderPageUrl = (baseUrl: string, id: string) => `${baseUrl}/orders/${id}`;

/** The payment handlers as a checkout's `ucp` block and the profile advertise them. */
export function paymentHandlersEntry(payments: PaymentHandler): Record<string, object[]> {
  return { [payments.name]: [{ id: payments.id, version: payments.version, config: { capture: 'manual', description: payments.buyerNotice } }] };
}

function totalsJson(totals: CheckoutTotals): object[] {
  return [
    { type: 'subtotal', amount: totals.subtotal },
    ...(totals.shipping === undefined ? [] : [{ type: 'fulfillment', display_text: 'Shipping', amount: totals.shipping }]),
    ...(totals.tax === undefined ? [] : [{ type: 'tax', display_text: 'Sales tax', amount: totals.tax }]),
    { type: 'total', amount: totals.total },
  ];
}

function destinationJson(view: CheckoutView): Record<string, string> | undefined {
  const raw = view.record.destination;
  if (!raw) return undefined;
  const destination: Record<string, string> = { id: 'dest_1' };
  for (const field of ADDRESS_FIELDS) {
    const value = raw[field];
    if (typeof value === 'string' && value !== '') destination[field] = value.slice(0, 200);
  }
  return destination;
}

const buyerApprovalMessage = (content: string): UcpMessage => ({ type: 'error', code: 'buyer_approval_required', severity: 'requires_buyer_review', content });

export function ucpCheckout(answer: CheckoutAnswer, mapping: CheckoutMapping): Record<string, unknown> {
  const { view, approval } = answer;
  const { record } = view;
  const version = (capability: string) => mapping.versions.get(capability) ?? UCP_VERSION;
  const lineIds = view.lines.map((priced) => priced.line.id);
  const destination = destinationJson(view);
  const buyer = Object.fromEntries(
    Object.entries({ email: record.buyer.email, first_name: record.buyer.firstName, last_name: record.buyer.lastName, phone_number: record.buyer.phoneNumber }).filter(
      ([, value]) => value !== undefined,
    ),
  );
  const terminal = isTerminal(record.status);
  const messages: UcpMessage[] = terminal ? [] : [...view.messages];
  if (record.status === 'requires_escalation') {
    messages.unshift(
      buyerApprovalMessage(APPROVAL_PROOF_WORDS[mapping.approvalProof]),
    );
  }
  const continueUrl = terminal
    ? undefined
    : record.status === 'requires_escalation' && approval
      ? approvalUrl(mapping.baseUrl, approval.token)
      : checkoutPageUrl(mapping.baseUrl, record.id);
  return {
    ucp: {
      version: UCP_VERSION,
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
      item: { id: String(priced.line.variantId), title: priced.title, price: priced.unitPrice },
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
                description: option.description,
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
    expires_at: record.expiresAt.toISOString(),
    ...(continueUrl ? { continue_url: continueUrl } : {}),
    ...(record.status === 'completed' && record.orderId ? { order: { id: record.orderId, permalink_url: orderPageUrl(mapping.baseUrl, record.orderId) } } : {}),
  };
}

function addressJson(address: OrderAddress): Record<string, string> {
  const json: Record<string, string | undefined> = {
    first_name: address.firstName,
    last_name: address.lastName,
    street_address: address.streetAddress,
    extended_address: address.extendedAddress,
    address_locality: address.locality,
    address_region: address.region,
    postal_code: address.postalCode,
    address_country: address.country,
    phone_number: address.phoneNumber,
  };
  return Object.fromEntries(Object.entries(json).filter((entry): entry is [string, string] => entry[1] !== undefined));
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

/** The order as UCP shows it (get_order, the platform's webhooks): lines with their counts, shipments, adjustments. */
export function ucpOrder(order: Order, mapping: Pick<CheckoutMapping, 'baseUrl' | 'versions'>): Record<string, unknown> {
  return {
    ucp: { version: UCP_VERSION, status: 'success', capabilities: { [Capability.order]: [{ version: mapping.versions.get(Capability.order) ?? UCP_VERSION }] } },
    id: order.id,
    label: `#${order.number}`,
    checkout_id: order.checkoutId,
    permalink_url: orderPageUrl(mapping.baseUrl, order.id),
    currency: order.currency,
    line_items: order.lines.map((line) => ({
      id: line.id,
      item: { id: String(line.variantId), title: line.title, price: line.unitPrice },
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
    messages: [{ type: 'info', code: `payment_${order.paymentState}`, content: order.paymentSummary }],
  };
}
