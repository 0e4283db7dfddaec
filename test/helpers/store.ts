/**
 * Test stores on both backends: embedded PGlite (in memory, or in a directory for restart tests) and a
 * PostgreSQL server (a fresh database per store, dropped on close). Every integration test runs on each.
 *
 * A new PGlite runs initdb, which takes seconds; a test store instead starts from a copy of a template
 * database the store's migrations were applied to (under a second), and, for a store with the demo catalog (most),
 * of one where the demo catalog was then seeded as `openStore` seeds it (on the embedded database that seeding is a
 * fifth of a store's start). The templates are made from the migrations and the catalog as they are when the tests
 * run: once per `npm test` run by scripts/test.mjs (files named by PGLITE_TEMPLATE_ENV, deleted after the run), or
 * else once per test process. Either way `openStore` migrates the copy and seeds an empty catalog as usual, so a
 * migration added since the template was made still applies.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp, type AppOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openPglite, openPostgres, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { demoCatalog } from '../../src/catalog/demo-catalog.js';
import { seedCatalogIfEmpty } from '../../src/catalog/import/import-catalog.js';
import { openStore, type Store } from '../../src/store.js';

export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface Backend {
  name: 'pglite' | 'postgres';
  /**
   * Opens an empty database; `dir` (PGlite) persists it, `database` (PostgreSQL) reopens an existing one.
   * With `migrated`, a new database may already hold the store's migrations (a copy of the run's template); with
   * `demo` too, the demo catalog as well.
   */
  open(options?: { dir?: string; database?: string; migrated?: boolean; demo?: boolean }): Promise<{ db: Database; database?: string }>;
}

/**
 * Names the file holding a dumped, migrated PGlite data directory made for this test run (scripts/test.mjs); the
 * one with the demo catalog seeded too is beside it (demoTemplateFile).
 */
export const PGLITE_TEMPLATE_ENV = 'STOREFRONT_TEST_PGLITE_TEMPLATE';

/**
 * A test store's PGlite starts with a smaller page cache than the store's default (shared_buffers 128MB, zeroed at
 * every start): a test database holds a few hundred rows, and the suite starts hundreds of them.
 */
const TEST_PGLITE_SETTINGS = { shared_buffers: '8MB', max_connections: '20' };

const demoTemplateFile = (file: string) => `${file}.demo`;

interface Templates<T> {
  migrated: T;
  demo: T;
}

/**
 * A new PGlite with the store's migrations applied, dumped (uncompressed: loads fastest); then with the demo catalog
 * seeded, dumped again. Without the databases initdb makes for `create database` to copy (template0, template1),
 * which no store and no test creates: they are half of the dump's files, and PGlite writes every file of it into a
 * new store's memory (a start 30% quicker).
 */
async function dumpPgliteTemplates(): Promise<Templates<ArrayBuffer>> {
  const db = await openPglite(undefined, { settings: TEST_PGLITE_SETTINGS });
  try {
    await migrate(db);
    for (const template of ['template0', 'template1']) {
      await db.exec(`alter database ${template} is_template false`);
      await db.exec(`drop database ${template}`);
    }
    const migrated = await (await db.dumpDataDir!()).arrayBuffer();
    await seedCatalogIfEmpty(db, demoCatalog);
    return { migrated, demo: await (await db.dumpDataDir!()).arrayBuffer() };
  } finally {
    await db.close();
  }
}

/** Writes the PGlite templates to `file` and beside it (scripts/test.mjs, once per run, before the test processes start). */
export async function writePgliteTemplate(file: string): Promise<void> {
  const { migrated, demo } = await dumpPgliteTemplates();
  writeFileSync(file, Buffer.from(migrated));
  writeFileSync(demoTemplateFile(file), Buffer.from(demo));
}

/**
 * The template as PGlite reads it: its bytes, read once per process and handed to every store as they are (PGlite
 * reads them and copies each file out). Node's own Blob#arrayBuffer() reads a 40 MB blob in small pieces and joins
 * them, about 0.4 s of CPU for every store started.
 */
