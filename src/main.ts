#!/usr/bin/env node
/** The storefront CLI: serve | migrate | import FILE | stock [set SKU QUANTITY] | orders [show|capture|fulfill|cancel|refund ID] | outbox [retry ID]. */
import { access, constants, stat } from 'node:fs/promises';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { ImportError } from './catalog/import/catalog-document.js';
import { CatalogStream } from './catalog/import/catalog-stream.js';
import { controlSocketPath, sendCatalogFile, sendControlCommand } from './cli/control-socket.js';
import {
  CommandError,
  describeBuyers,
  describeImport,
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
} from './cli/merchant-commands.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { DatabaseInUseError, DatabaseUnreachableError, openDatabase, type Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import type { StockListing } from './inventory/inventory-store.js';
import { Inventory } from './inventory/inventory.js';
import { OrderActions } from './orders/order-actions.js';
import { retryWhenDue, type OutboxListing } from './outbox/outbox-dispatcher.js';
import { startBanner } from './cli/start-banner.js';
import { configVariablesHelp } from './config-variables.js';
import { orderEventSubscribers } from './orders/order-event-subscribers.js';
import { SigningKeys } from './ucp/webhooks/signing-keys.js';

/** How long requests under way may take to finish once serve is asked to stop. */
const DRAIN_SECONDS = 10;
/**
 * After the drain, how long closing the store (it waits up to CLOSE_WAIT_MS for the database work of requests whose
 * clients left) and writing out the log may take before the process exits anyway.
 */
const STOP_GRACE_SECONDS = 5;

const USAGE = `usage: storefront <command> [arguments]

  serve                      serve the store (the default): migrates, seeds the demo catalog into an empty store
  migrate                    apply the database migrations and exit
  import FILE [--set-stock]  import a Shopify product CSV export (.csv) or a storefront JSON catalog (.json); new variants
                             get the file's stock, existing ones keep theirs (sales since the export) unless --set-stock
  stock                      list every variant: SKU, variant id, product, units on hand, units backordered
  stock set SKU QUANTITY     set a variant's units on hand (a whole number from 0)
  orders                     list the ${ORDER_LIST_LIMIT} newest orders: number, id, time, buyer email, total, status, agent or browser
  orders show ID             one order (ID is its id, ord_..., or its number, 1001 or #1001): lines, totals, address,
                             payment, shipments, refunds, and every change of its checkout's status (when, from, to, by whom, why)
  orders capture ID          the payment was received: the order is paid
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
  help                       this text

The database is the embedded one in DATA_DIR (default ./data), or the PostgreSQL server at DATABASE_URL.
The buyer is mailed when an order is placed, shipped, canceled or refunded (SMTP_URL, or .eml files in DATA_DIR/mail).
import, stock, orders and outbox work while the store runs: on PostgreSQL running stores see a change when it commits (LISTEN/NOTIFY);
with the embedded database the command is run by the running store itself, through its control socket.
Configuration (environment; a bad value stops the store with one line naming the variable):
${configVariablesHelp()}
SIGTERM or SIGINT stops serve gracefully: requests under way get ${DRAIN_SECONDS} seconds to finish; a second signal stops at once.`;

class UsageError extends Error {}
/** What the merchant asked for does not exist (an unknown order): one line, exit 1. */
class NotFoundError extends Error {}

/** Exits 1, saying why, if the process is still running DRAIN_SECONDS + STOP_GRACE_SECONDS from now. */
function exitIfStillRunning(why: string): void {
  setTimeout(() => {
    process.stderr.write(`storefront: ${why}; exiting\n`);
    process.exit(1);
  }, (DRAIN_SECONDS + STOP_GRACE_SECONDS) * 1000).unref();
}

/** A HOST naming no address stops the start before the database is opened, in one line naming HOST. */
async function listenAddressOrThrow(host: string): Promise<void> {
  if (isIP(host)) return;
  try {
    await lookup(host);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ConfigError('HOST', `"${host.slice(0, 80)}" names no address of this machine (${typeof code === 'string' ? code : 'not resolved'})`);
  }
}

