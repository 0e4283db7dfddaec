/**
 * The order's life after the sale, as the merchant moves it: capture (the payment was received), fulfil (units
 * shipped, with tracking), cancel (what has not shipped; its units back in stock), refund (never more than was
 * captured). Each is one transaction on the order's locked row: the guard says why a move is refused (nothing
 * changes then), the change is written with its fulfillment event or adjustment, and the event is announced to
 * the subscribers (mail, the platform's webhook) in that same transaction.
 */
import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { formatMoney } from '../catalog/types.js';
import { PERSON_FIELDS } from '../fields/person-fields.js';
import { textFault, textFaultSentence } from '../fields/text.js';
import { InsufficientStock } from '../inventory/inventory.js';
import type { PaymentState } from '../payments/payment-handlers.js';
import { announce, type OrderEvent, type OrderEventSubscriber } from './order-events.js';
import { readOrder, type Adjustment, type Fulfillment, type LineQuantity, type Order, type OrderLine } from './orders.js';

/** A move the order's state does not allow, or a request that names what the order does not have: nothing changed. */
export class OrderActionRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OrderActionRefused';
  }
}

export class OrderNotFound extends Error {
  constructor(idOrNumber: string) {
    super(`no order has the id or number "${idOrNumber.slice(0, 64)}"`);
    this.name = 'OrderNotFound';
  }
}

export interface FulfillInput {
  trackingNumber?: string;
  trackingUrl?: string;
  carrier?: string;
  /** Line (its id `li_1`, or its SKU) → units to ship; absent: everything not yet shipped. */
  lines?: ReadonlyMap<string, number>;
}

/**
 * The inventory, the one writer of stock: a canceled order's units go back; backordered units that ship are taken
 * then (they were sold beyond stock, so the approval could not take them).
 */
export interface OrderStock {
  giveBack(tx: Queryable, units: ReadonlyMap<number, number>): Promise<void>;
  take(tx: Queryable, demand: ReadonlyMap<number, number>, options: { backorder: false }): Promise<unknown>;
}

export interface OrderActionsOptions {
  inventory: OrderStock;
  subscribers: readonly OrderEventSubscriber[];
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url')}`;

/** Units of a line still to ship: neither shipped nor canceled. */
export const unitsToShip = (line: OrderLine) => line.quantity - line.fulfilled - line.canceled;

/** Units of a line taken from stock and still in the warehouse: the in-stock units ship first, backorders last. */
const unitsInStock = (line: OrderLine) => Math.max(0, line.quantity - line.backordered - line.fulfilled - line.canceled);

/** Units of a line sold beyond stock and not shipped yet (committed backorders). */
export const unitsBackordered = (line: OrderLine) => Math.min(line.backordered, unitsToShip(line));

function paymentStateAfterRefund(captured: number, refunded: number): PaymentState {
  return refunded >= captured ? 'refunded' : 'partially_refunded';
}

const MERCHANT_TEXT = PERSON_FIELDS.orderText;
const text = (value: string | undefined, what: string): string | null => {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed === '') return null;
  // Control, bidi and invisible characters never reach a mail, a page, a header or the terminal (src/fields).
  const fault = textFault(trimmed, MERCHANT_TEXT);
  if (fault) throw new OrderActionRefused(`${what} ${textFaultSentence(fault, MERCHANT_TEXT)}`);
  return trimmed;
};

