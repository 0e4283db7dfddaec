/** The inventory's SQL: stock levels per variant, their changes since a point, and the two writers of stock. */
import type { Queryable } from '../db/database.js';

export interface StockRead {
  levels: Map<number, number>;
  /** The highest change number read; the next read asks for what changed after it. */
  seq: number;
}

export async function readStock(db: Queryable): Promise<StockRead> {
  // Every level as one JSON text: the highest change number, the variant ids, and their units on hand in the same
  // order. At 300,000 variants, reading them as rows through the driver took seconds of a start; a [variant, units,
  // change] triple per level, half a second more than two arrays of numbers.
  const [row] = await db.query<{ levels: string }>(
    `select json_build_array(coalesce(max(change_seq), 0), coalesce(json_agg(variant_id order by variant_id), '[]'),
       coalesce(json_agg(on_hand order by variant_id), '[]'))::text as levels from inventory_levels`,
  );
  const [seq, variantIds, onHand] = JSON.parse(row?.levels ?? '[0, [], []]') as [number, number[], number[]];
  const levels = new Map<number, number>();
  for (let i = 0; i < variantIds.length; i++) levels.set(variantIds[i]!, onHand[i]!);
  return { levels, seq };
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
 * Sets variants' units on hand by id in the caller's transaction (an edit in the admin), their rows locked in variant
 * order first (as takes lock them: no deadlock). Answers each level as it was before; a variant without a level row
 * gets one.
 */
export async function setOnHandOfVariants(tx: Queryable, levels: ReadonlyMap<number, number>): Promise<Map<number, number | null>> {
  const ids = [...levels.keys()].sort((a, b) => a - b);
  if (ids.length === 0) return new Map();
  const locked = await tx.query<{ variant_id: number; on_hand: number }>(
    'select variant_id, on_hand from inventory_levels where variant_id = any($1::bigint[]) order by variant_id for update',
    [ids],
  );
  const previous = new Map<number, number | null>(ids.map((id) => [id, null]));
  for (const row of locked) previous.set(Number(row.variant_id), row.on_hand);
  await tx.query(
    `insert into inventory_levels as i (variant_id, on_hand) select * from unnest($1::bigint[], $2::int[])
     on conflict (variant_id) do update set on_hand = excluded.on_hand, change_seq = nextval('inventory_change_seq'), updated_at = now()`,
    [ids, ids.map((id) => levels.get(id)!)],
  );
  return previous;
}

/** Units on hand of variants, read in the caller's transaction and locked until it ends (variant order); none: no row. */
export async function lockOnHand(tx: Queryable, variantIds: readonly number[]): Promise<Map<number, number>> {
  const rows = await tx.query<{ variant_id: number; on_hand: number }>(
    'select variant_id, on_hand from inventory_levels where variant_id = any($1::bigint[]) order by variant_id for update',
    [[...variantIds]],
  );
  return new Map(rows.map((row) => [Number(row.variant_id), row.on_hand]));
}

/** What a take did: the variants that lacked units (then nothing was written), and units sold beyond stock. */
export interface TakeResult {
  short: number[];
  /** Variant id → units sold beyond what was on hand (back-orderable variants only; their stock stops at zero). */
  backordered: Map<number, number>;
}

/**
 * Takes units out of stock, all or nothing, in the caller's transaction. The rows are locked first (in variant
 * order, so two takes never deadlock), so two takes of the last unit cannot both succeed: the second reads the
 * level the first committed. Variants whose stock is not tracked are not touched; back-orderable ones go down
 * to zero, never below, and the units beyond stock are reported as backordered (unless `backorder` is false:
 * shipping units that were backordered takes them from stock for real).
 */
export async function takeStock(tx: Queryable, demand: ReadonlyMap<number, number>, options: { backorder?: boolean } = {}): Promise<TakeResult> {
  const backorder = options.backorder ?? true;
  const wanted = new Map([...demand].filter(([, quantity]) => quantity > 0));
  const result: TakeResult = { short: [], backordered: new Map() };
  if (wanted.size === 0) return result;
  const levels = await tx.query<{ variant_id: number | string; on_hand: number; inventory_policy: string }>(
    `select i.variant_id, i.on_hand, v.inventory_policy
       from inventory_levels i join variants v on v.id = i.variant_id
      where i.variant_id = any($1::bigint[]) and v.inventory_tracked
      order by i.variant_id
      for update of i`,
    [[...wanted.keys()]],
  );
  // A tracked variant without a level row has none on hand (a store predating its import writing one).
  const tracked = await tx.query<{ id: number | string; inventory_policy: string }>(
    'select id, inventory_policy from variants where id = any($1::bigint[]) and inventory_tracked',
    [[...wanted.keys()]],
  );
  const levelOf = new Map(levels.map((level) => [Number(level.variant_id), level.on_hand]));
  const updates: [number, number][] = [];
  for (const variant of tracked) {
    const variantId = Number(variant.id);
    const quantity = wanted.get(variantId)!;
    const onHand = levelOf.get(variantId) ?? 0;
    if (onHand >= quantity) updates.push([variantId, onHand - quantity]);
    else if (variant.inventory_policy === 'continue' && backorder) {
      if (levelOf.has(variantId)) updates.push([variantId, 0]);
      result.backordered.set(variantId, quantity - onHand);
    } else result.short.push(variantId);
  }
  if (result.short.length > 0) return { short: result.short, backordered: new Map() };
  await tx.query(
    `update inventory_levels i set on_hand = u.on_hand, change_seq = nextval('inventory_change_seq'), updated_at = now()
       from unnest($1::bigint[], $2::int[]) as u(variant_id, on_hand)
      where i.variant_id = u.variant_id`,
    [updates.map(([id]) => id), updates.map(([, onHand]) => onHand)],
  );
  return result;
}

/** Puts units back in stock (an order canceled before they shipped), in the caller's transaction. */
export async function returnStock(tx: Queryable, units: ReadonlyMap<number, number>): Promise<void> {
  const back = [...units].filter(([, quantity]) => quantity > 0);
  if (back.length === 0) return;
  // Locked in variant order, as takeStock locks them: a cancel and an approval never deadlock.
  await tx.query('select variant_id from inventory_levels where variant_id = any($1::bigint[]) order by variant_id for update', [back.map(([id]) => id)]);
  await tx.query(
    `update inventory_levels i set on_hand = i.on_hand + u.quantity, change_seq = nextval('inventory_change_seq'), updated_at = now()
       from unnest($1::bigint[], $2::int[]) as u(variant_id, quantity), variants v
      where i.variant_id = u.variant_id and v.id = i.variant_id and v.inventory_tracked`,
    [back.map(([id]) => id), back.map(([, quantity]) => quantity)],
  );
}

export interface StockListing {
  sku: string | null;
  variantId: number;
  productTitle: string;
  variantTitle: string;
  /** Units on hand; never below zero, so units sold beyond stock show in `backordered` instead. */
  onHand: number;
  /** Committed backorders: units of its order lines sold beyond stock and not yet shipped nor canceled. */
  backordered: number;
  tracked: boolean;
}

/** Every variant still sold (not archived) with its stock and committed backorders, by product title then position. */
export async function listStock(db: Queryable): Promise<StockListing[]> {
  const rows = await db.query<{
    sku: string | null;
    variant_id: number;
    product_title: string;
    variant_title: string;
    on_hand: number | null;
    backordered: number | null;
    tracked: boolean;
  }>(
    `with backorders as (
       select variant_id, sum(least(backordered, quantity - fulfilled - canceled)) as backordered
         from order_lines where backordered > 0 group by variant_id
     )
     select v.sku, v.id as variant_id, p.title as product_title, v.title as variant_title, i.on_hand, b.backordered,
            v.inventory_tracked as tracked
       from variants v join products p on p.id = v.product_id left join inventory_levels i on i.variant_id = v.id
       left join backorders b on b.variant_id = v.id
      where v.archived_at is null
      order by p.title, p.id, v.position, v.id`,
  );
  return rows.map((row) => ({
    sku: row.sku,
    variantId: row.variant_id,
    productTitle: row.product_title,
    variantTitle: row.variant_title,
    onHand: row.on_hand ?? 0,
    backordered: row.backordered ?? 0,
    tracked: row.tracked,
  }));
}
