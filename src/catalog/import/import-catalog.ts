/**
 * Upserts a catalog into the database in one transaction: products by handle, variants by SKU (or by option
 * values when a variant has no SKU), collections by handle. The file is authoritative for every product it names:
 * images and selling plans it no longer lists are removed, and variants it no longer lists are archived (carts and
 * orders keep pointing at them; they leave the catalog). A Shopify CSV carries no selling plans and no complementary
 * products (FIELDS_NOT_CARRIED): the products it names keep theirs, plans' ids and all. Plans a JSON catalog states again keep their ids (matched by name
 * within their group's name), since carts, checkouts and orders name them. A new variant starts at the file's `inventory_quantity`
 * (zero without one). A variant the store already has keeps its stock (a file exported before sales would undo
 * them) unless the import is asked to `setStock`; then its level is the file's quantity, where the file gives one.
 *
 * The catalog streams through (CatalogStream): products are checked as they come and written a batch at a time,
 * so a file of any size is imported with the memory of one batch. What is kept for the whole file is what a check
 * across it needs, the handles and SKUs seen (tens of bytes each), and the collections, written last. Anything
 * wrong -> ImportError naming the place, and the transaction rolls back: nothing is written, whichever batch the
 * fault is in.
 *
 * Every batch also reads what the store held of its products before writing them, so the report lists what the
 * import changed (import-changes.ts): products added, fields changed, images removed, stock set. A dry run
 * (`dryRun`, the preview) runs the very same writes and rolls them back: its report is the import's, nothing applied.
 */
import { Compile } from 'typebox/compile';
import type { Database, Queryable } from '../../db/database.js';
import { bumpCatalogVersion, catalogVersion } from '../catalog-store.js';
import { carries, CollectionInputSchema, ImportError, ProductInputSchema, type CollectionInput, type ProductInput } from './catalog-document.js';
import { collectionFault, productFault, type CatalogFieldFault } from './catalog-fields.js';
import {
  addProductChange,
  collectionChange,
  LISTED_PRODUCTS,
  noChanges,
  productChange,
  sellingPlanLine,
  type ImportChanges,
  type StoredCollection,
  type StoredProduct,
  type StoredVariant,
} from './import-changes.js';
import { CatalogStream } from './catalog-stream.js';

interface Tally {
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
}

/** A level of an existing variant the import set to the file's quantity (setStock). */
export interface StockLevelSet {
  sku: string | null;
  variantId: number;
  previous: number;
  onHand: number;
}

export interface ImportReport {
  products: Tally;
  variants: Tally;
  collections: Tally;
  /** Levels of existing variants; new variants start at the file's quantity and are counted in `variants.created`. */
  stock: {
    /** Existing variants whose level the import changed to the file's quantity (only with setStock), by variant id. */
    set: StockLevelSet[];
    /** Existing variants whose level differs from the file's quantity and was left as it is (setStock not given). */
    keptExisting: number;
  };
  /** What the import changed (or, not applied, would change), product by product. */
  changes: ImportChanges;
  /** False for a dry run (a preview): nothing of it was written. */
  applied: boolean;
  /** The catalog's version the changes were worked out against (an apply of a preview may insist on it). */
  catalogVersion: number;
}

/** An import's report when it was a dry run: every change it would make, none made. */
export type ImportPreview = ImportReport & { applied: false };

export interface ImportOptions {
  /** Set existing variants' stock to the file's quantities too (a stock count), not only new variants'. */
  setStock?: boolean;
  /** Work out every change and roll it back: the report says what the import would do; nothing is written. */
  dryRun?: boolean;
  /**
   * Import only onto this catalog version (the one a preview was made against): a catalog changed meanwhile (an edit,
   * another import) refuses the import (ImportError at `catalog`), and nothing is written.
   */
  expectCatalogVersion?: number;
  /**
   * Runs in the import's transaction once everything is written, before it commits (not in a dry run): what must
   * happen exactly when the import does (its audit entry, the admin's draft marked applied). Throwing rolls it all back.
   */
  beforeCommit?: (tx: Queryable, report: ImportReport) => Promise<void>;
  /** Products whose changes the report lists (the rest are counted): LISTED_PRODUCTS by default. */
  listLimit?: number;
  /** Products written per round of statements (tests use small ones to import several batches). */
  productsPerBatch?: number;
}

