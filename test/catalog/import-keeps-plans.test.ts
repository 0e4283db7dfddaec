/**
 * Issue 39, build item 5: selling plans survive imports. A Shopify product CSV never carries selling plans (Shopify's
 * subscription apps keep them), so re-importing one leaves the plans of the products it updates as they were, ids
 * and all, and its report (and preview) does not say they changed; the project's JSON catalog, which carries plans,
 * still sets them: a plan it no longer lists is removed, one it states again keeps its id (carts, checkouts and orders
 * name plans by id), a product it lists without plans has none. The same holds for the products' complementary
 * products (the JSON catalog's `complementary`, which recommendations answer): a CSV never carries them either.
 * Both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { demoCatalog } from '../../src/catalog/demo-catalog.js';
import type { CatalogDocument, ProductInput } from '../../src/catalog/import/catalog-document.js';
import { CatalogStream } from '../../src/catalog/import/catalog-stream.js';
import { importCatalog, previewImport } from '../../src/catalog/import/import-catalog.js';
import type { ImportReport } from '../../src/catalog/import/import-catalog.js';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const HANDLE = 'espresso-capsules';

/** The demo's espresso capsules as the store's JSON catalog states them (a copy, to change). */
function espresso(): ProductInput {
  const product = demoCatalog.products.find((p) => p.handle === HANDLE);
  assert.ok(product, 'the demo sells espresso capsules');
  return structuredClone(product);
}

