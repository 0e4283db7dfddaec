/**
 * Issue 38, build item 4 and its finding: re-importing a Shopify CSV to fix one price silently removed a product's image
 * ("1 changed"). An import's preview (a dry run) lists every change before anything is applied: products added, fields
 * changed (was → now), images removed, variants archived, stock set; the import's own report lists the same changes,
 * the removed image among them. A preview writes nothing (not the catalog, not its version, not stock). An apply made
 * against the version a preview saw is refused once the catalog changed meanwhile. `storefront import --dry-run FILE`
 * prints the preview and changes nothing: on the embedded database, on PostgreSQL, and through a running store's
 * control socket. Both backends.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TERMINAL_ACTOR } from '../../src/audit/audit-log.js';
import { editProduct } from '../../src/catalog/catalog-edit.js';
import { catalogVersion } from '../../src/catalog/catalog-store.js';
import { ImportError, type CatalogDocument } from '../../src/catalog/import/catalog-document.js';
import { CatalogStream } from '../../src/catalog/import/catalog-stream.js';
import { importCatalog, previewImport } from '../../src/catalog/import/import-catalog.js';
import { sendCatalogFile, serveControlSocket } from '../../src/cli/control-socket.js';
import { describeImportWithChanges } from '../../src/cli/import-changes-text.js';
import { storeCommands } from '../../src/cli/merchant-commands.js';
import type { Queryable } from '../../src/db/database.js';
import { cliScratch, cliTargets, commandSession } from '../helpers/cli.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-import-preview-'));
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

const FRONT = 'https://img.example/tea-front.png';
const BACK = 'https://img.example/tea-back.png';

/** A Shopify export of one tea in two sizes; `withBack` lists its second image, `smallPrice` the small size's price. */
function teaCsv(options: { withBack: boolean; smallPrice: string; quantity?: number }): string {
  const quantity = options.quantity ?? 10;
  return [
    'Handle,Title,Body (HTML),Option1 Name,Option1 Value,Variant SKU,Variant Price,Variant Inventory Qty,Image Src,Image Position,Image Alt Text',
    `green-tea,Green Tea,<p>Leaves.</p>,Size,Small,TEA-S,${options.smallPrice},${quantity},${FRONT},1,Front`,
    `green-tea,,,,Large,TEA-L,9.00,${quantity},${options.withBack ? `${BACK},2,Back` : ',,'}`,
  ].join('\n');
}

/** What an import may have written: the products, variants, images, levels and version, to compare before and after. */
async function everything(db: Queryable) {
  const [row] = await db.query<{ state: string }>(
    `select json_build_array(
       (select json_agg(json_build_array(handle, title, description_html, published, updated_at) order by id) from products),
       (select json_agg(json_build_array(id, sku, price_cents, compare_at_cents, archived_at) order by id) from variants),
       (select json_agg(json_build_array(product_id, position, src, alt) order by product_id, position) from product_images),
       (select json_agg(json_build_array(variant_id, on_hand) order by variant_id) from inventory_levels),
       (select version from catalog_version))::text as state`,
  );
  return row!.state;
}