/** A batch's statements carry a few megabytes of JSON at most, and a 100,000-product file takes 100 rounds. */
const PRODUCTS_PER_BATCH = 1000;

const tally = (): Tally => ({ created: 0, updated: 0, unchanged: 0, removed: 0 });

/** A product that passed the checks, with its place in the file (errors the database finds name it). */
interface CheckedProduct {
  index: number;
  product: ProductInput;
}

const productValidator = Compile(ProductInputSchema);
const collectionValidator = Compile(CollectionInputSchema);

/** The most variants a product has (ProductInputSchema): a variant's place is packed into one number with its product's. */
const VARIANTS_PER_PRODUCT = 256;

/** What is checked before anything of an entry is written: its shape, and what must be unique across the file. */
class CatalogCheck {
  private readonly handles = new Set<string>();
  /** SKU -> product index * VARIANTS_PER_PRODUCT + variant index, of the variant that has it. */
  private readonly skus = new Map<string, number>();

  product(input: unknown, index: number): ProductInput {
    const at = `products.${index}`;
    const product = validated(productValidator, input, at);
    const fault = productFault(product);
    if (fault) throw new ImportError(`${at}.${fault.field} (product "${product.handle}")`, fault.problem);
    if (this.handles.has(product.handle)) throw new ImportError(`${at}.handle`, `duplicate handle "${product.handle}"`);
    this.handles.add(product.handle);
    const optionCount = product.options?.length ?? 0;
    const seenOptions = new Set<string>();
    product.variants.forEach((variant, v) => {
      const values = variant.options ?? [];
      if (values.length !== optionCount) {
        throw new ImportError(`${at}.variants.${v}.options`, `expected ${optionCount} option value(s) to match the product's options, got ${values.length}`);
      }
      const key = JSON.stringify(values);
      if (seenOptions.has(key)) throw new ImportError(`${at}.variants.${v}.options`, `duplicate variant ${values.join(' / ') || '(no options)'}`);
      seenOptions.add(key);
      if (variant.sku) {
        const other = this.skus.get(variant.sku);
        if (other !== undefined) {
          const place = `products.${Math.floor(other / VARIANTS_PER_PRODUCT)}.variants.${other % VARIANTS_PER_PRODUCT}`;
          throw new ImportError(`${at}.variants.${v}.sku`, `SKU "${variant.sku}" is also used by ${place}`);
        }
        this.skus.set(variant.sku, index * VARIANTS_PER_PRODUCT + v);
      }
    });
    return product;
  }

  collection(input: unknown, index: number): CollectionInput {
    const at = `collections.${index}`;
    const collection = validated(collectionValidator, input, at);
    const fault = collectionFault(collection);
    if (fault) throw new ImportError(`${at}.${fault.field} (collection "${collection.handle}")`, fault.problem);
    return collection;
  }
}

/**
 * The first thing the import would refuse of a product entry on its own (its shape and bounds, then its texts and
 * URLs), with its place in the entry (`variants.0.price`); undefined when there is none. An edit in the admin checks
 * a product with it, so a field holds what an import may write and no more.
 */
export function productEntryFault(input: unknown): CatalogFieldFault | undefined {
  if (productValidator.Check(input)) return productFault(input);
  const first = productValidator.Errors(input)[0];
  return { field: first?.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : '', problem: first?.message ?? 'not valid' };
}

function validated<T>(validator: { Check(input: unknown): input is T; Errors(input: unknown): { instancePath: string; message: string }[] }, input: unknown, at: string): T {
  // The compiled check is fast; the slower error walk runs only to name what is wrong.
  if (validator.Check(input)) return input;
  const first = validator.Errors(input)[0];
  throw new ImportError(first?.instancePath ? `${at}${first.instancePath.replaceAll('/', '.')}` : at, first?.message ?? 'not valid');
}

/** A dry run's way out of its transaction: the report comes out, the writes are rolled back. */
class DryRunOver extends Error {
  constructor(readonly report: ImportReport) {
    super('dry run: rolled back');
  }
}

