/**
 * The cart's SQL. Each operation is one statement, so it is atomic without an explicit transaction: reading a
 * live cart, creating one with its first lines, and writing changes to one or more carts, each as a
 * compare-and-set on the cart's version (the row lock orders concurrent writers; a writer whose version is
 * stale writes nothing and reads again).
 */
import type { Queryable } from '../db/database.js';
import { CART_LIFETIME_DAYS, type Cart, type CartLine, type LineChanges } from './cart.js';

/** A stored cart: its row id and the version it had when read. */
export interface StoredCart {
  id: number;
  version: number;
  cart: Cart;
}

interface CartRow {
  id: number;
  version: number;
  note: string | null;
  attributes: Record<string, string>;
  line_key: string | null;
  variant_id: number | null;
  selling_plan_id: number | null;
  properties: Record<string, string> | null;
  quantity: number | null;
  position: number | null;
}

const LIVE = `updated_at > now() - make_interval(days => ${CART_LIFETIME_DAYS})`;

/** A live cart with its lines, read in one statement (one consistent snapshot). */
export async function readCart(db: Queryable, token: string): Promise<StoredCart | undefined> {
  const rows = await db.query<CartRow & Record<string, unknown>>(
    `select c.id, c.version, c.note, c.attributes,
            l.line_key, l.variant_id, l.selling_plan_id, l.properties, l.quantity, l.position
       from carts c left join cart_lines l on l.cart_id = c.id
      where c.token = $1 and c.${LIVE}`,
    [token],
  );
  const first = rows[0];
  if (!first) return undefined;
  const lines: CartLine[] = [];
  for (const row of rows) {
    if (row.line_key === null) continue;
    lines.push({
      key: row.line_key,
      variantId: row.variant_id!,
      sellingPlanId: row.selling_plan_id,
      properties: row.properties ?? {},
      quantity: row.quantity!,
      position: row.position!,
    });
  }
  lines.sort((a, b) => b.position - a.position);
  return { id: first.id, version: first.version, cart: { token, note: first.note, attributes: first.attributes, lines } };
}

/** A change to write: the cart as it should be, the version it was read at, and the line rows that differ. */
export interface CartWrite {
  id: number;
  version: number;
  cart: Cart;
  changes: LineChanges;
}

/** PostgreSQL's limit on parameters in one statement. */
export const MAX_STATEMENT_PARAMETERS = 65_535;

/** How many parameters writeCarts binds for one change. */
export function parameterCount(write: CartWrite): number {
  return 4 + 2 * write.changes.removals.length + 8 * write.changes.upserts.length;
}

/**
 * Statement parameters, numbered as they are added, each with a type cast: one scalar per value, because
 * PGlite binds scalars far faster than the arrays `unnest` would need.
 */
class Parameters {
  readonly values: unknown[] = [];

  add(value: unknown, type: string): string {
    return `$${this.values.push(value)}::${type}`;
  }

  /** A line's columns, after the cart id when one is given. */
  lineRow(line: CartLine, cartId?: string): string {
    const columns = [
      this.add(line.key, 'text'),
      this.add(line.variantId, 'bigint'),
      this.add(line.sellingPlanId, 'bigint'),
      this.add(JSON.stringify(line.properties), 'jsonb'),
      this.add(line.quantity, 'int'),
      this.add(line.position, 'int'),
    ];
    return `(${cartId === undefined ? '' : `${cartId}, `}${columns.join(', ')})`;
  }
}

const LINE_COLUMNS = 'line_key, variant_id, selling_plan_id, properties, quantity, position';
const INSERT_LINES = `insert into cart_lines (cart_id, ${LINE_COLUMNS})`;

/** Stores a new cart with its lines, note and attributes; returns its row id. */
export async function createCart(db: Queryable, cart: Cart): Promise<number> {
  const params = new Parameters();
  const cartRow = `(${params.add(cart.token, 'text')}, ${params.add(cart.note, 'text')}, ${params.add(JSON.stringify(cart.attributes), 'jsonb')})`;
  const lines = cart.lines.map((line) => params.lineRow(line));
  const insertLines =
    lines.length === 0 ? '' : `, lines as (${INSERT_LINES} select cart.id, u.* from cart, (values ${lines.join(', ')}) as u(${LINE_COLUMNS}))`;
  const [row] = await db.query<{ id: number }>(
    `with cart as (insert into carts (token, note, attributes) values ${cartRow} returning id)${insertLines}
     select id from cart`,
    params.values,
  );
  return row!.id;
}

/**
 * Writes changes to several carts in one statement; returns the ids of the carts written. A cart is written
 * only if nobody changed it since it was read (same version) and it is still live; it is renewed and its
 * version moves on. The carts are locked in id order first, so concurrent batches never deadlock, and the
 * line statements only touch carts this statement locked and updated.
 */
