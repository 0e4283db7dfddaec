/** Reads the catalog out of PostgreSQL, whole, for the in-memory snapshot. */
import type { Database, Queryable } from '../db/database.js';
import type { Collection, Product, ProductImage, SellingPlanGroup, Variant } from './types.js';

const iso = (value: unknown): string => new Date(value as string | Date).toISOString();

export async function catalogVersion(db: Queryable): Promise<number> {
  const rows = await db.query<{ version: number }>('select version from catalog_version');
  return rows[0]?.version ?? 0;
}

/** Marks the catalog changed; every instance reloads its snapshot when it sees the new version. */
export async function bumpCatalogVersion(tx: Queryable): Promise<void> {
  await tx.query('update catalog_version set version = version + 1');
}

export interface CatalogRows {
  version: number;
  products: Product[];
  collections: Collection[];
}

/** The whole catalog as of one moment: every table read in one repeatable-read transaction. */
export function loadCatalog(db: Database): Promise<CatalogRows> {
  return db.transaction(async (tx) => {
    await tx.query('set transaction isolation level repeatable read');
    return catalogFromRows(tx);
  });
}

async function catalogFromRows(db: Queryable): Promise<CatalogRows> {
  const version = await catalogVersion(db);
  const productRows = await db.query('select * from products order by id');
  const variantRows = await db.query('select * from variants where archived_at is null order by product_id, position, id');
  const imageRows = await db.query('select * from product_images order by product_id, position');
  const groupRows = await db.query('select * from selling_plan_groups order by product_id, position');
  const planRows = await db.query('select * from selling_plans order by group_id, position');
  const collectionRows = await db.query('select * from collections order by id');
  const memberRows = await db.query('select * from collection_products order by collection_id, position, product_id');

  const products = new Map<number, Product>();
  for (const r of productRows) {
    products.set(r.id as number, {
      id: r.id as number,
      handle: r.handle as string,
      title: r.title as string,
      descriptionHtml: r.description_html as string,
      vendor: r.vendor as string,
      productType: r.product_type as string,
      tags: r.tags as string[],
      optionNames: r.option_names as string[],
      published: r.published as boolean,
      complementaryHandles: r.complementary_handles as string[],
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
      publishedAt: r.published_at ? iso(r.published_at) : null,
      variants: [],
      images: [],
      sellingPlanGroups: [],
    });
  }
  for (const r of variantRows) {
    const variant: Variant = {
      id: r.id as number,
      productId: r.product_id as number,
      position: r.position as number,
      title: r.title as string,
      sku: (r.sku as string | null) ?? null,
      optionValues: r.option_values as string[],
      priceCents: r.price_cents as number,
      compareAtCents: (r.compare_at_cents as number | null) ?? null,
      inventoryTracked: r.inventory_tracked as boolean,
      inventoryPolicy: r.inventory_policy as Variant['inventoryPolicy'],
      requiresShipping: r.requires_shipping as boolean,
      taxable: r.taxable as boolean,
      barcode: (r.barcode as string | null) ?? null,
      weightGrams: r.weight_grams as number,
    };
    products.get(variant.productId)?.variants.push(variant);
  }
  for (const r of imageRows) {
    const image: ProductImage = {
      id: r.id as number,
      position: r.position as number,
      src: r.src as string,
      alt: (r.alt as string | null) ?? null,
      width: (r.width as number | null) ?? null,
      height: (r.height as number | null) ?? null,
    };
    products.get(r.product_id as number)?.images.push(image);
  }
  const groups = new Map<number, SellingPlanGroup>();
  for (const r of groupRows) {
    const group: SellingPlanGroup = { id: r.id as number, name: r.name as string, plans: [] };
    groups.set(group.id, group);
    products.get(r.product_id as number)?.sellingPlanGroups.push(group);
  }
  for (const r of planRows) {
    groups.get(r.group_id as number)?.plans.push({
      id: r.id as number,
      groupId: r.group_id as number,
      name: r.name as string,
      description: r.description as string,
      discountPercent: r.discount_percent as number,
      intervalUnit: r.interval_unit as 'day' | 'week' | 'month' | 'year',
      intervalCount: r.interval_count as number,
    });
  }
  const collections = new Map<number, Collection>();
  for (const r of collectionRows) {
    collections.set(r.id as number, {
      id: r.id as number,
      handle: r.handle as string,
      title: r.title as string,
      descriptionHtml: r.description_html as string,
      published: r.published as boolean,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
      productIds: [],
    });
  }
  for (const r of memberRows) collections.get(r.collection_id as number)?.productIds.push(r.product_id as number);

  return { version, products: [...products.values()], collections: [...collections.values()] };
}
