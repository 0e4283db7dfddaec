/**
 * `storefront import` streams: a catalog file is read a product at a time and written a batch at a time, in one
 * transaction, so a fault anywhere in the file still leaves nothing imported, and the import holds a batch, not
 * the file. Batches are made small here (productsPerBatch) so that a file of a few hundred products spans several.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateCatalog } from '../../bench/generated-catalog.js';
import { ImportError, type CatalogDocument } from '../../src/catalog/import/catalog-document.js';
import { CatalogStream } from '../../src/catalog/import/catalog-stream.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { sendCatalogFile, serveControlSocket } from '../../src/cli/control-socket.js';
import { storeCommands } from '../../src/cli/merchant-commands.js';
import type { Database, Queryable } from '../../src/db/database.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-import-streaming-'));
after(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await dropTestDatabases();
});

let files = 0;
function writeFile(extension: string, text: string): string {
  const file = path.join(scratch, `catalog-${files++}.${extension}`);
  writeFileSync(file, text);
  return file;
}

/** A catalog of `size` generated products, with handles and SKUs of their own (`prefix`) so files can be imported side by side. */
function catalogOf(size: number, prefix: string): CatalogDocument {
  const { products } = generateCatalog(size);
  return {
    products: products.map((product, p) => ({
      ...product,
      handle: `${prefix}-${product.handle}`,
      variants: product.variants.map((variant, v) => ({ ...variant, sku: `${prefix}-${p}-${v}` })),
    })),
  };
}

/** The store's database, with the size of every batch of products written through it (an `insert into products`). */
function countingBatches(db: Database): { db: Database; batches: number[] } {
  const batches: number[] = [];
  const counted = (tx: Queryable): Queryable['query'] => (sql, params) => {
    if (/^\s*insert into products/.test(sql)) batches.push((JSON.parse(params![0] as string) as unknown[]).length);
    return tx.query(sql, params);
  };
  return { batches, db: { ...db, transaction: (fn) => db.transaction((tx) => fn({ ...tx, query: counted(tx) })) } };
}

async function counts(t: TestStore) {
  const [row] = await t.store.db.query<{ products: number; variants: number }>(
    'select (select count(*)::int from products) as products, (select count(*)::int from variants) as variants',
  );
  return row!;
}

async function rejectsAt(importing: Promise<unknown>, where: string, problem?: RegExp): Promise<void> {
  await assert.rejects(importing, (error: unknown) => {
    assert.ok(error instanceof ImportError, String(error));
    assert.equal(error.where, where);
    if (problem) assert.match(error.message, problem);
    return true;
  });
}

/** A Shopify export of `size` products with two sizes each; `apart` puts the second row of the first product last. */
function shopifyCsv(size: number, prefix: string, options: { apart?: boolean; badPriceOnRow?: number } = {}): string {
  const rows: string[] = [];
  for (let i = 0; i < size; i++) {
    rows.push(`${prefix}-${i},Tea No. ${i},Size,Small,${prefix}-${i}-S,4.50`);
    rows.push(`${prefix}-${i},,,Large,${prefix}-${i}-L,8.00`);
  }
  if (options.apart) rows.push(rows.splice(1, 1)[0]!);
  // The header is row 1.
  if (options.badPriceOnRow !== undefined) rows[options.badPriceOnRow - 2] = rows[options.badPriceOnRow - 2]!.replace(/[\d.]+$/, '8.0x');
  return ['Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price', ...rows].join('\n') + '\n';
}

/** How many of this process's file descriptors are open on `file`. */
function descriptorsOn(file: string): number {
  const target = realpathSync(file);
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === target;
    } catch {
      return false; // closed meanwhile (the descriptor readdir itself used, among others)
    }
  }).length;
}

/** The descriptors still open on `file` once its closing has had its chance (a stream closes its file a moment after it is destroyed). */
async function descriptorsLeftOn(file: string): Promise<number> {
  for (let wait = 0; wait < 100 && descriptorsOn(file) > 0; wait++) await sleep(20);
  return descriptorsOn(file);
}

/** The products of these handles in id order: the order the storefront lists them in. */
async function handlesInIdOrder(t: TestStore, handles: string[]): Promise<string[]> {
  const rows = await t.store.db.query<{ handle: string }>('select handle from products where handle = any($1::text[]) order by id', [handles]);
  return rows.map((row) => row.handle);
}

