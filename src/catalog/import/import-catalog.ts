/**
 * Upserts a CatalogDocument into the database in one transaction: products by handle, variants by SKU
 * (or by option values when a variant has no SKU), collections by handle. The file is authoritative for
 * every product it names: images and selling plans it no longer lists are removed, and variants it no
 * longer lists are archived (carts and orders keep pointing at them; they leave the catalog). A new variant
 * starts at the file's `inventory_quantity` (zero without one). A variant the store already has keeps its stock
 * (a file exported before sales would undo them) unless the import is asked to `setStock`; then its level is
 * the file's quantity, where the file gives one. Anything wrong -> ImportError naming the place, nothing written.
 */
import { Compile } from 'typebox/compile';
import type { Database, Queryable } from '../../db/database.js';
import { bumpCatalogVersion } from '../catalog-store.js';
import {
  CatalogDocumentSchema,
  ImportError,
  type CatalogDocument,
  type CollectionInput,
  type ProductInput,
} from './catalog-document.js';

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
}

export interface ImportOptions {
  /** Set existing variants' stock to the file's quantities too (a stock count), not only new variants'. */
  setStock?: boolean;
}

const tally = (): Tally => ({ created: 0, updated: 0, unchanged: 0, removed: 0 });

/** Checks shape and cross-references before anything touches the database. */
const catalogDocumentValidator = Compile(CatalogDocumentSchema);

export function validateCatalogDocument(input: unknown): CatalogDocument {
  // The compiled check is fast on a large file; the slower error walk runs only to name what is wrong.
  const first = catalogDocumentValidator.Check(input) ? undefined : catalogDocumentValidator.Errors(input)[0];
  if (first) {
    const where = first.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : 'document';
    throw new ImportError(where, first.message);
  }
  const doc = input as CatalogDocument;
  const handles = new Set<string>();
  const skus = new Map<string, string>();
  doc.products.forEach((product, p) => {
    const at = `products.${p}`;
    if (handles.has(product.handle)) throw new ImportError(`${at}.handle`, `duplicate handle "${product.handle}"`);
    handles.add(product.handle);
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
        const other = skus.get(variant.sku);
        if (other) throw new ImportError(`${at}.variants.${v}.sku`, `SKU "${variant.sku}" is also used by ${other}`);
        skus.set(variant.sku, `${at}.variants.${v}`);
      }
    });
  });
  return doc;
}

export async function importCatalog(db: Database, input: unknown, options: ImportOptions = {}): Promise<ImportReport> {
  const doc = validateCatalogDocument(input);
  const report = await db.transaction((tx) => applyCatalogDocument(tx, doc, options));
  // The embedded database has no autovacuum to gather statistics: without them a large import leaves the
  // planner guessing (a stock update took several times longer at 10,000 products).
  if (report.products.created + report.variants.created > 0) await db.query('analyze products, variants, inventory_levels');
  return report;
}

/** Seeds a catalog only into an empty store; instances starting together against one server seed it once. */
export async function seedCatalogIfEmpty(db: Database, input: unknown): Promise<ImportReport | undefined> {
  const doc = validateCatalogDocument(input);
  return db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('storefront:seed-catalog'))");
    const existing = await tx.query('select 1 from products limit 1');
    return existing.length > 0 ? undefined : applyCatalogDocument(tx, doc, {});
  });
}