/** Imports a catalog: a CatalogStream (a file as it is read), or a catalog document in memory. */
export async function importCatalog(db: Database, input: unknown, options: ImportOptions = {}): Promise<ImportReport> {
  const catalog = input instanceof CatalogStream ? input : CatalogStream.ofDocument(input);
  // Reading ahead (a CSV's first read) holds no transaction: on PGlite it would hold every other query.
  await catalog.prepare();
  if (options.dryRun) {
    try {
      await db.transaction(async (tx) => {
        throw new DryRunOver({ ...(await writeCatalog(tx, catalog, options)), applied: false });
      });
    } catch (error) {
      if (error instanceof DryRunOver) return error.report;
      throw error;
    }
  }
  const report = await db.transaction(async (tx) => {
    const written = await writeCatalog(tx, catalog, options);
    await options.beforeCommit?.(tx, written);
    return written;
  });
  // The embedded database has no autovacuum to gather statistics: without them a large import leaves the
  // planner guessing (a stock update took several times longer at 10,000 products).
  if (report.products.created + report.variants.created > 0) await db.query('analyze products, variants, inventory_levels');
  return report;
}

/** Every change importing `input` would make, with nothing written (a dry run of importCatalog). */
export async function previewImport(db: Database, input: unknown, options: Omit<ImportOptions, 'dryRun'> = {}): Promise<ImportPreview> {
  return (await importCatalog(db, input, { ...options, dryRun: true })) as ImportPreview;
}

/** An import's line in the audit log: the file and what it changed. */
export function importSummary(fileName: string, report: ImportReport): string {
  const t = (x: Tally) => `${x.created} added, ${x.updated} changed${x.removed ? `, ${x.removed} removed` : ''}`;
  const stock = report.stock.set.length ? `; units on hand set for ${report.stock.set.length} variants` : '';
  const images = `images ${report.changes.images.added} added, ${report.changes.images.removed} removed`;
  return `imported ${fileName}: products ${t(report.products)}; variants ${t(report.variants)}; ${images}${stock}`;
}

/** Seeds a catalog only into an empty store; instances starting together against one server seed it once. */
export async function seedCatalogIfEmpty(db: Database, input: unknown): Promise<ImportReport | undefined> {
  return db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('storefront:seed-catalog'))");
    const existing = await tx.query('select 1 from products limit 1');
    return existing.length > 0 ? undefined : writeCatalog(tx, CatalogStream.ofDocument(input), {});
  });
}

/**
 * Writes the catalog in the caller's transaction: each product checked as it comes, products a batch at a time,
 * then the collections (they name products by handle, and a file may list them before its products).
 */
async function writeCatalog(tx: Queryable, catalog: CatalogStream, options: ImportOptions): Promise<ImportReport> {
  const version = await startingVersion(tx, options.expectCatalogVersion);
  const report: ImportReport = {
    products: tally(),
    variants: tally(),
    collections: tally(),
    stock: { set: [], keptExisting: 0 },
    changes: noChanges(),
    applied: true,
    catalogVersion: version,
  };
  const check = new CatalogCheck();
  const productsPerBatch = options.productsPerBatch ?? PRODUCTS_PER_BATCH;
  const collections: { index: number; collection: CollectionInput }[] = [];
  let batch: CheckedProduct[] = [];
  for await (const entry of catalog.entries()) {
    if (entry.kind === 'collection') {
      collections.push({ index: entry.index, collection: check.collection(entry.input, entry.index) });
      continue;
    }
    batch.push({ index: entry.index, product: check.product(entry.input, entry.index) });
    if (batch.length >= productsPerBatch) {
      await writeProducts(tx, batch, report, options);
      batch = [];
    }
  }
  if (batch.length > 0) await writeProducts(tx, batch, report, options);
  for (const { index, collection } of collections) await upsertCollection(tx, collection, `collections.${index}`, report);
  await bumpCatalogVersion(tx);
  return report;
}

