/**
 * The store's parts, opened in order: database, migrations, demo seed on an empty store, the in-memory catalog
 * and stock, and the domain services both doors call. Services take the database handle per call; the store
 * holds the one they are given outside a transaction.
 */
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { Catalog } from './catalog/catalog.js';
import { demoCatalog } from './catalog/demo-catalog.js';
import { seedCatalogIfEmpty } from './catalog/import/import-catalog.js';
import { CartService } from './cart/cart-service.js';
import { CheckoutService } from './checkout/checkout-service.js';
import { IdempotencyStore } from './idempotency/idempotency-store.js';
import { Inventory } from './inventory/inventory.js';
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

/** How often an instance looks for catalog changes made by another process (an import, another instance). */
const CATALOG_POLL_MS = 2000;
/** How often an instance reads stock changed by another process (`storefront stock set`, another instance). */
const STOCK_POLL_MS = 1000;
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
  try {
    await migrate(db);
    if (options.seedDemo ?? true) await seedCatalogIfEmpty(db, demoCatalog);
    const onError = options.onBackgroundError ?? reportOnStderr;
    const catalog = await Catalog.load(db, config.baseUrl);
    const inventory = await Inventory.load(db);
    catalog.watch(db, CATALOG_POLL_MS, (error) => onError('catalog refresh failed; serving the last catalog', error));
    inventory.watch(db, STOCK_POLL_MS, (error) => onError('stock refresh failed; serving the last stock levels', error));
    const carts = await CartService.open(db, { catalog, stock: inventory, maxLineQuantity: config.cartMaxLineQuantity });
    const idempotency = new IdempotencyStore();
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
      async close() {
        for (const timer of timers) clearInterval(timer);
        catalog.close();
        inventory.close();
        await db.close();
      },
    };
  } catch (error) {
    for (const timer of timers) clearInterval(timer);
    await db.close().catch(() => {});
    throw error;
  }
}
