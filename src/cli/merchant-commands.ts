/**
 * The merchant's commands (stock, import, orders), as plain functions over a database handle: the CLI runs them
 * on the database directly (PostgreSQL; an embedded database no server holds), and a running store runs them
 * in-process when the CLI asks through the control socket (an embedded database the server holds). What they
 * answer is plain JSON (dates as ISO strings), so it reads the same whichever way it came.
 */
import { formatMoney } from '../catalog/types.js';
import type { Database } from '../db/database.js';
import { importCatalog, type ImportReport } from '../catalog/import/import-catalog.js';
import { readTransitions, type TransitionRecord } from '../checkout/checkout-store.js';
import { listStock, type StockListing } from '../inventory/inventory-store.js';
import { UnknownSku, type Inventory } from '../inventory/inventory.js';
import { listOrders, readOrder, type Order } from '../orders/orders.js';

/** Largest stock a variant may hold (the same bound the catalog import accepts). */
export const MAX_ON_HAND = 1_000_000_000;

/** A merchant's mistake (unknown SKU, bad quantity): one clear line, exit 1, nothing changed. */
export class CommandError extends Error {}

export function parseQuantity(raw: string | undefined): number {
  if (raw === undefined || !/^[0-9]{1,10}$/.test(raw) || Number(raw) > MAX_ON_HAND) {
    throw new CommandError(`QUANTITY must be a whole number from 0 to ${MAX_ON_HAND}, got ${raw === undefined ? 'nothing' : `"${raw.slice(0, 40)}"`}`);
  }
  return Number(raw);
}

export interface StockSet {
  sku: string;
  variantId: number;
  previous: number;
  onHand: number;
}

/** How many orders `storefront orders` lists (the newest). */
export const ORDER_LIST_LIMIT = 50;

/** One row of `storefront orders`. */
export interface OrderListing {
  id: string;
  number: number;
  createdAt: string;
  buyerEmail: string;
  total: number;
  currency: string;
  status: Order['status'];
  channel: Order['channel'];
}

/** An order as `storefront orders show` reads it: the order, and its checkout's every change of status. */
export interface OrderDetails {
  order: Omit<Order, 'createdAt'> & { createdAt: string };
  transitions: (Omit<TransitionRecord, 'at'> & { at: string })[];
}

export interface MerchantCommands {
  stock(): Promise<StockListing[]>;
  setStock(sku: string, onHand: number): Promise<StockSet>;
  importCatalog(document: unknown): Promise<ImportReport>;
  /** The newest orders first, at most ORDER_LIST_LIMIT. */
  orders(): Promise<OrderListing[]>;
  /** An order by its id (`ord_…`) or number (`1001`, `#1001`); null when there is none. */
  order(idOrNumber: string): Promise<OrderDetails | null>;
}

/**
 * The commands run on a database through the inventory (the one writer of stock). In a running store that is
 * the store's own inventory, and `afterImport` takes an import in at once; the CLI on its own passes a fresh one.
 */
export function merchantCommands(db: Database, inventory: Pick<Inventory, 'setOnHand'>, afterImport: () => Promise<void> = async () => {}): MerchantCommands {
  return {
    stock: () => listStock(db),
    async setStock(sku, onHand) {
      try {
        const result = await inventory.setOnHand(db, sku, onHand);
        return { sku, variantId: result.variantId, previous: result.previous, onHand };
      } catch (error) {
        if (error instanceof UnknownSku) throw new CommandError(`no variant has the SKU "${sku.slice(0, 100)}"`);
        throw error;
      }
    },
    async importCatalog(document) {
      const report = await importCatalog(db, document);
      await afterImport();
      return report;
    },
    async orders() {
      const orders = await listOrders(db, ORDER_LIST_LIMIT);
      return orders.map((order) => ({
        id: order.id,
        number: order.number,
        createdAt: order.createdAt.toISOString(),
        buyerEmail: order.buyerEmail,
        total: order.total,
        currency: order.currency,
        status: order.status,
        channel: order.channel,
      }));
    },
    async order(idOrNumber) {
      const order = await readOrder(db, idOrNumber);
      if (!order) return null;
      const transitions = await readTransitions(db, order.checkoutId);
      return {
        order: { ...order, createdAt: order.createdAt.toISOString() },
        transitions: transitions.map((transition) => ({ ...transition, at: transition.at.toISOString() })),
      };
    },
  };
}