async function serve(config: Config): Promise<void> {
  // A signal may come while the store starts (a deploy that changes its mind, an orchestrator's timeout): the
  // database being opened, migrated or seeded is let finish and closed, then the process exits 0, never cut short
  // mid-write. Once the app exists, `shutdown` below takes over.
  let stopWhileStarting: string | undefined;
  let shutdown: ((signal: string) => Promise<void>) | undefined = undefined;
  const onSignal = (signal: string) => {
    if (shutdown) return void shutdown(signal);
    if (stopWhileStarting) process.exit(1);
    stopWhileStarting = signal;
    process.stderr.write(`storefront: ${signal} while starting: stopping once the store has started (a second signal exits at once)\n`);
    // A start that cannot finish (a database server that does not answer, a migration waiting on a lock) still ends.
    exitIfStillRunning(`the start did not finish within ${DRAIN_SECONDS + STOP_GRACE_SECONDS} s of ${signal}`);
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  await listenAddressOrThrow(config.host);
  // The store and its app are loaded by serve alone: the merchant's commands (and a usage error) start without them.
  const [{ openStore }, { buildApp }, { flushRequestLog }, { serveControlSocket }, { storeCommands }] = await Promise.all([
    import('./store.js'),
    import('./app.js'),
    import('./http/request-log.js'),
    import('./cli/control-socket.js'),
    import('./cli/merchant-commands.js'),
  ]);
  const store = await openStore(config, { deliver: true });
  if (stopWhileStarting) {
    await store.close();
    process.stderr.write('storefront: stopped before serving\n');
    process.exit(0);
  }
  const app = await buildApp(store, { logger: true });
  // The embedded database belongs to this process: the merchant's commands reach it through this socket.
  const control = config.databaseUrl
    ? undefined
    : await serveControlSocket(
        controlSocketPath(config.dataDir),
        storeCommands(store),
      );
  let closing = false;
  let listening: Promise<unknown> | undefined = undefined;
  // Stop accepting connections on both sockets, let the requests under way finish (closing what is left after
  // DRAIN_SECONDS), then stop the background work and close the database. A second signal exits at once.
  shutdown = async (signal: string) => {
    if (closing) {
      app.log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    closing = true;
    app.log.info({ signal }, `shutting down: requests under way have ${DRAIN_SECONDS} s to finish`);
    const deadline = setTimeout(() => {
      app.log.warn('requests still under way after the drain: closing their connections');
      app.server.closeAllConnections();
      control?.closeAllConnections();
    }, DRAIN_SECONDS * 1000);
    // Whatever hangs past the drain (the database's close, a log that cannot be written), the process still ends.
    exitIfStillRunning(`shutdown did not finish within ${DRAIN_SECONDS + STOP_GRACE_SECONDS} s`);
    try {
      // A signal during listen: the socket is bound (or failed to be) before it is closed.
      await listening?.catch(() => {});
      // Both at once: waiting first for a slow merchant command on the control socket would keep the app taking
      // requests past the drain's deadline, and nothing would then bound the app's close.
      await Promise.all([control?.close(), app.close()]);
      clearTimeout(deadline);
      await store.close();
      app.log.info('stopped');
      // The log is written in the background: what it still holds goes out before the process ends.
      await flushRequestLog(app.log);
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      await flushRequestLog(app.log);
      process.exit(1);
    }
  };
  // A signal that came while the app was being built.
  if (stopWhileStarting) return shutdown(stopWhileStarting);
  listening = app.listen({ port: config.port, host: config.host });
  try {
    await listening;
  } catch (error) {
    // A signal's shutdown is under way and closes everything itself; otherwise (the port taken, say) the store
    // and its sockets are closed before the error ends the process.
    if (closing) return;
    closing = true;
    await Promise.all([control?.close(), app.close()]).catch(() => {});
    await store.close().catch(() => {});
    throw error;
  }
  if (closing) return;
  app.log.info(`storefront serving ${config.baseUrl} on ${config.databaseUrl ? 'PostgreSQL' : `embedded PostgreSQL in ${config.dataDir}`}`);
  if (process.stdout.isTTY) process.stdout.write(`\n${startBanner(config, store.catalog.snapshot)}\n\n`);
  if (config.checkout.approvalProof === 'passkey-or-code' && isIP(new URL(config.baseUrl).hostname.replace(/^\[|\]$/g, ''))) {
    app.log.warn('BASE_URL names an IP address, which passkeys cannot be bound to: buyers approve with a mailed code only; give BASE_URL a host name to offer passkeys');
  }
  if (config.checkout.approvalProof === 'link') {
    app.log.warn('APPROVAL_PROOF=link: approval pages ask for no proof, so whoever holds an approval link (an agent too) can place the order; for development only');
  }
}

/**
 * Runs a merchant command: on the database itself (PostgreSQL, or an embedded database no store holds), or
 * through the control socket of the store that holds the embedded database.
 */
async function withCommands<T>(config: Config, run: (commands: MerchantCommands) => Promise<T>): Promise<T> {
  let db: Database;
  try {
    db = await openDatabase(config);
  } catch (error) {
    if (!(error instanceof DatabaseInUseError)) throw error;
    return run(remoteCommands(controlSocketPath(config.dataDir)));
  }
  try {
    await migrate(db);
    const inventory = await Inventory.load(db);
    const orders = new OrderActions({ inventory, subscribers: orderEventSubscribers(config) });
    // Only stores send: a retry here makes the message due and waits for a running store to deliver it.
    const retry = (id: number) => retryWhenDue(db, id, RETRY_WAIT_MS);
    return await run(merchantCommands({ db, inventory, orders, retry, signingKeys: () => SigningKeys.open(db, config.signingKey) }));
  } finally {
    await db.close();
  }
}

function remoteCommands(socketPath: string): MerchantCommands {
  return {
    stock: () => sendControlCommand<StockListing[]>(socketPath, 'GET', '/stock'),
    setStock: (sku, onHand) => sendControlCommand<StockSet>(socketPath, 'POST', '/stock', { sku, onHand }),
    // The file itself is sent (main reads a catalog only from a file), streamed as it is read.
    importCatalog: (catalog, options = {}) => sendCatalogFile(socketPath, (catalog as CatalogStream).file!, options),
    orders: () => sendControlCommand<OrderListing[]>(socketPath, 'GET', '/orders'),
    order: (idOrNumber) => sendControlCommand<OrderDetails | null>(socketPath, 'GET', `/orders/${encodeURIComponent(idOrNumber)}`),
    capture: (id) => sendControlCommand<OrderDetails>(socketPath, 'POST', '/orders/capture', { id }),
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

async function stock(config: Config, args: string[]): Promise<void> {
  const [action, sku, quantity, ...extra] = args;
  if (action === undefined) {
    console.log(describeStock(await withCommands(config, (commands) => commands.stock())));
    return;
  }
  if (action !== 'set') throw new UsageError(`unknown stock command "${action.slice(0, 40)}"; use: storefront stock, or storefront stock set SKU QUANTITY`);
  if (!sku || extra.length > 0) throw new UsageError('usage: storefront stock set SKU QUANTITY');
  const onHand = parseQuantity(quantity);
  const set = await withCommands(config, (commands) => commands.setStock(sku, onHand));
  console.log(`${set.sku} (variant ${set.variantId}): ${set.onHand} on hand (was ${set.previous})`);
}

const ORDER_ACTIONS = 'show, capture, fulfill, cancel or refund';

/** `--name value` options after the positional arguments; an unknown option or one without its value is a usage error. */
function options(args: readonly string[], known: readonly string[], usage: string): { positional: string[]; values: Map<string, string> } {
  const positional: string[] = [];
  const values = new Map<string, string>();
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (!known.includes(name)) throw new UsageError(`unknown option --${name.slice(0, 40)}\n${usage}`);
    const value = inline ?? args[++index];
    if (value === undefined) throw new UsageError(`--${name} needs a value\n${usage}`);
    values.set(name, value);
  }
  return { positional, values };
}

async function orders(config: Config, args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === undefined) {
    console.log(describeOrders(await withCommands(config, (commands) => commands.orders())));
    return;
  }
  const usage = ORDER_USAGE[action];
  if (!usage) throw new UsageError(`unknown orders command "${action.slice(0, 40)}"; use: storefront orders, or storefront orders ${ORDER_ACTIONS} ID`);
  const known = { show: [], capture: [], fulfill: ['tracking-number', 'tracking-url', 'carrier', 'lines'], cancel: ['reason'], refund: ['reason'] }[action] ?? [];
  const { positional, values } = options(rest, known, usage);
  const [id, amountText, ...extra] = positional;
  if (!id || extra.length > 0 || (action === 'refund') !== (amountText !== undefined)) throw new UsageError(usage);
  const show = (details: OrderDetails) => console.log(describeOrder(details.order, details.transitions));
  switch (action) {
    case 'show': {
      const found = await withCommands(config, (commands) => commands.order(id));
      if (!found) throw new NotFoundError(`no order has the id or number ${JSON.stringify(id.slice(0, 64))}`);
      return show(found);
    }
    case 'capture':
      return show(await withCommands(config, (commands) => commands.capture(id)));
    case 'fulfill': {
      const lines = values.get('lines');
      const request: FulfillRequest = {
        ...(values.has('tracking-number') ? { trackingNumber: values.get('tracking-number')! } : {}),
        ...(values.has('tracking-url') ? { trackingUrl: values.get('tracking-url')! } : {}),
        ...(values.has('carrier') ? { carrier: values.get('carrier')! } : {}),
        ...(lines === undefined ? {} : { lines: parseFulfillLines(lines) }),
      };
      return show(await withCommands(config, (commands) => commands.fulfill(id, request)));
    }
    case 'cancel':
      return show(await withCommands(config, (commands) => commands.cancel(id, values.get('reason'))));
    case 'refund': {
      const amount = parseAmount(amountText);
      return show(await withCommands(config, (commands) => commands.refund(id, amount, values.get('reason'))));
    }
  }
}

const ORDER_USAGE: Record<string, string> = {
  show: 'usage: storefront orders show ID (an order id, ord_..., or number, 1001 or #1001)',
  capture: 'usage: storefront orders capture ID',
  fulfill: 'usage: storefront orders fulfill ID [--tracking-number N] [--tracking-url URL] [--carrier NAME] [--lines LINE=QTY,...]',
  cancel: 'usage: storefront orders cancel ID [--reason TEXT]',
  refund: 'usage: storefront orders refund ID AMOUNT [--reason TEXT] (AMOUNT in dollars and cents, such as 12.50)',
};

async function outbox(config: Config, args: string[]): Promise<void> {
  const [action, id, ...extra] = args;
  if (action === undefined) {
    console.log(describeOutbox(await withCommands(config, (commands) => commands.outbox())));
    return;
  }
  if (action !== 'retry' || !id || !/^\d{1,15}$/.test(id) || extra.length > 0) throw new UsageError('usage: storefront outbox, or storefront outbox retry ID');
  const outcome = await withCommands(config, (commands) => commands.retryOutbox(Number(id)));
  const told = describeRetry(Number(id), outcome);
  if ('delivered' in outcome && outcome.delivered) return console.log(told);
  console.error(`storefront: ${told}`);
  process.exitCode = 1;
}

async function buyers(config: Config, args: string[]): Promise<void> {
  const usage = 'usage: storefront buyers, or storefront buyers revoke EMAIL [--passkey ID]';
  const [action, ...rest] = args;
  if (action === undefined) {
    console.log(describeBuyers(await withCommands(config, (commands) => commands.buyers())));
    return;
  }
  if (action !== 'revoke') throw new UsageError(`unknown buyers command "${action.slice(0, 40)}"; ${usage}`);
  const { positional, values } = options(rest, ['passkey'], usage);
  if (positional.length !== 1 || !positional[0]!.includes('@')) throw new UsageError(usage);
  const revoked = await withCommands(config, (commands) => commands.revokeBuyer(positional[0]!, values.get('passkey')));
  console.log(`${revoked.email}: ${revoked.removed} ${revoked.removed === 1 ? 'passkey' : 'passkeys'} removed`);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  // Help when asked for in place of a command or its first argument: `--reason -h` is a reason, not a question.
  if (command === 'help' || command === '--help' || command === '-h' || rest[0] === '--help' || rest[0] === '-h') {
    console.log(USAGE);
    return;
  }
  const config = loadConfig();
  // A command that opens the embedded database for a moment (all but serve, and import, which may write for minutes)
  // runs its WebAssembly on V8's baseline compiler alone: optimising PostgreSQL's code cost a command more CPU than
  // the command itself (`storefront stock` took about 2x as long). Set before the database's module is compiled.
  if (command !== undefined && command !== 'serve' && command !== 'import') setFlagsFromString('--liftoff-only');
  switch (command) {
    case 'serve':
    case undefined:
      return serve(config);
    case 'migrate': {
      const db = await openDatabase(config);
      try {
        const applied = await migrate(db);
        console.log(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await db.close();
      }
      return;
    }
    case 'import': {
      const usage = 'usage: storefront import FILE [--set-stock]';
      const setStock = rest.includes('--set-stock');
      const files = rest.filter((arg) => arg !== '--set-stock');
      const unknown = files.find((arg) => arg.startsWith('--'));
      if (unknown) throw new UsageError(`unknown option ${unknown.slice(0, 40)}\n${usage}`);
      if (files.length > 1) throw new UsageError(usage);
      const catalog = await catalogFile(files[0]);
      console.log(describeImport(await withCommands(config, (commands) => commands.importCatalog(catalog, { setStock }))));
      return;
    }
    case 'stock':
      return stock(config, rest);
    case 'orders':
      return orders(config, rest);
    case 'outbox':
      return outbox(config, rest);
    case 'buyers':
      return buyers(config, rest);
    case 'signing-key': {
      if (rest.length !== 1 || rest[0] !== 'rotate') throw new UsageError('usage: storefront signing-key rotate');
      const rotated = await withCommands(config, (commands) => commands.rotateSigningKey());
      console.log(`signing with key ${rotated.kid}; ${rotated.retired.length ? `${rotated.retired.join(', ')} retired, published 7 more days` : 'no key was retired'}`);
      return;
    }
    default:
      throw new UsageError(`unknown command "${command.slice(0, 40)}"\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(`storefront: bad configuration: ${error.message}`);
  else if (error instanceof DatabaseUnreachableError) console.error(`storefront: bad configuration: DATABASE_URL: ${error.message}`);
  else if (error instanceof ImportError) console.error(`storefront: import rejected, nothing was imported: ${error.message}`);
  else if (error instanceof CommandError) console.error(`storefront: ${error.message}; nothing was changed`);
  else if (error instanceof UsageError || error instanceof NotFoundError || error instanceof DatabaseInUseError) console.error(`storefront: ${error.message}`);
  else console.error(`storefront: ${(error as Error).message ?? error}`);
  process.exit(1);
});
