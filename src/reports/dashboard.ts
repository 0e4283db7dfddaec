/**
 * The business at a glance, for the admin's home: sales, orders and the average order of today, the last 7 and the
 * last 30 days, each beside the days before; orders per day by who prepared them (a browser, or an agent and its
 * platform); units sold per product; low stock; the orders that wait for the merchant (a capture, a shipment, a
 * payment past due, a card hold about to lapse); deliveries given up; subscriptions (active, paused) and the renewals
 * their buyers approved in each period. Days are calendar days in the store's time
 * zone. Read only, in a handful of queries that each stay fast over many orders (migration 017's indexes).
 *
 * Sales are the totals of orders not canceled (refunds are shown apart, in the period they were given).
 */
import type { Queryable } from '../db/database.js';
import { STORE_CURRENCY } from '../catalog/types.js';
import { redactedError } from '../outbox/outbox-overview.js';

/** Stock at or below this is low, unless the caller says otherwise. */
export const LOW_STOCK_AT = 5;
/** How many order numbers each list of orders waiting for the merchant names (the count says how many there are). */
export const ORDERS_NAMED = 5;
/** A card hold lapsing within this is about to expire. */
export const EXPIRING_WITHIN_HOURS = 24;
/** How many products the units-sold figures list; how many low-stock variants; how many failed deliveries. */
export const PRODUCTS_LISTED = 10;
export const LOW_STOCK_LISTED = 10;
export const FAILURES_LISTED = 5;
/** The days the orders-per-day figures cover (today included). */
export const DAYS_CHARTED = 30;

export interface PeriodFigures {
  /** Cents: the totals of the period's orders not canceled. */
  sales: number;
  /** Orders placed in the period and not canceled. */
  orders: number;
  /** Cents: sales divided by orders, rounded; 0 without orders. */
  averageOrder: number;
  /** Cents given back in the period (refunds), whatever the day of their order. */
  refunds: number;
}

export type PeriodName = 'today' | '7d' | '30d';

/** A span of calendar days in the store's zone, first and last day included (YYYY-MM-DD). */
export interface DaySpan {
  from: string;
  to: string;
}

export interface PeriodComparison {
  name: PeriodName;
  /** The period's days (today's ends now) and its figures. */
  span: DaySpan;
  current: PeriodFigures;
  /** The same number of days just before. */
  beforeSpan: DaySpan;
  before: PeriodFigures;
}

/** Who prepared orders: a browser, or an agent of a platform (null when its platform is not known). */
export interface Preparer {
  key: string;
  prepared: 'agent' | 'browser';
  platform: string | null;
}

/** Orders placed on a day and not canceled. */
export interface DayOrders {
  day: string;
  /** Orders per preparer key (every preparer has an entry, 0 included). */
  byPreparer: Record<string, number>;
  total: number;
}

export interface ProductUnits {
  productId: string;
  title: string;
  units: number;
  /** Cents: the units' prices. */
  sales: number;
}

export interface LowStockVariant {
  variantId: string;
  productId: string;
  productTitle: string;
  variantTitle: string;
  sku: string | null;
  onHand: number;
}

/** Orders waiting for the merchant: how many, and the numbers of the longest waiting. */
export interface WaitingOrders {
  count: number;
  numbers: number[];
}

export interface FailedDelivery {
  id: number;
  kind: string;
  topic: string;
  orderNumber: number | null;
  attempts: number;
  failedAt: Date;
  /** One line, shortened, with mail addresses reduced to their domain. */
  lastError: string;
}

export interface DashboardFigures {
  now: Date;
  timeZone: string;
  currency: string;
  /** Today's date in the store's zone. */
  today: string;
  periods: PeriodComparison[];
  ordersByDay: { preparers: Preparer[]; days: DayOrders[] };
  /** Units sold (not canceled) per product over the last 30 days, most first. */
  unitsByProduct: { span: DaySpan; products: ProductUnits[]; otherUnits: number };
  lowStock: { threshold: number; count: number; variants: LowStockVariant[] };
  waiting: {
    /** A card hold to capture (payment authorized). */
    capture: WaitingOrders;
    /** Units neither shipped nor canceled. */
    shipment: WaitingOrders;
    /** Manual payment not received by its due date. */
    overdue: WaitingOrders;
    /** A card hold that lapses within 24 hours, not captured. */
    expiring: WaitingOrders;
  };
  failedDeliveries: { count: number; latest: FailedDelivery[] };
  /** Subscriptions by state now, and the renewals their buyers approved in each period (absent without a counter). */
  subscriptions?: SubscriptionFigures;
}

