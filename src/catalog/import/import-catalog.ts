/**
 * Upserts a CatalogDocument into the database in one transaction: products by handle, variants by SKU
 * (or by option values when a variant has no SKU), collections by handle. The file is authoritative for
 * every product it names: variants, images and selling plans it no longer lists are removed.
 * Anything wrong -> ImportError naming the place, and nothing is written.
 */
import { Value } from 'typebox/value';
import type { Database, Queryable } from '../../db/database.js';
import { bumpCatalogVersion } from '../catalog-store.js';
import {
  CatalogDocumentSchema,
  ImportError,
  type CatalogDocument,
  type CollectionInput,
  type ProductInput,
  type VariantInput,
} from './catalog-document.js';

interface Tally {
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
}

export interface ImportReport {
  products: Tally;
  variants: Tally;
  collections: Tally;
}

const tally = (): Tally => ({ created: 0, updated: 0, unchanged: 0, removed: 0 });

/** Checks shape and cross-references before anything touches the database. */
export function validateCatalogDocument(input: unknown): CatalogDocument {
  const first = Value.Errors(CatalogDocumentSchema, input)[0];
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

export async function importCatalog(db: Database, input: unknown): Promise<ImportReport> {
  const doc = validateCatalogDocument(input);
  return db.transaction((tx) => applyCatalogDocument(tx, doc));
}

/** Seeds a catalog only into an empty store; instances starting together against one server seed it once. */
export async function seedCatalogIfEmpty(db: Database, input: unknown): Promise<ImportReport | undefined> {
  const doc = validateCatalogDocument(input);
  return db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('storefront:seed-catalog'))");
    const existing = await tx.query('select 1 from products limit 1');
    return existing.length > 0 ? undefined : applyCatalogDocument(tx, doc);
  });
}

async function applyCatalogDocument(tx: Queryable, doc: CatalogDocument): Promise<ImportReport> {
  const report: ImportReport = { products: tally(), variants: tally(), collections: tally() };
  for (const [index, product] of doc.products.entries()) await upsertProduct(tx, product, `products.${index}`, report);
  for (const [index, collection] of (doc.collections ?? []).entries()) {
    await upsertCollection(tx, collection, `collections.${index}`, report);
  }
  await bumpCatalogVersion(tx);
  return report;
}

async function upsertProduct(tx: Queryable, product: ProductInput, at: string, report: ImportReport): Promise<void> {
  const published = product.published ?? true;
  const values = [
    product.handle,
    product.title,
    product.description_html ?? '',
    product.vendor ?? '',
    product.product_type ?? '',
    product.tags ?? [],
    product.options ?? [],
    published,
    product.complementary ?? [],
  ];
  const existing = await tx.query<{ id: number }>('select id from products where handle = $1', [product.handle]);
  let productId: number;
  if (existing[0]) {
    productId = existing[0].id;
    const changed = await tx.query(
      `update products set title = $2, description_html = $3, vendor = $4, product_type = $5, tags = $6,
         option_names = $7, published = $8, complementary_handles = $9, updated_at = now(),
         published_at = case when $8 then coalesce(published_at, now()) else null end
       where handle = $1 and (title, description_html, vendor, product_type, tags, option_names, published, complementary_handles)
         is distinct from ($2, $3, $4, $5, $6::text[], $7::text[], $8, $9::text[])
       returning id`,
      values,
    );
    report.products[changed.length > 0 ? 'updated' : 'unchanged']++;
  } else {
    const inserted = await tx.query<{ id: number }>(
      `insert into products (handle, title, description_html, vendor, product_type, tags, option_names, published,
         complementary_handles, published_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, case when $8 then now() end) returning id`,
      values,
    );
    productId = inserted[0]!.id;
    report.products.created++;
  }

  const keptVariantIds: number[] = [];
  for (const [position, variant] of product.variants.entries()) {
    keptVariantIds.push(await upsertVariant(tx, productId, position + 1, variant, `${at}.variants.${position}`, report));
  }
  const removed = await tx.query('delete from variants where product_id = $1 and not (id = any($2::bigint[])) returning id', [
    productId,
    keptVariantIds,
  ]);
  report.variants.removed += removed.length;

  await replaceImages(tx, productId, product);
  await replaceSellingPlans(tx, productId, product);
}

async function upsertVariant(
  tx: Queryable,
  productId: number,
  position: number,
  variant: VariantInput,
  at: string,
  report: ImportReport,
): Promise<number> {
  const optionValues = variant.options ?? [];
  const title = variant.title || optionValues.join(' / ') || 'Default Title';
  const values = [
    productId,
    position,
    title,
    variant.sku ?? null,
    optionValues,
    variant.price,
    variant.compare_at_price ?? null,
    variant.inventory_tracked ?? true,
    variant.inventory_policy ?? 'deny',
    variant.inventory_quantity ?? 0,
    variant.requires_shipping ?? true,
    variant.taxable ?? true,
    variant.barcode ?? null,
    variant.weight_grams ?? 0,
  ];
  const existing = variant.sku
    ? await tx.query<{ id: number; product_id: number }>('select id, product_id from variants where sku = $1', [variant.sku])
    : await tx.query<{ id: number; product_id: number }>(
        'select id, product_id from variants where product_id = $1 and sku is null and option_values = $2::text[]',
        [productId, optionValues],
      );
  const match = existing[0];
  if (match && match.product_id !== productId) {
    throw new ImportError(`${at}.sku`, `SKU "${variant.sku}" belongs to another product; give this variant its own SKU`);
  }
  if (match) {
    const changed = await tx.query(
      `update variants set product_id = $1, position = $2, title = $3, sku = $4, option_values = $5, price_cents = $6,
         compare_at_cents = $7, inventory_tracked = $8, inventory_policy = $9, inventory_quantity = $10,
         requires_shipping = $11, taxable = $12, barcode = $13, weight_grams = $14, updated_at = now()
       where id = $15 and (position, title, option_values, price_cents, compare_at_cents, inventory_tracked, inventory_policy,
         inventory_quantity, requires_shipping, taxable, barcode, weight_grams)
         is distinct from ($2, $3, $5::text[], $6::integer, $7::integer, $8::boolean, $9, $10::integer, $11::boolean, $12::boolean, $13, $14::integer)
       returning id`,
      [...values, match.id],
    );
    report.variants[changed.length > 0 ? 'updated' : 'unchanged']++;
    return match.id;
  }
  const inserted = await tx.query<{ id: number }>(
    `insert into variants (product_id, position, title, sku, option_values, price_cents, compare_at_cents, inventory_tracked,
       inventory_policy, inventory_quantity, requires_shipping, taxable, barcode, weight_grams)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) returning id`,
    values,
  );
  report.variants.created++;
  return inserted[0]!.id;
}

async function replaceImages(tx: Queryable, productId: number, product: ProductInput): Promise<void> {
  await tx.query('delete from product_images where product_id = $1', [productId]);
  for (const [index, image] of (product.images ?? []).entries()) {
    await tx.query('insert into product_images (product_id, position, src, alt, width, height) values ($1, $2, $3, $4, $5, $6)', [
      productId,
      index + 1,
      image.src,
      image.alt ?? null,
      image.width ?? null,
      image.height ?? null,
    ]);
  }
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