function trackingUrl(raw: string | undefined): string | null {
  const value = text(raw, 'the tracking URL');
  if (value === null) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OrderActionRefused(`the tracking URL "${value.slice(0, 80)}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OrderActionRefused('the tracking URL must be an http or https URL');
  return url.toString();
}

export class OrderActions {
  constructor(private readonly options: OrderActionsOptions) {}

  /**
   * One move on one order: its row locked, `move` checks and writes, then the order as it now is is announced.
   * A refusal thrown by `move` rolls everything back.
   */
  private async change(
    db: Database,
    idOrNumber: string,
    move: (tx: Queryable, order: Order) => Promise<(order: Order) => OrderEvent>,
  ): Promise<Order> {
    return db.transaction(async (tx) => {
      const locked = await readOrder(tx, idOrNumber, { lock: true });
      if (!locked) throw new OrderNotFound(idOrNumber);
      const event = await move(tx, locked);
      const after = (await readOrder(tx, locked.id))!;
      await announce(tx, this.options.subscribers, event(after));
      return after;
    });
  }

  /** The merchant received the order's payment (manual capture): the order is paid. */
  async capture(db: Database, idOrNumber: string): Promise<Order> {
    return this.change(db, idOrNumber, async (tx, order) => {
      // A canceled order that shipped nothing owes nothing; one canceled after a shipment is still paid for (and the rest refunded).
      const shipped = order.lines.some((line) => line.fulfilled > 0);
      if (order.status === 'canceled' && !shipped) throw new OrderActionRefused(`order #${order.number} was canceled before anything shipped; there is no payment to capture`);
      if (order.captured > 0) throw new OrderActionRefused(`order #${order.number} is already paid (${formatMoney(order.captured, order.currency)} captured)`);
      await tx.query(`update orders set captured = total, payment_state = 'captured' where id = $1`, [order.id]);
      await tx.query(`update payments set state = 'captured' where order_id = $1`, [order.id]);
      return (after) => ({ type: 'captured', order: after });
    });
  }

  /** Units shipped, with tracking: every unit not yet shipped, or the lines and quantities given. */
  async fulfill(db: Database, idOrNumber: string, input: FulfillInput = {}): Promise<Order> {
    const tracking = {
      trackingNumber: text(input.trackingNumber, 'the tracking number'),
      trackingUrl: trackingUrl(input.trackingUrl),
      carrier: text(input.carrier, 'the carrier'),
    };
    return this.change(db, idOrNumber, async (tx, order) => {
      if (order.status === 'canceled') throw new OrderActionRefused(`order #${order.number} is canceled; nothing can ship`);
      const shipped = shipment(order, input.lines);
      await this.takeShippedBackorders(tx, order, shipped);
      const fulfillment: Fulfillment = { id: newId('ful'), type: 'shipped', lines: shipped, ...tracking, occurredAt: new Date() };
      await tx.query(
        `insert into order_fulfillments (id, order_id, type, line_items, tracking_number, tracking_url, carrier)
         values ($1, $2, $3, $4, $5, $6, $7)`,
        [fulfillment.id, order.id, fulfillment.type, JSON.stringify(shipped), tracking.trackingNumber, tracking.trackingUrl, tracking.carrier],
      );
      await tx.query(
        `update order_lines l set fulfilled = l.fulfilled + s.quantity
           from unnest($2::text[], $3::int[]) as s(line_id, quantity)
          where l.order_id = $1 and l.line_id = s.line_id`,
        [order.id, shipped.map((line) => line.lineId), shipped.map((line) => line.quantity)],
      );
      return (after) => ({ type: 'fulfilled', order: after, fulfillment: after.fulfillments.find((f) => f.id === fulfillment.id)! });
    });
  }

  /**
   * Backordered units that ship now come out of stock now (the in-stock units of a line ship first, so these are
   * the units past them). The store must have them: shipping what it does not hold is refused.
   */
  private async takeShippedBackorders(tx: Queryable, order: Order, shipped: readonly LineQuantity[]): Promise<void> {
    const demand = new Map<number, number>();
    for (const { lineId, quantity } of shipped) {
      const line = order.lines.find((l) => l.id === lineId)!;
      const inStock = line.quantity - line.backordered;
      const units = Math.max(0, line.fulfilled + quantity - inStock) - Math.max(0, line.fulfilled - inStock);
      if (units > 0) demand.set(line.variantId, (demand.get(line.variantId) ?? 0) + units);
    }
    if (demand.size === 0) return;
    try {
      await this.options.inventory.take(tx, demand, { backorder: false });
    } catch (error) {
      if (!(error instanceof InsufficientStock)) throw error;
      const skus = order.lines.filter((line) => error.variantIds.includes(line.variantId)).map((line) => line.sku ?? line.title);
      throw new OrderActionRefused(
        `units of ${skus.join(', ')} sold beyond stock are not in stock yet; when they arrive, set the stock (storefront stock set SKU QUANTITY) and ship them`,
      );
    }
  }

  /**
   * Cancels what has not shipped: those units are canceled on their lines, the ones taken from stock go back
   * exactly once (a canceled order cannot be canceled again), and an unpaid order's payment is void.
   */
  async cancel(db: Database, idOrNumber: string, reason?: string): Promise<Order> {
    const why = text(reason, 'the reason');
    return this.change(db, idOrNumber, async (tx, order) => {
      if (order.status === 'canceled') throw new OrderActionRefused(`order #${order.number} is already canceled`);
      const open = order.lines.filter((line) => unitsToShip(line) > 0);
      if (open.length === 0) throw new OrderActionRefused(`order #${order.number} has shipped in full; nothing is left to cancel (refund instead)`);
      const restock = new Map<number, number>();
      for (const line of open) restock.set(line.variantId, (restock.get(line.variantId) ?? 0) + unitsInStock(line));
      await this.options.inventory.giveBack(tx, restock);
      await tx.query(`update order_lines set canceled = quantity - fulfilled where order_id = $1`, [order.id]);
      // The payment is void only when nothing was paid and nothing shipped: shipped units are still paid for.
      const voided = order.captured === 0 && order.lines.every((line) => line.fulfilled === 0);
      await tx.query(
        `update orders set status = 'canceled', canceled_at = now(), cancel_reason = $2,
                payment_state = case when $3::boolean then 'voided' else payment_state end
          where id = $1`,
        [order.id, why, voided],
      );
      if (voided) await tx.query(`update payments set state = 'voided' where order_id = $1`, [order.id]);
      const adjustment: Adjustment = {
        id: newId('adj'),
        type: 'cancellation',
        amount: 0,
        lines: open.map((line) => ({ lineId: line.id, quantity: -unitsToShip(line) })),
        reason: why,
        occurredAt: new Date(),
      };
      await insertAdjustment(tx, order.id, adjustment);
      return (after) => ({ type: 'canceled', order: after, adjustment: after.adjustments.find((a) => a.id === adjustment.id)! });
    });
  }

  /** Gives back `amount` cents of what was captured; the refunds of an order never add up to more than that. */
  async refund(db: Database, idOrNumber: string, amount: number, reason?: string): Promise<Order> {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw new OrderActionRefused('the refund must be a positive amount');
    const why = text(reason, 'the reason');
    return this.change(db, idOrNumber, async (tx, order) => {
      const money = (cents: number) => formatMoney(cents, order.currency);
      if (order.captured === 0) throw new OrderActionRefused(`order #${order.number} has no captured payment to refund (capture it first)`);
      const left = order.captured - order.refunded;
      if (amount > left) {
        throw new OrderActionRefused(
          `a refund of ${money(amount)} is more than order #${order.number} can give back: ${money(left)} of ${money(order.captured)} captured is not refunded yet`,
        );
      }
      const refunded = order.refunded + amount;
      await tx.query('update orders set refunded = $2, payment_state = $3 where id = $1', [order.id, refunded, paymentStateAfterRefund(order.captured, refunded)]);
      const adjustment: Adjustment = { id: newId('adj'), type: 'refund', amount: -amount, lines: [], reason: why, occurredAt: new Date() };
      await insertAdjustment(tx, order.id, adjustment);
      return (after) => ({ type: 'refunded', order: after, adjustment: after.adjustments.find((a) => a.id === adjustment.id)! });
    });
  }
}

