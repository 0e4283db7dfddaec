/**
 * The order's life after the sale, as the merchant (and the payment provider's events) move it: capture (all, or an
 * amount), fulfil (units shipped, with tracking), cancel (what has not shipped; its units back in stock), refund
 * (never more than was captured). The transition table (order-machine.ts) says what each move may do, with a coded
 * refusal; nothing changes on a refusal. Moves that only touch the store run in one transaction on the order's
 * locked row, announcing their event (mail, the platform's webhook) in it.
 *
 * Moves of money go through the payment provider (src/payments/payment-provider.ts) and never call it inside a
 * transaction: the amount is reserved (a `payment_operations` row `requested`, the order's `capturing` or
 * `refunding`) in one transaction, the provider is called with the reservation's idempotency key, and the outcome is
 * recorded, and announced, in a second one. A reservation counts against what may still be captured or refunded, so
 * two refunds racing never give back more than was captured.
 *
 * A person's move (capture, fulfil, cancel, refund from the admin or the terminal) names its actor, and is written to
 * the audit log in the transaction that makes the change: a refusal, which rolls the change back, leaves no entry.
 */
import { randomBytes } from 'node:crypto';
import { recordAudit, type Actor } from '../audit/audit-log.js';
import { formatMoney } from '../catalog/types.js';
import type { Database, Queryable } from '../db/database.js';
import { PERSON_FIELDS } from '../fields/person-fields.js';
import { textFault, textFaultSentence } from '../fields/text.js';
import { InsufficientStock } from '../inventory/inventory.js';
import { manualProvider } from '../payments/manual-provider.js';
import type { PaymentState } from '../payments/payment-handlers.js';
import type { OperationOutcome, PaymentProvider, ProviderEvent } from '../payments/payment-provider.js';
import {
  cancelRefusal,
  captureAmount,
  captureAtApproval,
  captureAtShipment,
  fulfilRefusal,
  paymentOnCancel,
  paymentRefusal,
  paymentStateAfterMoney,
  refundable,
  type CaptureOn,
  type OrderFacts,
  type OrderRefusal,
  type PaymentMove,
} from './order-machine.js';
import { announce, type OrderEvent, type OrderEventSubscriber } from './order-events.js';
import { orderIdByPaymentReference, paymentReference, readOrder, type Adjustment, type Fulfillment, type LineQuantity, type Order, type OrderLine } from './orders.js';

/** A move the order's state does not allow, or a request that names what the order does not have: nothing changed. */
export class OrderActionRefused extends Error {
  readonly refusal: OrderRefusal;
  constructor(refusal: OrderRefusal | string) {
    const coded = typeof refusal === 'string' ? { code: 'invalid_request', content: refusal } : refusal;
    super(coded.content);
    this.name = 'OrderActionRefused';
    this.refusal = coded;
  }

