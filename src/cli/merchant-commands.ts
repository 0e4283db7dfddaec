/**
 * The merchant's commands (stock, import, orders), as plain functions over a database handle: the CLI runs them
 * on the database directly (PostgreSQL; an embedded database no server holds), and a running store runs them
 * in-process when the CLI asks through the control socket (an embedded database the server holds). What they
 * answer is plain JSON (dates as ISO strings), so it reads the same whichever way it came.
 */
import { formatMoney } from '../catalog/types.js';
import type { Store } from '../store.js';
import { ConfigError } from '../config.js';
import type { SigningKeys } from '../ucp/webhooks/signing-keys.js';
import type { Database } from '../db/database.js';
import type { ImportReport } from '../catalog/import/import-catalog.js';
import { allPasskeys, deletePasskeys } from '../checkout/buyer-proof-store.js';
import { normalEmail } from '../checkout/buyer-proof.js';
import { readTransitions, type TransitionRecord } from '../checkout/checkout-store.js';
import { listStock, type StockListing } from '../inventory/inventory-store.js';
import { UnknownSku, type Inventory } from '../inventory/inventory.js';
import { recordAudit, TERMINAL_ACTOR } from '../audit/audit-log.js';
import { parseDollars } from '../fields/money-amount.js';
import { OrderActionRefused, OrderNotFound, unitsBackordered, unitsToShip, type FulfillInput, type OrderActions } from '../orders/order-actions.js';
import { amountForKeptUnits, authorizationNearExpiry, fulfilmentState, paymentOverdue, type FulfilmentState } from '../orders/order-machine.js';
import { listOrders, readOrder, type Order } from '../orders/orders.js';
import type { PaymentState } from '../payments/payment-handlers.js';
import { listUndelivered, retryWhenDue, type DeliveryOutcome, type OutboxListing } from '../outbox/outbox-dispatcher.js';
import type { StaffService } from '../staff/staff-service.js';
import { staffCommands, type StaffCommands } from './staff-commands.js';
import { subscriptionCommands, type SubscriptionCommands } from './subscription-commands.js';
import { orderLinePlanWords } from '../mail/mail-parts.js';
import { inertLine } from './terminal-text.js';

/** Largest stock a variant may hold (the same bound the catalog import accepts). */
export const MAX_ON_HAND = 1_000_000_000;

/** The commands of a running store: its own stock, order moves and dispatcher; changes taken in at once. */
export function storeCommands(store: Store): MerchantCommands & SubscriptionCommands {
  const commands = merchantCommands({
    db: store.db,
    inventory: store.inventory,
    orders: store.orders,
    // The store delivers it itself when it delivers at all; otherwise it is made due for whoever does.
    retry: (id) => (store.outbox ? store.outbox.retryNow(id) : retryWhenDue(store.db, id, RETRY_WAIT_MS)),
    signingKeys: async () => store.signingKeys,
    staff: store.staff,
    afterChange: async () => {
      await store.inventory.refresh(store.db);
      await store.catalog.refresh(store.db);
    },
  });
  return { ...commands, ...subscriptionCommands(store.db, (run) => run(store.subscriptions)) };
}

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

/** How long `outbox retry` waits for a running store to deliver a message it made due. */
export const RETRY_WAIT_MS = 20_000;

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
  /** The payment's state and the fulfilment derived from the lines, apart (a paid, shipped, partly refunded order is not just "placed"). */
  payment: PaymentState;
  fulfilment: FulfilmentState;
  /** What needs the merchant: a manual payment past its due date, a provider's hold that lapses within a day, a dispute. */
  flags: string[];
}

/** How soon before a provider's hold lapses `storefront orders` flags it. */
export const HOLD_WARNING_MS = 24 * 60 * 60 * 1000;

/** An order as `storefront orders show` reads it: the order, and its checkout's every change of status. */
export interface OrderDetails {
  order: Omit<Dated<Order>, 'fulfillments' | 'adjustments' | 'payment'> & {
    payment: Dated<Order['payment']>;
    fulfillments: Dated<Order['fulfillments'][number]>[];
    adjustments: Dated<Order['adjustments'][number]>[];
  };
  transitions: (Omit<TransitionRecord, 'at'> & { at: string })[];
}

/** What `orders fulfill` sends over the control socket: the FulfillInput with its lines as pairs (JSON has no Map). */
export interface FulfillRequest {
  trackingNumber?: string;
  trackingUrl?: string;
  carrier?: string;
  lines?: [string, number][];
}