/** A cell of a CSV, quoted when it holds a comma or a quote. */
const cell = (text: string | number) => (/[",\n]/.test(String(text)) ? `"${String(text).replaceAll('"', '""')}"` : String(text));

/**
 * A Shopify export of the espresso capsules as the demo has them (what a Shopify CSV can say of them: no plans, no
 * complementary products), the Ristretto 10 at `ristrettoPrice`.
 */
function espressoCsv(ristrettoPrice: string): string {
  const product = espresso();
  const rows = product.variants.map((variant, index) => {
    const [roast, pack] = variant.options!;
    const price = variant.sku === 'ESP-RIS-10' ? ristrettoPrice : (variant.price / 100).toFixed(2);
    const compareAt = variant.compare_at_price ? (variant.compare_at_price / 100).toFixed(2) : '';
    const image = index === 0 ? product.images![0]! : undefined;
    return [
      HANDLE,
      ...(index === 0 ? [product.title, product.description_html!, product.vendor!, product.product_type!, product.tags!.join(', ')] : ['', '', '', '', '']),
      index === 0 ? 'Roast' : '', roast!, index === 0 ? 'Pack size' : '', pack!,
      variant.sku!, variant.weight_grams!, 'shopify', variant.inventory_quantity!, price, compareAt,
      image?.src ?? '', image ? 1 : '', image?.alt ?? '',
    ].map(cell).join(',');
  });
  const header = [
    'Handle,Title,Body (HTML),Vendor,Type,Tags,Option1 Name,Option1 Value,Option2 Name,Option2 Value',
    'Variant SKU,Variant Grams,Variant Inventory Tracker,Variant Inventory Qty,Variant Price,Variant Compare At Price',
    'Image Src,Image Position,Image Alt Text',
  ].join(',');
  return [header, ...rows].join('\n');
}

/** A CSV's text as the admin's import and the CLI's read it (a Shopify export). */
const csvStream = (text: string) => CatalogStream.ofText(text, 'csv');

/** The product's selling plan groups and plans as stored, every column, ids included. */
async function storedPlans(t: TestStore, handle = HANDLE) {
  return t.store.db.query<Record<string, unknown>>(
    `select g.id as group_id, g.name as group_name, g.position as group_position, s.id, s.name, s.description,
            s.discount_percent, s.interval_unit, s.interval_count, s.position
       from selling_plan_groups g join selling_plans s on s.group_id = g.id join products p on p.id = g.product_id
      where p.handle = $1 order by g.position, s.position`,
    [handle],
  );
}

async function priceOf(t: TestStore, sku: string): Promise<number> {
  const [row] = await t.store.db.query<{ price_cents: number }>('select price_cents from variants where sku = $1', [sku]);
  assert.ok(row, `no variant ${sku}`);
  return row.price_cents;
}

/** The product's complementary products as stored, in the merchant's order. */
async function storedComplementary(t: TestStore, handle = HANDLE): Promise<string[]> {
  const [row] = await t.store.db.query<{ complementary_handles: string[] }>('select complementary_handles from products where handle = $1', [handle]);
  assert.ok(row, `no product ${handle}`);
  return row.complementary_handles;
}

/** What /recommendations answers as the product's complementary products, once the shop has read the catalog again. */
async function recommendedAlongside(t: TestStore, handle = HANDLE): Promise<string[]> {
  const product = (await t.store.catalog.refresh(t.store.db)).productByHandle(handle);
  assert.ok(product, `the shop sells ${handle}`);
  const { status, body } = await getJson(t.app, `/recommendations/products.json?product_id=${product.id}&intent=complementary`);
  assert.equal(status, 200);
  return body.products.map((p: { handle: string }) => p.handle);
}

/** The fields the report says the import changed on the product. */
const changedFieldsOf = (report: ImportReport, handle = HANDLE) => report.changes.products.find((p) => p.handle === handle)?.fields.map((f) => f.field) ?? [];

for (const backend of backends) {
  describe(`selling plans and complementary products survive imports (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('a Shopify CSV re-import changes the price and leaves the plans as they were, ids and all', async () => {
      const before = await storedPlans(t);
      assert.deepEqual(before.map((plan) => plan.name), ['Delivery every month', 'Delivery every 2 months'], 'the demo’s plans');
      assert.equal(await priceOf(t, 'ESP-RIS-10'), 650);

      const preview = await previewImport(t.store.db, csvStream(espressoCsv('7.00')));
      assert.ok(!changedFieldsOf(preview).includes('selling_plans'), 'the preview does not claim the plans changed');
      const report = await importCatalog(t.store.db, csvStream(espressoCsv('7.00')));
      assert.ok(!changedFieldsOf(report).includes('selling_plans'), 'nor does the report');
      const ristretto = report.changes.products.find((p) => p.handle === HANDLE)?.variants.find((v) => v.sku === 'ESP-RIS-10');
      assert.deepEqual(ristretto?.fields, [{ field: 'price', from: 650, to: 700 }], 'the price change is reported');

      assert.equal(await priceOf(t, 'ESP-RIS-10'), 700, 'the price changed');
      assert.deepEqual(await storedPlans(t), before, 'the plans, their groups and their ids are as they were');
      const product = (await t.store.catalog.refresh(t.store.db)).productByHandle(HANDLE);
      assert.deepEqual(product?.sellingPlanGroups.flatMap((g) => g.plans.map((p) => p.id)), before.map((plan) => plan.id), 'and the shop still sells them');
    });

    it('a JSON catalog that states the plans again keeps their ids; one that drops a plan removes it', async () => {
      const before = await storedPlans(t);
      const restated = await importCatalog(t.store.db, { products: [espresso()] } satisfies CatalogDocument);
      assert.ok(!changedFieldsOf(restated).includes('selling_plans'), 'the same plans are no change');
      assert.deepEqual(await storedPlans(t), before, 'the same plans, the same ids');

      const oneLess = espresso();
      oneLess.selling_plan_groups![0]!.plans = oneLess.selling_plan_groups![0]!.plans.filter((plan) => plan.name !== 'Delivery every 2 months');
      oneLess.selling_plan_groups![0]!.plans[0]!.discount_percent = 15;
      const dropped = await importCatalog(t.store.db, { products: [oneLess] });
      assert.deepEqual(changedFieldsOf(dropped), ['selling_plans'], 'the report says the plans changed');
      const after = await storedPlans(t);
      assert.deepEqual(after.map((plan) => [plan.id, plan.name, plan.discount_percent]), [[before[0]!.id, 'Delivery every month', 15]], 'the monthly plan kept its id, with its new saving');
      assert.equal(after[0]!.group_id, before[0]!.group_id, 'and its group its id');

      // A plan listed again later is a new plan (the one removed is gone).
      await importCatalog(t.store.db, { products: [espresso()] });
      const again = await storedPlans(t);
      assert.equal(again[0]!.id, before[0]!.id);
      assert.ok(!before.some((plan) => plan.id === again[1]!.id), 'the two-monthly plan comes back with a new id');
    });

    it('a JSON catalog product listed without plans has none (the file states them)', async () => {
      const { selling_plan_groups: _plans, ...withoutPlans } = espresso();
      const report = await importCatalog(t.store.db, { products: [withoutPlans] });
      assert.deepEqual(changedFieldsOf(report), ['selling_plans']);
      assert.deepEqual(await storedPlans(t), []);
      // Nor does a CSV bring any back.
      await importCatalog(t.store.db, csvStream(espressoCsv('6.50')));
      assert.deepEqual(await storedPlans(t), []);
    });

    it('a Shopify CSV re-import leaves the complementary products as they were, and recommendations still answer them', async () => {
      await importCatalog(t.store.db, { products: [espresso()] });
      assert.deepEqual(await storedComplementary(t), ['decaf-capsules'], 'the demo’s choice');
      assert.deepEqual(await recommendedAlongside(t), ['decaf-capsules']);

      const preview = await previewImport(t.store.db, csvStream(espressoCsv('7.50')));
      assert.deepEqual(changedFieldsOf(preview), [], 'the preview claims no change to the product’s own fields');
      const report = await importCatalog(t.store.db, csvStream(espressoCsv('7.50')));
      assert.deepEqual(changedFieldsOf(report), [], 'nor does the report');
      assert.deepEqual([report.products.updated, report.products.unchanged], [0, 1], 'the product’s row is left as it is');
      assert.equal(await priceOf(t, 'ESP-RIS-10'), 750, 'the price changed');

      assert.deepEqual(await storedComplementary(t), ['decaf-capsules'], 'the complementary products are as they were');
      assert.deepEqual(await recommendedAlongside(t), ['decaf-capsules'], 'and recommended alongside it');
    });

    it('a JSON catalog sets the complementary products: stated again kept, changed reported, dropped removed (and a CSV brings none back)', async () => {
      const restated = await importCatalog(t.store.db, { products: [espresso()] });
      assert.ok(!changedFieldsOf(restated).includes('complementary'), 'the same choice is no change');
      assert.deepEqual(await storedComplementary(t), ['decaf-capsules']);

      const more = espresso();
      more.complementary = ['sleep-capsules', 'decaf-capsules'];
      const added = await importCatalog(t.store.db, { products: [more] });
      const change = added.changes.products.find((p) => p.handle === HANDLE)?.fields.find((f) => f.field === 'complementary');
      assert.deepEqual(change, { field: 'complementary', from: ['decaf-capsules'], to: ['sleep-capsules', 'decaf-capsules'] }, 'the report says what changed');
      assert.deepEqual(await recommendedAlongside(t), ['sleep-capsules', 'decaf-capsules']);

      const { complementary: _complementary, ...without } = espresso();
      const dropped = await importCatalog(t.store.db, { products: [without] });
      assert.ok(changedFieldsOf(dropped).includes('complementary'), 'the report says they were removed');
      assert.deepEqual(await storedComplementary(t), []);
      assert.deepEqual(await recommendedAlongside(t), []);

      await importCatalog(t.store.db, csvStream(espressoCsv('6.50')));
      assert.deepEqual(await storedComplementary(t), [], 'a CSV brings none back');
    });

    it('a product a Shopify CSV adds has no complementary products', async () => {
      const csv = espressoCsv('6.50').replaceAll(HANDLE, 'espresso-capsules-2').replace(/ESP-([A-Z]+)-(\d+)/g, 'ESP2-$1-$2');
      const report = await importCatalog(t.store.db, csvStream(csv));
      assert.equal(report.products.created, 1);
      assert.deepEqual(await storedComplementary(t, 'espresso-capsules-2'), []);
      assert.deepEqual(await storedPlans(t, 'espresso-capsules-2'), []);
    });
  });
}