/** The catalog's version as the import begins; with `expected`, locked, and refused when it is not that one. */
async function startingVersion(tx: Queryable, expected: number | undefined): Promise<number> {
  if (expected === undefined) return catalogVersion(tx);
  // Locked until the import commits: no edit or other import slips in between the check and the writes.
  const [row] = await tx.query<{ version: number }>('select version from catalog_version for update');
  const version = row?.version ?? 0;
  if (version !== expected) throw new ImportError('catalog', 'the catalog changed since this preview (an edit or another import); preview the file again');
  return version;
}

/** One batch of products with their variants, stock, images and selling plans. */
async function writeProducts(tx: Queryable, batch: CheckedProduct[], report: ImportReport, options: ImportOptions): Promise<void> {
  // Set-based statements: a batch of a thousand products costs a handful of round trips, not thousands.
  const products = batch.map((entry) => entry.product);
  const stored = await readStoredProducts(tx, products.map((p) => p.handle));
  const productIds = await upsertProducts(tx, products, report);
  const matched = await upsertVariants(tx, batch, productIds, report, options);
  await replaceImages(tx, products, productIds);
  // Only a product that states its plans has them set; a Shopify CSV's keep what they have.
  const statingPlans = products.filter((product) => carries(product, 'selling_plan_groups'));
  for (const product of statingPlans) {
    if (product.selling_plan_groups?.length) await replaceSellingPlans(tx, productIds.get(product.handle)!, product);
  }
  const withoutPlans = statingPlans.filter((p) => !p.selling_plan_groups?.length).map((p) => productIds.get(p.handle)!);
  await tx.query('delete from selling_plan_groups where product_id = any($1::bigint[])', [withoutPlans]);
  for (const { index, product } of batch) {
    const variants = product.variants.map((_, v) => matched.get(`products.${index}.variants.${v}`) ?? null);
    addProductChange(report.changes, productChange(product, stored.get(product.handle), variants, options.setStock ?? false), options.listLimit ?? LISTED_PRODUCTS);
  }
}

type StoredProductRow = {
  id: number;
  handle: string;
  title: string;
  description_html: string;
  vendor: string;
  product_type: string;
  tags: string[];
  option_names: string[];
  published: boolean;
  complementary_handles: string[];
};

/** What the store holds of the batch's products before it is written (none of them: one query). */
async function readStoredProducts(tx: Queryable, handles: string[]): Promise<Map<string, StoredProduct>> {
  const rows = await tx.query<StoredProductRow>(
    `select id, handle, title, description_html, vendor, product_type, tags, option_names, published, complementary_handles
       from products where handle = any($1::text[])`,
    [handles],
  );
  const stored = new Map<string, StoredProduct>();
  if (rows.length === 0) return stored;
  const byId = new Map<number, StoredProduct>();
  for (const row of rows) {
    const product: StoredProduct = {
      id: row.id,
      handle: row.handle,
      title: row.title,
      descriptionHtml: row.description_html,
      vendor: row.vendor,
      productType: row.product_type,
      tags: row.tags,
      optionNames: row.option_names,
      published: row.published,
      complementary: row.complementary_handles,
      images: [],
      variants: new Map(),
      sellingPlans: [],
    };
    stored.set(row.handle, product);
    byId.set(row.id, product);
  }
  const ids = [...byId.keys()];
  const variants = await tx.query<{ [K in keyof StoredVariant]: StoredVariant[K] } & { productId: number }>(
    `select v.id, v.product_id as "productId", v.position, v.title, v.sku, v.option_values as "optionValues", v.price_cents as "priceCents",
       v.compare_at_cents as "compareAtCents", v.inventory_tracked as "inventoryTracked", v.inventory_policy as "inventoryPolicy",
       v.requires_shipping as "requiresShipping", v.taxable, v.barcode, v.weight_grams as "weightGrams",
       v.archived_at is not null as archived, i.on_hand as "onHand"
       from variants v left join inventory_levels i on i.variant_id = v.id
      where v.product_id = any($1::bigint[])`,
    [ids],
  );
  for (const { productId, ...variant } of variants) byId.get(productId)?.variants.set(variant.id, variant);
  const images = await tx.query<{ product_id: number; position: number; src: string; alt: string | null; width: number | null; height: number | null }>(
    'select product_id, position, src, alt, width, height from product_images where product_id = any($1::bigint[]) order by product_id, position',
    [ids],
  );
  for (const { product_id, ...image } of images) byId.get(product_id)?.images.push(image);
  const plans = await tx.query<{ product_id: number; group_name: string; name: string; description: string; discount_percent: number; interval_unit: string; interval_count: number }>(
    `select g.product_id, g.name as group_name, s.name, s.description, s.discount_percent, s.interval_unit, s.interval_count
       from selling_plan_groups g join selling_plans s on s.group_id = g.id
      where g.product_id = any($1::bigint[]) order by g.product_id, g.position, s.position`,
    [ids],
  );
  for (const plan of plans) {
    byId.get(plan.product_id)?.sellingPlans.push(
      sellingPlanLine(plan.group_name, {
        name: plan.name,
        discountPercent: plan.discount_percent,
        intervalCount: plan.interval_count,
        intervalUnit: plan.interval_unit,
        description: plan.description,
      }),
    );
  }
  return stored;
}

