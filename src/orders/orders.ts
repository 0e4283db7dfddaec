/**
 * Orders: placed inside the approval's transaction from what the buyer approved. An order's lines copy title,
 * variant, SKU and unit price, so a later catalog change never rewrites an order. Read by the order page, the
 * commerce door's order lookup and the merchant's `storefront orders` command.
 */
import { randomBytes } from 'node:crypto';
import type { PlanTerms } from '../catalog/types.js';
import type { PostalAddress } from '../checkout/shipping.js';
import type { Queryable } from '../db/database.js';
import type { PaymentHandler, PaymentState } from '../payments/payment-handlers.js';
import type { PaymentProviderName, ProviderAuthorization } from '../payments/payment-provider.js';

export type OrderStatus = 'placed' | 'canceled';

export interface OrderLine {
  id: string;
  position: number;
  variantId: number;
  productId: number;
  sku: string | null;
  productTitle: string;
  variantTitle: string;
  title: string;
  quantity: number;
  unitPrice: number;
  lineTotal: number;
  /** The subscription plan bought, if any, and the line's properties (engraving, gift note…), as approved. */
  sellingPlanId: number | null;
  /**
   * The plan's terms as bought, with the one-time unit price then: the line saved (fullUnitPrice - unitPrice) per
   * unit. Null for a one-time line (and for lines of orders placed before plans were kept).
   */
  sellingPlan?: OrderLinePlan | null;
  properties: Record<string, string>;
  /** Units shipped so far (fulfillment events), units canceled (never to ship), units sold beyond stock. */
  fulfilled: number;
  canceled: number;
  backordered: number;
}

export type OrderLinePlan = PlanTerms & { fullUnitPrice: number };

/** What a line saved on its plan, in cents (0 for a one-time line). */
export function lineSaving(line: Pick<OrderLine, 'sellingPlan' | 'unitPrice' | 'quantity'>): number {
  return line.sellingPlan ? Math.max(0, line.sellingPlan.fullUnitPrice - line.unitPrice) * line.quantity : 0;
}

/** A line and a number of its units (what a fulfillment ships, what an adjustment concerns). */
export interface LineQuantity {
  lineId: string;
  quantity: number;
}

/** A fulfillment event (append-only): units shipped, with tracking. */
export interface Fulfillment {
  id: string;
  type: 'shipped';
  lines: LineQuantity[];
  trackingNumber: string | null;
  trackingUrl: string | null;
  carrier: string | null;
  occurredAt: Date;
}

/** An adjustment (append-only): money given back, or units canceled. Amounts are signed cents (a refund is negative). */
export interface Adjustment {
  id: string;
  type: 'refund' | 'cancellation';
  amount: number;
  lines: LineQuantity[];
  reason: string | null;
  occurredAt: Date;
}

/**
 * The order's payment, in the one vocabulary of pages, mails, the commerce door's order and the CLI. The provider's own reference
 * (a PaymentIntent id) is not here: it is for the store and the merchant, never buyers (`paymentReference`).
 */
export interface OrderPayment {
  provider: PaymentProviderName;
  /** The same value as `Order.paymentState`. */
  state: PaymentState;
  /** Cents the order asks (its total). */
  amount: number;
  /** Cents held by the provider (0 for manual). */
  authorized: number;
  /** When the hold lapses (Stripe: 7 days after authorization); null when nothing is held. */
  authorizedUntil: Date | null;
  /** Manual: when payment is due. */
  dueAt: Date | null;
  /** Manual: the merchant's PAYMENT_INSTRUCTIONS as they were when the order was placed. */
  instructions: string | null;
  captured: number;
  refunded: number;
  /** The buyer's bank disputed the payment (kept once raised). */
  disputed: boolean;
}

/** Where an order ships: the US address the buyer approved. */
export type OrderAddress = PostalAddress;

export interface Order {
  id: string;
  /** The number buyers and the merchant quote (#1001, #1002, …). */
  number: number;
  checkoutId: string;
  status: OrderStatus;
  channel: 'agent' | 'browser';
  currency: string;
  buyerEmail: string;
  buyer: { email?: string; firstName?: string; lastName?: string; phoneNumber?: string };
  shippingAddress: OrderAddress;
  shippingOption: { id: string; title: string; amount: number };
  subtotal: number;
  shipping: number;
  tax: number;
  total: number;
  paymentState: PaymentState;
  paymentHandler: string;
  paymentSummary: string;
  /** Cents the merchant received (captured) and gave back (refunded); refunded never exceeds captured. */
  captured: number;
  refunded: number;
  payment: OrderPayment;
  canceledAt: Date | null;
  cancelReason: string | null;
  /** Where the agent's platform hears of this order (its profile's order webhook), if it asked. */
  webhookUrl: string | null;
  /** The platform whose agent prepared it (the host of the agent's profile); null for a browser's (absent in fixtures). */
  agentPlatform?: string | null;
  /** The cart's note and attributes, as the buyer left them (absent in fixtures made before they were kept). */
  note?: string | null;
  attributes?: Record<string, string>;
  createdAt: Date;
  lines: OrderLine[];
  fulfillments: Fulfillment[];
  adjustments: Adjustment[];
}