export async function writeCarts(db: Queryable, writes: readonly CartWrite[]): Promise<Set<number>> {
  const params = new Parameters();
  const input = writes.map(
    (w) => `(${params.add(w.id, 'bigint')}, ${params.add(w.version, 'int')}, ${params.add(w.cart.note, 'text')}, ${params.add(JSON.stringify(w.cart.attributes), 'jsonb')})`,
  );
  const removals = writes.flatMap((w) => w.changes.removals.map((key) => `(${params.add(w.id, 'bigint')}, ${params.add(key, 'text')})`));
  const upserts = writes.flatMap((w) => w.changes.upserts.map((line) => params.lineRow(line, params.add(w.id, 'bigint'))));
  const removeLines =
    removals.length === 0
      ? ''
      : `, removed as (
         delete from cart_lines l using (values ${removals.join(', ')}) as r(cart_id, line_key)
          where l.cart_id = r.cart_id and l.line_key = r.line_key and r.cart_id in (select id from cart))`;
  const upsertLines =
    upserts.length === 0
      ? ''
      : `, upserted as (
         ${INSERT_LINES} select u.* from (values ${upserts.join(', ')}) as u(cart_id, ${LINE_COLUMNS}) where u.cart_id in (select id from cart)
         on conflict (cart_id, line_key) do update set quantity = excluded.quantity)`;
  const rows = await db.query<{ id: number }>(
    `with input (id, version, note, attributes) as (values ${input.join(', ')}),
     locked as (
       select c.id from carts c join input on input.id = c.id and input.version = c.version
        where c.${LIVE}
        order by c.id
        for update of c
     ),
     cart as (
       update carts c set version = c.version + 1, updated_at = now(), note = input.note, attributes = input.attributes
         from input where c.id = input.id and c.id in (select id from locked)
       returning c.id
     )${removeLines}${upsertLines}
     select id from cart`,
    params.values,
  );
  return new Set(rows.map((row) => row.id));
}

/** Deletes a cart and its lines if it is still at the version read; true when it was. */
export async function deleteCartAtVersion(db: Queryable, id: number, version: number): Promise<boolean> {
  const rows = await db.query('delete from carts where id = $1 and version = $2 returning id', [id, version]);
  return rows.length > 0;
}

/** Deletes a cart and its lines whatever its version (its order was placed), in the caller's transaction. */
export async function deleteCartByToken(db: Queryable, token: string): Promise<void> {
  await db.query('delete from carts where token = $1', [token]);
  await retireCartToken(db, token);
}

/** Records that a cart's token may never start a cart again (its cart was closed or canceled). */
export async function retireCartToken(db: Queryable, token: string): Promise<void> {
  await db.query('insert into closed_cart_tokens (token) values ($1) on conflict do nothing', [token]);
}

/** Whether a token's cart was closed or canceled. */
export async function isRetiredCartToken(db: Queryable, token: string): Promise<boolean> {
  const rows = await db.query('select 1 from closed_cart_tokens where token = $1', [token]);
  return rows.length > 0;
}

/**
 * Moves a live cart to a new token and closes the old one, noting where the cart went; one statement, so one
 * transaction on every instance: of two concurrent hand-offs of one token, exactly one moves the cart. The version
 * moves on, so a change read under the old token (on any instance) writes nothing. True when the cart moved.
 */
export async function handOverCart(db: Queryable, token: string, newToken: string): Promise<boolean> {
  const rows = await db.query(
    `with moved as (
       update carts set token = $2, version = version + 1, updated_at = now() where token = $1 and ${LIVE} returning id
     )
     insert into closed_cart_tokens (token, handed_to) select $1, $2 from moved
     on conflict (token) do update set handed_to = excluded.handed_to, closed_at = now()
     returning token`,
    [token, newToken],
  );
  return rows.length > 0;
}

/** A closed token: the token its cart was handed over to, or null when the cart was ordered or canceled. */
export async function closedCartToken(db: Queryable, token: string): Promise<{ handedTo: string | null } | undefined> {
  const [row] = await db.query<{ handed_to: string | null }>('select handed_to from closed_cart_tokens where token = $1', [token]);
  return row ? { handedTo: row.handed_to } : undefined;
}

/** Deletes the carts no longer live (and retired tokens past the cart lifetime); returns how many carts. */
export async function purgeExpiredCarts(db: Queryable): Promise<number> {
  const [row] = await db.query<{ purged: number }>(
    `with purged as (delete from carts where not (${LIVE}) returning 1) select count(*)::int as purged from purged`,
  );
  await db.query(`delete from closed_cart_tokens where closed_at < now() - make_interval(days => ${CART_LIFETIME_DAYS})`);
  return row?.purged ?? 0;
}

/** Titles of the unpublished products of some variant ids (to say "not available" rather than "cannot find"). */
export async function unpublishedProductTitles(db: Queryable, variantIds: readonly number[]): Promise<Map<number, string>> {
  if (variantIds.length === 0) return new Map();
  const rows = await db.query<{ id: number; title: string }>(
    `select v.id, p.title from variants v join products p on p.id = v.product_id
      where v.id = any($1::bigint[]) and not p.published`,
    [variantIds],
  );
  return new Map(rows.map((row) => [row.id, row.title]));
}

/** The key that signs cart tokens: made by the first instance to ask, then shared by all. */
export async function cartTokenKey(db: Queryable, candidate: string): Promise<string> {
  const rows = await db.query<{ value: string }>(
    `with inserted as (
       insert into store_settings (name, value) values ('cart_token_key', $1) on conflict (name) do nothing returning value
     )
     select value from inserted union all select value from store_settings where name = 'cart_token_key'`,
    [candidate],
  );
  return rows[0]!.value;
}