  get code(): string {
    return this.refusal.code;
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
  /** Who holds the money (PAYMENT_PROVIDER); the manual provider by default. */
  provider?: PaymentProvider;
  /** CAPTURE_ON: when a provider's hold is captured (fulfillment, the default; approval; manual). */
  captureOn?: CaptureOn;
  now?: () => Date;
}

/** How long before a hold lapses the merchant is warned (once), by the store's hourly sweep. */
export const EXPIRY_WARNING_MS = 24 * 60 * 60 * 1000;

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url')}`;

/** Units of a line still to ship: neither shipped nor canceled. */
export const unitsToShip = (line: OrderLine) => line.quantity - line.fulfilled - line.canceled;

/** Units of a line taken from stock and still in the warehouse: the in-stock units ship first, backorders last. */
const unitsInStock = (line: OrderLine) => Math.max(0, line.quantity - line.backordered - line.fulfilled - line.canceled);

/** Units of a line sold beyond stock and not shipped yet (committed backorders). */
export const unitsBackordered = (line: OrderLine) => Math.min(line.backordered, unitsToShip(line));

const MERCHANT_TEXT = PERSON_FIELDS.orderText;
const text = (value: string | undefined, what: string): string | null => {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed === '') return null;
  // Control, bidi and invisible characters never reach a mail, a page, a header or the terminal (src/fields).
  const fault = textFault(trimmed, MERCHANT_TEXT);
  if (fault) throw new OrderActionRefused({ code: 'invalid_text', content: `${what} ${textFaultSentence(fault, MERCHANT_TEXT)}`, params: { field: what } });
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

/** A money move reserved on an order, to ask the provider for: its amount and idempotency key. */
interface Reservation {
  id: string;
  orderId: string;
  kind: 'capture' | 'refund' | 'cancel';
  amount: number;
  idempotencyKey: string;
  reason: string | null;
  reference: string | null;
  currency: string;
}

type Reserve = (kind: Reservation['kind'], amount: number, reason?: string | null) => Promise<void>;

/** A move inside the order's transaction: checks and writes, may reserve money moves, and says what to announce. */
type Move = (tx: Queryable, order: Order, facts: OrderFacts, reserve: Reserve) => Promise<((order: Order) => OrderEvent) | undefined>;

/** The audit entry of a person's move: who, which action, and its one line, from the order before and after it. */
interface AuditNote {
  actor: Actor;
  action: 'order.capture' | 'order.fulfill' | 'order.cancel' | 'order.refund';
  summary: (before: Order, after: Order, facts: OrderFacts) => string;
}

/** The entry only when a person is named (the store's own moves, such as a lapsed hold, are not a person's). */
const noted = (actor: Actor | undefined, action: AuditNote['action'], summary: AuditNote['summary']): AuditNote | undefined =>
  actor ? { actor, action, summary } : undefined;

/** "captured $12.50" when the store records the money itself; "asked stripe to capture $12.50" when a provider moves it. */
const moneyMove = (order: Order, holdsFunds: boolean, verb: 'capture' | 'refund', cents: number, why: string | null) => {
  const amount = formatMoney(cents, order.currency);
  const done = holdsFunds ? `asked ${order.payment.provider} to ${verb} ${amount}` : `${verb === 'capture' ? 'captured' : 'refunded'} ${amount}`;
  return why ? `${done} (${why})` : done;
};

/** The units a move shipped or canceled, per line: "2 × Drink stick - Mango, 1 × Tea". */
const unitsMoved = (before: Order, after: Order, units: (line: OrderLine) => number) =>
  after.lines
    .map((line) => {
      const was = before.lines.find((l) => l.id === line.id);
      const moved = units(line) - (was ? units(was) : 0);
      return moved > 0 ? `${moved} × ${line.title}` : '';
    })
    .filter((part) => part !== '')
    .join(', ');

/** How a provider event was taken: applied, seen before, about no order's payment, or the approval's to handle. */
export type ProviderEventOutcome = 'applied' | 'duplicate' | 'ignored' | 'not_for_orders';

const refuse = (refusal: OrderRefusal | undefined): void => {
  if (refusal) throw new OrderActionRefused(refusal);
};

const wholeCents = (amount: number, what: string) => {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new OrderActionRefused({ code: 'invalid_amount', content: `the ${what} must be a positive amount`, params: { amount } });
};

export class OrderActions {
  private readonly provider: PaymentProvider;
  private readonly captureOn: CaptureOn;
  private readonly now: () => Date;

  constructor(private readonly options: OrderActionsOptions) {
    this.provider = options.provider ?? manualProvider();
    this.captureOn = options.captureOn ?? 'fulfillment';
    this.now = options.now ?? (() => new Date());
  }

  /** What the transition table looks at: the order, and the money reserved by calls under way. */
  private async facts(tx: Queryable, order: Order): Promise<OrderFacts> {
    const rows = await tx.query<{ capturing: number; refunding: number }>('select capturing, refunding from orders where id = $1', [order.id]);
    return {
      number: order.number,
      currency: order.currency,
      status: order.status,
      lines: order.lines,
      subtotal: order.subtotal,
      shipping: order.shipping,
      tax: order.tax,
      total: order.total,
      payment: {
        provider: order.payment.provider,
        holdsFunds: order.payment.provider === this.provider.name ? this.provider.holdsFunds : order.payment.provider !== 'manual',
        state: order.paymentState,
        authorized: order.payment.authorized,
        authorizedUntil: order.payment.authorizedUntil,
        captured: order.captured,
        refunded: order.refunded,
        capturing: rows[0]?.capturing ?? 0,
        refunding: rows[0]?.refunding ?? 0,
      },
      now: this.now(),
    };
  }

