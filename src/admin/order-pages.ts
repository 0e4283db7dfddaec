/**
 * Orders in the admin: the list (filters, search, pages), an order's page, and the merchant's actions on it as plain
 * forms (capture, fulfil, cancel, refund). Each action calls the same domain move as `storefront orders …`
 * (store.orders), as the signed-in person (the audit log records them in the move's own transaction); a refusal
 * (the order's state, an amount too large, text that cannot be kept) is the page again with the refusal beside the
 * action and nothing changed (409, or 400 for input that is not what the field takes); success is 303 back to the
 * order with a notice. Refunds are the owner's: the form is not shown to staff and the POST is refused (403).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../audit/audit-log.js';
import { parseDollars } from '../fields/money-amount.js';
import { html } from '../markup/html.js';
import { OrderActionRefused, OrderNotFound, type FulfillInput } from '../orders/order-actions.js';
import { readOrder, type Order } from '../orders/orders.js';
import { orderSearchFromQuery, searchOrders } from '../reports/order-search.js';
import { approvalOf, orderTimeline } from '../reports/order-timeline.js';
import { actorOf, allowed, field, seeOther, sendPage, staffOf, SECTIONS, type AdminContext } from './admin-kit.js';
import { orderPath } from './admin-page-parts.js';
import { orderListBody } from './order-list-view.js';
import { cancelGivesMoneyBack, orderPageBody, type ActionRefusal, type OrderAction } from './order-view.js';

const ORDERS = SECTIONS.orders.path;
const ORDER = `${ORDERS}/:number`;

/** An order number as its path names it (digits only; anything else is no order). */
const orderNumber = (text: string): number | undefined => (/^[1-9][0-9]{0,14}$/.test(text) ? Number(text) : undefined);

/** The typed fields an action shows again beside its refusal (never the CSRF token). */
function typedFields(body: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (typeof body !== 'object' || body === null) return fields;
  for (const [name, value] of Object.entries(body)) {
    if (name !== '_csrf' && typeof value === 'string') fields[name] = value.slice(0, 2000);
  }
  return fields;
}

/** Input the form should not have sent (an amount that is not one, a quantity that is not a number): 400, nothing done. */
class BadInput extends Error {}

/** An amount field: undefined when left empty (and `optional`); cents otherwise. */
function amountField(body: unknown, optional: boolean): number | undefined {
  const text = field(body, 'amount').trim();
  if (text === '' && optional) return undefined;
  const cents = parseDollars(text);
  if (cents === undefined) throw new BadInput(text === '' ? 'Enter an amount, such as 12.50.' : 'The amount must be dollars and cents, such as 12.50.');
  if (cents <= 0) throw new BadInput('The amount must be more than 0.00.');
  return cents;
}

/** The shipment a fulfil form asks for: each line's units (0 leaves it), tracking, URL and carrier. */
function fulfilInput(body: unknown, order: Order): FulfillInput {
  const lines = new Map<string, number>();
  for (const line of order.lines) {
    const raw = field(body, `qty_${line.id}`).trim();
    if (raw === '' || raw === '0') continue;
    if (!/^[0-9]{1,6}$/.test(raw)) throw new BadInput(`The units to ship of ${line.title} must be a whole number.`);
    lines.set(line.id, Number(raw));
  }
  // Units were asked for (any qty_ field, even one naming no line of this order): at least one must be a line's.
  const sentQuantities = typeof body === 'object' && body !== null && Object.keys(body).some((name) => name.startsWith('qty_'));
  if (sentQuantities && lines.size === 0) throw new BadInput('Choose at least one unit to ship.');
  const text = (name: string) => field(body, name);
  return {
    // No quantities at all (a form without them): everything left ships.
    ...(lines.size ? { lines } : {}),
    ...(text('tracking_number') ? { trackingNumber: text('tracking_number') } : {}),
    ...(text('tracking_url') ? { trackingUrl: text('tracking_url') } : {}),
    ...(text('carrier') ? { carrier: text('carrier') } : {}),
  };
}

/** The sentence before a refusal, per action. */
const NOT_DONE: Record<OrderAction, string> = { capture: 'Not captured', fulfil: 'Not shipped', cancel: 'Not canceled', refund: 'Not refunded' };

/** Refusals about what was typed (an amount, a text's characters) are 400; the order's state refusing is 409. */
const INPUT_CODES = new Set(['invalid_amount', 'invalid_text']);

const sentence = (text: string) => {
  const trimmed = text.trim().replace(/[.\s]+$/, '');
  return `${trimmed.charAt(0).toUpperCase()}${trimmed.slice(1)}.`;
};