async function upsertProducts(tx: Queryable, products: ProductInput[], report: ImportReport): Promise<Map<string, number>> {
  const rows = products.map((product) => ({
    handle: product.handle,
    title: product.title,
    description_html: product.description_html ?? '',
    vendor: product.vendor ?? '',
    product_type: product.product_type ?? '',
    tags: product.tags ?? [],
    option_names: product.options ?? [],
    published: product.published ?? true,
    complementary_handles: product.complementary ?? [],
  }));
  // A product whose file carries no complementary products (a Shopify CSV) keeps the ones it has; a new one has none.
  const keepingComplementary = products.filter((product) => !carries(product, 'complementary')).map((product) => product.handle);
  const complementary = 'case when p.handle = any($2::text[]) then p.complementary_handles else excluded.complementary_handles end';
  const written = await tx.query<{ handle: string; inserted: boolean }>(
    `insert into products as p (handle, title, description_html, vendor, product_type, tags, option_names, published,
       complementary_handles, published_at)
     select handle, title, description_html, vendor, product_type, tags, option_names, published, complementary_handles,
       case when published then now() end
     from jsonb_to_recordset($1::jsonb) as x(handle text, title text, description_html text, vendor text, product_type text,
       tags text[], option_names text[], published boolean, complementary_handles text[])
     on conflict (handle) do update set title = excluded.title, description_html = excluded.description_html,
       vendor = excluded.vendor, product_type = excluded.product_type, tags = excluded.tags, option_names = excluded.option_names,
       published = excluded.published, complementary_handles = ${complementary}, updated_at = now(),
       published_at = case when excluded.published then coalesce(p.published_at, now()) end
     where (p.title, p.description_html, p.vendor, p.product_type, p.tags, p.option_names, p.published, p.complementary_handles)
       is distinct from (excluded.title, excluded.description_html, excluded.vendor, excluded.product_type, excluded.tags,
         excluded.option_names, excluded.published, ${complementary})
     returning p.handle, (xmax = 0) as inserted`,
    [JSON.stringify(rows), keepingComplementary],
  );
  const created = written.filter((row) => row.inserted).length;
  report.products.created += created;
  report.products.updated += written.length - created;
  report.products.unchanged += products.length - written.length;
  const ids = await tx.query<{ id: number; handle: string }>('select id, handle from products where handle = any($1::text[])', [
    products.map((p) => p.handle),
  ]);
  return new Map(ids.map((row) => [row.handle, row.id]));
}

const VARIANT_COLUMNS = `title, sku, option_values, price_cents, compare_at_cents, inventory_tracked, inventory_policy,
  requires_shipping, taxable, barcode, weight_grams`;

