/**
 * The storefront's command line, `storefront COMMAND [arguments]`: reads the arguments, runs the command and prints
 * its answer to the streams it is given, answering the exit code. src/main.ts runs it with the process's own streams
 * and environment; a test runs it the same way with streams of its own. Everything printed goes through
 * terminal-text.ts: what the database or the merchant gave is printed inert.
 */
import { access, constants, stat } from 'node:fs/promises';
import { ImportError } from '../catalog/import/catalog-document.js';
import { CatalogStream } from '../catalog/import/catalog-stream.js';
import { configVariablesHelp } from '../config-variables.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { DatabaseInUseError, DatabaseUnreachableError, openDatabase, type Database } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { momentsIn } from '../markup/moments.js';
import type { SubscriptionService } from '../subscriptions/subscription-service.js';
import type { StockListing } from '../inventory/inventory-store.js';
import { Inventory } from '../inventory/inventory.js';
import { OrderActions } from '../orders/order-actions.js';
import { retryWhenDue, type OutboxListing } from '../outbox/outbox-dispatcher.js';
import { SigningKeys } from '../ucp/webhooks/signing-keys.js';
import { readOptions } from './command-options.js';
import { controlSocketPath, sendCatalogFile, sendControlCommand } from './control-socket.js';
import {
  CommandError,
  describeBuyers,
  describeOrder,
  describeOrders,
  describeOutbox,
  describeRetry,
  describeStock,
  merchantCommands,
  ORDER_LIST_LIMIT,
  parseAmount,
  parseFulfillLines,
  parseQuantity,
  RETRY_WAIT_MS,
  type BuyerListing,
  type FulfillRequest,
  type MerchantCommands,
  type OrderDetails,
  type OrderListing,
  type OutboxRetry,
  type StockSet,
} from './merchant-commands.js';
import { describeImportPreview, describeImportWithChanges } from './import-changes-text.js';
import { DRAIN_SECONDS, serve } from './serve.js';
import { remoteStaffCommands, staffCommand, STAFF_USAGE } from './staff-commands.js';
import { remoteSubscriptionCommands, subscriptionCommands, subscriptionsCommand, SUBSCRIPTIONS_USAGE, type SubscriptionCommands } from './subscription-commands.js';
import { inertLine, inertStrings, printLines, type TextStream } from './terminal-text.js';

/** Where a command runs: its environment (the configuration) and the streams its answer and its failure go to. */
export interface CommandLine {
  env: NodeJS.ProcessEnv;
  stdout: TextStream;
  stderr: TextStream;
  /**
   * The configured database, opened by the caller and left open (tests running many commands in one process: an
   * embedded database takes a second or more to open). Without it each command opens the database and closes it.
   */
  database?: Database;
}

/** Prints one answer (the CLI's own lines) to the command's stdout. */
type Say = (text: string) => void;

/** The commands of the CLI: the merchant's, and the subscriptions' (subscription-commands.ts). */
type CliCommands = MerchantCommands & SubscriptionCommands;

/** What a merchant's command works with: where its answer goes, and the commands on the configured database. */
interface CommandTools {
  say: Say;
  withCommands: <T>(run: (commands: CliCommands) => Promise<T>) => Promise<T>;
}