export interface SubscriptionFigures {
  active: number;
  paused: number;
  canceled: number;
  renewalsApproved: Record<PeriodName, number>;
}

/** What the dashboard reads of subscriptions (the subscription service's counts): by state now, renewals approved since `since`. */
export interface SubscriptionCounter {
  counts(db: Queryable, since: Date): Promise<{ active: number; paused: number; canceled: number; renewalsApproved: number }>;
}

export interface DashboardRequest {
  now: Date;
  timeZone: string;
  lowStockAt?: number;
  /** Keeps the figures of the days before today between requests (see DashboardCache); without it all are read. */
  cache?: DashboardCache;
  /** The store's subscriptions, counted (store.subscriptions); without it the figures have none. */
  subscriptions?: SubscriptionCounter;
}

/** Orders not canceled of one day, one channel and platform. */
interface DayRow {
  [column: string]: unknown;
  day: string;
  channel: 'agent' | 'browser';
  agent_platform: string | null;
  orders: number;
  sales: string | number;
}

interface RefundRow {
  [column: string]: unknown;
  day: string;
  refunds: string | number;
}

interface ProductRow {
  [column: string]: unknown;
  product_id: string;
  title: string;
  units: number;
  sales: string | number;
}

/** What the days before today add up to: their orders per day, and the units sold in the 30 days' part of them. */
interface ClosedDays {
  days: DayRow[];
  products: ProductRow[];
  refunds: RefundRow[];
}

const CACHED_KEYS = 8;

/**
 * The figures of the days before today, kept between requests: they change only when an order is canceled (its day's
 * sales and units), which the latest cancel's time tells, read at every request (one index look-up); a new day, a
 * zone, a cancel each make a new key. Orders placed now and refunds given now fall on today, which is always read.
 * Summing two months of orders on every visit costs the embedded database a third of a second at 10,000 orders.
 */
export class DashboardCache {
  private readonly entries = new Map<string, ClosedDays>();

  get(key: string): ClosedDays | undefined {
    return this.entries.get(key);
  }

  set(key: string, days: ClosedDays): void {
    this.entries.delete(key);
    this.entries.set(key, days);
    while (this.entries.size > CACHED_KEYS) this.entries.delete(this.entries.keys().next().value!);
  }
}

const PERIOD_DAYS: Record<PeriodName, number> = { today: 1, '7d': 7, '30d': 30 };
const DAY_MS = 86_400_000;

/** YYYY-MM-DD `days` after (or before) a day. */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The preparer key of an order: `browser`, or `agent:` and its platform ('' when not known). */
export function preparerKey(channel: 'agent' | 'browser', platform: string | null): string {
  return channel === 'browser' ? 'browser' : `agent:${platform ?? ''}`;
}

const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));
const emptyFigures = (): PeriodFigures => ({ sales: 0, orders: 0, averageOrder: 0, refunds: 0 });

interface Bounds {
  today: string;
  /** The first instant of the first day read (60 days back: the 30 days and the 30 before). */
  since: string;
  /** The first instant of the 30 days charted. */
  since30: string;
  /** The first instant of the last 7 days. */
  since7: string;
  /** The first instant of today. */
  startOfToday: string;
  /** When the latest order was canceled (what the days before today depend on). */
  lastCancel: string;
}

async function bounds(db: Queryable, now: Date, timeZone: string): Promise<Bounds> {
  const [row] = await db.query<{ today: string; since: Date | string; since30: Date | string; since7: Date | string; start_of_today: Date | string; last_cancel: Date | string | null }>(
    `select (($1::timestamptz at time zone $2)::date)::text as today,
            ((($1::timestamptz at time zone $2)::date - ${2 * DAYS_CHARTED - 1})::timestamp at time zone $2) as since,
            ((($1::timestamptz at time zone $2)::date - ${DAYS_CHARTED - 1})::timestamp at time zone $2) as since30,
            ((($1::timestamptz at time zone $2)::date - ${PERIOD_DAYS['7d'] - 1})::timestamp at time zone $2) as since7,
            ((($1::timestamptz at time zone $2)::date)::timestamp at time zone $2) as start_of_today,
            (select max(canceled_at) from orders where canceled_at is not null) as last_cancel`,
    [now.toISOString(), timeZone],
  );
  const iso = (value: Date | string) => new Date(value).toISOString();
  return {
    today: row!.today,
    since: iso(row!.since),
    since30: iso(row!.since30),
    since7: iso(row!.since7),
    startOfToday: iso(row!.start_of_today),
    lastCancel: row!.last_cancel === null ? '' : iso(row!.last_cancel),
  };
}