class TemplateBlob extends Blob {
  readonly #template: ArrayBuffer;

  constructor(template: ArrayBuffer) {
    super([template]);
    this.#template = template;
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#template);
  }
}

let pgliteTemplates: Promise<Templates<Blob>> | undefined;

/** The templates: the run's files when scripts/test.mjs made them, else made once in this process. */
async function pgliteTemplate(kind: keyof Templates<Blob>): Promise<Blob> {
  const file = process.env[PGLITE_TEMPLATE_ENV];
  const read = (at: string) => new Uint8Array(readFileSync(at)).buffer;
  pgliteTemplates ??= (file && existsSync(file) ? Promise.resolve({ migrated: read(file), demo: read(demoTemplateFile(file)) }) : dumpPgliteTemplates())
    .then(({ migrated, demo }) => ({ migrated: new TemplateBlob(migrated), demo: new TemplateBlob(demo) }))
    .catch((error: unknown) => {
      pgliteTemplates = undefined; // the next store tries again
      throw error;
    });
  return (await pgliteTemplates)[kind];
}

/**
 * Names a PostgreSQL database the store's migrations were applied to, made for this test run (scripts/test.mjs): a
 * test store's database is created from it (`create database … template …`, about 60 ms) instead of empty and then
 * migrated (about 250 ms); from the one named with `_demo` after it when the store has the demo catalog. No
 * connection to either may stay open: PostgreSQL copies only a template nobody uses.
 */
export const POSTGRES_TEMPLATE_ENV = 'STOREFRONT_TEST_POSTGRES_TEMPLATE';

/** The demo catalog's template beside the run's (scripts/test.mjs drops both at the end of the run). */
const demoTemplateDatabase = (name: string) => `${name}_demo`;