const USAGE = `usage: storefront <command> [arguments]

  serve                      serve the store (the default): migrates, seeds the demo catalog into an empty store
  migrate                    apply the database migrations and exit
  import FILE [--set-stock] [--dry-run]
                             import a Shopify product CSV export (.csv) or a storefront JSON catalog (.json); new variants
                             get the file's stock, existing ones keep theirs (sales since the export) unless --set-stock;
                             prints every change (products added, fields was → now, images removed, stock set);
                             --dry-run prints the same changes and changes nothing
  stock                      list every variant: SKU, variant id, product, units on hand, units backordered
  stock set SKU QUANTITY     set a variant's units on hand (a whole number from 0)
  orders                     list the ${ORDER_LIST_LIMIT} newest orders: number, id, time, buyer email, total, status, agent or browser
  orders show ID             one order (ID is its id, ord_..., or its number, 1001 or #1001): lines, totals, address,
                             payment, shipments, refunds, and every change of its checkout's status (when, from, to, by whom, why)
  orders capture ID [AMOUNT] the payment was received, or a card's hold is captured: all that is owed, or AMOUNT
                             (dollars and cents, such as 12.50: a manual payment arriving in parts, part of a hold)
  orders fulfill ID [--tracking-number N] [--tracking-url URL] [--carrier NAME] [--lines LINE=QTY,...]
                             units shipped (all that is left, or the lines given: LINE is a line id such as li_1, or a SKU)
  orders cancel ID [--reason TEXT]
                             cancel what has not shipped; its units go back in stock
  orders refund ID AMOUNT [--reason TEXT]
                             give back AMOUNT (dollars and cents, such as 12.50), never more than was captured
  outbox                     messages not delivered yet (mail, webhooks) and those given up, with their last error
  outbox retry ID            deliver one now (a given-up one gets another attempt)
  signing-key rotate         sign webhooks with a new key; the old one stays in the profile 7 more days
  buyers                     buyers holding passkeys (approve orders with them), with each passkey's id and last use
  buyers revoke EMAIL [--passkey ID]
                             remove a buyer's passkeys (or one): their next order is approved with a mailed code again
  staff                      who may use the admin (/admin): email, role, passkeys, last sign-in
  staff add EMAIL [--role owner|staff]
                             add a person (the first one is an owner unless --role says otherwise): prints a single-use
                             enrollment link, valid 30 minutes, on which they create their passkey (mailed too with SMTP_URL)
  staff revoke EMAIL         end every session of that person at once and remove their passkeys (never the last owner)
  staff sign-in-link EMAIL   a single-use sign-in link, valid 5 minutes (for a BASE_URL that is an IP address: no passkey there)
  subscriptions [--state active|paused|canceled] [--email EMAIL]
                             the newest subscriptions: id, state, buyer email, what, plan, next delivery (in STORE_TIMEZONE)
  subscriptions show ID      one subscription: lines, plan terms (still offered or not), address, the next delivery priced
                             now, renewals with their state and orders, and what happened to it
  subscriptions cancel ID [--reason TEXT]
                             cancel it: no renewal is produced after this (the buyer is mailed)
  subscriptions run [--as-of DATE]
                             what the schedule does, now or as of DATE (2027-01-15, or 2027-01-15T09:00:00Z): produce the
                             renewals due (the buyer mailed a link to approve each), remind, skip; run twice, it does each once
  help                       this text

The database is the embedded one in DATA_DIR (default ./data), or the PostgreSQL server at DATABASE_URL.
The buyer is mailed when an order is placed, shipped, canceled or refunded (SMTP_URL, or .eml files in DATA_DIR/mail).
import, stock, orders, outbox and staff work while the store runs: on PostgreSQL running stores see a change when it commits (LISTEN/NOTIFY);
with the embedded database the command is run by the running store itself, through its control socket.
Configuration (environment; a bad value stops the store with one line naming the variable):
${configVariablesHelp()}
SIGTERM or SIGINT stops serve gracefully: requests under way get ${DRAIN_SECONDS} seconds to finish; a second signal stops at once.`;

/** The arguments cannot be read: one line saying why, then the usage when it helps; exit 1. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
  }
}
/** What the merchant asked for does not exist (an unknown order): one line, exit 1. */
class NotFoundError extends Error {}
/** `outbox retry` did not deliver (or a running store has not yet): one line saying so, exit 1. */
class NotDeliveredError extends Error {}

/**
 * Runs a merchant command: on the database itself (PostgreSQL, or an embedded database no store holds), or
 * through the control socket of the store that holds the embedded database. Its answer comes back inert (inertStrings).
 */
async function runMerchantCommand<T>(config: Config, held: Database | undefined, run: (commands: CliCommands) => Promise<T>): Promise<T> {
  if (held) return inertStrings(await run(await commandsOn(held, config)));
  let db: Database;
  try {
    db = await openDatabase(config);
  } catch (error) {
    if (!(error instanceof DatabaseInUseError)) throw error;
    return inertStrings(await run(remoteCommands(controlSocketPath(config.dataDir))));
  }
  try {
    return inertStrings(await run(await commandsOn(db, config)));
  } finally {
    await db.close();
  }
}

async function commandsOn(db: Database, config: Config): Promise<CliCommands> {
  await migrate(db);
  const inventory = await Inventory.load(db);
  // The provider and CAPTURE_ON the store has: a card hold captured, released or refunded here is asked of Stripe.
  const { openPaymentProvider, orderEventSubscribers, openStaff } = await import('../store.js');
  const orders = new OrderActions({ inventory, subscribers: orderEventSubscribers(config), provider: openPaymentProvider(config), captureOn: config.payment.captureOn });
  // Only stores send: a retry here makes the message due and waits for a running store to deliver it.
  const retry = (id: number) => retryWhenDue(db, id, RETRY_WAIT_MS);
  return {
    ...merchantCommands({ db, inventory, orders, retry, signingKeys: () => SigningKeys.open(db, config.signingKey), staff: openStaff(config) }),
    ...subscriptionCommands(db, (run) => withSubscriptionService(config, db, run)),
  };
}