/** Orders not canceled per day, channel and platform, placed in [from, to). */
function ordersPerDay(db: Queryable, from: string, to: string, timeZone: string, toIncluded = false): Promise<DayRow[]> {
  return db.query<DayRow>(
    `select (created_at at time zone $3)::date::text as day, channel, agent_platform, count(*)::int as orders, sum(total)::bigint as sales
       from orders where created_at >= $1 and created_at ${toIncluded ? '<=' : '<'} $2 and status <> 'canceled'
      group by 1, 2, 3`,
    [from, to, timeZone],
  );
}

/**
 * Units sold and their prices per product, of orders not canceled placed in [from, to). `today`: a few orders, whose
 * lines are read order by order (not by reading every line, as for a month of orders).
 */
function unitsPerProduct(db: Queryable, from: string, to: string, today = false): Promise<ProductRow[]> {
  const lines = today ? `join lateral (select * from order_lines where order_id = o.id offset 0) l on true` : 'join order_lines l on l.order_id = o.id';
  return db.query<ProductRow>(
    `select l.product_id::text as product_id, max(l.product_title) as title,
            sum(l.quantity - l.canceled)::int as units, sum((l.quantity - l.canceled) * l.unit_price)::bigint as sales
       from orders o ${lines}
      where o.created_at >= $1 and o.created_at ${today ? '<=' : '<'} $2 and o.status <> 'canceled'
      group by l.product_id`,
    [from, to],
  );
}

/** Cents refunded per day in [from, to). */
function refundsPerDay(db: Queryable, from: string, to: string, timeZone: string, toIncluded = false): Promise<RefundRow[]> {
  return db.query<RefundRow>(
    `select (occurred_at at time zone $3)::date::text as day, -sum(amount)::bigint as refunds
       from order_adjustments where type = 'refund' and occurred_at >= $1 and occurred_at ${toIncluded ? '<=' : '<'} $2
      group by 1`,
    [from, to, timeZone],
  );
}

async function closedDays(db: Queryable, bounds: Bounds, timeZone: string, cache: DashboardCache | undefined): Promise<ClosedDays> {
  const key = `${timeZone}|${bounds.today}|${bounds.lastCancel}`;
  const known = cache?.get(key);
  if (known) return known;
  const [days, products, refunds] = await Promise.all([
    ordersPerDay(db, bounds.since, bounds.startOfToday, timeZone),
    unitsPerProduct(db, bounds.since30, bounds.startOfToday),
    refundsPerDay(db, bounds.since, bounds.startOfToday, timeZone),
  ]);
  const closed = { days, products, refunds };
  cache?.set(key, closed);
  return closed;
}