async function upsertVariants(
  tx: Queryable,
  batch: CheckedProduct[],
  productIds: Map<string, number>,
  report: ImportReport,
  options: ImportOptions,
): Promise<Map<string, number | null>> {
  const rows = batch.flatMap(({ index: p, product }) =>
    product.variants.map((variant, index) => ({
      product_id: productIds.get(product.handle)!,
      at: `products.${p}.variants.${index}`,
      position: index + 1,
      title: variant.title || (variant.options ?? []).join(' / ') || 'Default Title',
      sku: variant.sku ?? null,
      option_values: variant.options ?? [],
      price_cents: variant.price,
      compare_at_cents: variant.compare_at_price ?? null,
      inventory_tracked: variant.inventory_tracked ?? true,
      inventory_policy: variant.inventory_policy ?? 'deny',
      inventory_quantity: variant.inventory_quantity ?? null,
      requires_shipping: variant.requires_shipping ?? true,
      taxable: variant.taxable ?? true,
      barcode: variant.barcode ?? null,
      weight_grams: variant.weight_grams ?? 0,
    })),
  );
  await tx.query(
    `create temp table import_variants as
     select x.*, null::bigint as variant_id
     from jsonb_to_recordset($1::jsonb) as x(product_id bigint, at text, position integer, title text, sku text,
       option_values text[], price_cents integer, compare_at_cents integer, inventory_tracked boolean, inventory_policy text,
       inventory_quantity integer, requires_shipping boolean, taxable boolean, barcode text, weight_grams integer)`,
    [JSON.stringify(rows)],
  );
  const stolen = await tx.query<{ at: string; sku: string }>(
    `select s.at, s.sku from import_variants s join variants v on v.sku = s.sku where v.product_id <> s.product_id limit 1`,
  );
  if (stolen[0]) {
    throw new ImportError(`${stolen[0].at}.sku`, `SKU "${stolen[0].sku}" belongs to another product; give this variant its own SKU`);
  }
  // Variants are matched by SKU, or by option values when neither side has a SKU: their ids (in carts) stay.
  await tx.query(`update import_variants s set variant_id = v.id from variants v where s.sku is not null and v.sku = s.sku`);
  await tx.query(
    `update import_variants s set variant_id = v.id from variants v
     where s.sku is null and v.product_id = s.product_id and v.sku is null and v.option_values = s.option_values`,
  );
  // The stored variant each of the file's was matched to (none: a new one), for the report's changes.
  const matching = await tx.query<{ at: string; variant_id: number | null }>('select at, variant_id from import_variants');
  // Archived, not deleted: a cart line (or an order line) may name the variant. An archived variant leaves the
  // catalog; listing its SKU again in a later import brings it back with the same id.
  // The batch's products by id, as an array: the planner then reads their variants through the index instead of
  // the whole table, which a batch at a time would read again and again as the import grows it. (A variant matched
  // by SKU is of the same product: one of another product was refused above.)
  const batchProductIds = [...productIds.values()];
  const removed = await tx.query(
    `update variants v set archived_at = now(), updated_at = now()
      where v.product_id = any($1::bigint[]) and v.archived_at is null
        and not exists (select 1 from import_variants s where s.variant_id = v.id) returning v.id`,
    [batchProductIds],
  );
  const updated = await tx.query(
    `update variants v set position = s.position, title = s.title, option_values = s.option_values, price_cents = s.price_cents,
       compare_at_cents = s.compare_at_cents, inventory_tracked = s.inventory_tracked, inventory_policy = s.inventory_policy,
       requires_shipping = s.requires_shipping, taxable = s.taxable,
       barcode = s.barcode, weight_grams = s.weight_grams, archived_at = null, updated_at = now()
     from import_variants s
     where v.product_id = any($1::bigint[]) and v.id = s.variant_id and (v.position, v.title, v.option_values, v.price_cents, v.compare_at_cents, v.inventory_tracked,
       v.inventory_policy, v.requires_shipping, v.taxable, v.barcode, v.weight_grams, v.archived_at is null)
       is distinct from (s.position, s.title, s.option_values, s.price_cents, s.compare_at_cents, s.inventory_tracked,
       s.inventory_policy, s.requires_shipping, s.taxable, s.barcode, s.weight_grams, true)
     returning v.id`,
    [batchProductIds],
  );
  const inserted = await tx.query<{ id: number }>(
    `with added as (
       insert into variants (product_id, position, ${VARIANT_COLUMNS})
       select product_id, position, ${VARIANT_COLUMNS} from import_variants where variant_id is null
       order by product_id, position returning id, product_id, position
     )
     update import_variants s set variant_id = added.id from added
      where s.variant_id is null and s.product_id = added.product_id and s.position = added.position
     returning added.id`,
  );
  const restocked = await applyStockLevels(tx, report, options);
  const matched = rows.length - inserted.length;
  const updatedIds = new Set(updated.map((row) => row.id as number));
  const restockedOnly = restocked.filter((variantId) => !updatedIds.has(variantId)).length;
  report.variants.created += inserted.length;
  report.variants.updated += updated.length + restockedOnly;
  report.variants.unchanged += matched - updated.length - restockedOnly;
  report.variants.removed += removed.length;
  // Each batch makes its own; a failed batch rolls the whole transaction back, and the table with it.
  await tx.query('drop table import_variants');
  return new Map(matching.map((row) => [row.at, row.variant_id]));
}