/** How `outbox retry` went: delivered or not (with the error), refused, or still waiting for a running store. */
export type OutboxRetry = DeliveryOutcome | { refused: string } | { waiting: true };

/** The staff commands (staff-commands.ts) are merchant commands too. */
export interface MerchantCommands extends StaffCommands {
  stock(): Promise<StockListing[]>;
  setStock(sku: string, onHand: number): Promise<StockSet>;
  /** `setStock`: existing variants take the file's stock levels too (by default only new variants do); `dryRun`: nothing is written, the report says what would be. */
  importCatalog(document: unknown, options?: { setStock?: boolean; dryRun?: boolean }): Promise<ImportReport>;
  /** The newest orders first, at most ORDER_LIST_LIMIT. */
  orders(): Promise<OrderListing[]>;
  /** An order by its id (`ord_…`) or number (`1001`, `#1001`); null when there is none. */
  order(idOrNumber: string): Promise<OrderDetails | null>;
  /** The merchant's moves on an order; each answers the order as it now is, or refuses (CommandError) changing nothing. */
  /** The payment arrived (manual) or the hold is captured: all that is owed, or `amount` cents of it. */
  capture(idOrNumber: string, amount?: number): Promise<OrderDetails>;
  fulfill(idOrNumber: string, request: FulfillRequest): Promise<OrderDetails>;
  cancel(idOrNumber: string, reason?: string): Promise<OrderDetails>;
  refund(idOrNumber: string, amount: number, reason?: string): Promise<OrderDetails>;
  /** Messages not delivered (pending and given up), oldest first. */
  outbox(): Promise<OutboxListing[]>;
  /** Delivers one message now (a given-up one gets another attempt); CommandError when there is no such message. */
  retryOutbox(id: number): Promise<OutboxRetry>;
  /** A new key signs from now on; the retired one stays published for 7 days (every event signed with it verifies). */
  rotateSigningKey(): Promise<{ kid: string; retired: string[] }>;
  /** Buyers holding passkeys, each with their passkeys. */
  buyers(): Promise<BuyerListing[]>;
  /** Removes a buyer's passkeys, or one of them; how many were removed (0 is a CommandError). */
  revokeBuyer(email: string, passkeyId?: string): Promise<{ email: string; removed: number }>;
}

export interface BuyerListing {
  email: string;
  passkeys: { id: string; deviceType: string; backedUp: boolean; createdAt: string; lastUsedAt: string | null }[];
}

/** What the commands work with: the database, the one writer of stock, the order's moves and (for retry) a dispatcher. */
export interface CommandParts {
  db: Database;
  inventory: Pick<Inventory, 'setOnHand'>;
  orders: OrderActions;
  /** Delivers one message now, or makes it due for the running stores and waits for the outcome; undefined when none. */
  retry: (id: number) => Promise<OutboxRetry | undefined>;
  /** The store's signing keys (read when first needed). */
  signingKeys: () => Promise<Pick<SigningKeys, 'rotate'>>;
  /** Who may use the admin (`storefront staff`). */
  staff: StaffService;
  /** After a change to stock or the catalog: a running store takes it in at once. */
  afterChange?: () => Promise<void>;
}

/**
 * The commands run on a database through the inventory (the one writer of stock). In a running store that is
 * the store's own inventory, and `afterImport` takes an import in at once; the CLI on its own passes a fresh one.
 */
