/**
 * Reads the catalog out of PostgreSQL for the in-memory snapshot: the published products a page at a time, each
 * page's rows built into one JSON text by the database. Row by row, the embedded database's driver copies and
 * decodes every field on its own (a few microseconds each: 20 s for 100,000 products and their 317,000
 * variants), and a whole table in one result grows its memory by the size of that result for good.
 */
import type { Database, Queryable } from '../db/database.js';
import type { Collection, Product, SellingPlanGroup, Variant } from './types.js';

/** Products read per round trip: a page's JSON is a few megabytes at most. */
const PRODUCTS_PER_PAGE = 5000;

/**
 * A timestamp as milliseconds since 1970, truncated as a JavaScript Date truncates microseconds (to_char would
 * write the ISO text itself, but costs the embedded database five times the whole page's JSON).
 */
const epochMs = (column: string) => `floor(extract(epoch from ${column}) * 1000)`;

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
  /** The published products, by id. */
  products: Product[];
  collections: Collection[];
}

/** The whole catalog as of one moment: every page read in one repeatable-read transaction. */
export function loadCatalog(db: Database, productsPerPage = PRODUCTS_PER_PAGE): Promise<CatalogRows> {
  return db.transaction(async (tx) => {
    await tx.query('set transaction isolation level repeatable read');
    const version = await catalogVersion(tx);
    const strings = new SharedStrings();
    const products: Product[] = [];
    for (let after = 0; ; ) {
      const page = await productPage(tx, after, productsPerPage, strings);
      if (page.length === 0) break;
      products.push(...page);
      after = page[page.length - 1]!.id;
    }
    return { version, products, collections: await readCollections(tx, strings) };
  });
}

/**
 * Types, vendors, tags, option values and variant titles recur across thousands of products, and so do times (an
 * import writes one `now()` into every product it creates): each distinct one is kept once, where JSON.parse would
 * make a string per occurrence.
 */
class SharedStrings {
  private readonly known = new Map<string, string>();
  private readonly times = new Map<number, string>();

  /** A time (milliseconds since 1970) as toISOString writes it. */
  iso(ms: number): string {
    let text = this.times.get(ms);
    if (text === undefined) {
      text = new Date(ms).toISOString();
      this.times.set(ms, text);
    }
    return text;
  }

  get(text: string): string {
    const kept = this.known.get(text);
    if (kept !== undefined) return kept;
    this.known.set(text, text);
    return text;
  }

  list(texts: string[]): string[] {
    for (let i = 0; i < texts.length; i++) texts[i] = this.get(texts[i]!);
    return texts;
  }
}

/** Reads one query's single JSON text (json_agg of the rows, or null when there are none). */
async function jsonRows<T>(tx: Queryable, sql: string, params: unknown[]): Promise<T[]> {
  const rows = await tx.query<{ rows: string | null }>(sql, params);
  const text = rows[0]?.rows;
  return text ? (JSON.parse(text) as T[]) : [];
}

type ProductRow = [number, string, string, string, string, string, string[], string[], string[], number, number, number | null];
type VariantRow = [number, number, number, string, string | null, string[], number, number | null, boolean, Variant['inventoryPolicy'], boolean, boolean, string | null, number];
type ImageRow = [number, number, number, string, string | null, number | null, number | null];
type PlanGroupRow = [number, number, string, [number, string, string, number, 'day' | 'week' | 'month' | 'year', number][]];