/**
 * The store's subscription service on `db`, for one command: a store opened on it (no demo catalog seeded, no delivery),
 * closed after the command; `db` itself stays open (the caller closes it).
 */
async function withSubscriptionService<T>(config: Config, db: Database, run: (subscriptions: SubscriptionService) => Promise<T>): Promise<T> {
  const { openStore } = await import('../store.js');
  const store = await openStore(config, { db: { ...db, close: async () => {} }, seedDemo: false });
  try {
    return await run(store.subscriptions);
  } finally {
    await store.close();
  }
}

function remoteCommands(socketPath: string): CliCommands {
  return {
    ...remoteStaffCommands(socketPath),
    ...remoteSubscriptionCommands(socketPath),
    stock: () => sendControlCommand<StockListing[]>(socketPath, 'GET', '/stock'),
    setStock: (sku, onHand) => sendControlCommand<StockSet>(socketPath, 'POST', '/stock', { sku, onHand }),
    // The file itself is sent (the CLI reads a catalog only from a file), streamed as it is read.
    importCatalog: (catalog, options = {}) => sendCatalogFile(socketPath, (catalog as CatalogStream).file!, options),
    orders: () => sendControlCommand<OrderListing[]>(socketPath, 'GET', '/orders'),
    order: (idOrNumber) => sendControlCommand<OrderDetails | null>(socketPath, 'GET', `/orders/${encodeURIComponent(idOrNumber)}`),
    capture: (id, amount) => sendControlCommand<OrderDetails>(socketPath, 'POST', '/orders/capture', { id, amount }),
    fulfill: (id, request) => sendControlCommand<OrderDetails>(socketPath, 'POST', '/orders/fulfill', { id, request }),
    cancel: (id, reason) => sendControlCommand<OrderDetails>(socketPath, 'POST', '/orders/cancel', { id, reason }),
    refund: (id, amount, reason) => sendControlCommand<OrderDetails>(socketPath, 'POST', '/orders/refund', { id, amount, reason }),
    outbox: () => sendControlCommand<OutboxListing[]>(socketPath, 'GET', '/outbox'),
    retryOutbox: (id) => sendControlCommand<OutboxRetry>(socketPath, 'POST', '/outbox/retry', { id }),
    rotateSigningKey: () => sendControlCommand<{ kid: string; retired: string[] }>(socketPath, 'POST', '/signing-key/rotate'),
    buyers: () => sendControlCommand<BuyerListing[]>(socketPath, 'GET', '/buyers'),
    revokeBuyer: (email, passkeyId) => sendControlCommand<{ email: string; removed: number }>(socketPath, 'POST', '/buyers/revoke', { email, passkeyId }),
  };
}

/** The catalog in FILE, read as the import goes (never whole): a Shopify export (.csv) or a JSON catalog. */
async function catalogFile(file: string | undefined): Promise<CatalogStream> {
  if (!file) throw new UsageError('import needs a FILE (.csv or .json)');
  // A directory is refused here, before a running store is sent it (which would answer as if it were unreachable).
  if ((await stat(file).catch(() => undefined))?.isDirectory()) throw new UsageError(`cannot read ${file}: it is a directory`);
  await access(file, constants.R_OK).catch(() => {
    throw new UsageError(`cannot read ${file}`);
  });
  return CatalogStream.ofFile(file);
}

async function stock(args: string[], { say, withCommands }: CommandTools): Promise<void> {
  const [action, sku, quantity, ...extra] = args;
  if (action === undefined) {
    say(describeStock(await withCommands((commands) => commands.stock())));
    return;
  }
  if (action !== 'set') throw new UsageError(`unknown stock command "${action.slice(0, 40)}"; use: storefront stock, or storefront stock set SKU QUANTITY`);
  if (!sku || extra.length > 0) throw new UsageError('usage: storefront stock set SKU QUANTITY');
  const onHand = parseQuantity(quantity);
  const set = await withCommands((commands) => commands.setStock(sku, onHand));
  say(`${set.sku} (variant ${set.variantId}): ${set.onHand} on hand (was ${set.previous})`);
}