export async function dashboardFigures(db: Queryable, request: DashboardRequest): Promise<DashboardFigures> {
  const { now, timeZone } = request;
  const threshold = request.lowStockAt ?? LOW_STOCK_AT;
  const span = await bounds(db, now, timeZone);
  const { today, startOfToday } = span;
  const at = now.toISOString();
  const [closed, todaysDays, todaysProducts, todaysRefunds, lowStock, waiting, failed, subscriptions] = await Promise.all([
    closedDays(db, span, timeZone, request.cache),
    ordersPerDay(db, startOfToday, at, timeZone, true),
    unitsPerProduct(db, startOfToday, at, true),
    refundsPerDay(db, startOfToday, at, timeZone, true),
    db.query<{ all_count: number; variant_id: string; product_id: string; product_title: string; variant_title: string; sku: string | null; on_hand: number }>(
      `select (select count(*) from inventory_levels l join variants v on v.id = l.variant_id
                where v.inventory_tracked and v.archived_at is null and l.on_hand <= $1)::int as all_count, v.id::text as variant_id, p.id::text as product_id, p.title as product_title,
              v.title as variant_title, v.sku, l.on_hand
         from inventory_levels l join variants v on v.id = l.variant_id join products p on p.id = v.product_id
        where v.inventory_tracked and v.archived_at is null and l.on_hand <= $1
        order by l.on_hand, p.title, v.position
        limit ${LOW_STOCK_LISTED}`,
      [threshold],
    ),
    waitingOrders(db, now),
    db.query<{ all_count: number; id: string | number; kind: string; topic: string; number: string | number | null; attempts: number; failed_at: Date | string; last_error: string | null }>(
      `select (select count(*) from outbox where failed_at is not null)::int as all_count, ob.id, ob.kind, ob.topic, o.number, ob.attempts, ob.failed_at, ob.last_error
         from outbox ob left join orders o on o.id = ob.order_id
        where ob.failed_at is not null
        order by ob.failed_at desc, ob.id desc
        limit ${FAILURES_LISTED}`,
    ),
    request.subscriptions ? subscriptionFigures(db, request.subscriptions, { today: startOfToday, '7d': span.since7, '30d': span.since30 }) : undefined,
  ]);

  // Per day: sales and orders not canceled, refunds; orders of every kind per preparer for the chart.
  const salesByDay = new Map<string, { sales: number; orders: number; refunds: number }>();
  const dayFigures = (day: string) => {
    let figures = salesByDay.get(day);
    if (!figures) salesByDay.set(day, (figures = { sales: 0, orders: 0, refunds: 0 }));
    return figures;
  };
  const preparers = new Map<string, Preparer & { orders: number }>();
  const firstCharted = addDays(today, -(DAYS_CHARTED - 1));
  const chartCounts = new Map<string, Map<string, number>>();
  for (const row of [...closed.days, ...todaysDays]) {
    const figures = dayFigures(row.day);
    figures.sales += num(row.sales);
    figures.orders += row.orders;
    if (row.day < firstCharted) continue;
    const key = preparerKey(row.channel, row.agent_platform);
    const preparer = preparers.get(key) ?? { key, prepared: row.channel, platform: row.channel === 'agent' ? row.agent_platform : null, orders: 0 };
    preparer.orders += row.orders;
    preparers.set(key, preparer);
    const counts = chartCounts.get(row.day) ?? new Map<string, number>();
    counts.set(key, (counts.get(key) ?? 0) + row.orders);
    chartCounts.set(row.day, counts);
  }
  for (const row of [...closed.refunds, ...todaysRefunds]) dayFigures(row.day).refunds += num(row.refunds);

  const sumDays = (span: DaySpan): PeriodFigures => {
    const figures = emptyFigures();
    for (let day = span.from; day <= span.to; day = addDays(day, 1)) {
      const known = salesByDay.get(day);
      if (!known) continue;
      figures.sales += known.sales;
      figures.orders += known.orders;
      figures.refunds += known.refunds;
    }
    figures.averageOrder = figures.orders === 0 ? 0 : Math.round(figures.sales / figures.orders);
    return figures;
  };
  const periods = (Object.keys(PERIOD_DAYS) as PeriodName[]).map((name): PeriodComparison => {
    const days = PERIOD_DAYS[name];
    const span = { from: addDays(today, -(days - 1)), to: today };
    const beforeSpan = { from: addDays(today, -(2 * days - 1)), to: addDays(today, -days) };
    return { name, span, current: sumDays(span), beforeSpan, before: sumDays(beforeSpan) };
  });

  // Browsers first, then each platform by its orders (most first), an agent of no known platform last.
  const preparerList = [...preparers.values()]
    .sort((a, b) => rank(a) - rank(b) || b.orders - a.orders || (a.platform ?? '').localeCompare(b.platform ?? ''))
    .map(({ key, prepared, platform }) => ({ key, prepared, platform }));
  const days: DayOrders[] = [];
  for (let day = firstCharted; day <= today; day = addDays(day, 1)) {
    const counts = chartCounts.get(day);
    const byPreparer = Object.fromEntries(preparerList.map((preparer) => [preparer.key, counts?.get(preparer.key) ?? 0]));
    days.push({ day, byPreparer, total: Object.values(byPreparer).reduce((sum, n) => sum + n, 0) });
  }

  // Units per product: the days before today's and today's, most first.
  const byProduct = new Map<string, { productId: string; title: string; units: number; sales: number }>();
  for (const row of [...closed.products, ...todaysProducts]) {
    const known = byProduct.get(row.product_id) ?? { productId: row.product_id, title: row.title, units: 0, sales: 0 };
    known.units += row.units;
    known.sales += num(row.sales);
    byProduct.set(row.product_id, known);
  }
  const products = [...byProduct.values()].filter((product) => product.units > 0).sort((a, b) => b.units - a.units || a.title.localeCompare(b.title));
  const listed = products.slice(0, PRODUCTS_LISTED);
  return {
    now,
    timeZone,
    currency: STORE_CURRENCY,
    today,
    periods,
    ordersByDay: { preparers: preparerList, days },
    unitsByProduct: {
      span: { from: firstCharted, to: today },
      products: listed,
      otherUnits: products.slice(PRODUCTS_LISTED).reduce((sum, row) => sum + row.units, 0),
    },
    lowStock: {
      threshold,
      count: lowStock[0]?.all_count ?? 0,
      variants: lowStock.map((row) => ({
        variantId: row.variant_id,
        productId: row.product_id,
        productTitle: row.product_title,
        variantTitle: row.variant_title,
        sku: row.sku,
        onHand: row.on_hand,
      })),
    },
    waiting,
    failedDeliveries: {
      count: failed[0]?.all_count ?? 0,
      latest: failed.map((row) => ({
        id: Number(row.id),
        kind: row.kind,
        topic: row.topic,
        orderNumber: row.number === null ? null : Number(row.number),
        attempts: row.attempts,
        failedAt: new Date(row.failed_at),
        lastError: redactedError(row.last_error),
      })),
    },
    ...(subscriptions ? { subscriptions } : {}),
  };
}