async function applyCatalogDocument(tx: Queryable, doc: CatalogDocument, options: ImportOptions): Promise<ImportReport> {
  const report: ImportReport = { products: tally(), variants: tally(), collections: tally(), stock: { set: [], keptExisting: 0 } };
  // Set-based statements: a 10,000-product file costs a handful of round trips, not tens of thousands.
  const productIds = await upsertProducts(tx, doc.products, report);
  await upsertVariants(tx, doc.products, productIds, report, options);
  await replaceImages(tx, doc.products, productIds);
  for (const product of doc.products) {
    if (product.selling_plan_groups?.length) await replaceSellingPlans(tx, productIds.get(product.handle)!, product);
  }
  const withoutPlans = doc.products.filter((p) => !p.selling_plan_groups?.length).map((p) => productIds.get(p.handle)!);
  await tx.query('delete from selling_plan_groups where product_id = any($1::bigint[])', [withoutPlans]);
  for (const [index, collection] of (doc.collections ?? []).entries()) {
    await upsertCollection(tx, collection, `collections.${index}`, report);
  }
  await bumpCatalogVersion(tx);
  return report;
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
  const written = await tx.query<{ handle: string; inserted: boolean }>(
    `insert into products as p (handle, title, description_html, vendor, product_type, tags, option_names, published,
       complementary_handles, published_at)
     select handle, title, description_html, vendor, product_type, tags, option_names, published, complementary_handles,
       case when published then now() end
     from jsonb_to_recordset($1::jsonb) as x(handle text, title text, description_html text, vendor text, product_type text,
       tags text[], option_names text[], published boolean, complementary_handles text[])
     on conflict (handle) do update set title = excluded.title, description_html = excluded.description_html,
       vendor = excluded.vendor, product_type = excluded.product_type, tags = excluded.tags, option_names = excluded.option_names,
       published = excluded.published, complementary_handles = excluded.complementary_handles, updated_at = now(),
       published_at = case when excluded.published then coalesce(p.published_at, now()) end
     where (p.title, p.description_html, p.vendor, p.product_type, p.tags, p.option_names, p.published, p.complementary_handles)
       is distinct from (excluded.title, excluded.description_html, excluded.vendor, excluded.product_type, excluded.tags,
         excluded.option_names, excluded.published, excluded.complementary_handles)
     returning p.handle, (xmax = 0) as inserted`,
    [JSON.stringify(rows)],
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
  products: ProductInput[],
  productIds: Map<string, number>,
  report: ImportReport,
  options: ImportOptions,
): Promise<void> {
  const rows = products.flatMap((product, p) =>
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
    `create temp table import_variants on commit drop as
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
  // Archived, not deleted: a cart line (or an order line) may name the variant. An archived variant leaves the
  // catalog; listing its SKU again in a later import brings it back with the same id.
  const removed = await tx.query(
    `update variants v set archived_at = now(), updated_at = now()
      where v.product_id in (select product_id from import_variants) and v.archived_at is null
        and v.id not in (select variant_id from import_variants where variant_id is not null) returning v.id`,
  );
  const updated = await tx.query(
    `update variants v set position = s.position, title = s.title, option_values = s.option_values, price_cents = s.price_cents,
       compare_at_cents = s.compare_at_cents, inventory_tracked = s.inventory_tracked, inventory_policy = s.inventory_policy,
       requires_shipping = s.requires_shipping, taxable = s.taxable,
       barcode = s.barcode, weight_grams = s.weight_grams, archived_at = null, updated_at = now()
     from import_variants s
     where v.id = s.variant_id and (v.position, v.title, v.option_values, v.price_cents, v.compare_at_cents, v.inventory_tracked,
       v.inventory_policy, v.requires_shipping, v.taxable, v.barcode, v.weight_grams, v.archived_at is null)
       is distinct from (s.position, s.title, s.option_values, s.price_cents, s.compare_at_cents, s.inventory_tracked,
       s.inventory_policy, s.requires_shipping, s.taxable, s.barcode, s.weight_grams, true)
     returning v.id`,
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
  // Locked in variant order, as takes lock them (no deadlock), so `previous` is the level this import replaces.
  const existing = await tx.query<{ variant_id: number; sku: string | null; on_hand: number; quantity: number }>(
    `select i.variant_id, s.sku, i.on_hand, s.inventory_quantity as quantity
       from inventory_levels i join import_variants s on s.variant_id = i.variant_id
      where s.inventory_quantity is not null and not (i.variant_id = any($1::bigint[]))
      order by i.variant_id${options.setStock ? ' for update of i' : ''}`,
    [started.map((row) => row.variant_id)],
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

/** Keeps plan ids stable across imports (carts refer to them) by matching groups and plans by name. */
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
  const productIds: number[] = [];
  for (const [index, handle] of collection.products.entries()) {
    const rows = await tx.query<{ id: number }>('select id from products where handle = $1', [handle]);
    if (!rows[0]) throw new ImportError(`${at}.products.${index}`, `no product has the handle "${handle}"`);
    if (!productIds.includes(rows[0].id)) productIds.push(rows[0].id);
  }
  const values = [collection.handle, collection.title, collection.description_html ?? '', collection.published ?? true];
  const existing = await tx.query<{ id: number }>('select id from collections where handle = $1', [collection.handle]);
  let collectionId: number;
  let changed: boolean;
  if (existing[0]) {
    collectionId = existing[0].id;
    const members = await tx.query<{ product_id: number }>(
      'select product_id from collection_products where collection_id = $1 order by position',
      [collectionId],
    );
    const updated = await tx.query(
      `update collections set title = $2, description_html = $3, published = $4, updated_at = now()
       where handle = $1 and (title, description_html, published) is distinct from ($2, $3, $4::boolean) returning id`,
      values,
    );
    changed = updated.length > 0 || JSON.stringify(members.map((m) => m.product_id)) !== JSON.stringify(productIds);
    report.collections[changed ? 'updated' : 'unchanged']++;
  } else {
    const rows = await tx.query<{ id: number }>(
      'insert into collections (handle, title, description_html, published) values ($1, $2, $3, $4) returning id',
      values,
    );
    collectionId = rows[0]!.id;
    report.collections.created++;
  }
  await tx.query('delete from collection_products where collection_id = $1', [collectionId]);
  for (const [position, productId] of productIds.entries()) {
    await tx.query('insert into collection_products (collection_id, product_id, position) values ($1, $2, $3)', [
      collectionId,
      productId,
      position + 1,
    ]);
  }
}