  /**
   * One move on one order: its row locked, `move` checks and writes (and may reserve money moves), then the order as
   * it now is is announced. A refusal thrown by `move` rolls everything back. The money moves reserved are carried
   * out after the commit (`carryOut`). A person's move (`audit`) is recorded in the same transaction, after `move`
   * succeeded.
   */
  private async change(db: Database, idOrNumber: string, move: Move, audit?: AuditNote): Promise<{ order: Order; reservations: Reservation[] }> {
    return db.transaction(async (tx) => {
      const locked = await readOrder(tx, idOrNumber, { lock: true });
      if (!locked) throw new OrderNotFound(idOrNumber);
      const reservations: Reservation[] = [];
      const reserve: Reserve = async (kind, amount, reason = null) => {
        reservations.push(await this.reserve(tx, locked, kind, amount, reason));
      };
      const facts = await this.facts(tx, locked);
      const event = await move(tx, locked, facts, reserve);
      const after = (await readOrder(tx, locked.id))!;
      if (audit) await recordAudit(tx, audit.actor, { action: audit.action, orderId: locked.id, summary: audit.summary(locked, after, facts) });
      if (event) await announce(tx, this.options.subscribers, event(after));
      return { order: after, reservations };
    });
  }

  /** Step 1: the money move is `requested`, and counts against what may still be captured or refunded. */
  private async reserve(tx: Queryable, order: Order, kind: Reservation['kind'], amount: number, reason: string | null): Promise<Reservation> {
    const id = newId('pop');
    const reservation: Reservation = {
      id,
      orderId: order.id,
      kind,
      amount,
      idempotencyKey: `storefront_${kind}_${id}`,
      reason,
      reference: await paymentReference(tx, order.id),
      currency: order.currency,
    };
    await tx.query(
      `insert into payment_operations (id, order_id, kind, amount, state, idempotency_key, reason) values ($1, $2, $3, $4, 'requested', $5, $6)`,
      [id, order.id, kind, amount, reservation.idempotencyKey, reason],
    );
    if (kind === 'capture') await tx.query('update orders set capturing = capturing + $2 where id = $1', [order.id, amount]);
    if (kind === 'refund') await tx.query('update orders set refunding = refunding + $2 where id = $1', [order.id, amount]);
    return reservation;
  }

  /**
   * Steps 2 and 3 for each reservation: the provider is asked, outside any transaction, and its answer recorded.
   * `strict`: a refusal is the merchant's error (a capture or refund asked for); otherwise the move that caused the
   * reservation stands and the order shows how its payment went (a shipment whose capture was refused).
   */
  private async carryOut(db: Database, order: Order, reservations: readonly Reservation[], strict: boolean): Promise<Order> {
    let now = order;
    for (const reservation of reservations) {
      const { order: after, refused } = await this.execute(db, reservation);
      now = after;
      if (refused && strict) throw new OrderActionRefused(refused);
    }
    return now;
  }

  private async execute(db: Database, reservation: Reservation): Promise<{ order: Order; refused?: OrderRefusal }> {
    let outcome: OperationOutcome;
    try {
      outcome = await this.provider[reservation.kind]({
        reference: reservation.reference,
        amount: reservation.amount,
        currency: reservation.currency,
        idempotencyKey: reservation.idempotencyKey,
      });
    } catch {
      // No answer: it may have happened. The reservation stays and is asked again with its key (settleUnsettled).
      const order = (await readOrder(db, reservation.orderId))!;
      return {
        order,
        refused: {
          code: 'provider_unavailable',
          content: `the payment provider did not answer the ${reservation.kind} of order #${order.number}; the store asks it again until it does (nothing is done twice)`,
          params: { number: order.number, kind: reservation.kind },
        },
      };
    }
    return this.settle(db, reservation, outcome);
  }