/** Subscriptions by state, and the renewals approved since the start of each period (`starts`, ISO instants). */
async function subscriptionFigures(db: Queryable, counter: SubscriptionCounter, starts: Record<PeriodName, string>): Promise<SubscriptionFigures> {
  const names = Object.keys(starts) as PeriodName[];
  const counts = await Promise.all(names.map((name) => counter.counts(db, new Date(starts[name]))));
  const { active, paused, canceled } = counts.at(-1)!;
  return { active, paused, canceled, renewalsApproved: Object.fromEntries(names.map((name, index) => [name, counts[index]!.renewalsApproved])) as Record<PeriodName, number> };
}

function rank(preparer: Preparer): number {
  if (preparer.prepared === 'browser') return 0;
  return preparer.platform === null ? 2 : 1;
}

type WaitingName = keyof DashboardFigures['waiting'];

/** Each list of orders waiting for the merchant: which orders ($1 is now, $2 the end of the next 24 hours), the longest waiting first. */
const WAITING_LISTS: Record<WaitingName, { where: string; oldestFirst: string }> = {
  capture: { where: `status = 'placed' and payment_state = 'authorized'`, oldestFirst: 'created_at' },
  shipment: { where: `status = 'placed' and units_to_ship > 0`, oldestFirst: 'created_at' },
  overdue: { where: `status = 'placed' and payment_state = 'pending' and payment_due_at < $1`, oldestFirst: 'payment_due_at' },
  expiring: {
    where: `status = 'placed' and payment_state = 'authorized' and payment_authorized_until > $1 and payment_authorized_until <= $2`,
    oldestFirst: 'payment_authorized_until',
  },
};

/** Every waiting list in one query: how many, and the first numbers (a count apart: a window's count costs ten times more). */
async function waitingOrders(db: Queryable, now: Date): Promise<DashboardFigures['waiting']> {
  const names = Object.keys(WAITING_LISTS) as WaitingName[];
  const columns = names.flatMap((name) => {
    const { where, oldestFirst } = WAITING_LISTS[name];
    return [
      `(select count(*) from orders where ${where})::int as ${name}_count`,
      `array(select number from orders where ${where} order by ${oldestFirst}, number limit ${ORDERS_NAMED})::text as ${name}_numbers`,
    ];
  });
  const until = new Date(now.getTime() + EXPIRING_WITHIN_HOURS * 3_600_000);
  const [row] = await db.query<Record<string, unknown>>(`select ${columns.join(', ')}`, [now.toISOString(), until.toISOString()]);
  const list = (name: WaitingName): WaitingOrders => ({
    count: Number(row?.[`${name}_count`] ?? 0),
    numbers: textArray(row?.[`${name}_numbers`] as string | undefined).map(Number),
  });
  return { capture: list('capture'), shipment: list('shipment'), overdue: list('overdue'), expiring: list('expiring') };
}

/** A PostgreSQL array sent as text ({1001,1002}), as both drivers read it. */
function textArray(value: (string | number)[] | string | undefined): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.map(String);
  const inner = value.slice(1, -1);
  return inner ? inner.split(',') : [];
}