for (const backend of backends) {
  describe(`streaming catalog import (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('a JSON catalog file is written a batch at a time: 250 products as 100, 100 and 50, every product and variant there', async () => {
      const before = await counts(t);
      const catalog = catalogOf(250, 'batched');
      const { db, batches } = countingBatches(t.store.db);
      const report = await importCatalog(db, CatalogStream.ofFile(writeFile('json', JSON.stringify(catalog))), { productsPerBatch: 100 });
      assert.deepEqual(batches, [100, 100, 50]);
      const variants = catalog.products.reduce((sum, product) => sum + product.variants.length, 0);
      assert.deepEqual(report.products, { created: 250, updated: 0, unchanged: 0, removed: 0 });
      assert.equal(report.variants.created, variants);
      assert.deepEqual(await counts(t), { products: before.products + 250, variants: before.variants + variants });
    });

    it('a bad price in a product after two batches were written rejects the import naming its place, and nothing is imported', async () => {
      const before = await counts(t);
      const catalog = catalogOf(250, 'late-fault') as unknown as { products: { variants: { price: unknown }[] }[] };
      catalog.products[239]!.variants[0]!.price = 12.5;
      const { db, batches } = countingBatches(t.store.db);
      await rejectsAt(importCatalog(db, CatalogStream.ofFile(writeFile('json', JSON.stringify(catalog))), { productsPerBatch: 100 }), 'products.239.variants.0.price');
      assert.deepEqual(batches, [100, 100], 'two batches had been written when the fault was read');
      assert.deepEqual(await counts(t), before);
    });

    it('a SKU given again in a later batch is refused naming both places, and nothing is imported', async () => {
      const before = await counts(t);
      const catalog = catalogOf(150, 'twice-sku');
      catalog.products[120]!.variants[1]!.sku = catalog.products[3]!.variants[0]!.sku;
      await rejectsAt(
        importCatalog(t.store.db, CatalogStream.ofFile(writeFile('json', JSON.stringify(catalog))), { productsPerBatch: 50 }),
        'products.120.variants.1.sku',
        /is also used by products\.3\.variants\.0/,
      );
      assert.deepEqual(await counts(t), before);
    });

    it('a handle given again in a later batch is refused, and nothing is imported', async () => {
      const before = await counts(t);
      const catalog = catalogOf(150, 'twice-handle');
      catalog.products[140] = { ...catalog.products[140]!, handle: catalog.products[10]!.handle };
      await rejectsAt(importCatalog(t.store.db, CatalogStream.ofFile(writeFile('json', JSON.stringify(catalog))), { productsPerBatch: 50 }), 'products.140.handle', /duplicate handle/);
      assert.deepEqual(await counts(t), before);
    });

    it('collections listed before the products in the file are written after them, and name them', async () => {
      const catalog = catalogOf(3, 'listed-first');
      const file = writeFile('json', JSON.stringify({ collections: [{ handle: 'listed-first', title: 'Listed first', products: catalog.products.map((p) => p.handle) }], ...catalog }));
      const report = await importCatalog(t.store.db, CatalogStream.ofFile(file));
      assert.equal(report.collections.created, 1);
      const members = await t.store.db.query<{ handle: string }>(
        `select p.handle from collection_products m join collections c on c.id = m.collection_id join products p on p.id = m.product_id
          where c.handle = 'listed-first' order by m.position`,
      );
      assert.deepEqual(members.map((m) => m.handle), catalog.products.map((p) => p.handle));
    });

    it('a file that is not a catalog is refused naming what is wrong, and nothing is imported', async () => {
      const before = await counts(t);
      const product = JSON.stringify(catalogOf(1, 'shape').products[0]);
      for (const [text, where, problem] of [
        ['[]', 'document', /must be object/],
        ['{"collections": []}', 'document', /required properties products/],
        ['{"products": {}}', 'products', /must be array/],
        [`{"products": [${product}], "extra": 1}`, 'extra', /only products and collections/],
        [`{"products": [${product}`, 'file', /not valid JSON/],
        [`{"products": [${product}]} {}`, 'file', /not valid JSON/],
        ['', 'file', /not valid JSON/],
      ] as const) {
        await rejectsAt(importCatalog(t.store.db, CatalogStream.ofFile(writeFile('json', text))), where, problem);
      }
      assert.deepEqual(await counts(t), before);
    });

    it('a Shopify CSV file streams in batches, and a product whose rows are apart is gathered whole', async () => {
      const before = await counts(t);
      const { db, batches } = countingBatches(t.store.db);
      const report = await importCatalog(db, CatalogStream.ofFile(writeFile('csv', shopifyCsv(120, 'csv-tea', { apart: true }))), { productsPerBatch: 50 });
      assert.deepEqual(batches, [50, 50, 20]);
      assert.deepEqual(report.products, { created: 120, updated: 0, unchanged: 0, removed: 0 });
      assert.deepEqual(await counts(t), { products: before.products + 120, variants: before.variants + 240 });
      const [apart] = await t.store.db.query<{ skus: string[] }>(
        `select array_agg(v.sku order by v.position) as skus from variants v join products p on p.id = v.product_id where p.handle = 'csv-tea-0'`,
      );
      assert.deepEqual(apart!.skus, ['csv-tea-0-S', 'csv-tea-0-L']);
    });

    it('a Shopify CSV with a bad price near its end, after batches were written, is refused naming its row, and nothing is imported', async () => {
      const before = await counts(t);
      const { db, batches } = countingBatches(t.store.db);
      const file = writeFile('csv', shopifyCsv(120, 'csv-bad', { badPriceOnRow: 230 }));
      await rejectsAt(importCatalog(db, CatalogStream.ofFile(file), { productsPerBatch: 50 }), 'row 230, column "Variant Price"', /"8\.0x"/);
      assert.deepEqual(batches, [50, 50]);
      assert.deepEqual(await counts(t), before);
    });

    it('a running store imports a file sent to its control socket as it is read, and refuses a bad one naming its place', async () => {
      const socket = path.join(scratch, `control-${backend.name}.sock`);
      const control = await serveControlSocket(socket, storeCommands(t.store));
      try {
        const catalog = catalogOf(20, 'sent');
        const report = await sendCatalogFile(socket, { path: writeFile('json', JSON.stringify(catalog)), format: 'json' }, {});
        assert.equal(report.products.created, 20);
        assert.ok(t.store.catalog.snapshot.productByHandle(catalog.products[19]!.handle), 'the store took the import in at once');
        const before = await counts(t);
        await rejectsAt(sendCatalogFile(socket, { path: writeFile('csv', shopifyCsv(30, 'sent-bad', { badPriceOnRow: 50 })), format: 'csv' }, {}), 'row 50, column "Variant Price"');
        assert.deepEqual(await counts(t), before);
      } finally {
        await control.close();
      }
    });

    it('the first batch is written before the rest of the file has been sent: the file streams through the import', async () => {
      const fifo = path.join(scratch, `catalog-${backend.name}.fifo`);
      execFileSync('mkfifo', [fifo]);
      const catalog = catalogOf(300, 'piped');
      const text = JSON.stringify(catalog);
      // The pipe is given the first 150 products, and the rest only once a batch was written.
      const cut = text.indexOf(JSON.stringify(catalog.products[150]));
      let batchWritten: () => void = () => {};
      const firstBatch = new Promise<void>((resolve) => (batchWritten = resolve));
      const db = t.store.db;
      const watched: Database = {
        ...db,
        transaction: (fn) => db.transaction((tx) => fn({ ...tx, query: (sql, params) => (/^\s*insert into products/.test(sql) && batchWritten(), tx.query(sql, params)) })),
      };
      const importing = importCatalog(watched, CatalogStream.ofFile(fifo, 'json'), { productsPerBatch: 100 });
      const pipe = createWriteStream(fifo);
      pipe.write(text.slice(0, cut));
      const waited = await Promise.race([firstBatch.then(() => 'written'), sleep(15_000, undefined, { ref: false }).then(() => 'still waiting for the file')]);
      pipe.end(text.slice(cut));
      assert.equal(waited, 'written');
      assert.equal((await importing).products.created, 300);
    });

    it('a directory named like a catalog file is refused as unreadable in one line; a CSV one before any transaction opens', async () => {
      const opened: string[] = [];
      const db = t.store.db;
      const watched: Database = { ...db, transaction: (fn) => (opened.push('transaction'), db.transaction(fn)) };
      const directory = (extension: string) => {
        const made = path.join(scratch, `directory-${backend.name}.${extension}`);
        mkdirSync(made);
        return made;
      };
      await rejectsAt(importCatalog(watched, CatalogStream.ofFile(directory('csv'))), 'file', /cannot be read \(EISDIR/);
      assert.deepEqual(opened, [], "the CSV's first read failed before the transaction");
      await rejectsAt(importCatalog(watched, CatalogStream.ofFile(directory('json'))), 'file', /cannot be read \(EISDIR/);
    });

    it('a failed CSV import closes its file: a fault of a row, one the database finds, and a CSV syntax error', { skip: !existsSync('/proc/self/fd') && 'no /proc' }, async () => {
      // Large enough that the file is still being read when the import fails.
      const rows = shopifyCsv(30_000, `fd-${backend.name}`).split('\n');
      await importCatalog(t.store.db, { products: [{ handle: `fd-owner-${backend.name}`, title: 'Owner', variants: [{ sku: `fd-owned-${backend.name}`, price: 100 }] }] });
      const faults: [row: string, where: string][] = [
        [rows[2]!.replace(/[\d.]+$/, '8.0x'), 'row 3, column "Variant Price"'],
        [rows[2]!.replace(/,[^,]+,([\d.]+)$/, `,fd-owned-${backend.name},$1`), 'products.0.variants.1.sku'],
        [`${rows[2]},extra`, 'row 3'],
      ];
      for (const [row, where] of faults) {
        const file = writeFile('csv', [rows[0], rows[1], row, ...rows.slice(3)].join('\n'));
        await rejectsAt(importCatalog(t.store.db, CatalogStream.ofFile(file), { productsPerBatch: 10 }), where);
        assert.equal(await descriptorsLeftOn(file), 0, `the file of the import refused at ${where} is closed`);
      }
    });

    it("a Shopify CSV's first read is over before the import's transaction opens: meanwhile the database answers other queries", async () => {
      const fifo = path.join(scratch, `first-read-${backend.name}.csv`);
      execFileSync('mkfifo', [fifo]);
      const text = shopifyCsv(200, `first-read-${backend.name}`);
      const events: string[] = [];
      const db = t.store.db;
      const watched: Database = { ...db, transaction: (fn) => (events.push('transaction opened'), db.transaction(fn)) };
      const importing = importCatalog(watched, CatalogStream.ofFile(fifo));
      // The first read is given the file through the pipe; the second finds the file itself at the same path.
      const pipe = createWriteStream(fifo);
      try {
        await once(pipe, 'open');
        renameSync(writeFile('csv', text), fifo);
        pipe.write(text.slice(0, text.length / 2));
        assert.deepEqual(events, [], 'no transaction is open while the first read waits for the rest of the file');
        await db.query('select count(*) from products');
      } finally {
        events.push('file read once');
        pipe.end(text.slice(text.length / 2));
      }
      assert.equal((await importing).products.created, 200);
      assert.deepEqual(events, ['file read once', 'transaction opened']);
    });

    it("a product whose rows are apart keeps its place in the file: rows a, b, a, c are listed a, b, c, and a fault names the file's products.N", async () => {
      const handles = ['a', 'b', 'c'].map((letter) => `in-order-${backend.name}-${letter}`);
      const [a, b, c] = handles;
      const csvOf = (skuOfB: string) =>
        [
          'Handle,Title,Option1 Name,Option1 Value,Variant SKU,Variant Price',
          `${a},A,Size,Small,${a}-S,1.00`,
          `${b},B,Title,Default Title,${skuOfB},1.00`,
          `${a},,,Large,${a}-L,2.00`,
          `${c},C,Title,Default Title,${c}-1,1.00`,
        ].join('\n');
      await importCatalog(t.store.db, { products: [{ handle: `${b}-owner`, title: 'Owner', variants: [{ sku: `${b}-owned`, price: 100 }] }] });
      await rejectsAt(importCatalog(t.store.db, CatalogStream.ofFile(writeFile('csv', csvOf(`${b}-owned`)))), 'products.1.variants.0.sku', /belongs to another product/);
      const report = await importCatalog(t.store.db, CatalogStream.ofFile(writeFile('csv', csvOf(`${b}-1`))), { productsPerBatch: 1 });
      assert.equal(report.products.created, 3);
      assert.deepEqual(await handlesInIdOrder(t, handles), handles);
    });
  });
}
