/**
 * An import never undoes sales: an existing variant keeps the stock the store has (units sold since the file was
 * exported stay sold) unless the import is asked to set stock; a new variant starts at the file's quantity. The
 * report names every level it set (previous and new) and counts those it kept. On both backends.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { CatalogDocument } from '../../src/catalog/import/catalog-document.js';
import { importCatalog, type ImportReport } from '../../src/catalog/import/import-catalog.js';
import { noChanges } from '../../src/catalog/import/import-changes.js';
import { parseShopifyCsv } from '../../src/catalog/import/shopify-csv.js';
import { describeImport } from '../../src/cli/merchant-commands.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const shopifyExport = () => parseShopifyCsv(readFileSync(new URL('../fixtures/shopify-products.csv', import.meta.url), 'utf8'));

const tins = (): CatalogDocument => ({
  products: [
    {
      handle: 'tea-tin',
      title: 'Tea Tin',
      options: ['Size'],
      variants: [
        { sku: 'TIN-S', options: ['S'], price: 900, inventory_quantity: 10 },
        { sku: 'TIN-L', options: ['L'], price: 1400, inventory_quantity: 4 },
      ],
    },
  ],
});

for (const backend of backends) {
  describe(`an import and the stock the store has (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend, { seedDemo: false });
    });
    after(() => t.close());

    const variantId = async (sku: string) => (await t.store.db.query<{ id: number }>('select id from variants where sku = $1', [sku]))[0]!.id;
    const onHand = async (sku: string) =>
      (await t.store.db.query<{ on_hand: number }>('select i.on_hand from inventory_levels i join variants v on v.id = i.variant_id where v.sku = $1', [sku]))[0]!
        .on_hand;
    /** A sale as the checkout makes it: units taken through the inventory in a transaction. */
    const sell = async (sku: string, units: number) => {
      const id = await variantId(sku);
      await t.store.db.transaction((tx) => t.store.inventory.take(tx, new Map([[id, units]])));
    };

    it("new variants start at the file's quantity", async () => {
      const report = await importCatalog(t.store.db, tins());
      assert.equal(report.variants.created, 2);
      assert.deepEqual(report.stock, { set: [], keptExisting: 0 });
      assert.deepEqual([await onHand('TIN-S'), await onHand('TIN-L')], [10, 4]);
    });

    it('re-importing the same file after a sale leaves the level at what the sale left, and says how many it kept', async () => {
      await sell('TIN-S', 2);
      assert.equal(await onHand('TIN-S'), 8);
      const report = await importCatalog(t.store.db, tins());
      assert.equal(await onHand('TIN-S'), 8, 'the sale is not undone');
      assert.equal(await onHand('TIN-L'), 4);
      assert.deepEqual(report.stock, { set: [], keptExisting: 1 }, "one existing level differs from the file's and was kept");
      assert.deepEqual(report.variants, { created: 0, updated: 0, unchanged: 2, removed: 0 });
      await t.store.inventory.refresh(t.store.db);
      assert.equal(t.store.inventory.onHand(await variantId('TIN-S')), 8, 'the store sells what is left');
    });

    it("with setStock the level is the file's, and the report lists it with its previous and new level", async () => {
      const report = await importCatalog(t.store.db, tins(), { setStock: true });
      assert.equal(await onHand('TIN-S'), 10);
      assert.equal(await onHand('TIN-L'), 4);
      assert.deepEqual(report.stock, { set: [{ sku: 'TIN-S', variantId: await variantId('TIN-S'), previous: 8, onHand: 10 }], keptExisting: 0 });
      assert.deepEqual(report.variants, { created: 0, updated: 1, unchanged: 1, removed: 0 });
      const again = await importCatalog(t.store.db, tins(), { setStock: true });
      assert.deepEqual(again.stock, { set: [], keptExisting: 0 }, 'a level already at the file quantity is not listed');
    });

    it("a variant new in a re-import gets the file's quantity while the existing ones keep theirs", async () => {
      await sell('TIN-L', 3);
      const doc = tins();
      doc.products[0]!.variants.push({ sku: 'TIN-XL', options: ['XL'], price: 1900, inventory_quantity: 7 });
      const report = await importCatalog(t.store.db, doc);
      assert.deepEqual([await onHand('TIN-S'), await onHand('TIN-L'), await onHand('TIN-XL')], [10, 1, 7]);
      assert.equal(report.variants.created, 1);
      assert.deepEqual(report.stock, { set: [], keptExisting: 1 });
    });

    it('a variant without a SKU is matched by its options and reported by its variant id', async () => {
      const pouch = (quantity: number): CatalogDocument => ({
        products: [{ handle: 'pouch', title: 'Pouch', options: ['Colour'], variants: [{ options: ['Red'], price: 500, inventory_quantity: quantity }] }],
      });
      await importCatalog(t.store.db, pouch(6));
      const [{ id }] = (await t.store.db.query<{ id: number }>(`select v.id from variants v join products p on p.id = v.product_id where p.handle = 'pouch'`)) as [{ id: number }];
      await t.store.db.transaction((tx) => t.store.inventory.take(tx, new Map([[id, 1]])));
      assert.deepEqual((await importCatalog(t.store.db, pouch(6))).stock, { set: [], keptExisting: 1 });
      const report = await importCatalog(t.store.db, pouch(6), { setStock: true });
      assert.deepEqual(report.stock, { set: [{ sku: null, variantId: id, previous: 5, onHand: 6 }], keptExisting: 0 });
    });

    it('re-importing a Shopify export (which always carries Variant Inventory Qty) keeps the units sold since; --set-stock sets them', async () => {
      const first = await importCatalog(t.store.db, shopifyExport());
      assert.equal(first.stock.keptExisting, 0);
      assert.equal(await onHand('ELX-CIT-10'), 120);
      await sell('ELX-CIT-10', 2);
      const again = await importCatalog(t.store.db, shopifyExport());
      assert.equal(await onHand('ELX-CIT-10'), 118);
      assert.deepEqual(again.stock, { set: [], keptExisting: 1 });
      assert.equal(again.variants.created + again.variants.updated, 0, 'nothing in the catalog changed');
      const set = await importCatalog(t.store.db, shopifyExport(), { setStock: true });
      assert.equal(await onHand('ELX-CIT-10'), 120);
      assert.deepEqual(set.stock.set, [{ sku: 'ELX-CIT-10', variantId: await variantId('ELX-CIT-10'), previous: 118, onHand: 120 }]);
    });

    it('a setStock import running beside a sale sets the level after the sale, and its report names the level it replaced', async () => {
      await sell('TIN-S', 1);
      // The sale holds the level's lock until it commits; the import waits for it, then reads what the sale left.
      let releaseSale!: () => void;
      const saleMayCommit = new Promise<void>((resolve) => (releaseSale = resolve));
      let saleTook!: () => void;
      const saleHasLock = new Promise<void>((resolve) => (saleTook = resolve));
      const id = await variantId('TIN-S');
      const sale = t.store.db.transaction(async (tx) => {
        await t.store.inventory.take(tx, new Map([[id, 2]]));
        saleTook();
        await saleMayCommit;
      });
      await saleHasLock;
      const importing = importCatalog(t.store.db, tins(), { setStock: true });
      await new Promise((resolve) => setTimeout(resolve, 100));
      releaseSale();
      await sale;
      const report = await importing;
      assert.equal(await onHand('TIN-S'), 10);
      assert.deepEqual(report.stock.set, [
        { sku: 'TIN-S', variantId: id, previous: 7, onHand: 10 },
        { sku: 'TIN-L', variantId: await variantId('TIN-L'), previous: 1, onHand: 4 },
      ]);
    });
  });
}