/** Creates the databases `name` (migrated) and `name`_demo (the demo catalog too) (scripts/test.mjs, once per run). */
export async function writePostgresTemplate(name: string): Promise<void> {
  for (const [database, demo] of [[name, false], [demoTemplateDatabase(name), true]] as const) {
    await adminQuery(`create database ${database}`);
    // Once per run, while the machine may be busiest (CI runs the reference clients beside it): a connection that is
    // slow to come, or a migration slow to run on a loaded disk, waits rather than failing the run.
    const db = await openPostgres(databaseUrl(database), { poolSize: 1, connectionTimeoutMs: 30_000, statementTimeoutMs: 120_000 });
    try {
      await migrate(db);
      if (demo) await seedCatalogIfEmpty(db, demoCatalog);
    } finally {
      await db.close();
    }
  }
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function databaseUrl(database: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

const created: string[] = [];

/** Both backends, whatever STOREFRONT_TEST_BACKENDS says (for a test whose setups each name theirs). */
export const ALL_BACKENDS: Backend[] = [
  {
    name: 'pglite',
    async open(options = {}) {
      // A directory that already holds a database (a restart) is opened as it is.
      const fresh = !options.dir || !existsSync(path.join(options.dir, 'PG_VERSION'));
      if (!options.migrated || !fresh) return { db: await openPglite(options.dir, { settings: TEST_PGLITE_SETTINGS }) };
      const loadDataDir = await pgliteTemplate(options.demo ? 'demo' : 'migrated');
      return { db: await openPglite(options.dir, { loadDataDir, settings: TEST_PGLITE_SETTINGS }) };
    },
  },
  {
    name: 'postgres',
    async open(options = {}) {
      let database = options.database;
      if (!database) {
        database = `sf_test_${randomBytes(6).toString('hex')}`;
        const runTemplate = options.migrated ? process.env[POSTGRES_TEMPLATE_ENV] : undefined;
        const template = runTemplate && options.demo ? demoTemplateDatabase(runTemplate) : runTemplate;
        await adminQuery(template ? `create database ${database} template ${template}` : `create database ${database}`);
        created.push(database);
      }
      return { db: await openPostgres(databaseUrl(database), { poolSize: 20 }), database };
    },
  },
];

/**
 * The backends every store test runs on: both, unless STOREFRONT_TEST_BACKENDS names some (a comma list). CI's second
 * runtime (Node 24) runs most of its tests on the embedded one alone: what it checks there is the runtime's, not the
 * database's (its database-layer tests run on both).
 */
const onlyBackends = (process.env.STOREFRONT_TEST_BACKENDS ?? '').split(',').map((name) => name.trim()).filter(Boolean);
export const backends: Backend[] = onlyBackends.length ? ALL_BACKENDS.filter((backend) => onlyBackends.includes(backend.name)) : ALL_BACKENDS;
if (backends.length === 0) throw new Error(`STOREFRONT_TEST_BACKENDS names no backend (pglite, postgres): "${process.env.STOREFRONT_TEST_BACKENDS}"`);

/** Drops the PostgreSQL databases this test file created (call in an `after` hook). */
export async function dropTestDatabases(): Promise<void> {
  while (created.length) {
    const database = created.pop()!;
    await adminQuery(`drop database if exists ${database} with (force)`).catch(() => {});
  }
}

/**
 * A test store's configuration. Rate limits are off unless a test turns them on (`rateLimit: true`): the tests of
 * other behaviour send more requests from one address in a minute than a shopper would, and the limits have tests
 * of their own (test/http/rate-limit.test.ts, test/ucp/rate-limit.test.ts, the scale-out and Redis outage tests).
 *
 * Approvals ask for no proof (APPROVAL_PROOF=link) unless a test asks for it: the tests of what an approval does
 * (stock, orders, payments, events, races) call the domain as the page does once the buyer is proven. The proof
 * has tests of its own, and the agent flows (test/e2e, conformance/ucp-cli.sh) run with the default, through it:
 * test/checkout/buyer-proof.test.ts, test/checkout/passkey-proof.test.ts, test/storefront/buyer-proof-browser.test.ts.
 */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({ BASE_URL: 'http://store.test', DATA_DIR: 'unused', APPROVAL_PROOF: 'link' }), rateLimit: false, ...overrides };
}

export interface TestStore {
  store: Store;
  app: FastifyInstance;
  database?: string;
  close(): Promise<void>;
}

export async function startTestStore(
  backend: Backend,
  options: { seedDemo?: boolean; config?: Partial<Config>; dir?: string; database?: string; app?: AppOptions; deliver?: boolean; clock?: () => Date } = {},
): Promise<TestStore> {
  const seedDemo = options.seedDemo ?? true;
  const { db, database } = await backend.open({ dir: options.dir, database: options.database, migrated: true, demo: seedDemo });
  // The outbox is delivered only by the tests of delivery (mail to a loopback SMTP server, webhooks to a loopback receiver).
  const store = await openStore(testConfig(options.config), { db, seedDemo, deliver: options.deliver ?? false, clock: options.clock });
  const app = await buildApp(store, options.app);
  return {
    store,
    app,
    database,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

/** GET through the app without a socket; returns status, headers and the parsed JSON body. */
export async function getJson(app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'GET', url, headers });
  return { status: response.statusCode, headers: response.headers, body: parseBody(response.body), raw: response.body };
}

export function parseBody(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A second instance of the store on the same database: its own app, cart service, queue and cache. On
 * PostgreSQL it opens its own pool; PGlite is embedded, so it shares the database object, as a second
 * process would share a server.
 */
export async function startSecondInstance(backend: Backend, first: TestStore, config: Partial<Config> = {}): Promise<TestStore> {
  if (backend.name === 'postgres') return startTestStore(backend, { database: first.database, config });
  const store: Store = { ...first.store, config: { ...first.store.config, ...config } };
  const app = await buildApp(store);
  return { store, app, close: () => app.close() };
}
