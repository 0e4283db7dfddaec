/** The inventory's SQL: stock levels per variant, their changes since a point, and the two writers of stock. */
import type { Queryable } from '../db/database.js';

export interface StockRead {
  levels: Map<number, number>;
  /** The highest change number read; the next read asks for what changed after it. */
  seq: number;
}

export async function readStock(db: Queryable): Promise<StockRead> {
  const rows = await db.query<{ variant_id: number; on_hand: number; change_seq: number }>(
    'select variant_id, on_hand, change_seq from inventory_levels',
  );
  return toStockRead(rows, 0);
}

export async function readStockChangedSince(db: Queryable, seq: number): Promise<StockRead> {
  const rows = await db.query<{ variant_id: number; on_hand: number; change_seq: number }>(
    'select variant_id, on_hand, change_seq from inventory_levels where change_seq > $1',
    [seq],
  );
  return toStockRead(rows, seq);
}

function toStockRead(rows: { variant_id: number; on_hand: number; change_seq: number }[], seq: number): StockRead {
  const levels = new Map<number, number>();
  let highest = seq;
  for (const row of rows) {
    levels.set(row.variant_id, row.on_hand);
    if (row.change_seq > highest) highest = row.change_seq;
  }
  return { levels, seq: highest };
}

/** Sets a variant's units on hand by SKU; undefined when no variant (not archived) has the SKU. */
export async function setOnHandBySku(db: Queryable, sku: string, onHand: number): Promise<{ variantId: number; previous: number } | undefined> {
  // Every variant has a level row (the import writes one), so this is one UPDATE; `previous` is read in the same statement.
  const rows = await db.query<{ variant_id: number; previous: number }>(
    `update inventory_levels i set on_hand = $2, change_seq = nextval('inventory_change_seq'), updated_at = now()
       from (select l.variant_id, l.on_hand from inventory_levels l join variants v on v.id = l.variant_id
              where v.sku = $1 and v.archived_at is null) p
      where i.variant_id = p.variant_id
     returning i.variant_id, p.on_hand as previous`,
    [sku, onHand],
  );
  const row = rows[0];
  return row ? { variantId: row.variant_id, previous: row.previous } : undefined;
}

/**
 * Takes units out of stock, all or nothing, in the caller's transaction: one conditional UPDATE, so two
 * takes of the last unit cannot both succeed (the second re-checks the row after the first commits).
 * Variants whose stock is not tracked are not touched; back-orderable ones go down to zero, never below.
 * Returns the variants that lacked units (nothing is written then: the caller's transaction must roll back).
 */
export async function takeStock(tx: Queryable, demand: ReadonlyMap<number, number>): Promise<number[]> {
  const wanted = [...demand].filter(([, quantity]) => quantity > 0);
  if (wanted.length === 0) return [];
  const rows = await tx.query<{ variant_id: number }>(
    `with demand as (
       select * from unnest($1::bigint[], $2::int[]) as d(variant_id, quantity)
     ), tracked as (
       select d.variant_id, d.quantity, v.inventory_policy from demand d join variants v on v.id = d.variant_id where v.inventory_tracked
     ), taken as (
       update inventory_levels i set on_hand = greatest(0, i.on_hand - t.quantity),
              change_seq = nextval('inventory_change_seq'), updated_at = now()
         from tracked t
        where i.variant_id = t.variant_id and (t.inventory_policy = 'continue' or i.on_hand >= t.quantity)
       returning i.variant_id
     )
     select t.variant_id from tracked t where t.variant_id not in (select variant_id from taken)`,
    [wanted.map(([id]) => id), wanted.map(([, quantity]) => quantity)],
  );
  return rows.map((row) => row.variant_id);
}

export interface StockListing {
  sku: string | null;
  variantId: number;
  productTitle: string;
  variantTitle: string;
  onHand: number;
  tracked: boolean;
}

/** Every variant still sold (not archived) with its stock, by product title then position. */
export async function listStock(db: Queryable): Promise<StockListing[]> {
  const rows = await db.query<{ sku: string | null; variant_id: number; product_title: string; variant_title: string; on_hand: number | null; tracked: boolean }>(
    `select v.sku, v.id as variant_id, p.title as product_title, v.title as variant_title, i.on_hand, v.inventory_tracked as tracked
       from variants v join products p on p.id = v.product_id left join inventory_levels i on i.variant_id = v.id
      where v.archived_at is null
      order by p.title, p.id, v.position, v.id`,
  );
  return rows.map((row) => ({
    sku: row.sku,
    variantId: row.variant_id,
    productTitle: row.product_title,
    variantTitle: row.variant_title,
    onHand: row.on_hand ?? 0,
    tracked: row.tracked,
  }));
}