export function merchantCommands(parts: CommandParts): MerchantCommands {
  const { db, inventory } = parts;
  const afterChange = parts.afterChange ?? (async () => {});
  const details = async (order: Order): Promise<OrderDetails> => {
    const transitions = await readTransitions(db, order.checkoutId);
    return orderDetails(order, transitions);
  };
  /** A move on an order: its refusal is the merchant's one line; the change taken in (a cancel restocks). */
  const move = async (run: () => Promise<Order>): Promise<OrderDetails> => {
    let order: Order;
    try {
      order = await run();
    } catch (error) {
      if (error instanceof OrderActionRefused || error instanceof OrderNotFound) throw new CommandError(error.message);
      throw error;
    }
    await afterChange().catch(() => {});
    return details(order);
  };
  return {
    ...staffCommands(db, parts.staff),
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
    async importCatalog(document, options = {}) {
      // Loaded here: the other commands start without the import's parsers and schemas.
      const { importCatalog, importSummary } = await import('../catalog/import/import-catalog.js');
      const file = (document as { file?: { path: string } }).file?.path;
      const source = file ? file.slice(file.lastIndexOf('/') + 1) : 'a catalog';
      // Audited in the import's own transaction (a dry run writes nothing, so records nothing).
      const report = await importCatalog(db, document, {
        ...options,
        beforeCommit: (tx, written) => recordAudit(tx, TERMINAL_ACTOR, { action: 'catalog.import', summary: importSummary(source, written) }),
      });
      await afterChange();
      return report;
    },
    async orders() {
      const orders = await listOrders(db, ORDER_LIST_LIMIT);
      const now = new Date();
      return orders.map((order) => ({
        id: order.id,
        number: order.number,
        createdAt: order.createdAt.toISOString(),
        buyerEmail: order.buyerEmail,
        total: order.total,
        currency: order.currency,
        status: order.status,
        channel: order.channel,
        payment: order.paymentState,
        fulfilment: fulfilmentState(order.lines),
        flags: orderFlags(order, now),
      }));
    },
    async order(idOrNumber) {
      const order = await readOrder(db, idOrNumber);
      return order ? details(order) : null;
    },
    capture: (idOrNumber, amount) => move(() => parts.orders.capture(db, idOrNumber, amount, TERMINAL_ACTOR)),
    fulfill: (idOrNumber, request) => move(() => parts.orders.fulfill(db, idOrNumber, fulfillInput(request), TERMINAL_ACTOR)),
    cancel: (idOrNumber, reason) => move(() => parts.orders.cancel(db, idOrNumber, reason, TERMINAL_ACTOR)),
    refund: (idOrNumber, amount, reason) => move(() => parts.orders.refund(db, idOrNumber, amount, reason, TERMINAL_ACTOR)),
    outbox: () => listUndelivered(db),
    async retryOutbox(id) {
      const outcome = await parts.retry(id);
      if (!outcome) throw new CommandError(`no outbox message has the id ${id}`);
      return outcome;
    },
    async rotateSigningKey() {
      try {
        return await (await parts.signingKeys()).rotate(db);
      } catch (error) {
        if (error instanceof ConfigError) throw new CommandError(error.message);
        throw error;
      }
    },
    async buyers() {
      const byEmail = new Map<string, BuyerListing>();
      for (const passkey of await allPasskeys(db)) {
        const buyer = byEmail.get(passkey.email) ?? { email: passkey.email, passkeys: [] };
        buyer.passkeys.push({
          id: passkey.id,
          deviceType: passkey.deviceType,
          backedUp: passkey.backedUp,
          createdAt: passkey.createdAt.toISOString(),
          lastUsedAt: passkey.lastUsedAt?.toISOString() ?? null,
        });
        byEmail.set(passkey.email, buyer);
      }
      return [...byEmail.values()];
    },
    async revokeBuyer(email, passkeyId) {
      const normal = normalEmail(email);
      const removed = await deletePasskeys(db, normal, passkeyId);
      if (removed === 0) throw new CommandError(passkeyId === undefined ? `${normal} holds no passkey` : `${normal} holds no passkey ${passkeyId}`);
      return { email: normal, removed };
    },
  };
}

/** What needs the merchant's eye on an order: an overdue manual payment, a hold about to lapse, a dispute. */
function orderFlags(order: Order, now: Date): string[] {
  const { payment } = order;
  return [
    ...(paymentOverdue(payment, now) ? [`payment overdue since ${utc(payment.dueAt!.toISOString())}`] : []),
    ...(authorizationNearExpiry({ payment: { ...payment, state: order.paymentState }, now }, HOLD_WARNING_MS)
      ? [payment.authorizedUntil! <= now ? 'hold lapsed' : `hold lapses ${utc(payment.authorizedUntil!.toISOString())}: capture or it is released`]
      : []),
    ...(payment.disputed ? ['disputed'] : []),
  ];
}

/** The buyers and their passkeys, one line a passkey under its buyer. */
export function describeBuyers(buyers: readonly BuyerListing[]): string {
  if (buyers.length === 0) return 'no buyer holds a passkey';
  return buyers
    .map((buyer) =>
      [
        `${buyer.email}: ${buyer.passkeys.length} ${buyer.passkeys.length === 1 ? 'passkey' : 'passkeys'}`,
        ...buyer.passkeys.map(
          (p) => `  ${p.id}  ${p.deviceType === 'multiDevice' ? 'synced' : 'this device only'}${p.backedUp ? ', backed up' : ''}  created ${p.createdAt}  last used ${p.lastUsedAt ?? 'never'}`,
        ),
      ].join('\n'),
    )
    .join('\n');
}

