/**
 * The store-wide figures /metrics reports (src/http/metrics.ts takes them as a MetricsCollector): open carts,
 * checkouts by status, approval links by state, orders by status, outbox messages, read from the database at scrape
 * time (so every instance reports the same, right numbers) in one statement of a few counts, in a read-only
 * transaction whose statement timeout bounds what a scrape may cost the server; and the approval page's proofs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, Gauge, type Registry } from 'prom-client';
import { CART_LIFETIME_DAYS } from './cart/cart.js';
import { CHECKOUT_STATUSES, type CheckoutStatus } from './checkout/machine.js';
import type { Database } from './db/database.js';
import type { MetricsCollector } from './http/metrics.js';
import type { Store } from './store.js';

/** The longest a scrape waits for the store figures (the server also cancels the statement then). */
export const STORE_FIGURES_DEADLINE_MS = 2000;

/** The store's figures and the approval page's proof counters, for installMetrics. */
export function storeFigureMetrics(store: Store): MetricsCollector {
  return (register) => {
    storeFigureGauges(register, new StoreFiguresReader(store.db));
    buyerProofCounters(register, store);
  };
}

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

/**
 * The store figures, read once per scrape for all the gauges that show them, within STORE_FIGURES_DEADLINE_MS.
 * A read still running from an earlier scrape (a slow database) is waited for again rather than started twice,
 * so scrapes never hold more than one database connection.
 */
class StoreFiguresReader {
  private running: Promise<StoreFigures> | undefined;
  private scrape: Promise<StoreFigures | undefined> | undefined;

  constructor(private readonly db: Database) {}

  /** The figures, or undefined when the database did not give them in time. */
  read(): Promise<StoreFigures | undefined> {
    this.scrape ??= this.readInTime().finally(() => (this.scrape = undefined));
    return this.scrape;
  }

  private async readInTime(): Promise<StoreFigures | undefined> {
    this.running ??= readStoreFigures(this.db, STORE_FIGURES_DEADLINE_MS).finally(() => (this.running = undefined));
    const deadline = new AbortController();
    try {
      return await Promise.race([this.running, sleep(STORE_FIGURES_DEADLINE_MS, undefined, { signal: deadline.signal, ref: false })]);
    } catch {
      return undefined;
    } finally {
      deadline.abort();
    }
  }
}

function storeFigureGauges(register: Registry, figures: StoreFiguresReader): void {
  new Gauge({
    name: 'storefront_store_figures_up',
    help: `1 when this scrape read the store figures from the database, 0 when it could not within ${STORE_FIGURES_DEADLINE_MS / 1000} s (they are then left out).`,
    registers: [register],
    async collect() {
      this.set((await figures.read()) === undefined ? 0 : 1);
    },
  });
  const labelled = (name: string, help: string, label: string, pick: (read: StoreFigures) => Record<string, number>) =>
    new Gauge({
      name,
      help,
      labelNames: [label],
      registers: [register],
      async collect() {
        const read = await figures.read();
        this.reset();
        if (read === undefined) return;
        for (const [value, count] of Object.entries(pick(read))) this.set({ [label]: value }, count);
      },
    });
  labelled('storefront_carts', 'Carts in the store (open: changed within their 14-day lifetime), read from the database.', 'status', (read) => ({ open: read.openCarts }));
  labelled('storefront_checkouts', 'Checkouts in the store by status, read from the database.', 'status', (read) => read.checkouts);
  labelled(
    'storefront_checkout_approvals',
    "Buyers' approval links by state (pending, used: approved into an order, voided: declined, replaced or changed, expired), read from the database.",
    'state',
    (read) => read.approvals,
  );
  labelled('storefront_orders', 'Orders in the store by status, read from the database.', 'status', (read) => read.orders);
  new Gauge({
    name: 'storefront_outbox_messages',
    help: 'Outbox messages (mail to buyers and the merchant, order webhooks to platforms) by kind and state: pending, delivered (kept 30 days), failed (given up after the deadline; storefront outbox lists them), read from the database.',
    labelNames: ['kind', 'state'],
    registers: [register],
    async collect() {
      const read = await figures.read();
      this.reset();
      if (read === undefined) return;
      for (const [key, count] of Object.entries(read.outbox)) {
        const [kind, state] = key.split(':') as [string, string];
        this.set({ kind, state }, count);
      }
    },
  });
}

/** The approval page's proofs: codes mailed and proofs refused since this instance started (the buyer-proof service counts them). */
function buyerProofCounters(register: Registry, store: Store): void {
  new Counter({
    name: 'storefront_approval_codes_sent_total',
    help: "Approval codes mailed to buyers (each when the person on the approval page asked for one).",
    registers: [register],
    collect() {
      this.reset();
      this.inc(store.buyerProof.codesSent);
    },
  });
  new Counter({
    name: 'storefront_approval_proof_failures_total',
    help: 'Approval proofs refused, by proof (code, passkey) and reason (wrong, expired, used, locked, none_sent; invalid, replayed, unknown_challenge, unknown_passkey, malformed, expired).',
    labelNames: ['proof', 'reason'],
    registers: [register],
    collect() {
      this.reset();
      for (const [key, count] of store.buyerProof.failures) {
        const [proof, reason] = key.split(':') as [string, string];
        this.inc({ proof, reason }, count);
      }
    },
  });
}