export function register(admin: FastifyInstance, ctx: AdminContext): void {
  const { store } = ctx;

  /** Whether the store's provider holds this order's money until captured (as the order's moves decide it). */
  const holdsFunds = (order: Order) => (order.payment.provider === store.paymentProvider.name ? store.paymentProvider.holdsFunds : order.payment.provider !== 'manual');

  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    sendPage(reply, ctx, staffOf(request), {
      title: 'No such order',
      section: 'orders',
      status: 404,
      body: html`<h1>No such order</h1><p>No order has this number. <a href="${ORDERS}">All orders</a></p>`,
    });

  async function orderPage(request: FastifyRequest, reply: FastifyReply, order: Order, status = 200, refusal?: ActionRefusal): Promise<FastifyReply> {
    const [approval, timeline] = await Promise.all([approvalOf(store.db, order.id), orderTimeline(store.db, order.id)]);
    const done = String((request.query as Record<string, unknown> | undefined)?.done ?? '');
    return sendPage(reply, ctx, staffOf(request), {
      title: `Order #${order.number}`,
      section: 'orders',
      status,
      body: orderPageBody({
        order,
        approval,
        timeline,
        staff: staffOf(request),
        moments: ctx.moments,
        holdsFunds: holdsFunds(order),
        ...(status === 200 && done ? { done } : {}),
        ...(refusal ? { refusal } : {}),
      }),
    });
  }

  admin.get(ORDERS, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'orders')) return reply;
    const search = orderSearchFromQuery(request.query as Record<string, unknown>);
    const result = await searchOrders(store.db, search, { timeZone: ctx.moments.timeZone, now: new Date() });
    return sendPage(reply, ctx, staffOf(request), { title: 'Orders', section: 'orders', body: orderListBody(search, result, ctx.moments) });
  });

  admin.get<{ Params: { number: string } }>(ORDER, { config: { rateLimit: 'admin' } }, async (request, reply) => {
    if (!allowed(request, reply, ctx, 'orders')) return reply;
    const number = orderNumber(request.params.number);
    const order = number === undefined ? undefined : await readOrder(store.db, String(number));
    if (!order) return notFound(request, reply);
    return orderPage(request, reply, order);
  });

  /**
   * One action: the person may (orders; a refund needs 'refund'), the order exists, the form is read, the domain
   * move runs as the person; its refusal is the page again beside the action, its success 303 with a notice.
   */
  function action(name: OrderAction, done: string, run: (order: Order, body: unknown, actor: Actor) => Promise<unknown>): void {
    admin.post<{ Params: { number: string } }>(`${ORDER}/${name}`, { config: { rateLimit: 'admin' } }, async (request, reply) => {
      if (!allowed(request, reply, ctx, name === 'refund' ? 'refund' : 'orders')) return reply;
      const number = orderNumber(request.params.number);
      const order = number === undefined ? undefined : await readOrder(store.db, String(number));
      if (!order) return notFound(request, reply);
      // Canceling an order whose money was captured gives it back: a refund, which only the owner may make.
      if (name === 'cancel' && cancelGivesMoneyBack(order) && !allowed(request, reply, ctx, 'refund')) return reply;
      const refused = async (status: number, text: string) =>
        orderPage(request, reply, (await readOrder(store.db, order.id)) ?? order, status, { action: name, text: `${NOT_DONE[name]}: ${sentence(text)}`, values: typedFields(request.body) });
      try {
        await run(order, request.body, actorOf(request));
      } catch (error) {
        if (error instanceof BadInput) return refused(400, error.message);
        if (error instanceof OrderActionRefused) return refused(INPUT_CODES.has(error.code) ? 400 : 409, error.message);
        if (error instanceof OrderNotFound) return notFound(request, reply);
        throw error;
      }
      return seeOther(reply, `${orderPath(order.number)}?done=${done}`);
    });
  }

  action('capture', 'captured', (order, body, actor) => store.orders.capture(store.db, order.id, amountField(body, true), actor));
  action('fulfil', 'fulfilled', (order, body, actor) => store.orders.fulfill(store.db, order.id, fulfilInput(body, order), actor));
  action('cancel', 'canceled', (order, body, actor) => store.orders.cancel(store.db, order.id, field(body, 'reason'), actor));
  action('refund', 'refunded', (order, body, actor) => store.orders.refund(store.db, order.id, amountField(body, false)!, field(body, 'reason'), actor));
}