describe('what `storefront import` prints about stock', () => {
  const tally = (unchanged: number) => ({ created: 0, updated: 0, unchanged, removed: 0 });
  const report = (stock: ImportReport['stock']): ImportReport => ({
    products: tally(1),
    variants: tally(3),
    collections: tally(0),
    stock,
    changes: noChanges(),
    applied: true,
    catalogVersion: 1,
  });

  it('every level it set, with what it was and what it is now', () => {
    assert.equal(
      describeImport(report({ set: [{ sku: 'TIN-S', variantId: 12, previous: 8, onHand: 10 }, { sku: null, variantId: 140, previous: 5, onHand: 6 }], keptExisting: 0 })),
      [
        'imported',
        '  products: 0 created, 0 changed, 1 unchanged',
        '  variants: 0 created, 0 changed, 3 unchanged',
        '  collections: 0 created, 0 changed, 0 unchanged',
        "  stock: 2 existing levels set to the file's quantity:",
        '    SKU    VARIANT ID  WAS  NOW',
        '    TIN-S          12    8   10',
        '    -             140    5    6',
      ].join('\n'),
    );
  });

  it('how many existing levels it kept, and how to set them', () => {
    assert.equal(
      describeImport(report({ set: [], keptExisting: 1 })).split('\n').at(-1),
      "  stock: 1 existing level differs from the file and was kept (sales since the export stay counted; --set-stock sets the file's quantities)",
    );
    assert.match(describeImport(report({ set: [], keptExisting: 3 })), /stock: 3 existing levels differ from the file and were kept/);
    assert.equal(describeImport(report({ set: [], keptExisting: 0 })).split('\n').at(-1), '  stock: no existing level changed');
  });
});
