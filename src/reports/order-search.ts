/**
 * The merchant's list of orders: filtered (order status, payment state, fulfilment, who prepared it, the dashboard's
 * "waiting" lists, a date range in the store's zone) and searched (an order number, or a buyer's email exact or by
 * its start, whatever its case), newest first, a page of 50 at a time. One query for the page and one for the count,
 * each through migration 017's indexes and the unit counts it keeps on each order. Also the filters as query parameters (the orders page reads them, the
 * dashboard links with them), so a figure and the list it links to always agree.
 */
import type { Queryable } from '../db/database.js';
import type { OrderStatus } from '../orders/orders.js';
import type { FulfilmentState } from '../orders/order-machine.js';
import type { PaymentState } from '../payments/payment-handlers.js';
import { EXPIRING_WITHIN_HOURS } from './dashboard.js';

export const ORDER_STATUSES = ['placed', 'canceled'] as const satisfies readonly OrderStatus[];
export const PAYMENT_STATES = [
  'pending',
  'authorized',
  'captured',
  'partially_refunded',
  'refunded',
  'voided',
  'failed',
  'disputed',
] as const satisfies readonly PaymentState[];
/**
 * Fulfilment as a filter: the states the lines give (src/orders/order-machine.ts fulfilmentState), with `partial` for
 * partially_fulfilled and `unshipped` for anything left to ship (unfulfilled or partial).
 */
export const FULFILMENT_FILTERS = ['unfulfilled', 'partial', 'unshipped', 'fulfilled', 'partially_canceled', 'canceled'] as const;
export type FulfilmentFilter = (typeof FULFILMENT_FILTERS)[number];
/** The dashboard's lists of orders waiting for the merchant, as filters (the same conditions as its counts). */
export const WAITING_FILTERS = ['capture', 'shipment', 'overdue', 'expiring'] as const;
export type WaitingFilter = (typeof WAITING_FILTERS)[number];

export const ORDERS_PER_PAGE = 50;
const MAX_SEARCH_LENGTH = 200;
const MAX_PAGE = 100_000;

export interface OrderFilters {
  status?: OrderStatus;
  payment?: PaymentState;
  fulfilment?: FulfilmentFilter;
  prepared?: 'agent' | 'browser';
  /** An agent's platform (the host of its profile); implies prepared=agent. */
  platform?: string;
  waiting?: WaitingFilter;
  /** First and last day (YYYY-MM-DD, both included) in the store's zone. */
  from?: string;
  to?: string;
  /** An order number (1001 or #1001), or an email or the start of one. */
  q?: string;
}

export interface OrderSearch extends OrderFilters {
  /** From 1. */
  page?: number;
}

export interface OrderListRow {
  id: string;
  number: number;
  createdAt: Date;
  buyerEmail: string;
  total: number;
  currency: string;
  status: OrderStatus;
  paymentState: PaymentState;
  fulfilmentState: FulfilmentState;
  channel: 'agent' | 'browser';
  agentPlatform: string | null;
}

export interface OrderPage {
  rows: OrderListRow[];
  page: number;
  pageSize: number;
  /** Orders matching the filters, all pages. */
  total: number;
  hasNext: boolean;
}