async function insertAdjustment(tx: Queryable, orderId: string, adjustment: Adjustment): Promise<void> {
  await tx.query('insert into order_adjustments (id, order_id, type, amount, line_items, reason) values ($1, $2, $3, $4, $5, $6)', [
    adjustment.id,
    orderId,
    adjustment.type,
    adjustment.amount,
    JSON.stringify(adjustment.lines),
    adjustment.reason,
  ]);
}

/** What a fulfillment ships: the lines asked for (by id or SKU), each within what is left; by default all that is left. */
function shipment(order: Order, asked: ReadonlyMap<string, number> | undefined): LineQuantity[] {
  if (!asked || asked.size === 0) {
    const all = order.lines.filter((line) => unitsToShip(line) > 0).map((line) => ({ lineId: line.id, quantity: unitsToShip(line) }));
    if (all.length === 0) throw new OrderActionRefused(`order #${order.number} has shipped in full; nothing is left to fulfil`);
    return all;
  }
  const byLine = new Map<string, number>();
  for (const [reference, quantity] of asked) {
    const matches = order.lines.filter((line) => line.id === reference || (line.sku !== null && line.sku === reference));
    if (matches.length === 0) {
      throw new OrderActionRefused(`order #${order.number} has no line "${reference.slice(0, 64)}" (lines: ${order.lines.map((l) => l.id + (l.sku ? ` ${l.sku}` : '')).join(', ')})`);
    }
    if (matches.length > 1) throw new OrderActionRefused(`"${reference.slice(0, 64)}" names ${matches.length} lines of order #${order.number}; use the line id (${matches.map((l) => l.id).join(', ')})`);
    const line = matches[0]!;
    if (!Number.isSafeInteger(quantity) || quantity < 1) throw new OrderActionRefused(`the quantity for ${line.id} must be a whole number from 1`);
    const total = (byLine.get(line.id) ?? 0) + quantity;
    if (total > unitsToShip(line)) {
      throw new OrderActionRefused(`line ${line.id} (${line.title}) has ${unitsToShip(line)} unit${unitsToShip(line) === 1 ? '' : 's'} left to ship, not ${total}`);
    }
    byLine.set(line.id, total);
  }
  return order.lines.filter((line) => byLine.has(line.id)).map((line) => ({ lineId: line.id, quantity: byLine.get(line.id)! }));
}
