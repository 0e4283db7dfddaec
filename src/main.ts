#!/usr/bin/env node
/** The storefront CLI: serve | migrate | import FILE. */
import { readFile } from 'node:fs/promises';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { DatabaseInUseError, openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { ImportError } from './catalog/import/catalog-document.js';
import { importCatalog, type ImportReport } from './catalog/import/import-catalog.js';
import { parseShopifyCsv } from './catalog/import/shopify-csv.js';
import { openStore } from './store.js';

const USAGE = `usage: storefront <command>
  serve          serve the store (PORT, HOST, BASE_URL, DATA_DIR, DATABASE_URL, LOG_LEVEL)
  migrate        apply the database migrations and exit
  import FILE    import a Shopify product CSV export (.csv) or a storefront JSON catalog (.json)`;

async function serve(config: Config): Promise<void> {
  const store = await openStore(config);
  const app = await buildApp(store, { logger: true });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await store.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  await app.listen({ port: config.port, host: config.host });
  app.log.info(`storefront serving ${config.baseUrl} on ${config.databaseUrl ? 'PostgreSQL' : `embedded PostgreSQL in ${config.dataDir}`}`);
}

async function importFile(config: Config, file: string | undefined): Promise<void> {
  if (!file) throw new UsageError('import needs a FILE (.csv or .json)');
  const text = await readFile(file, 'utf8').catch(() => {
    throw new UsageError(`cannot read ${file}`);
  });
  let document: unknown;
  if (/\.csv$/i.test(file)) document = parseShopifyCsv(text);
  else {
    try {
      document = JSON.parse(text);
    } catch (error) {
      throw new ImportError('file', `not valid JSON (${(error as Error).message})`);
    }
  }
  const store = await openStore(config, { seedDemo: false });
  try {
    const report = await importCatalog(store.db, document);
    console.log(describeReport(report));
  } finally {
    await store.close();
  }
}

function describeReport(report: ImportReport): string {
  const line = (name: string, t: ImportReport['products']) =>
    `${name}: ${t.created} created, ${t.updated} changed, ${t.unchanged} unchanged${t.removed ? `, ${t.removed} removed` : ''}`;
  return ['imported', line('products', report.products), line('variants', report.variants), line('collections', report.collections)].join('\n  ');
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const config = loadConfig();
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
    case 'import':
      return importFile(config, rest[0]);
    default:
      throw new UsageError(`unknown command "${command}"\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(`storefront: bad configuration: ${error.message}`);
  else if (error instanceof ImportError) console.error(`storefront: import rejected, nothing was imported: ${error.message}`);
  else if (error instanceof UsageError || error instanceof DatabaseInUseError) console.error(`storefront: ${error.message}`);
  else console.error(`storefront: ${(error as Error).message ?? error}`);
  process.exit(1);
});
