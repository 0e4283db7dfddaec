/**
 * The store's parts, opened in order: database, migrations, demo seed on an empty store, the in-memory catalog
 * and stock, and the domain services both doors call. Services take the database handle per call; the store
 * holds the one they are given outside a transaction.
 */
import type { Config } from './config.js';
import { DatabaseClosedError, openDatabase, quietDuringOutage, type Database, type Listening } from './db/database.js';
import { migrate } from './db/migrate.js';
import { Catalog, CATALOG_CHANNEL } from './catalog/catalog.js';
import { demoCatalog } from './catalog/demo-catalog.js';
import { seedCatalogIfEmpty } from './catalog/import/import-catalog.js';
import { CartService } from './cart/cart-service.js';
import { CheckoutService } from './checkout/checkout-service.js';
import { IdempotencyStore } from './idempotency/idempotency-store.js';
import { Inventory, STOCK_CHANNEL } from './inventory/inventory.js';
import { Recommendations } from './recommendations/recommendations.js';
import { CatalogSearch } from './search/catalog-search.js';
import { manualCapture, type PaymentHandler } from './payments/payment-handlers.js';
import { UCP_VERSION } from './ucp/protocol.js';

export interface Store {
  config: Config;
  db: Database;
  catalog: Catalog;
  inventory: Inventory;
  search: CatalogSearch;
  recommendations: Recommendations;
  carts: CartService;
  idempotency: IdempotencyStore;
  checkouts: CheckoutService;
  /** How approved orders are paid (manual capture: the merchant collects payment after the order). */
  payments: PaymentHandler;
  close(): Promise<void>;
}

/**
 * How often an instance polls for catalog and stock changes made by another process. On a server, other
 * instances' changes arrive by LISTEN/NOTIFY when they commit, so the poll is only a safety net. The embedded
 * database belongs to one process: its own writes refresh at once, the CLI's come through the control socket.
 */
const POLL_MS = {
  postgres: { catalog: 30_000, stock: 30_000 },
  pglite: { catalog: 2000, stock: 1000 },
} as const;
const CATALOG_REFRESH_FAILED = 'catalog refresh failed; serving the last catalog';
const STOCK_REFRESH_FAILED = 'stock refresh failed; serving the last stock levels';
/** Expired carts and idempotency keys are purged at start and this often. */
const PURGE_INTERVAL_MS = 60 * 60 * 1000;

export interface StoreOptions {
  seedDemo?: boolean;
  db?: Database;
  /** Where failures of background work (polls, purges) are reported; by default one line on stderr. */
  onBackgroundError?: (what: string, error: unknown) => void;
}

const reportOnStderr = (what: string, error: unknown) => console.error(`storefront: ${what}: ${(error as Error)?.message ?? error}`);

export async function openStore(config: Config, options: StoreOptions = {}): Promise<Store> {
  const db = options.db ?? (await openDatabase(config));
  const timers: NodeJS.Timeout[] = [];
  let listening: Listening | undefined;
  try {
    await migrate(db);
    if (options.seedDemo ?? true) await seedCatalogIfEmpty(db, demoCatalog);
    // An outage fails every poll alike: its first failure of each kind is reported, then one line a minute.
    const report = quietDuringOutage(options.onBackgroundError ?? reportOnStderr);
    // Work that began before the store closed and finds the database closed has nothing to report.
    const onError = (what: string, error: unknown) => (error instanceof DatabaseClosedError ? undefined : report(what, error));
    const catalog = await Catalog.load(db, config.baseUrl);
    const inventory = await Inventory.load(db);
    catalog.watch(db, POLL_MS[db.kind].catalog, (error) => onError(CATALOG_REFRESH_FAILED, error));
    inventory.watch(db, POLL_MS[db.kind].stock, (error) => onError(STOCK_REFRESH_FAILED, error), { full: db.kind === 'postgres' });
    if (db.kind === 'postgres') listening = await followOtherInstances(db, catalog, inventory, onError);
    const carts = await CartService.open(db, { catalog, stock: inventory, maxLineQuantity: config.cartMaxLineQuantity });
    const idempotency = new IdempotencyStore(onError);
    const payments = manualCapture(config.baseUrl, UCP_VERSION);
    const checkouts = new CheckoutService({ catalog, inventory, carts, config: config.checkout, maxLineQuantity: config.cartMaxLineQuantity, payments });
    const purge = () =>
      Promise.all([
        checkouts.expireDue(db).catch((error: unknown) => onError('checkout expiry sweep failed', error)),
        carts.purgeExpired(db).catch((error: unknown) => onError('cart purge failed', error)),
        idempotency.purgeExpired(db).catch((error: unknown) => onError('idempotency key purge failed', error)),
      ]);
    await purge();
    const purgeTimer = setInterval(() => void purge(), PURGE_INTERVAL_MS);
    purgeTimer.unref();
    timers.push(purgeTimer);
    let closing: Promise<void> | undefined;
    return {
      config,
      db,
      catalog,
      inventory,
      search: new CatalogSearch(catalog, inventory),
      recommendations: new Recommendations(catalog, inventory),
      carts,
      idempotency,
      checkouts,
      payments,
      // Background work starts nothing more, then the database waits for the work under way (a request whose
      // client has gone, a refresh already reading) before it closes. Closing twice is closing once.
      close: () =>
        (closing ??= (async () => {
          for (const timer of timers) clearInterval(timer);
          catalog.close();
          inventory.close();
          await listening?.close();
          // Before the database closes: what it could not be told of keys settled while it was away.
          await idempotency.close();
          await db.close();
        })()),
    };
  } catch (error) {
    for (const timer of timers) clearInterval(timer);
    await listening?.close();
    await db.close().catch(() => {});
    throw error;
  }
}

/**
 * Refreshes the catalog or the stock when a transaction that changed it commits, in this instance or another.
 * Refreshes coalesce (one running, one queued), so a burst of notifications costs two reads. After the listening
 * connection was lost and made again, both are refreshed once: changes in between were not announced here.
 */
function followOtherInstances(db: Database, catalog: Catalog, inventory: Inventory, onError: (what: string, error: unknown) => void): Promise<Listening> {
  const refreshCatalog = () => void catalog.refresh(db).catch((error: unknown) => onError(CATALOG_REFRESH_FAILED, error));
  const refreshStock = () => void inventory.refresh(db).catch((error: unknown) => onError(STOCK_REFRESH_FAILED, error));
  return db.listen([CATALOG_CHANNEL, STOCK_CHANNEL], (channel) => (channel === CATALOG_CHANNEL ? refreshCatalog() : refreshStock()), {
    onReconnect: () => {
      refreshCatalog();
      refreshStock();
    },
    onError: (error) => onError("the connection listening for other instances' changes was lost; reconnecting", error),
  });
}