const ORDER_ACTIONS = 'show, capture, fulfill, cancel or refund';

/** `--name value` options after the positional arguments; an unknown option or one without its value is a usage error. */
function options(args: readonly string[], known: readonly string[], usage: string): { positional: string[]; values: Map<string, string> } {
  return readOptions(args, known, (message) => new UsageError(message, usage));
}

async function orders(args: string[], { say, withCommands }: CommandTools): Promise<void> {
  const [action, ...rest] = args;
  if (action === undefined) {
    say(describeOrders(await withCommands((commands) => commands.orders())));
    return;
  }
  const usage = ORDER_USAGE[action];
  if (!usage) throw new UsageError(`unknown orders command "${action.slice(0, 40)}"; use: storefront orders, or storefront orders ${ORDER_ACTIONS} ID`);
  const known = { show: [], capture: [], fulfill: ['tracking-number', 'tracking-url', 'carrier', 'lines'], cancel: ['reason'], refund: ['reason'] }[action] ?? [];
  const { positional, values } = options(rest, known, usage);
  const [id, amountText, ...extra] = positional;
  // refund needs an AMOUNT, capture may take one, the others take none.
  const amountAllowed = action === 'refund' || action === 'capture';
  if (!id || extra.length > 0 || (action === 'refund' && amountText === undefined) || (!amountAllowed && amountText !== undefined)) throw new UsageError(usage);
  const show = (details: OrderDetails) => say(describeOrder(details.order, details.transitions));
  switch (action) {
    case 'show': {
      const found = await withCommands((commands) => commands.order(id));
      if (!found) throw new NotFoundError(`no order has the id or number ${JSON.stringify(id.slice(0, 64))}`);
      return show(found);
    }
    case 'capture': {
      const amount = amountText === undefined ? undefined : parseAmount(amountText);
      return show(await withCommands((commands) => commands.capture(id, amount)));
    }
    case 'fulfill': {
      const lines = values.get('lines');
      const request: FulfillRequest = {
        ...(values.has('tracking-number') ? { trackingNumber: values.get('tracking-number')! } : {}),
        ...(values.has('tracking-url') ? { trackingUrl: values.get('tracking-url')! } : {}),
        ...(values.has('carrier') ? { carrier: values.get('carrier')! } : {}),
        ...(lines === undefined ? {} : { lines: parseFulfillLines(lines) }),
      };
      return show(await withCommands((commands) => commands.fulfill(id, request)));
    }
    case 'cancel':
      return show(await withCommands((commands) => commands.cancel(id, values.get('reason'))));
    case 'refund': {
      const amount = parseAmount(amountText);
      return show(await withCommands((commands) => commands.refund(id, amount, values.get('reason'))));
    }
  }
}

const ORDER_USAGE: Record<string, string> = {
  show: 'usage: storefront orders show ID (an order id, ord_..., or number, 1001 or #1001)',
  capture: 'usage: storefront orders capture ID [AMOUNT] (AMOUNT in dollars and cents, such as 12.50; all that is owed without it)',
  fulfill: 'usage: storefront orders fulfill ID [--tracking-number N] [--tracking-url URL] [--carrier NAME] [--lines LINE=QTY,...]',
  cancel: 'usage: storefront orders cancel ID [--reason TEXT]',
  refund: 'usage: storefront orders refund ID AMOUNT [--reason TEXT] (AMOUNT in dollars and cents, such as 12.50)',
};

async function outbox(args: string[], { say, withCommands }: CommandTools): Promise<void> {
  const [action, id, ...extra] = args;
  if (action === undefined) {
    say(describeOutbox(await withCommands((commands) => commands.outbox())));
    return;
  }
  if (action !== 'retry' || !id || !/^\d{1,15}$/.test(id) || extra.length > 0) throw new UsageError('usage: storefront outbox, or storefront outbox retry ID');
  const outcome = await withCommands((commands) => commands.retryOutbox(Number(id)));
  const told = describeRetry(Number(id), outcome);
  if ('delivered' in outcome && outcome.delivered) return say(told);
  throw new NotDeliveredError(told);
}