  /** Step 3: the provider's answer, recorded on the locked order (once: a reservation already settled is left alone). */
  private async settle(db: Database, reservation: Reservation, outcome: OperationOutcome): Promise<{ order: Order; refused?: OrderRefusal }> {
    return db.transaction(async (tx) => {
      const order = (await readOrder(tx, reservation.orderId, { lock: true }))!;
      const [operation] = await tx.query<{ state: string }>('select state from payment_operations where id = $1', [reservation.id]);
      if (operation?.state !== 'requested') return { order };
      const { amount, kind } = reservation;
      let event: ((after: Order) => OrderEvent) | undefined;
      let refused: OrderRefusal | undefined;
      if (outcome.ok) {
        await tx.query(`update payment_operations set state = 'succeeded', provider_reference = $2, settled_at = now() where id = $1`, [reservation.id, outcome.providerReference]);
        if (kind === 'capture') {
          const state = paymentStateAfterMoney(order.paymentState, order.captured + amount, order.refunded);
          await tx.query('update orders set captured = captured + $2, capturing = capturing - $2, payment_state = $3 where id = $1', [order.id, amount, state]);
          await this.paymentRow(tx, order.id, state);
          event = (after) => ({ type: 'captured', order: after });
        } else if (kind === 'refund') {
          const state = paymentStateAfterMoney(order.paymentState, order.captured, order.refunded + amount);
          await tx.query('update orders set refunded = refunded + $2, refunding = refunding - $2, payment_state = $3 where id = $1', [order.id, amount, state]);
          event = await this.refundAdjustment(tx, order.id, amount, reservation.reason);
        } else {
          await this.voidPayment(tx, order);
        }
      } else {
        await tx.query(`update payment_operations set state = 'failed', failure = $2, settled_at = now() where id = $1`, [reservation.id, outcome.reason.slice(0, 500)]);
        if (kind === 'capture') await tx.query('update orders set capturing = capturing - $2 where id = $1', [order.id, amount]);
        if (kind === 'refund') await tx.query('update orders set refunding = refunding - $2 where id = $1', [order.id, amount]);
        // The hold is gone (lapsed, canceled at the provider): nothing can be captured any more.
        if (outcome.holdGone && order.captured === 0 && (order.paymentState === 'authorized' || order.paymentState === 'pending')) {
          const state: PaymentState = kind === 'cancel' ? 'voided' : 'failed';
          await tx.query('update orders set payment_state = $2 where id = $1', [order.id, state]);
          await this.paymentRow(tx, order.id, state);
        }
        refused = {
          code: 'provider_refused',
          content: `the payment provider refused the ${kind} of order #${order.number}: ${outcome.reason.slice(0, 200)}`,
          params: { number: order.number, kind, reason: outcome.reason.slice(0, 200) },
        };
      }
      const after = (await readOrder(tx, order.id))!;
      if (event) await announce(tx, this.options.subscribers, event(after));
      return { order: after, refused };
    });
  }

  private async paymentRow(tx: Queryable, orderId: string, state: PaymentState): Promise<void> {
    await tx.query('update payments set state = $2 where order_id = $1', [orderId, state]);
  }

  private async voidPayment(tx: Queryable, order: Order): Promise<void> {
    if (order.captured > 0 || (order.paymentState !== 'pending' && order.paymentState !== 'authorized')) return;
    await tx.query(`update orders set payment_state = 'voided' where id = $1`, [order.id]);
    await this.paymentRow(tx, order.id, 'voided');
  }

  private async refundAdjustment(tx: Queryable, orderId: string, amount: number, reason: string | null): Promise<(after: Order) => OrderEvent> {
    const adjustment: Adjustment = { id: newId('adj'), type: 'refund', amount: -amount, lines: [], reason, occurredAt: new Date() };
    await insertAdjustment(tx, orderId, adjustment);
    return (after) => ({ type: 'refunded', order: after, adjustment: after.adjustments.find((a) => a.id === adjustment.id)! });
  }

  /**
   * The payment was received (manual: the merchant says the money arrived), or the provider's hold is captured: all
   * that is owed for what is not canceled, or `amount` cents of it. `actor`: the person who asked (audited).
   */
  async capture(db: Database, idOrNumber: string, amount?: number, actor?: Actor): Promise<Order> {
    if (amount !== undefined) wholeCents(amount, 'capture');
    const { order, reservations } = await this.change(
      db,
      idOrNumber,
      async (_tx, _order, facts, reserve) => {
        const cents = amount ?? captureAmount(facts);
        refuse(paymentRefusal('capture', facts, cents));
        await reserve('capture', cents);
        return undefined;
      },
      noted(actor, 'order.capture', (before, _after, facts) => moneyMove(before, facts.payment.holdsFunds, 'capture', amount ?? captureAmount(facts), null)),
    );
    return this.carryOut(db, order, reservations, true);
  }

  /**
   * After the order was placed: with CAPTURE_ON=approval a provider's hold is captured at once. Nothing happens
   * otherwise (manual provider, another CAPTURE_ON). A refused capture leaves the order as the provider left it.
   */
  async afterPlacement(db: Database, idOrNumber: string): Promise<Order> {
    const { order, reservations } = await this.change(db, idOrNumber, async (_tx, _order, facts, reserve) => {
      const cents = captureAtApproval(facts, this.captureOn);
      if (cents > 0) await reserve('capture', cents);
      return undefined;
    });
    return this.carryOut(db, order, reservations, false);
  }