function fulfillInput(request: FulfillRequest): FulfillInput {
  return {
    ...(request.trackingNumber === undefined ? {} : { trackingNumber: String(request.trackingNumber) }),
    ...(request.trackingUrl === undefined ? {} : { trackingUrl: String(request.trackingUrl) }),
    ...(request.carrier === undefined ? {} : { carrier: String(request.carrier) }),
    ...(request.lines === undefined ? {} : { lines: new Map(request.lines.map(([line, quantity]) => [String(line), Number(quantity)])) }),
  };
}

/** Dates as ISO strings: the same JSON whether the command ran here or in the running store. */
type Dated<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

function orderDetails(order: Order, transitions: TransitionRecord[]): OrderDetails {
  return {
    order: {
      ...order,
      createdAt: order.createdAt.toISOString(),
      canceledAt: order.canceledAt?.toISOString() ?? null,
      payment: {
        ...order.payment,
        authorizedUntil: order.payment.authorizedUntil?.toISOString() ?? null,
        dueAt: order.payment.dueAt?.toISOString() ?? null,
      },
      fulfillments: order.fulfillments.map((f) => ({ ...f, occurredAt: f.occurredAt.toISOString() })),
      adjustments: order.adjustments.map((a) => ({ ...a, occurredAt: a.occurredAt.toISOString() })),
    },
    transitions: transitions.map((transition) => ({ ...transition, at: transition.at.toISOString() })),
  };
}

/** A refund's AMOUNT as the merchant types it: dollars and cents (`12.50`, `$12.50`, `12`), to cents without floats. */
export function parseAmount(raw: string | undefined): number {
  const cents = raw === undefined ? undefined : parseDollars(raw);
  if (cents === undefined) throw new CommandError(`AMOUNT must be dollars and cents such as 12.50, got ${raw === undefined ? 'nothing' : `"${raw.slice(0, 40)}"`}`);
  if (cents <= 0) throw new CommandError('AMOUNT must be more than 0.00');
  return cents;
}

/** `--lines li_1=2,SKU-9=1` to pairs of line (id or SKU) and units. */
export function parseFulfillLines(raw: string): [string, number][] {
  const seen = new Set<string>();
  return raw.split(',').map((entry) => {
    const match = /^\s*([^=\s]{1,100})\s*=\s*(\d{1,6})\s*$/.exec(entry);
    if (!match) throw new CommandError(`--lines takes LINE=QTY pairs separated by commas (LINE a line id such as li_1, or a SKU), got "${entry.slice(0, 60)}"`);
    if (seen.has(match[1]!)) throw new CommandError(`--lines names ${match[1]!.slice(0, 60)} twice; give each line once`);
    seen.add(match[1]!);
    return [match[1]!, Number(match[2])];
  });
}

export function describeOutbox(rows: readonly OutboxListing[]): string {
  if (rows.length === 0) return 'every message was delivered';
  const table = [
    ['ID', 'KIND', 'TOPIC', 'ORDER', 'STATE', 'TRIES', 'WRITTEN (UTC)', 'NEXT TRY OR GIVEN UP', 'LAST ERROR'],
    ...rows.map((row) => [
      String(row.id),
      row.kind,
      row.topic,
      row.orderNumber === null ? '-' : `#${row.orderNumber}`,
      row.state,
      String(row.attempts),
      utc(row.createdAt),
      row.state === 'pending' ? `next ${utc(row.nextAttemptAt!)}, until ${utc(row.deadlineAt)}` : `given up (deadline ${utc(row.deadlineAt)})`,
      (row.lastError ?? '-').replace(/\s+/g, ' ').slice(0, 120),
    ]),
  ];
  return [...columns(table, new Set([0, 5])), '', 'storefront outbox retry ID delivers one now (a given-up one gets another attempt).'].join('\n');
}