/** What the approval hands over to become an order: lines without their later counts (backorders are known). */
export type NewOrder = Omit<
  Order,
  | 'id'
  | 'number'
  | 'createdAt'
  | 'paymentState'
  | 'paymentHandler'
  | 'paymentSummary'
  | 'status'
  | 'captured'
  | 'refunded'
  | 'payment'
  | 'canceledAt'
  | 'cancelReason'
  | 'fulfillments'
  | 'adjustments'
  | 'lines'
> & {
  lines: Omit<OrderLine, 'fulfilled' | 'canceled'>[];
  /** The provider's hold, confirmed before the approval's transaction (a hosted provider); absent for manual. */
  paymentAuthorization?: ProviderAuthorization;
};

/** An order id: 128 random bits, so the order page's address cannot be guessed. */
export function newOrderId(): string {
  return `ord_${randomBytes(16).toString('base64url')}`;
}

/**
 * Places an order inside the caller's transaction: the order, its lines, and the payment the handler
 * authorizes (a PaymentDeclined from the handler rolls the whole transaction back).
 */
export async function placeOrder(tx: Queryable, order: NewOrder, payments: PaymentHandler): Promise<Order> {
  const id = newOrderId();
  // The database's time of the transaction, which `created_at` takes too: a due date is exactly its days after it.
  const [clock] = await tx.query<{ now: Date | string }>('select now() as now');
  const placedAt = new Date(clock!.now);
  const payment = await payments.authorize(tx, {
    orderId: id,
    amount: order.total,
    currency: order.currency,
    placedAt,
    ...(order.paymentAuthorization ? { authorization: order.paymentAuthorization } : {}),
  });
  const start = payment.start ?? { provider: 'manual', state: payment.state, authorized: 0, authorizedUntil: null, dueAt: null, instructions: null, reference: null };
  const rows = await tx.query<{ number: number; created_at: Date | string }>(
    `insert into orders (id, checkout_id, status, channel, currency, buyer_email, buyer, shipping_address, shipping_option,
                         subtotal, shipping, tax, total, payment_state, webhook_url,
                         payment_provider, payment_authorized, payment_authorized_until, payment_due_at, payment_instructions, payment_reference,
                         agent_platform, note, attributes)
     values ($1, $2, 'placed', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)
     returning number, created_at`,
    [
      id,
      order.checkoutId,
      order.channel,
      order.currency,
      order.buyerEmail,
      JSON.stringify(order.buyer),
      JSON.stringify(order.shippingAddress),
      JSON.stringify(order.shippingOption),
      order.subtotal,
      order.shipping,
      order.tax,
      order.total,
      payment.state,
      order.webhookUrl,
      start.provider,
      start.authorized,
      start.authorizedUntil,
      start.dueAt,
      start.instructions,
      start.reference,
      order.agentPlatform ?? null,
      order.note ?? null,
      JSON.stringify(order.attributes ?? {}),
    ],
  );
  for (const line of order.lines) {
    await tx.query(
      `insert into order_lines (order_id, line_id, position, variant_id, product_id, sku, product_title, variant_title, title, quantity, unit_price, line_total,
                               selling_plan_id, properties, backordered, selling_plan)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [
        id,
        line.id,
        line.position,
        line.variantId,
        line.productId,
        line.sku,
        line.productTitle,
        line.variantTitle,
        line.title,
        line.quantity,
        line.unitPrice,
        line.lineTotal,
        line.sellingPlanId,
        JSON.stringify(line.properties),
        line.backordered,
        line.sellingPlan ? JSON.stringify(line.sellingPlan) : null,
      ],
    );
  }
  await tx.query('insert into payments (id, order_id, handler, state, amount, currency) values ($1, $2, $3, $4, $5, $6)', [
    `pay_${randomBytes(12).toString('base64url')}`,
    id,
    `${payments.name}:${payments.id}`,
    payment.state,
    order.total,
    order.currency,
  ]);
  const { paymentAuthorization: _hold, ...placed } = order;
  return {
    ...placed,
    agentPlatform: order.agentPlatform ?? null,
    note: order.note ?? null,
    attributes: order.attributes ?? {},
    id,
    number: Number(rows[0]!.number),
    status: 'placed',
    paymentState: payment.state,
    paymentHandler: payments.name,
    paymentSummary: payment.summary,
    captured: 0,
    refunded: 0,
    payment: {
      provider: start.provider,
      state: payment.state,
      amount: order.total,
      authorized: start.authorized,
      authorizedUntil: start.authorizedUntil,
      dueAt: start.dueAt,
      instructions: start.instructions,
      captured: 0,
      refunded: 0,
      disputed: false,
    },
    canceledAt: null,
    cancelReason: null,
    createdAt: new Date(rows[0]!.created_at),
    lines: order.lines.map((line) => ({ ...line, fulfilled: 0, canceled: 0 })),
    fulfillments: [],
    adjustments: [],
  };
}

interface OrderRow {
  [column: string]: unknown;
  id: string;
  number: number | string;
  checkout_id: string;
  status: OrderStatus;
  channel: 'agent' | 'browser';
  currency: string;
  buyer_email: string;
  buyer: Order['buyer'] | string;
  shipping_address: OrderAddress | string;
  shipping_option: Order['shippingOption'] | string;
  subtotal: number;
  shipping: number;
  tax: number;
  total: number;
  payment_state: PaymentState;
  payment_handler: string | null;
  captured: number;
  refunded: number;
  payment_provider: PaymentProviderName;
  payment_authorized: number;
  payment_authorized_until: Date | string | null;
  payment_due_at: Date | string | null;
  payment_instructions: string | null;
  payment_disputed: boolean;
  canceled_at: Date | string | null;
  cancel_reason: string | null;
  webhook_url: string | null;
  agent_platform: string | null;
  note: string | null;
  attributes: Record<string, string> | string | null;
  created_at: Date | string;
}

const json = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

const PAYMENT_SUMMARY: Record<PaymentState, string> = {
  pending: 'Payment pending: pay as the payment instructions say, by the due date.',
  authorized: 'Payment authorized: the amount is held on the card until the order ships.',
  captured: 'Paid.',
  partially_refunded: 'Paid, partly refunded.',
  refunded: 'Refunded.',
  voided: 'No payment: the order was canceled before it was paid.',
  failed: 'Payment failed.',
  disputed: "Payment disputed: the buyer's bank is reviewing it.",
};

const date = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

interface OrderHistory {
  lines: OrderLine[];
  fulfillments: Fulfillment[];
  adjustments: Adjustment[];
}

function orderFromRow(row: OrderRow, history: OrderHistory): Order {
  return {
    id: row.id,
    number: Number(row.number),
    checkoutId: row.checkout_id,
    status: row.status,
    channel: row.channel,
    currency: row.currency,
    buyerEmail: row.buyer_email,
    buyer: json(row.buyer),
    shippingAddress: json(row.shipping_address),
    shippingOption: json(row.shipping_option),
    subtotal: row.subtotal,
    shipping: row.shipping,
    tax: row.tax,
    total: row.total,
    paymentState: row.payment_state,
    paymentHandler: (row.payment_handler ?? '').split(':')[0] ?? '',
    paymentSummary: PAYMENT_SUMMARY[row.payment_state],
    captured: row.captured,
    refunded: row.refunded,
    payment: {
      provider: row.payment_provider,
      state: row.payment_state,
      amount: row.total,
      authorized: row.payment_authorized,
      authorizedUntil: date(row.payment_authorized_until),
      dueAt: date(row.payment_due_at),
      instructions: row.payment_instructions,
      captured: row.captured,
      refunded: row.refunded,
      disputed: row.payment_disputed,
    },
    canceledAt: date(row.canceled_at),
    cancelReason: row.cancel_reason,
    webhookUrl: row.webhook_url,
    agentPlatform: row.agent_platform,
    note: row.note,
    attributes: row.attributes === null ? {} : json(row.attributes),
    createdAt: new Date(row.created_at),
    ...history,
  };
}

const ORDER_SELECT = `select o.id, o.number, o.checkout_id, o.status, o.channel, o.currency, o.buyer_email, o.buyer, o.shipping_address,
        o.shipping_option, o.subtotal, o.shipping, o.tax, o.total, o.payment_state, o.created_at,
        o.captured, o.refunded, o.canceled_at, o.cancel_reason, o.webhook_url, o.agent_platform, o.note, o.attributes,
        o.payment_provider, o.payment_authorized, o.payment_authorized_until, o.payment_due_at, o.payment_instructions, o.payment_disputed,
        (select p.handler from payments p where p.order_id = o.id order by p.created_at limit 1) as payment_handler
   from orders o`;

/** Lines, fulfillment events and adjustments of these orders, each in order. */
async function readHistory(db: Queryable, orderIds: readonly string[]): Promise<Map<string, OrderHistory>> {
  const byOrder = new Map<string, OrderHistory>(orderIds.map((id) => [id, { lines: [], fulfillments: [], adjustments: [] }]));
  if (orderIds.length === 0) return byOrder;
  const rows = await db.query<{
    order_id: string;
    line_id: string;
    position: number;
    variant_id: number;
    product_id: number;
    sku: string | null;
    product_title: string;
    variant_title: string;
    title: string;
    quantity: number;
    unit_price: number;
    line_total: number;
    selling_plan_id: number | null;
    selling_plan: OrderLinePlan | string | null;
    properties: Record<string, string> | string;
    fulfilled: number;
    canceled: number;
    backordered: number;
  }>('select * from order_lines where order_id = any($1::text[]) order by order_id, position', [orderIds]);
  for (const row of rows) {
    byOrder.get(row.order_id)!.lines.push({
      id: row.line_id,
      position: row.position,
      variantId: row.variant_id,
      productId: row.product_id,
      sku: row.sku,
      productTitle: row.product_title,
      variantTitle: row.variant_title,
      title: row.title,
      quantity: row.quantity,
      unitPrice: row.unit_price,
      lineTotal: row.line_total,
      sellingPlanId: row.selling_plan_id,
      sellingPlan: row.selling_plan === null ? null : json(row.selling_plan),
      properties: json(row.properties),
      fulfilled: row.fulfilled,
      canceled: row.canceled,
      backordered: row.backordered,
    });
  }
  const fulfillments = await db.query<{
    id: string;
    order_id: string;
    line_items: LineQuantity[] | string;
    tracking_number: string | null;
    tracking_url: string | null;
    carrier: string | null;
    occurred_at: Date | string;
  }>('select * from order_fulfillments where order_id = any($1::text[]) order by occurred_at, id', [orderIds]);
  for (const row of fulfillments) {
    byOrder.get(row.order_id)!.fulfillments.push({
      id: row.id,
      type: 'shipped',
      lines: json(row.line_items),
      trackingNumber: row.tracking_number,
      trackingUrl: row.tracking_url,
      carrier: row.carrier,
      occurredAt: new Date(row.occurred_at),
    });
  }
  const adjustments = await db.query<{
    id: string;
    order_id: string;
    type: Adjustment['type'];
    amount: number;
    line_items: LineQuantity[] | string;
    reason: string | null;
    occurred_at: Date | string;
  }>('select * from order_adjustments where order_id = any($1::text[]) order by occurred_at, id', [orderIds]);
  for (const row of adjustments) {
    byOrder.get(row.order_id)!.adjustments.push({
      id: row.id,
      type: row.type,
      amount: row.amount,
      lines: json(row.line_items),
      reason: row.reason,
      occurredAt: new Date(row.occurred_at),
    });
  }
  return byOrder;
}

/** An order by its id, or by its number (`1001` or `#1001`, for the merchant's command). */
export async function readOrder(db: Queryable, idOrNumber: string, options: { lock?: boolean } = {}): Promise<Order | undefined> {
  const number = /^#?(\d{1,15})$/.exec(idOrNumber.trim());
  const lock = options.lock ? ' for update of o' : '';
  const rows = number
    ? await db.query<OrderRow>(`${ORDER_SELECT} where o.number = $1${lock}`, [Number(number[1])])
    : await db.query<OrderRow>(`${ORDER_SELECT} where o.id = $1${lock}`, [idOrNumber]);
  const row = rows[0];
  if (!row) return undefined;
  const history = await readHistory(db, [row.id]);
  return orderFromRow(row, history.get(row.id)!);
}

/** Orders, newest first. */
export async function listOrders(db: Queryable, limit = 50): Promise<Order[]> {
  const rows = await db.query<OrderRow>(`${ORDER_SELECT} order by o.created_at desc, o.number desc limit $1`, [limit]);
  const history = await readHistory(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => orderFromRow(row, history.get(row.id)!));
}

/** The number and the merchant's reason of an order that was canceled; undefined when it was not (or there is none). */
export async function readOrderCancellation(db: Queryable, orderId: string): Promise<{ number: number; reason: string | null } | undefined> {
  const rows = await db.query<{ number: number | string; cancel_reason: string | null }>(`select number, cancel_reason from orders where id = $1 and status = 'canceled'`, [orderId]);
  return rows[0] ? { number: Number(rows[0].number), reason: rows[0].cancel_reason } : undefined;
}

/** The provider's reference of an order's payment (a PaymentIntent id): for the store and the merchant, never buyers. */
export async function paymentReference(db: Queryable, orderId: string): Promise<string | null> {
  const rows = await db.query<{ payment_reference: string | null }>('select payment_reference from orders where id = $1', [orderId]);
  return rows[0]?.payment_reference ?? null;
}

/** The order whose payment the provider knows by this reference, if any. */
export async function orderIdByPaymentReference(db: Queryable, provider: PaymentProviderName, reference: string): Promise<string | undefined> {
  const rows = await db.query<{ id: string }>('select id from orders where payment_provider = $1 and payment_reference = $2', [provider, reference]);
  return rows[0]?.id;
}