  /**
   * CAPTURE_ON=approval: holds left uncaptured after their order was placed more than `olderThanSeconds` ago (the
   * process stopped between placing the order and capturing) are captured now. How many orders were asked.
   */
  async captureMissedAtApproval(db: Database, olderThanSeconds = 300): Promise<number> {
    if (this.captureOn !== 'approval' || !this.provider.holdsFunds) return 0;
    const rows = await db.query<{ id: string }>(
      `select id from orders where payment_provider = $1 and payment_state = 'authorized' and captured = 0 and capturing = 0
          and created_at <= now() - make_interval(secs => $2) order by created_at limit 100`,
      [this.provider.name, olderThanSeconds],
    );
    for (const { id } of rows) await this.afterPlacement(db, id);
    return rows.length;
  }

  /**
   * Units shipped, with tracking: every unit not yet shipped, or the lines and quantities given. With a provider's
   * hold and CAPTURE_ON=fulfillment, the first shipment captures everything not canceled (after the shipment is
   * committed: a refused capture does not unship it, the order's payment says how it went). `actor`: the person who
   * shipped (audited).
   */
  async fulfill(db: Database, idOrNumber: string, input: FulfillInput = {}, actor?: Actor): Promise<Order> {
    const tracking = {
      trackingNumber: text(input.trackingNumber, 'the tracking number'),
      trackingUrl: trackingUrl(input.trackingUrl),
      carrier: text(input.carrier, 'the carrier'),
    };
    const audit = noted(actor, 'order.fulfill', (before, after) => {
      const via = [tracking.carrier && `via ${tracking.carrier}`, tracking.trackingNumber && `tracking ${tracking.trackingNumber}`].filter(Boolean).join(', ');
      return `shipped ${unitsMoved(before, after, (line) => line.fulfilled)}${via ? ` (${via})` : ''}`;
    });
    const { order, reservations } = await this.change(db, idOrNumber, async (tx, order, facts, reserve) => {
      refuse(fulfilRefusal(facts));
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
      const cents = captureAtShipment(facts, this.captureOn);
      if (cents > 0) await reserve('capture', cents);
      return (after) => ({ type: 'fulfilled', order: after, fulfillment: after.fulfillments.find((f) => f.id === fulfillment.id)! });
    }, audit);
    return this.carryOut(db, order, reservations, false);
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
      throw new OrderActionRefused({
        code: 'backorder_not_in_stock',
        content: `units of ${skus.join(', ')} sold beyond stock are not in stock yet; when they arrive, set the stock (storefront stock set SKU QUANTITY) and ship them`,
        params: { skus: skus.join(', ') },
      });
    }
  }

  /**
   * Cancels what has not shipped: those units are canceled on their lines, the ones taken from stock go back
   * exactly once (a canceled order cannot be canceled again), and the money follows (paymentOnCancel): an unpaid
   * order's payment is void (a provider's hold released); a provider's hold on an order that shipped part is captured
   * for that part; what a provider captured beyond what shipped is refunded. `actor`: the person who canceled (audited).
   */
  async cancel(db: Database, idOrNumber: string, reason?: string, actor?: Actor): Promise<Order> {
    const why = text(reason, 'the reason');
    const audit = noted(actor, 'order.cancel', (before, after) => {
      const units = unitsMoved(before, after, (line) => line.canceled);
      return `canceled the order${units ? `: ${units}` : ''}${why ? ` (${why})` : ''}`;
    });
    const { order, reservations } = await this.change(db, idOrNumber, async (tx, order, facts, reserve) => {
      refuse(cancelRefusal(facts));
      const open = order.lines.filter((line) => unitsToShip(line) > 0);
      const restock = new Map<number, number>();
      for (const line of open) restock.set(line.variantId, (restock.get(line.variantId) ?? 0) + unitsInStock(line));
      await this.options.inventory.giveBack(tx, restock);
      await tx.query(`update order_lines set canceled = quantity - fulfilled where order_id = $1`, [order.id]);
      await tx.query(`update orders set status = 'canceled', canceled_at = now(), cancel_reason = $2 where id = $1`, [order.id, why]);
      const canceled: OrderFacts = { ...facts, status: 'canceled', lines: order.lines.map((line) => ({ ...line, canceled: line.quantity - line.fulfilled })) };
      const plan = paymentOnCancel(canceled);
      // The manual provider holds nothing: its payment is void at once; a provider's hold is released through it.
      if (plan.kind === 'void' && !facts.payment.holdsFunds) await this.voidPayment(tx, order);
      else if (plan.kind === 'void') await reserve('cancel', 0, why);
      else if (plan.kind === 'capture' || plan.kind === 'refund') await reserve(plan.kind, plan.amount, why);
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
    }, audit);
    return this.carryOut(db, order, reservations, false);
  }

