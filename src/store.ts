/** The store's parts, opened in order: database, migrations, demo seed on an empty store, in-memory catalog. */
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { Catalog } from './catalog/catalog.js';
import { demoCatalog } from './catalog/demo-catalog.js';
import { seedCatalogIfEmpty } from './catalog/import/import-catalog.js';
import { Recommendations } from './recommendations/recommendations.js';
import { CatalogSearch } from './search/catalog-search.js';

export interface Store {
  config: Config;
  db: Database;
  catalog: Catalog;
  search: CatalogSearch;
  recommendations: Recommendations;
  close(): Promise<void>;
}

/** How often an instance on a shared database server looks for catalog changes made by other instances. */
const CATALOG_POLL_MS = 2000;

export interface StoreOptions {
  seedDemo?: boolean;
  db?: Database;
  /** Where failures of background work (the catalog poll) are reported; by default one line on stderr. */
  onBackgroundError?: (what: string, error: unknown) => void;
}

const reportOnStderr = (what: string, error: unknown) => console.error(`storefront: ${what}: ${(error as Error)?.message ?? error}`);

export async function openStore(config: Config, options: StoreOptions = {}): Promise<Store> {
  const db = options.db ?? (await openDatabase(config));
  try {
    await migrate(db);
    if (options.seedDemo ?? true) await seedCatalogIfEmpty(db, demoCatalog);
    const catalog = await Catalog.load(db, config.baseUrl);
    const onError = options.onBackgroundError ?? reportOnStderr;
    if (db.kind === 'postgres') catalog.watch(CATALOG_POLL_MS, (error) => onError('catalog refresh failed; serving the last catalog', error));
    return {
      config,
      db,
      catalog,
      search: new CatalogSearch(catalog),
      recommendations: new Recommendations(catalog),
      async close() {
        catalog.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }
}
