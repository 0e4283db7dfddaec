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

export async function openStore(config: Config, options: { seedDemo?: boolean; db?: Database } = {}): Promise<Store> {
  const db = options.db ?? (await openDatabase(config));
  try {
    await migrate(db);
    if (options.seedDemo ?? true) await seedCatalogIfEmpty(db, demoCatalog);
    const catalog = await Catalog.load(db, config.baseUrl);
    if (db.kind === 'postgres') catalog.watch(CATALOG_POLL_MS, () => {});
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