  /**
   * Gives back `amount` cents of what was captured (manual: records money the merchant gave back). The refunds of an
   * order, those under way included, never add up to more than was captured, whatever runs at once. `actor`: the
   * person who gave it back (audited).
   */
  async refund(db: Database, idOrNumber: string, amount: number, reason?: string, actor?: Actor): Promise<Order> {
    wholeCents(amount, 'refund');
    const why = text(reason, 'the reason');
    const { order, reservations } = await this.change(
      db,
      idOrNumber,
      async (_tx, _order, facts, reserve) => {
        refuse(paymentRefusal('refund', facts, amount));
        await reserve('refund', amount, why);
        return undefined;
      },
      noted(actor, 'order.refund', (before, _after, facts) => moneyMove(before, facts.payment.holdsFunds, 'refund', amount, why)),
    );
    return this.carryOut(db, order, reservations, true);
  }

  /**
   * Money moves left `requested` longer than `olderThanSeconds` (a process stopped between reserving and recording):
   * the provider is asked again with the same idempotency key, and its answer recorded. How many were settled.
   */
  async settleUnsettled(db: Database, olderThanSeconds = 300): Promise<number> {
    const rows = await db.query<{ id: string; order_id: string; kind: Reservation['kind']; amount: number; idempotency_key: string; reason: string | null; payment_reference: string | null; currency: string }>(
      `select p.id, p.order_id, p.kind, p.amount, p.idempotency_key, p.reason, o.payment_reference, o.currency
         from payment_operations p join orders o on o.id = p.order_id
        where p.state = 'requested' and p.requested_at <= now() - make_interval(secs => $1)
        order by p.requested_at limit 100`,
      [olderThanSeconds],
    );
    let settled = 0;
    for (const row of rows) {
      const reservation: Reservation = {
        id: row.id,
        orderId: row.order_id,
        kind: row.kind,
        amount: row.amount,
        idempotencyKey: row.idempotency_key,
        reason: row.reason,
        reference: row.payment_reference,
        currency: row.currency,
      };
      const { refused } = await this.execute(db, reservation);
      if (refused?.code !== 'provider_unavailable') settled += 1;
    }
    return settled;
  }

  /**
   * Authorizations that lapsed uncaptured: the payment failed (the provider usually says so first, by its event),
   * and the buyer and merchant are told. How many orders were moved.
   */
  async expireLapsedAuthorizations(db: Database): Promise<number> {
    const rows = await db.query<{ id: string }>(
      `select id from orders where payment_state = 'authorized' and captured = 0 and capturing = 0 and payment_authorized_until <= $1`,
      [this.now()],
    );
    let moved = 0;
    for (const { id } of rows) {
      await this.change(db, id, async (tx, order, facts) => {
        if (paymentRefusal('expire', facts)) return undefined;
        await tx.query(`update orders set payment_state = 'failed' where id = $1`, [order.id]);
        await this.paymentRow(tx, order.id, 'failed');
        moved += 1;
        return (after) => ({ type: 'payment_failed', order: after, reason: 'the hold on the card lapsed before it was captured' });
      });
    }
    return moved;
  }