export function describeRetry(id: number, outcome: OutboxRetry): string {
  if ('refused' in outcome) return outcome.refused;
  if ('waiting' in outcome) return `message ${id} is due now, and no running store delivered it within ${RETRY_WAIT_MS / 1000} s: a store delivers it once one runs (storefront serve)`;
  if (outcome.delivered) return `message ${id} delivered`;
  return `message ${id} was not delivered: ${outcome.error}${outcome.givenUp ? ' (given up again)' : ' (it will be tried again)'}`;
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

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** Units on hand, and what they do not show: stock not tracked, units sold beyond stock and not shipped yet. */
function onHandCell(row: StockListing): string {
  const notes = [...(row.tracked ? [] : ['not tracked']), ...(row.backordered > 0 ? [`${row.backordered} backordered`] : [])];
  return notes.length ? `${row.onHand} (${notes.join(', ')})` : String(row.onHand);
}

export function describeStock(rows: readonly StockListing[]): string {
  const table = [
    ['SKU', 'VARIANT ID', 'PRODUCT', 'ON HAND'],
    ...rows.map((row) => [
      row.sku ?? '-',
      String(row.variantId),
      row.variantTitle === 'Default Title' ? row.productTitle : `${row.productTitle} - ${row.variantTitle}`,
      onHandCell(row),
    ]),
  ];
  return columns(table).join('\n');
}

/** The stock part of an import: every existing level it set (was, now), or how many it kept because --set-stock was not given. */
function describeImportedStock(stock: ImportReport['stock']): string[] {
  if (stock.set.length > 0) {
    const table = [
      ['SKU', 'VARIANT ID', 'WAS', 'NOW'],
      ...stock.set.map((level) => [level.sku ?? '-', String(level.variantId), String(level.previous), String(level.onHand)]),
    ];
    return [`stock: ${plural(stock.set.length, 'existing level', 'existing levels')} set to the file's quantity:`, ...columns(table, new Set([1, 2, 3])).map((line) => `  ${line}`)];
  }
  if (stock.keptExisting > 0) {
    const kept = plural(stock.keptExisting, 'existing level differs from the file and was kept', 'existing levels differ from the file and were kept');
    return [`stock: ${kept} (sales since the export stay counted; --set-stock sets the file's quantities)`];
  }
  return ['stock: no existing level changed'];
}

export function describeImport(report: ImportReport): string {
  const line = (name: string, t: ImportReport['products']) =>
    `${name}: ${t.created} created, ${t.updated} changed, ${t.unchanged} unchanged${t.removed ? `, ${t.removed} removed` : ''}`;
  return [
    'imported',
    line('products', report.products),
    line('variants', report.variants),
    line('collections', report.collections),
    ...describeImportedStock(report.stock),
  ].join('\n  ');
}

/** An ISO time in UTC to the second: 2026-01-31T09:05:00Z. */
const utc = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');

export function describeOrders(rows: readonly OrderListing[]): string {
  if (rows.length === 0) return 'no orders yet';
  const table = [
    ['ORDER', 'ID', 'PLACED (UTC)', 'BUYER EMAIL', 'TOTAL', 'PAYMENT', 'FULFILMENT', 'CHANNEL', 'NEEDS'],
    ...rows.map((row) => [
      `#${row.number}`,
      row.id,
      utc(row.createdAt),
      row.buyerEmail,
      formatMoney(row.total, row.currency),
      words(row.payment),
      words(row.fulfilment),
      row.channel,
      row.flags.join('; ') || '-',
    ]),
  ];
  const lines = columns(table, new Set([4]));
  if (rows.length >= ORDER_LIST_LIMIT) lines.push(`(the ${ORDER_LIST_LIMIT} newest orders; storefront orders show ID for any order)`);
  return lines.join('\n');
}

/** A state as the merchant reads it: partially_refunded → partially refunded. */
const words = (state: string) => state.replace(/_/g, ' ');

/** The order's payment in the list's vocabulary, with what it needs: how much, held until, due by, how the buyer pays. */
function describePayment(order: OrderDetails['order']): string[] {
  const money = (cents: number) => formatMoney(cents, order.currency);
  const { payment } = order;
  const now = new Date();
  const facts = [`${words(order.paymentState)} (${payment.provider})`];
  if (payment.authorized > 0) facts.push(`${money(payment.authorized)} authorized${payment.authorizedUntil ? ` until ${utc(payment.authorizedUntil)}` : ''}`);
  if (payment.dueAt && order.paymentState === 'pending') {
    facts.push(`${money(amountForKeptUnits(order) - payment.captured)} due by ${utc(payment.dueAt)}${new Date(payment.dueAt) <= now ? ' (overdue)' : ''}`);
  }
  if (payment.captured > 0) facts.push(`${money(payment.captured)} captured`);
  if (payment.refunded > 0) facts.push(`${money(payment.refunded)} refunded`);
  if (payment.disputed) facts.push('disputed by the buyer\'s bank');
  const instructions =
    payment.instructions && order.paymentState === 'pending' ? ['Payment instructions given to the buyer:', ...payment.instructions.split('\n').map((line) => `  ${line}`)] : [];
  return [`Payment: ${facts.join(', ')}`, ...instructions];
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
    ['Payment', words(order.paymentState)],
    ['Fulfilment', words(fulfilmentState(order.lines))],
    ['Buyer', buyerName ? `${order.buyerEmail} (${buyerName})` : order.buyerEmail],
    ...addressLines.map((line, index) => [index === 0 ? 'Ship to' : '', line]),
    ['Shipping option', `${order.shippingOption.title} (${order.shippingOption.id}), ${money(order.shippingOption.amount)}`],
    // What the buyer wrote, each on one line whichever way the answer came (a stored line break is shown as its escape).
    ...(order.note ? [['Note', inertLine(order.note)]] : []),
    ...Object.entries(order.attributes ?? {}).map(([name, value], index) => [index === 0 ? 'Attributes' : '', inertLine(`${name}: ${value}`)]),
  ]);
  const lines = columns(
    [
      ['LINE', 'TITLE', 'SKU', 'QTY', 'SHIPPED', 'CANCELED', 'BACKORDERED', 'UNIT PRICE', 'LINE TOTAL'],
      ...order.lines.map((line) => [
        line.id,
        line.title,
        line.sku ?? '-',
        String(line.quantity),
        String(line.fulfilled),
        String(line.canceled),
        line.backordered ? `${unitsBackordered(line)} of ${line.backordered}` : '-',
        money(line.unitPrice),
        money(line.lineTotal),
      ]),
    ],
    new Set([3, 4, 5, 7, 8]),
  );
  // Under each line bought on a plan: the plan, its interval and what the line saved.
  const linesWithPlans = lines.flatMap((row, index) => {
    const plan = index === 0 ? undefined : orderLinePlanWords(order.lines[index - 1]!, order.currency);
    return plan ? [row, `    plan: ${inertLine(plan)}`] : [row];
  });
  const totals = columns(
    [
      ['Subtotal', money(order.subtotal)],
      ['Shipping', money(order.shipping)],
      ['Tax', money(order.tax)],
      ['Total', money(order.total)],
      ['Captured', money(order.captured)],
      ['Refunded', money(order.refunded)],
    ],
    new Set([1]),
  );
  const titleOf = (lineId: string) => order.lines.find((line) => line.id === lineId)?.title ?? lineId;
  const shipments = order.fulfillments.map((f) =>
    [
      `  ${utc(f.occurredAt)}  shipped ${f.lines.map((l) => `${l.quantity} × ${titleOf(l.lineId)}`).join(', ')}`,
      f.carrier ? ` via ${f.carrier}` : '',
      f.trackingNumber ? `, tracking ${f.trackingNumber}` : '',
      f.trackingUrl ? ` (${f.trackingUrl})` : '',
    ].join(''),
  );
  const adjustments = order.adjustments.map((a) =>
    a.type === 'refund'
      ? `  ${utc(a.occurredAt)}  refunded ${money(-a.amount)}${a.reason ? `: ${a.reason}` : ''}`
      : `  ${utc(a.occurredAt)}  canceled ${a.lines.map((l) => `${-l.quantity} × ${titleOf(l.lineId)}`).join(', ')}${a.reason ? `: ${a.reason}` : ''}`,
  );
  const history = transitions.length
    ? columns([['TIME (UTC)', 'FROM', '', 'TO', 'BY', 'REASON'], ...transitions.map((t) => [utc(t.at), t.from ?? '(new)', '→', t.to, t.actor, t.reason ?? ''])])
    : ['(no transitions recorded)'];
  const toShip = order.status === 'canceled' ? 0 : order.lines.reduce((sum, line) => sum + unitsToShip(line), 0);
  return [
    ...facts,
    '',
    ...linesWithPlans.map((line) => `  ${line}`),
    '',
    ...totals,
    '',
    ...describePayment(order),
    '',
    ...(order.status === 'canceled' ? [`Canceled ${order.canceledAt ? utc(order.canceledAt) : ''}${order.cancelReason ? `: ${order.cancelReason}` : ''}`.trimEnd(), ''] : []),
    toShip > 0 ? `${toShip} unit${toShip === 1 ? '' : 's'} still to ship.` : order.status === 'canceled' ? 'Nothing left to ship.' : 'Shipped in full.',
    ...(shipments.length ? ['Shipments:', ...shipments] : []),
    ...(adjustments.length ? ['Refunds and cancellations:', ...adjustments] : []),
    '',
    `Checkout ${order.checkoutId}, every change of status:`,
    ...history.map((line) => `  ${line}`),
  ].join('\n');
}