for (const backend of backends) {
  describe(`import preview (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
      await importCatalog(t.store.db, CatalogStream.ofFile(writeFile('csv', teaCsv({ withBack: true, smallPrice: '4.50' }))));
    });
    after(() => t.close());

    it("re-importing a CSV that lacks a product's image: the preview lists the image removed, and the price changed, before anything is applied", async () => {
      const before = await everything(t.store.db);
      const preview = await previewImport(t.store.db, CatalogStream.ofFile(writeFile('csv', teaCsv({ withBack: false, smallPrice: '5.00' }))));
      assert.equal(preview.applied, false);
      assert.equal(await everything(t.store.db), before, 'the preview wrote nothing');
      const [tea] = preview.changes.products;
      assert.equal(tea?.handle, 'green-tea');
      assert.equal(tea?.change, 'changed');
      assert.deepEqual(tea?.images, [{ change: 'removed', src: BACK, alt: 'Back' }]);
      assert.deepEqual(
        tea?.variants.map((v) => [v.sku, v.fields]),
        [['TEA-S', [{ field: 'price', from: 450, to: 500 }]]],
      );
      assert.deepEqual(preview.changes.images, { added: 0, removed: 1 });
      assert.equal(preview.catalogVersion, await catalogVersion(t.store.db));
    });

    it("the import's own report says the image was removed too (it said only \"1 changed\")", async () => {
      const report = await importCatalog(t.store.db, CatalogStream.ofFile(writeFile('csv', teaCsv({ withBack: false, smallPrice: '5.00' }))));
      assert.equal(report.applied, true);
      assert.deepEqual(report.changes.products[0]?.images, [{ change: 'removed', src: BACK, alt: 'Back' }]);
      const text = describeImportWithChanges(report);
      assert.match(text, /images: 0 added, 1 removed/);
      assert.match(text, /image removed: https:\/\/img\.example\/tea-back\.png/);
      assert.match(text, /TEA-S: price: \$4\.50 → \$5\.00/);
      const images = await t.store.db.query<{ src: string }>("select src from product_images i join products p on p.id = i.product_id where p.handle = 'green-tea'");
      assert.deepEqual(images.map((i) => i.src), [FRONT]);
    });

    it('a preview lists products added, fields changed (was → now), variants archived, stock set with setStock, and collections', async () => {
      const document: CatalogDocument = {
        products: [
          {
            handle: 'green-tea',
            title: 'Green Tea, Loose',
            description_html: '<p>Leaves.</p>',
            options: ['Size'],
            published: false,
            images: [{ src: FRONT, alt: 'Front' }, { src: BACK, alt: 'Back again' }],
            variants: [{ sku: 'TEA-S', options: ['Small'], price: 500, inventory_quantity: 3 }],
          },
          { handle: 'white-tea', title: 'White Tea', variants: [{ sku: 'WHITE', price: 700, inventory_quantity: 4 }], images: [{ src: FRONT }] },
        ],
        collections: [{ handle: 'teas', title: 'Teas', products: ['green-tea', 'white-tea'] }],
      };
      const before = await everything(t.store.db);
      const preview = await previewImport(t.store.db, document, { setStock: true });
      assert.equal(await everything(t.store.db), before, 'the preview wrote nothing');
      const [green, white] = preview.changes.products;
      assert.deepEqual(green?.fields, [
        { field: 'title', from: 'Green Tea', to: 'Green Tea, Loose' },
        { field: 'published', from: true, to: false },
      ]);
      assert.deepEqual(green?.images, [{ change: 'added', src: BACK, alt: 'Back again' }]);
      assert.deepEqual(
        green?.variants.map((v) => [v.change, v.sku, v.stock ?? null]),
        [
          ['changed', 'TEA-S', { from: 10, to: 3 }],
          ['removed', 'TEA-L', null],
        ],
      );
      assert.equal(white?.change, 'added');
      assert.deepEqual(white?.variants.map((v) => [v.change, v.sku, v.stock]), [['added', 'WHITE', { from: null, to: 4 }]]);
      assert.deepEqual(preview.changes.collections, [{ change: 'added', handle: 'teas', title: 'Teas', fields: [], productsAdded: ['green-tea', 'white-tea'], productsRemoved: [] }]);
      assert.deepEqual(preview.stock.set.map((s) => [s.sku, s.previous, s.onHand]), [['TEA-S', 10, 3]]);
      assert.equal(preview.products.created, 1);
      assert.equal(preview.variants.removed, 1);
    });

    it('an import applied against the version a preview saw is refused once the catalog changed meanwhile; nothing is written', async () => {
      const document: CatalogDocument = { products: [{ handle: 'green-tea', title: 'Green Tea', options: ['Size'], variants: [{ sku: 'TEA-S', options: ['Small'], price: 550 }] }] };
      const preview = await previewImport(t.store.db, document);
      const [tea] = await t.store.db.query<{ id: number }>("select id from products where handle = 'green-tea'");
      await editProduct(t.store.db, t.store, TERMINAL_ACTOR, tea!.id, { title: 'Green Tea (edited)' });
      const before = await everything(t.store.db);
      await assert.rejects(importCatalog(t.store.db, document, { expectCatalogVersion: preview.catalogVersion }), (error: unknown) => error instanceof ImportError && error.where === 'catalog');
      assert.equal(await everything(t.store.db), before);
      const again = await previewImport(t.store.db, document);
      const report = await importCatalog(t.store.db, document, { expectCatalogVersion: again.catalogVersion });
      assert.deepEqual(report.changes, again.changes, 'the apply made exactly the changes its preview listed');
    });

    it('a preview of a bad file is refused as the import is, naming its place, and writes nothing', async () => {
      const before = await everything(t.store.db);
      await assert.rejects(
        previewImport(t.store.db, { products: [{ handle: 'bad', title: 'Bad', variants: [{ price: 1 }], images: [{ src: 'http://img.example/x.png' }] }] }),
        (error: unknown) => error instanceof ImportError && /images\.0\.src/.test(error.where),
      );
      assert.equal(await everything(t.store.db), before);
    });

    it("a running store answers a dry run sent to its control socket with the preview, and changes nothing; the import itself is audited as the terminal's", async () => {
      const socket = path.join(scratch, `control-${backend.name}.sock`);
      const control = await serveControlSocket(socket, storeCommands(t.store));
      try {
        const before = await everything(t.store.db);
        const file = writeFile('csv', teaCsv({ withBack: false, smallPrice: '6.00' }));
        const preview = await sendCatalogFile(socket, { path: file, format: 'csv' }, { dryRun: true });
        assert.equal(preview.applied, false);
        assert.ok(preview.changes.products.some((p) => p.handle === 'green-tea'));
        assert.equal(await everything(t.store.db), before);
        const audited = () => t.store.db.query<{ actor: string; summary: string }>("select actor, summary from audit_log where action = 'catalog.import'");
        assert.deepEqual(await audited(), [], 'a dry run is not audited: it changed nothing');
        const report = await sendCatalogFile(socket, { path: file, format: 'csv' }, {});
        assert.equal(report.applied, true);
        assert.deepEqual(
          (await audited()).map((entry) => [entry.actor, /^imported catalog\.csv: products \d+ added, \d+ changed; variants .*; images \d+ added, \d+ removed/.test(entry.summary)]),
          [['terminal', true]],
        );
      } finally {
        await control.close();
      }
    });
  });
}

describe('`storefront import --dry-run FILE`', () => {
  const cli = cliScratch('sf-import-dry-run');
  for (const target of cliTargets(cli.scratch, 'sf_dry_run', cli.databases)) {
    it(`prints the removed image and the changed price, and changes nothing (${target.name})`, async () => {
      const env = await target.env();
      const session = commandSession(() => env);
      try {
        const first = await session.run('import', writeFile('csv', teaCsv({ withBack: true, smallPrice: '4.50' })));
        assert.equal(first.code, 0, first.stderr);
        assert.match(first.stdout, /\+ green-tea "Green Tea": added, 2 variants, 2 images/);
        const stockBefore = await session.run('stock');
        const lacking = writeFile('csv', teaCsv({ withBack: false, smallPrice: '5.00', quantity: 3 }));
        const dry = await session.run('import', '--dry-run', lacking, '--set-stock');
        assert.equal(dry.code, 0, dry.stderr);
        assert.match(dry.stdout, /^dry run: nothing was imported or changed/);
        assert.match(dry.stdout, /image removed: https:\/\/img\.example\/tea-back\.png/);
        assert.match(dry.stdout, /TEA-S: price: \$4\.50 → \$5\.00/);
        assert.match(dry.stdout, /TEA-S: units on hand 10 → 3/);
        assert.equal((await session.run('stock')).stdout, stockBefore.stdout, 'stock is as it was');
        const again = await session.run('import', '--dry-run', lacking);
        assert.match(again.stdout, /image removed/, 'the first dry run applied nothing: the image is still there to remove');
        const applied = await session.run('import', lacking);
        assert.match(applied.stdout, /^imported/);
        assert.match(applied.stdout, /image removed: https:\/\/img\.example\/tea-back\.png/);
        const after = await session.run('import', '--dry-run', lacking);
        assert.match(after.stdout, /no change: the catalog already holds the file as it is/);
        const usage = await session.run('import', '--dry-run', '--bogus', lacking);
        assert.equal(usage.code, 1);
        assert.match(usage.stderr, /usage: storefront import FILE \[--set-stock\] \[--dry-run\]/);
      } finally {
        await session.close();
      }
    });
  }
});