  /**
   * Holds that lapse within a day and are still uncaptured: the merchant is warned once per order (the order's
   * `payment_expiry_warned_at` is set in the transaction that announces it, so two sweeps, or two instances, warn
   * once). How many orders were warned.
   */
  async warnExpiringAuthorizations(db: Database): Promise<number> {
    const now = this.now();
    const within = new Date(now.getTime() + EXPIRY_WARNING_MS);
    const due = (order: Order) =>
      order.paymentState === 'authorized' && order.captured === 0 && order.payment.authorizedUntil !== null && order.payment.authorizedUntil > now && order.payment.authorizedUntil <= within;
    const rows = await db.query<{ id: string }>(
      `select id from orders where payment_state = 'authorized' and captured = 0 and capturing = 0 and payment_expiry_warned_at is null
          and payment_authorized_until > $1 and payment_authorized_until <= $2`,
      [now, within],
    );
    let warned = 0;
    for (const { id } of rows) {
      await this.change(db, id, async (tx, order, facts) => {
        if (!due(order) || facts.payment.capturing > 0) return undefined;
        const marked = await tx.query('update orders set payment_expiry_warned_at = $2 where id = $1 and payment_expiry_warned_at is null returning 1', [order.id, now]);
        if (marked.length === 0) return undefined;
        warned += 1;
        return (after) => ({ type: 'payment_expiring', order: after });
      });
    }
    return warned;
  }

  /**
   * A provider's event about an order's payment, applied once (its id kept in the transaction that applies it):
   * a hold canceled at the provider voids the payment, a failure fails it (each told to the buyer and the merchant),
   * a refund made in the provider's dashboard is recorded (and the buyer mailed), a dispute flags the order (and the
   * merchant is mailed what to do). Session events are the approval's.
   */
  async applyProviderEvent(db: Database, event: ProviderEvent): Promise<ProviderEventOutcome> {
    if (event.type === 'session_completed' || event.type === 'session_expired') return 'not_for_orders';
    const provider = this.provider.name;
    const orderId = event.type === 'ignored' ? undefined : await orderIdByPaymentReference(db, provider, event.reference);
    if (orderId === undefined) {
      const rows = await db.query('insert into payment_provider_events (provider, event_id, type) values ($1, $2, $3) on conflict do nothing returning 1', [provider, event.id, event.type]);
      return rows.length === 0 ? 'duplicate' : 'ignored';
    }
    let outcome: ProviderEventOutcome = 'applied';
    await this.change(db, orderId, async (tx, order, facts) => {
      const recorded = await tx.query(
        'insert into payment_provider_events (provider, event_id, type, order_id) values ($1, $2, $3, $4) on conflict do nothing returning 1',
        [provider, event.id, event.type, order.id],
      );
      if (recorded.length === 0) {
        outcome = 'duplicate';
        return undefined;
      }
      const allowed = (move: PaymentMove) => paymentRefusal(move, facts) === undefined;
      switch (event.type) {
        case 'payment_canceled': {
          // Released at the provider (its dashboard, its expiry), not by the store's cancel: the buyer and merchant are
          // told. The provider tells of the store's own release too, sometimes before its answer is recorded: that one
          // is the cancellation's to record (only a canceled order's release is asked for).
          if (!allowed('void') || (order.paymentState !== 'pending' && order.paymentState !== 'authorized')) return undefined;
          if (order.status === 'canceled') return undefined;
          await this.voidPayment(tx, order);
          return (after) => ({ type: 'payment_voided', order: after });
        }
        case 'payment_failed':
          if (allowed('fail') && (order.paymentState === 'pending' || order.paymentState === 'authorized')) {
            await tx.query(`update orders set payment_state = 'failed' where id = $1`, [order.id]);
            await this.paymentRow(tx, order.id, 'failed');
            return (after) => ({ type: 'payment_failed', order: after, reason: event.reason });
          }
          return undefined;
        case 'refunded': {
          // Refunds this store asked for are counted (settled or under way); the rest was made at the provider.
          const extra = Math.min(event.refundedTotal - order.refunded - facts.payment.refunding, refundable(facts));
          if (extra <= 0) return undefined;
          const state = paymentStateAfterMoney(order.paymentState, order.captured, order.refunded + extra);
          await tx.query('update orders set refunded = refunded + $2, payment_state = $3 where id = $1', [order.id, extra, state]);
          return this.refundAdjustment(tx, order.id, extra, 'refunded at the payment provider');
        }
        case 'disputed':
          await tx.query(`update orders set payment_disputed = true where id = $1`, [order.id]);
          if (allowed('dispute')) {
            await tx.query(`update orders set payment_state = 'disputed' where id = $1`, [order.id]);
            await this.paymentRow(tx, order.id, 'disputed');
          }
          // The merchant answers each dispute, whatever the payment's state: each is announced.
          return (after) => ({ type: 'disputed', order: after, dispute: { amount: event.amount, reason: event.reason } });
        default:
          return undefined;
      }
    });
    return outcome;
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