async function buyers(args: string[], { say, withCommands }: CommandTools): Promise<void> {
  const usage = 'usage: storefront buyers, or storefront buyers revoke EMAIL [--passkey ID]';
  const [action, ...rest] = args;
  if (action === undefined) {
    say(describeBuyers(await withCommands((commands) => commands.buyers())));
    return;
  }
  if (action !== 'revoke') throw new UsageError(`unknown buyers command "${action.slice(0, 40)}"; ${usage}`);
  const { positional, values } = options(rest, ['passkey'], usage);
  if (positional.length !== 1 || !positional[0]!.includes('@')) throw new UsageError(usage);
  const revoked = await withCommands((commands) => commands.revokeBuyer(positional[0]!, values.get('passkey')));
  say(`${revoked.email}: ${revoked.removed} ${revoked.removed === 1 ? 'passkey' : 'passkeys'} removed`);
}

async function dispatch(argv: readonly string[], io: CommandLine, say: Say): Promise<void> {
  const [command, ...rest] = argv;
  // Help when asked for in place of a command or its first argument: `--reason -h` is a reason, not a question.
  if (command === 'help' || command === '--help' || command === '-h' || rest[0] === '--help' || rest[0] === '-h') {
    say(USAGE);
    return;
  }
  const config = loadConfig(io.env);
  const tools: CommandTools = { say, withCommands: (run) => runMerchantCommand(config, io.database, run) };
  switch (command) {
    case 'serve':
    case undefined:
      return serve(config, io.stdout);
    case 'migrate': {
      const db = await openDatabase(config);
      try {
        const applied = await migrate(db);
        say(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await db.close();
      }
      return;
    }
    case 'import': {
      const usage = 'usage: storefront import FILE [--set-stock] [--dry-run]';
      const setStock = rest.includes('--set-stock');
      const dryRun = rest.includes('--dry-run');
      const files = rest.filter((arg) => arg !== '--set-stock' && arg !== '--dry-run');
      const unknown = files.find((arg) => arg.startsWith('--'));
      if (unknown) throw new UsageError(`unknown option ${unknown.slice(0, 40)}`, usage);
      if (files.length > 1) throw new UsageError(usage);
      const catalog = await catalogFile(files[0]);
      const report = await tools.withCommands((commands) => commands.importCatalog(catalog, { setStock, dryRun }));
      say(dryRun ? describeImportPreview(report) : describeImportWithChanges(report));
      return;
    }
    case 'stock':
      return stock(rest, tools);
    case 'orders':
      return orders(rest, tools);
    case 'outbox':
      return outbox(rest, tools);
    case 'buyers':
      return buyers(rest, tools);
    case 'staff':
      return say(await staffCommand(rest, tools.withCommands, (message) => new UsageError(message, STAFF_USAGE)));
    case 'subscriptions':
      return say(await subscriptionsCommand(rest, tools.withCommands, (message) => new UsageError(message, SUBSCRIPTIONS_USAGE), momentsIn(config.storeTimeZone)));
    case 'signing-key': {
      if (rest.length !== 1 || rest[0] !== 'rotate') throw new UsageError('usage: storefront signing-key rotate');
      const rotated = await tools.withCommands((commands) => commands.rotateSigningKey());
      say(`signing with key ${rotated.kid}; ${rotated.retired.length ? `${rotated.retired.join(', ')} retired, published 7 more days` : 'no key was retired'}`);
      return;
    }
    default:
      throw new UsageError(`unknown command "${command.slice(0, 40)}"`, USAGE);
  }
}

/** Runs `storefront ...argv`; answers the exit code: 0 done (serve: serving), 1 refused or failed, saying why on stderr. */
export async function runCommandLine(argv: readonly string[], io: CommandLine): Promise<number> {
  try {
    await dispatch(argv, io, (text) => printLines(io.stdout, text));
    return 0;
  } catch (error) {
    printLines(io.stderr, failure(error));
    return 1;
  }
}

/** Why a command failed, as the merchant reads it: one line (what it quotes made inert), and the usage when it helps. */
function failure(error: unknown): string {
  const line = (text: string) => `storefront: ${inertLine(text)}`;
  if (error instanceof ConfigError) return line(`bad configuration: ${error.message}`);
  if (error instanceof DatabaseUnreachableError) return line(`bad configuration: DATABASE_URL: ${error.message}`);
  if (error instanceof ImportError) return line(`import rejected, nothing was imported: ${error.message}`);
  if (error instanceof CommandError) return line(`${error.message}; nothing was changed`);
  if (error instanceof UsageError) return error.usage === undefined ? line(error.message) : `${line(error.message)}\n${error.usage}`;
  if (error instanceof NotFoundError || error instanceof NotDeliveredError || error instanceof DatabaseInUseError) return line(error.message);
  return line(String((error as Error)?.message ?? error));
}
