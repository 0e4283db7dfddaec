import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { openPglite } from '../../src/db/database.js';
import { commandSession, newDataDir, runCli, runCommand, type CliResult } from '../helpers/cli.js';
import { backends, dropTestDatabases, getJson, startTestStore } from '../helpers/store.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-test-'));
after(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await dropTestDatabases();
});

const kettle = {
  products: [{ handle: 'travel-kettle', title: 'Travel Kettle', variants: [{ sku: 'KET-1', price: 3400, inventory_quantity: 4 }] }],
};

for (const backend of backends) {
  describe(`restart (${backend.name})`, () => {
    it('a restart keeps imported data and does not seed the demo catalog again', async () => {
      const dir = path.join(scratch, `restart-${backend.name}`);
      const first = await startTestStore(backend, { dir });
      await importCatalog(first.store.db, kettle);
      await first.store.catalog.refresh(first.store.db);
      await first.store.inventory.refresh(first.store.db);
      const before = (await getJson(first.app, '/collections/all/products.json?limit=250')).body.products.length;
      await first.close();

      const second = await startTestStore(backend, { dir, database: first.database });
      try {
        const kettleJson = await getJson(second.app, '/products/travel-kettle.js');
        assert.equal(kettleJson.status, 200);
        assert.equal(kettleJson.body.price, 3400);
        const after = (await getJson(second.app, '/collections/all/products.json?limit=250')).body.products.length;
        assert.equal(after, before);
      } finally {
        await second.close();
      }
    });
  });
}

describe('the storefront CLI', () => {
  // Most commands run in this process, through the function the binary runs (runCommand); a process of its own
  // (runCli) where the test is about one: its exit code, and an embedded database another process holds.
  it('a bad configuration value exits 1 with one line naming the variable', async () => {
    const oneLineNaming = (name: string, result: CliResult) => {
      assert.equal(result.code, 1, `${name}: ${result.stderr}`);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0]!, new RegExp(`\\b${name}\\b`));
    };
    // The process `storefront serve` starts exits 1.
    oneLineNaming('PORT', runCli(['serve'], { PORT: 'eighty' }));
    // The configuration is read, the same way, before any command runs: each bad value refused by that one reading.
    for (const [name, value] of [
      ['PORT', 'eighty'],
      ['BASE_URL', 'not a url'],
      ['LOG_LEVEL', 'loud'],
      ['DATABASE_URL', 'mysql://x'],
      ['RATE_LIMIT', 'maybe'],
    ] as const) {
      oneLineNaming(name, await runCommand(['migrate'], { DATA_DIR: path.join(scratch, 'never-opened'), [name]: value }));
    }
  });

  it('`storefront import` loads a Shopify CSV into the embedded database and reports what it created', async () => {
    const dataDir = newDataDir(path.join(scratch, 'cli-import'));
    const session = commandSession(() => ({ DATA_DIR: dataDir }));
    try {
      const result = await session.run('import', 'test/fixtures/shopify-products.csv');
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /products: 5 created/);
      const again = await session.run('import', 'test/fixtures/shopify-products.csv');
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /products: 0 created, 0 changed, 5 unchanged/);
    } finally {
      await session.close();
    }
  });

  it('`storefront import` of a bad file exits 1 naming row and column, and imports nothing', async () => {
    const dataDir = newDataDir(path.join(scratch, 'cli-bad'));
    const db = await openPglite(dataDir);
    try {
      const result = await runCommand(['import', 'test/fixtures/shopify-products-bad.csv'], { DATA_DIR: dataDir }, db);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /row 9, column "Variant Price"/);
      assert.match(result.stderr, /nothing was imported/);
      const tables = await db.query("select 1 from information_schema.tables where table_name = 'products'");
      const rows = tables.length ? await db.query<{ n: number }>('select count(*)::int as n from products') : [{ n: 0 }];
      assert.equal(rows[0]!.n, 0);
    } finally {
      await db.close();
    }
  });

  it('`storefront migrate` applies the migrations once', async () => {
    const dataDir = path.join(scratch, 'cli-migrate');
    const first = await runCommand(['migrate'], { DATA_DIR: dataDir });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /applied 001_catalog/);
    const second = await runCommand(['migrate'], { DATA_DIR: dataDir });
    assert.match(second.stdout, /up to date/);
  });

  it('a second process cannot open an embedded database that is in use', async () => {
    const dataDir = newDataDir(path.join(scratch, 'cli-locked'));
    const db = await openPglite(dataDir);
    try {
      const result = runCli(['migrate'], { DATA_DIR: dataDir });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /in use by process/);
    } finally {
      await db.close();
    }
  });
});