/** Lines of cells as columns two spaces apart; `right` names the columns aligned right (numbers, money). */
function columns(table: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string[] {
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
  return table.map((line) =>
    line
      .map((cell, column) => {
        if (right.has(column)) return cell.padStart(widths[column]!);
        return column === line.length - 1 ? cell : cell.padEnd(widths[column]!);
      })
      .join('  ')
      .trimEnd(),
  );
}

export function describeStock(rows: readonly StockListing[]): string {
  const table = [
    ['SKU', 'VARIANT ID', 'PRODUCT', 'ON HAND'],
    ...rows.map((row) => [
      row.sku ?? '-',
      String(row.variantId),
      row.variantTitle === 'Default Title' ? row.productTitle : `${row.productTitle} - ${row.variantTitle}`,
      row.tracked ? String(row.onHand) : `${row.onHand} (not tracked)`,
    ]),
  ];
  return columns(table).join('\n');
}

export function describeImport(report: ImportReport): string {
  const line = (name: string, t: ImportReport['products']) =>
    `${name}: ${t.created} created, ${t.updated} changed, ${t.unchanged} unchanged${t.removed ? `, ${t.removed} removed` : ''}`;
  return ['imported', line('products', report.products), line('variants', report.variants), line('collections', report.collections)].join('\n  ');
}

/** An ISO time in UTC to the second: 2026-01-31T09:05:00Z. */
const utc = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');

export function describeOrders(rows: readonly OrderListing[]): string {
  if (rows.length === 0) return 'no orders yet';
  const table = [
    ['ORDER', 'ID', 'PLACED (UTC)', 'BUYER EMAIL', 'TOTAL', 'STATUS', 'CHANNEL'],
    ...rows.map((row) => [`#${row.number}`, row.id, utc(row.createdAt), row.buyerEmail, formatMoney(row.total, row.currency), row.status, row.channel]),
  ];
  const lines = columns(table, new Set([4]));
  if (rows.length >= ORDER_LIST_LIMIT) lines.push(`(the ${ORDER_LIST_LIMIT} newest orders; storefront orders show ID for any order)`);
  return lines.join('\n');
}

const fullName = (person: { firstName?: string; lastName?: string }) => [person.firstName, person.lastName].filter(Boolean).join(' ');

export function describeOrder(order: OrderDetails['order'], transitions: OrderDetails['transitions']): string {
  const money = (cents: number) => formatMoney(cents, order.currency);
  const address = order.shippingAddress;
  const buyerName = fullName(order.buyer);
  const addressLines = [
    fullName(address),
    address.streetAddress,
    address.extendedAddress ?? '',
    `${address.locality}, ${address.region} ${address.postalCode}`,
    address.country,
    address.phoneNumber ?? '',
  ].filter(Boolean);
  const facts = columns([
    ['Order', `#${order.number}  ${order.id}`],
    ['Placed', `${utc(order.createdAt)} (UTC)`],
    ['Channel', order.channel],
    ['Status', order.status],
    ['Buyer', buyerName ? `${order.buyerEmail} (${buyerName})` : order.buyerEmail],
    ...addressLines.map((line, index) => [index === 0 ? 'Ship to' : '', line]),
    ['Shipping option', `${order.shippingOption.title} (${order.shippingOption.id}), ${money(order.shippingOption.amount)}`],
  ]);
  const lines = columns(
    [
      ['TITLE', 'SKU', 'QTY', 'UNIT PRICE', 'LINE TOTAL'],
      ...order.lines.map((line) => [line.title, line.sku ?? '-', String(line.quantity), money(line.unitPrice), money(line.lineTotal)]),
    ],
    new Set([2, 3, 4]),
  );
  const totals = columns(
    [
      ['Subtotal', money(order.subtotal)],
      ['Shipping', money(order.shipping)],
      ['Tax', money(order.tax)],
      ['Total', money(order.total)],
    ],
    new Set([1]),
  );
  const history = transitions.length
    ? columns(
        [
          ['TIME (UTC)', 'FROM', '', 'TO', 'BY', 'REASON'],
          ...transitions.map((t) => [utc(t.at), t.from ?? '(new)', '→', t.to, t.actor, t.reason ?? '']),
        ],
      )
    : ['(no transitions recorded)'];
  return [
    ...facts,
    '',
    ...lines.map((line) => `  ${line}`),
    '',
    ...totals,
    '',
    order.paymentSummary,
    '',
    `Checkout ${order.checkoutId}, every change of status:`,
    ...history.map((line) => `  ${line}`),
  ].join('\n');
}
