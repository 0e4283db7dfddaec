/**
 * The store-wide figures /metrics reports, read from the database at scrape time (so every instance reports the
 * same, right numbers): open carts, checkouts by status, approval links by state, orders by status. One statement
 * of a few counts, in a read-only transaction whose statement timeout bounds what a scrape may cost the server.
 */
import { CART_LIFETIME_DAYS } from '../cart/cart.js';
import { CHECKOUT_STATUSES, type CheckoutStatus } from '../checkout/machine.js';
import type { Database } from '../db/database.js';

/**
 * An approval link is used (the buyer approved: an order was placed), voided (declined, superseded by a newer
 * link, or its checkout changed or was canceled), expired (never used before its time), or pending.
 */
export const APPROVAL_STATES = ['pending', 'used', 'voided', 'expired'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

/** The statuses migration 005 allows an order. */
export const ORDER_STATUSES = ['placed', 'canceled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export interface StoreFigures {
  /** Carts changed within their lifetime (a cart row is written on its first change, purged after it). */
  openCarts: number;
  checkouts: Record<CheckoutStatus, number>;
  approvals: Record<ApprovalState, number>;
  orders: Record<OrderStatus, number>;
  /** Outbox messages by kind and state (`mail:pending`, `webhook:failed`, …): pending, delivered, failed (given up). */
  outbox: Record<string, number>;
}

export const OUTBOX_KINDS = ['mail', 'webhook'] as const;
export const OUTBOX_STATES = ['pending', 'delivered', 'failed'] as const;

const FIGURES_SQL = `
  select 'carts' as figure, 'open' as key, count(*) as n from carts where updated_at > now() - make_interval(days => ${CART_LIFETIME_DAYS})
  union all
  select 'checkouts', status, count(*) from checkouts group by status
  union all
  select 'approvals',
    case when used_at is not null then 'used' when voided_at is not null then 'voided' when expires_at <= now() then 'expired' else 'pending' end,
    count(*)
  from checkout_approvals group by 2
  union all
  select 'orders', status, count(*) from orders group by status
  union all
  select 'outbox', kind || ':' || case when sent_at is not null then 'delivered' when failed_at is not null then 'failed' else 'pending' end, count(*)
  from outbox where kind in ('mail', 'webhook') group by 2`;

const zeros = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;

/** Reads the figures; the server cancels the statement after `timeoutMs`. */
export async function readStoreFigures(db: Database, timeoutMs: number): Promise<StoreFigures> {
  const rows = await db.transaction(async (tx) => {
    await tx.exec(`set transaction read only; set local statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    return tx.query<{ figure: string; key: string; n: number }>(FIGURES_SQL);
  });
  const figures: StoreFigures = {
    openCarts: 0,
    checkouts: zeros(CHECKOUT_STATUSES),
    approvals: zeros(APPROVAL_STATES),
    orders: zeros(ORDER_STATUSES),
    outbox: zeros(OUTBOX_KINDS.flatMap((kind) => OUTBOX_STATES.map((state) => `${kind}:${state}`))),
  };
  for (const { figure, key, n } of rows) {
    if (figure === 'carts') figures.openCarts = Number(n);
    else if (figure === 'checkouts' || figure === 'approvals' || figure === 'orders' || figure === 'outbox') (figures[figure] as Record<string, number>)[key] = Number(n);
  }
  return figures;
}