/**
 * Stock of the variants in import_variants: a variant without a level (a new one) starts at the file's quantity
 * or 0; an existing level changes only with setStock, where the file gives a quantity. Answers the variants whose
 * existing level changed.
 */
async function applyStockLevels(tx: Queryable, report: ImportReport, options: ImportOptions): Promise<number[]> {
  const started = await tx.query<{ variant_id: number }>(
    `insert into inventory_levels (variant_id, on_hand)
     select variant_id, coalesce(inventory_quantity, 0) from import_variants on conflict (variant_id) do nothing
     returning variant_id`,
  );
  // The levels that were there before, by id as an array (read through the index, not the whole table).
  const startedIds = new Set(started.map((row) => row.variant_id));
  const given = await tx.query<{ variant_id: number }>('select variant_id from import_variants where inventory_quantity is not null');
  const kept = given.map((row) => row.variant_id).filter((variantId) => !startedIds.has(variantId));
  // Locked in variant order, as takes lock them (no deadlock), so `previous` is the level this import replaces.
  const existing = await tx.query<{ variant_id: number; sku: string | null; on_hand: number; quantity: number }>(
    `select i.variant_id, s.sku, i.on_hand, s.inventory_quantity as quantity
       from inventory_levels i join import_variants s on s.variant_id = i.variant_id
      where i.variant_id = any($1::bigint[]) and s.inventory_quantity is not null
      order by i.variant_id${options.setStock ? ' for update of i' : ''}`,
    [kept],
  );
  const differing = existing.filter((row) => row.on_hand !== row.quantity);
  if (!options.setStock) {
    report.stock.keptExisting += differing.length;
    return [];
  }
  if (differing.length === 0) return [];
  await tx.query(
    `update inventory_levels i set on_hand = u.on_hand, change_seq = nextval('inventory_change_seq'), updated_at = now()
       from unnest($1::bigint[], $2::int[]) as u(variant_id, on_hand)
      where i.variant_id = u.variant_id`,
    [differing.map((row) => row.variant_id), differing.map((row) => row.quantity)],
  );
  for (const row of differing) report.stock.set.push({ sku: row.sku, variantId: row.variant_id, previous: row.on_hand, onHand: row.quantity });
  return differing.map((row) => row.variant_id);
}

async function replaceImages(tx: Queryable, products: ProductInput[], productIds: Map<string, number>): Promise<void> {
  await tx.query('delete from product_images where product_id = any($1::bigint[])', [[...productIds.values()]]);
  const rows = products.flatMap((product) =>
    (product.images ?? []).map((image, index) => ({
      product_id: productIds.get(product.handle)!,
      position: index + 1,
      src: image.src,
      alt: image.alt ?? null,
      width: image.width ?? null,
      height: image.height ?? null,
    })),
  );
  await tx.query(
    `insert into product_images (product_id, position, src, alt, width, height)
     select product_id, position, src, alt, width, height
     from jsonb_to_recordset($1::jsonb) as x(product_id bigint, position integer, src text, alt text, width integer, height integer)`,
    [JSON.stringify(rows)],
  );
}

/**
 * Sets a product's plans to the file's, keeping the ids of those it states again (carts, checkouts and orders name
 * them) by matching groups by name and plans by name within their group; those it no longer lists are removed.
 */