/** The next `size` published products after the id `after`, with their variants, images and selling plans. */
async function productPage(tx: Queryable, after: number, size: number, strings: SharedStrings): Promise<Product[]> {
  const productRows = await jsonRows<ProductRow>(
    tx,
    `select json_agg(json_build_array(id, handle, title, description_html, vendor, product_type, tags, option_names,
       complementary_handles, ${epochMs('created_at')}, ${epochMs('updated_at')}, ${epochMs('published_at')}) order by id)::text as rows
     from (select * from products where published and id > $1 order by id limit $2) p`,
    [after, size],
  );
  if (productRows.length === 0) return [];
  const products = new Map<number, Product>();
  for (const r of productRows) {
    products.set(r[0], {
      id: r[0],
      handle: r[1],
      title: r[2],
      descriptionHtml: r[3],
      vendor: strings.get(r[4]),
      productType: strings.get(r[5]),
      tags: strings.list(r[6]),
      optionNames: strings.list(r[7]),
      published: true,
      complementaryHandles: r[8],
      createdAt: strings.iso(r[9]),
      updatedAt: strings.iso(r[10]),
      publishedAt: r[11] === null ? null : strings.iso(r[11]),
      variants: [],
      images: [],
      sellingPlanGroups: [],
    });
  }
  // The page's products are the published ones with ids in (after, last]; rows of others in that range are skipped.
  const range = [after, productRows[productRows.length - 1]![0]];
  const variantRows = await jsonRows<VariantRow>(
    tx,
    `select json_agg(json_build_array(id, product_id, position, title, sku, option_values, price_cents, compare_at_cents,
       inventory_tracked, inventory_policy, requires_shipping, taxable, barcode, weight_grams))::text as rows
     from variants where product_id > $1 and product_id <= $2 and archived_at is null`,
    range,
  );
  // Sorted here: an ORDER BY costs the embedded database half as much again as building the page's JSON.
  variantRows.sort((a, b) => a[1] - b[1] || a[2] - b[2] || a[0] - b[0]);
  for (const r of variantRows) {
    products.get(r[1])?.variants.push({
      id: r[0],
      productId: r[1],
      position: r[2],
      title: strings.get(r[3]),
      sku: r[4],
      optionValues: strings.list(r[5]),
      priceCents: r[6],
      compareAtCents: r[7],
      inventoryTracked: r[8],
      inventoryPolicy: r[9],
      requiresShipping: r[10],
      taxable: r[11],
      barcode: r[12],
      weightGrams: r[13],
    });
  }
  const imageRows = await jsonRows<ImageRow>(
    tx,
    `select json_agg(json_build_array(id, product_id, position, src, alt, width, height) order by product_id, position)::text as rows
     from product_images where product_id > $1 and product_id <= $2`,
    range,
  );
  for (const r of imageRows) products.get(r[1])?.images.push({ id: r[0], position: r[2], src: r[3], alt: r[4], width: r[5], height: r[6] });
  const groupRows = await jsonRows<PlanGroupRow>(
    tx,
    `select json_agg(json_build_array(g.id, g.product_id, g.name,
       (select coalesce(json_agg(json_build_array(s.id, s.name, s.description, s.discount_percent, s.interval_unit, s.interval_count)
          order by s.position), '[]') from selling_plans s where s.group_id = g.id)) order by g.product_id, g.position)::text as rows
     from selling_plan_groups g where g.product_id > $1 and g.product_id <= $2`,
    range,
  );
  for (const r of groupRows) {
    const group: SellingPlanGroup = {
      id: r[0],
      name: r[2],
      plans: r[3].map((s) => ({ id: s[0], groupId: r[0], name: s[1], description: s[2], discountPercent: s[3], intervalUnit: s[4], intervalCount: s[5] })),
    };
    products.get(r[1])?.sellingPlanGroups.push(group);
  }
  return [...products.values()];
}

async function readCollections(tx: Queryable, strings: SharedStrings): Promise<Collection[]> {
  const rows = await jsonRows<[number, string, string, string, boolean, number, number, number[]]>(
    tx,
    `select json_agg(json_build_array(c.id, c.handle, c.title, c.description_html, c.published, ${epochMs('c.created_at')}, ${epochMs('c.updated_at')},
       (select coalesce(json_agg(m.product_id order by m.position, m.product_id), '[]') from collection_products m where m.collection_id = c.id))
       order by c.id)::text as rows
     from collections c`,
    [],
  );
  return rows.map((r) => ({ id: r[0], handle: r[1], title: r[2], descriptionHtml: r[3], published: r[4], createdAt: strings.iso(r[5]), updatedAt: strings.iso(r[6]), productIds: r[7] }));
}