export interface OrderSearchContext {
  timeZone: string;
  /** The clock of the "waiting" filters (overdue, expiring). */
  now: Date;
  pageSize?: number;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** A calendar day PostgreSQL can hold and an order can have (no year 0; nothing before 1970). */
const isDay = (value: string) => DAY.test(value) && value >= '1970-01-01' && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
const oneOf = <T extends string>(values: readonly T[], value: string): T | undefined => (values as readonly string[]).includes(value) ? (value as T) : undefined;
/** A platform as the door records it: a host, maybe with a port. */
const PLATFORM = /^[a-z0-9.-]{1,253}(:\d{1,5})?$/;

/**
 * The search from a page's query parameters (status, payment, fulfilment, prepared, platform, waiting, from, to, q,
 * page). A value that is not one the list knows is left out (the page shows every order for that filter).
 */
export function orderSearchFromQuery(query: Record<string, unknown> | undefined): OrderSearch {
  const text = (name: string): string => {
    const value = query?.[name];
    return typeof value === 'string' ? value.trim() : '';
  };
  const search: OrderSearch = {};
  const status = oneOf(ORDER_STATUSES, text('status'));
  if (status) search.status = status;
  const payment = oneOf(PAYMENT_STATES, text('payment'));
  if (payment) search.payment = payment;
  const fulfilment = oneOf(FULFILMENT_FILTERS, text('fulfilment'));
  if (fulfilment) search.fulfilment = fulfilment;
  const prepared = oneOf(['agent', 'browser'] as const, text('prepared'));
  if (prepared) search.prepared = prepared;
  const platform = text('platform').toLowerCase();
  if (PLATFORM.test(platform)) search.platform = platform;
  const waiting = oneOf(WAITING_FILTERS, text('waiting'));
  if (waiting) search.waiting = waiting;
  if (isDay(text('from'))) search.from = text('from');
  if (isDay(text('to'))) search.to = text('to');
  const q = text('q').slice(0, MAX_SEARCH_LENGTH);
  if (q) search.q = q;
  const page = Number(text('page'));
  if (Number.isInteger(page) && page > 1 && page <= MAX_PAGE) search.page = page;
  return search;
}

/** The search as query parameters, in a fixed order (links to the list, the next page). Empty filters are left out. */
export function orderSearchParams(search: OrderSearch): URLSearchParams {
  const params = new URLSearchParams();
  const keys = ['status', 'payment', 'fulfilment', 'prepared', 'platform', 'waiting', 'from', 'to', 'q'] as const;
  for (const key of keys) {
    const value = search[key];
    if (value !== undefined && value !== '') params.set(key, value);
  }
  if (search.page !== undefined && search.page > 1) params.set('page', String(search.page));
  return params;
}

/** The SQL conditions (over `orders o` and its line counts `f`) of the filters, with their parameters. */
function conditions(search: OrderFilters, context: OrderSearchContext): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (search.status) where.push(`o.status = ${param(search.status)}`);
  if (search.payment) where.push(`o.payment_state = ${param(search.payment)}`);
  if (search.platform) where.push(`o.channel = 'agent' and o.agent_platform = ${param(search.platform)}`);
  else if (search.prepared) where.push(`o.channel = ${param(search.prepared)}`);
  if (search.fulfilment) {
    // The order's unit counts, kept from its lines (migration 017).
    where.push(
      {
        unfulfilled: 'o.units_to_ship > 0 and o.units_shipped = 0',
        partial: 'o.units_to_ship > 0 and o.units_shipped > 0',
        unshipped: 'o.units_to_ship > 0',
        fulfilled: 'o.units_to_ship = 0 and o.units_shipped > 0 and o.units_canceled = 0',
        partially_canceled: 'o.units_to_ship = 0 and o.units_shipped > 0 and o.units_canceled > 0',
        canceled: 'o.units_to_ship = 0 and o.units_shipped = 0',
      }[search.fulfilment],
    );
  }
  if (search.waiting) {
    const now = context.now.toISOString();
    switch (search.waiting) {
      case 'capture':
        where.push(`o.status = 'placed' and o.payment_state = 'authorized'`);
        break;
      case 'shipment':
        where.push(`o.status = 'placed' and o.units_to_ship > 0`);
        break;
      case 'overdue':
        where.push(`o.status = 'placed' and o.payment_state = 'pending' and o.payment_due_at < ${param(now)}`);
        break;
      case 'expiring': {
        const until = new Date(context.now.getTime() + EXPIRING_WITHIN_HOURS * 3_600_000).toISOString();
        where.push(
          `o.status = 'placed' and o.payment_state = 'authorized' and o.payment_authorized_until > ${param(now)} and o.payment_authorized_until <= ${param(until)}`,
        );
        break;
      }
    }
  }
  if (search.from) where.push(`o.created_at >= (${param(search.from)}::date::timestamp at time zone ${param(context.timeZone)})`);
  if (search.to) where.push(`o.created_at < ((${param(search.to)}::date + 1)::timestamp at time zone ${param(context.timeZone)})`);
  if (search.q) {
    const q = search.q.trim();
    const number = /^#?(\d{1,15})$/.exec(q);
    const email = `lower(o.buyer_email) like ${param(`${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`)}`;
    where.push(number ? `(o.number = ${param(Number(number[1]))} or ${email})` : email);
  }
  return { where, params };
}

interface ListRecord {
  [column: string]: unknown;
  id: string;
  number: string | number;
  created_at: Date | string;
  buyer_email: string;
  total: number;
  currency: string;
  status: OrderStatus;
  payment_state: PaymentState;
  channel: 'agent' | 'browser';
  agent_platform: string | null;
  units_to_ship: number;
  units_shipped: number;
  units_canceled: number;
}

/** As src/orders/order-machine.ts fulfilmentState reads the lines, from the order's unit counts. */
function fulfilmentOf(record: Pick<ListRecord, 'units_to_ship' | 'units_shipped' | 'units_canceled'>): FulfilmentState {
  if (record.units_to_ship > 0) return record.units_shipped > 0 ? 'partially_fulfilled' : 'unfulfilled';
  if (record.units_shipped === 0) return 'canceled';
  return record.units_canceled > 0 ? 'partially_canceled' : 'fulfilled';
}

/** One page of the orders matching the search, newest first, and how many match in all. */
export async function searchOrders(db: Queryable, search: OrderSearch, context: OrderSearchContext): Promise<OrderPage> {
  const pageSize = context.pageSize ?? ORDERS_PER_PAGE;
  const page = Math.max(1, Math.min(MAX_PAGE, Math.floor(search.page ?? 1)));
  const { where, params } = conditions(search, context);
  const filter = where.length ? `where ${where.map((condition) => `(${condition})`).join(' and ')}` : '';
  const [records, counted] = await Promise.all([
    db.query<ListRecord>(
      `select o.id, o.number, o.created_at, o.buyer_email, o.total, o.currency, o.status, o.payment_state, o.channel, o.agent_platform,
              o.units_to_ship, o.units_shipped, o.units_canceled
         from orders o
         ${filter}
        order by o.created_at desc, o.number desc
        limit ${pageSize + 1} offset ${(page - 1) * pageSize}`,
      params,
    ),
    db.query<{ total: number }>(`select count(*)::int as total from orders o ${filter}`, params),
  ]);
  return {
    rows: records.slice(0, pageSize).map((record) => ({
      id: record.id,
      number: Number(record.number),
      createdAt: new Date(record.created_at),
      buyerEmail: record.buyer_email,
      total: record.total,
      currency: record.currency,
      status: record.status,
      paymentState: record.payment_state,
      fulfilmentState: fulfilmentOf(record),
      channel: record.channel,
      agentPlatform: record.agent_platform,
    })),
    page,
    pageSize,
    total: counted[0]?.total ?? 0,
    hasNext: records.length > pageSize,
  };
}