async function replaceSellingPlans(tx: Queryable, productId: number, product: ProductInput): Promise<void> {
  const groups = product.selling_plan_groups ?? [];
  const keptGroups: number[] = [];
  for (const [g, group] of groups.entries()) {
    const rows = await tx.query<{ id: number }>(
      `insert into selling_plan_groups (product_id, name, position) values ($1, $2, $3)
       on conflict (product_id, name) do update set position = excluded.position returning id`,
      [productId, group.name, g + 1],
    );
    const groupId = rows[0]!.id;
    keptGroups.push(groupId);
    const keptPlans: number[] = [];
    for (const [p, plan] of group.plans.entries()) {
      const planRows = await tx.query<{ id: number }>(
        `insert into selling_plans (group_id, name, description, discount_percent, interval_unit, interval_count, position)
         values ($1, $2, $3, $4, $5, $6, $7)
         on conflict (group_id, name) do update set description = excluded.description,
           discount_percent = excluded.discount_percent, interval_unit = excluded.interval_unit,
           interval_count = excluded.interval_count, position = excluded.position
         returning id`,
        [groupId, plan.name, plan.description ?? '', plan.discount_percent, plan.interval_unit ?? 'month', plan.interval_count ?? 1, p + 1],
      );
      keptPlans.push(planRows[0]!.id);
    }
    await tx.query('delete from selling_plans where group_id = $1 and not (id = any($2::bigint[]))', [groupId, keptPlans]);
  }
  await tx.query('delete from selling_plan_groups where product_id = $1 and not (id = any($2::bigint[]))', [productId, keptGroups]);
}

async function upsertCollection(tx: Queryable, collection: CollectionInput, at: string, report: ImportReport): Promise<void> {
  // One statement resolves every handle (a collection may list all of a large catalog), in the collection's order.
  const members = await tx.query<{ id: number | null }>(
    `select p.id from unnest($1::text[]) with ordinality as m(handle, position) left join products p on p.handle = m.handle
      order by m.position`,
    [collection.products],
  );
  const missing = members.findIndex((member) => member.id === null);
  if (missing >= 0) throw new ImportError(`${at}.products.${missing}`, `no product has the handle "${collection.products[missing]}"`);
  const productIds = [...new Set(members.map((member) => member.id as number))];
  const values = [collection.handle, collection.title, collection.description_html ?? '', collection.published ?? true];
  const existing = await tx.query<{ id: number; title: string; description_html: string; published: boolean; handles: string[] }>(
    `select c.id, c.title, c.description_html, c.published,
       coalesce((select array_agg(p.handle order by m.position, m.product_id) from collection_products m join products p on p.id = m.product_id
                  where m.collection_id = c.id), '{}') as handles
       from collections c where c.handle = $1`,
    [collection.handle],
  );
  const was: StoredCollection | undefined = existing[0] && {
    title: existing[0].title,
    descriptionHtml: existing[0].description_html,
    published: existing[0].published,
    productHandles: existing[0].handles,
  };
  const change = collectionChange(collection, was);
  if (change) report.changes.collections.push(change);
  let collectionId: number;
  if (existing[0]) {
    collectionId = existing[0].id;
    const [kept] = await tx.query<{ same: boolean }>(
      `select coalesce(array_agg(product_id order by position), '{}') = $2::bigint[] as same from collection_products where collection_id = $1`,
      [collectionId, productIds],
    );
    const updated = await tx.query(
      `update collections set title = $2, description_html = $3, published = $4, updated_at = now()
       where handle = $1 and (title, description_html, published) is distinct from ($2, $3, $4::boolean) returning id`,
      values,
    );
    report.collections[updated.length > 0 || !kept?.same ? 'updated' : 'unchanged']++;
  } else {
    const rows = await tx.query<{ id: number }>(
      'insert into collections (handle, title, description_html, published) values ($1, $2, $3, $4) returning id',
      values,
    );
    collectionId = rows[0]!.id;
    report.collections.created++;
  }
  await tx.query('delete from collection_products where collection_id = $1', [collectionId]);
  await tx.query(
    `insert into collection_products (collection_id, product_id, position)
     select $1, m.id, m.position from unnest($2::bigint[]) with ordinality as m(id, position)`,
    [collectionId, productIds],
  );
}
