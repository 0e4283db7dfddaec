/**
 * The session cart, door-agnostic: the storefront routes and the commerce-protocol tools both call these and
 * map the priced cart they answer to their own shapes. A cart is addressed by its token (the `cart` cookie's
 * value, the UCP cart id). Every method takes the database handle it runs on: the store's database, or a
 * transaction the caller opened (so a checkout can read and change a cart inside its own unit of work).
 *
 * A change reads the cart (or takes it as this instance last wrote it), applies the pure rules of cart.ts and
 * writes the difference as a compare-and-set on the cart's version: if another instance changed the cart in
 * between, nothing is written and the change is applied again to what is stored now, so no update is lost.
 * On the store's database, changes to one cart wait for each other within this instance and changes to
 * different carts share statements (write-batcher.ts); inside a caller's transaction a change is written at
 * once, in that transaction. A refused change throws a CartError (or CartNotFound) and stores nothing; no row
 * is written until a cart first changes.
 */
import type { Catalog } from '../catalog/catalog.js';
import type { Database, Queryable } from '../db/database.js';
import type { StockLevels } from '../inventory/stock.js';
import {
  addItems,
  CartError,
  changeLine,
  clearLines,
  emptyCart,
  isEmptyCart,
  lineChanges,
  liveLines,
  priceCart,
  replaceLines,
  setDetails,
  setQuantities,
  type Cart,
  type CartLimits,
  type ItemToAdd,
  type LineTarget,
  type PricedCart,
  type ReplacementItem,
  type VariantLookup,
} from './cart.js';
import {
  cartTokenKey,
  closedCartToken,
  createCart,
  deleteCartAtVersion,
  deleteCartByToken,
  handOverCart,
  isRetiredCartToken,
  purgeExpiredCarts,
  readCart,
  retireCartToken,
  unpublishedProductTitles,
  writeCarts,
  type StoredCart,
} from './cart-store.js';
import { CartTokens, isCartToken, newCartTokenKey } from './cart-token.js';
import { CartWriteBatcher } from './write-batcher.js';
import { parseId } from '../catalog/ids.js';

export { CartError } from './cart.js';
export type { ItemToAdd, LineTarget, PricedCart, ReplacementItem } from './cart.js';

/** The token names no live cart (never created, expired, or canceled). */
export class CartNotFound extends Error {
  constructor(readonly token: string | undefined) {
    super('no live cart has this token');
    this.name = 'CartNotFound';
  }
}

export interface CartView {
  /** The token of the cart shown: a new one when the token asked for named no live cart. */
  token: string;
  cart: PricedCart;
  /** True when the call stored a change (and so renewed the cart's lifetime). */
  changed: boolean;
}

/** Quantities for update.js: `{line key or variant id: quantity}`, or one quantity per line in the cart's order. */
export type QuantityUpdates = Record<string, number> | readonly number[];

export interface CartDetails {
  note?: string | undefined;
  attributes?: Record<string, string> | undefined;
}

/**
 * What taking a cart through its link did: `taken`, the cart moved to a new token for whoever took it; `held`, they
 * hold it already (their token is the cart's); `handed_over`, someone else took it before; `none`, no such cart.
 */
export type HandOver = { kind: 'taken' | 'held'; view: CartView } | { kind: 'handed_over' } | { kind: 'none' };

/**
 * What a cart's link names for whoever opens it, read only: `offered`, a live cart they may take over; `held`, a cart
 * they hold already (the link's, or the one it was handed over to); `handed_over`, someone else took it; `none`, no cart.
 */
export type CartLink = { kind: 'offered' | 'held'; view: CartView } | { kind: 'handed_over' } | { kind: 'none' };

export interface ChangeOptions {
  /** Refuse with CartNotFound when the token names no live cart, instead of starting one (the UCP door's rule). */
  mustExist?: boolean;
}

/** What a line's `id` names: a line key (`{variantId}:{hash}`) or, as Shopify allows, a variant id (its first line). */
export function lineTargetFromId(id: string | number): LineTarget {
  const variantId = parseId(id);
  return variantId === undefined ? { key: String(id) } : { variantId };
}

/** A change that keeps losing the compare-and-set gives up; only many instances hammering one cart get near this. */
const MAX_WRITE_ATTEMPTS = 50;
/** How many carts an instance remembers as it last wrote them. */
const RECENT_CARTS = 10_000;
/** Cart write statements running at once on a PostgreSQL server (of the pool's connections); PGlite runs one at a time. */
const SERVER_WRITES_IN_FLIGHT = 4;

/** The store's database (changes are queued and batched on it) rather than a caller's transaction. */
const isDatabase = (db: Queryable): db is Database => typeof (db as Partial<Database>).transaction === 'function';

const isUniqueViolation = (error: unknown) => (error as { code?: string } | null)?.code === '23505';

/**
 * The carts this instance wrote last, as written, so the next change to one skips reading it. Safe on a
 * shared database: the write checks the version, and a stale entry only costs a read and a retry. Only
 * changes committed on their own are remembered (a caller's transaction may still roll back).
 */
class RecentCarts {
  private readonly carts = new Map<string, StoredCart>();

  get(token: string): StoredCart | undefined {
    return this.carts.get(token);
  }

  remember(stored: StoredCart): void {
    this.carts.delete(stored.cart.token);
    this.carts.set(stored.cart.token, stored);
    if (this.carts.size > RECENT_CARTS) this.carts.delete(this.carts.keys().next().value!);
  }

  forget(token: string): void {
    this.carts.delete(token);
  }
}

export interface CartServiceOptions {
  catalog: Catalog;
  stock: StockLevels;
  /** The per-line quantity ceiling (CART_MAX_LINE_QUANTITY). */
  maxLineQuantity: number;
}

export class CartService {
  /** The last change queued for each cart token being changed on this instance. */
  private readonly pending = new Map<string, Promise<void>>();
  private readonly recent = new RecentCarts();
  private readonly batchers = new WeakMap<Database, CartWriteBatcher>();

  private constructor(
    private readonly options: CartServiceOptions,
    private readonly tokens: CartTokens,
  ) {}

  /** The cart service of a store: reads (or makes, once) the key that signs the store's cart tokens. */
  static async open(db: Queryable, options: CartServiceOptions): Promise<CartService> {
    const key = await cartTokenKey(db, newCartTokenKey());
    return new CartService(options, new CartTokens(Buffer.from(key, 'base64url')));
  }

  /** The cart a token names, or a fresh empty one (a new token, not stored) when it names no live cart. */
  async getCart(db: Queryable, token: string | undefined): Promise<CartView> {
    return (await this.findCart(db, token)) ?? this.view(emptyCart(this.tokens.issue()), this.lookup(), false);
  }

  /** The live cart a token names, or undefined. */
  async findCart(db: Queryable, token: string | undefined): Promise<CartView | undefined> {
    if (!isCartToken(token)) return undefined;
    const lookup = this.lookup();
    const stored = await readCart(db, token);
    return stored ? this.view(stored.cart, lookup, false) : undefined;
  }

  /** Adds items to the cart (a new cart when the token names none): all of them, or none with a CartError. */
  async addItems(db: Queryable, token: string | undefined, items: readonly ItemToAdd[]): Promise<CartView> {
    await this.explainMissingVariants(db, items.map((item) => item.variantId));
    return this.change(db, token, (cart, lookup) => addItems(cart, items, lookup, this.limits));
  }

  /** Sets one line's quantity (0 removes it). */
  async changeLine(db: Queryable, token: string | undefined, target: LineTarget, quantity: number): Promise<CartView> {
    return this.change(db, token, (cart, lookup) => changeLine(cart, target, quantity, lookup, this.limits));
  }

  /** Sets several quantities at once, and the note and attributes; a variant id with no line adds one. */
  async setQuantities(db: Queryable, token: string | undefined, updates: QuantityUpdates, details: CartDetails = {}): Promise<CartView> {
    if (!Array.isArray(updates)) {
      const variantIds = Object.keys(updates).map(lineTargetFromId).flatMap((t) => ('variantId' in t ? [t.variantId] : []));
      await this.explainMissingVariants(db, variantIds);
    }
    return this.change(db, token, (cart, lookup) => {
      const quantities = updates as Record<string, number> | number[];
      let targeted: { target: LineTarget; quantity: number }[];
      if (Array.isArray(quantities)) {
        if (quantities.length !== cart.lines.length) {
          throw new CartError(
            'no_such_line',
            `updates lists ${quantities.length} quantities but the cart has ${cart.lines.length} line${cart.lines.length === 1 ? '' : 's'}.`,
          );
        }
        targeted = quantities.map((quantity, index) => ({ target: { line: index + 1 }, quantity }));
      } else {
        targeted = Object.entries(quantities).map(([id, quantity]) => ({ target: lineTargetFromId(id), quantity }));
      }
      return setDetails(setQuantities(cart, targeted, lookup, this.limits), details);
    });
  }

  /**
   * Sets the cart's lines to exactly these items, as one change: whatever another change stored before it is
   * replaced too, and it applies whole or, with a CartError, not at all. Lines that stay keep their keys; an
   * item's `key` keeps the line it names (replaceLines in cart.ts); an empty list empties the cart. The note
   * and attributes stay. Without `mustExist`, a token naming no live cart starts one.
   */
  async replaceLines(db: Queryable, token: string | undefined, items: readonly ReplacementItem[], options: ChangeOptions = {}): Promise<CartView> {
    await this.explainMissingVariants(db, items.map((item) => item.variantId));
    return this.change(db, token, (cart, lookup) => replaceLines(cart, items, lookup, this.limits), options);
  }

  /** Removes every line; the note and attributes stay, as on Shopify. */
  async clear(db: Queryable, token: string | undefined): Promise<CartView> {
    return this.change(db, token, (cart) => clearLines(cart));
  }

  /**
   * Deletes the cart, in turn with the other changes to it (so it never races an update); its token then names
   * no live cart. Answers the cart as it was; CartNotFound when there was none.
   */
  async cancel(db: Queryable, token: string | undefined): Promise<CartView> {
    if (!isCartToken(token)) throw new CartNotFound(token);
    return this.inTurn(db, token, async () => {
      for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
        const stored = await readCart(db, token);
        if (!stored) throw new CartNotFound(token);
        this.recent.forget(token);
        if (await deleteCartAtVersion(db, stored.id, stored.version)) {
          await retireCartToken(db, token);
          return this.view(stored.cart, this.lookup(), true);
        }
      }
      throw new Error(`cart changed by others ${MAX_WRITE_ATTEMPTS} times in a row while we tried to cancel it`);
    });
  }

  /**
   * Closes a cart whose order was placed, inside the order's transaction: its token then names no live cart
   * (the storefront hands out a fresh one, get_cart answers not found). A change to it racing the order finds
   * no cart and starts a new one.
   */
  async close(tx: Queryable, token: string): Promise<void> {
    this.recent.forget(token);
    await deleteCartByToken(tx, token);
  }

  /**
   * What a cart's link (`token`) names for whoever opens it, holding `receiverToken`; reads only, so a link preview
   * (a chat app fetching the link an agent posted) takes nothing.
   */
  async cartLink(db: Queryable, token: string, receiverToken: string | undefined): Promise<CartLink> {
    if (!isCartToken(token)) return { kind: 'none' };
    const view = await this.findCart(db, token);
    if (view) return { kind: receiverToken === token ? 'held' : 'offered', view };
    return this.afterHandOver(db, token, receiverToken);
  }

  /**
   * Hands the cart a token names to whoever takes it through its link (the link an agent hands its buyer),
   * `receiverToken` being the cart token they hold now: the cart moves to a new token for them, and the old one names
   * no cart again (the tools answer not found, a browser holding it gets a new cart), so nothing typed into the cart
   * afterwards is readable or changeable by whoever else held the link. The cart's checkouts stay with the old token,
   * which no longer reaches them: the receiver's checkout of the cart is a new one.
   */
  async handOver(db: Queryable, token: string, receiverToken: string | undefined): Promise<HandOver> {
    if (!isCartToken(token)) return { kind: 'none' };
    if (receiverToken === token) {
      const view = await this.findCart(db, token);
      if (view) return { kind: 'held', view };
    }
    return this.inTurn(db, token, async () => {
      this.recent.forget(token);
      const newToken = this.tokens.issue();
      if (await handOverCart(db, token, newToken)) {
        const view = await this.findCart(db, newToken);
        return view ? { kind: 'taken', view } : { kind: 'none' };
      }
      return this.afterHandOver(db, token, receiverToken);
    });
  }

  /** A link whose token names no live cart: handed over (to `receiverToken`, who holds it, or to someone else), or none. */
  private async afterHandOver(db: Queryable, token: string, receiverToken: string | undefined): Promise<CartLink & HandOver> {
    const closed = await closedCartToken(db, token);
    if (closed?.handedTo == null) return { kind: 'none' };
    if (closed.handedTo !== receiverToken) return { kind: 'handed_over' };
    // The browser that took the cart, opening the link again, is led back to it (while it lives).
    const view = await this.findCart(db, receiverToken);
    return view ? { kind: 'held', view } : { kind: 'none' };
  }

  /** Deletes carts unchanged for the cart lifetime (14 days); returns how many. */
  purgeExpired(db: Queryable): Promise<number> {
    return purgeExpiredCarts(db);
  }

  private get limits(): CartLimits {
    return { maxLineQuantity: this.options.maxLineQuantity, stock: this.options.stock };
  }

  /** One catalog snapshot for the whole operation, so a concurrent reload cannot mix two catalogs in one answer. */
  private lookup(): VariantLookup {
    const snapshot = this.options.catalog.snapshot;
    return (variantId) => snapshot.variantById(variantId);
  }

  private view(cart: Cart, lookup: VariantLookup, changed: boolean): CartView {
    return { token: cart.token, cart: priceCart(cart, lookup), changed };
  }

  /** A variant the shop does not sell: say whether its product is unpublished or the variant does not exist. */
  private async explainMissingVariants(db: Queryable, variantIds: readonly number[]): Promise<void> {
    const snapshot = this.options.catalog.snapshot;
    const missing = [...new Set(variantIds)].filter((id) => !snapshot.variantById(id));
    if (missing.length === 0) return;
    const unpublished = await unpublishedProductTitles(db, missing.filter(Number.isSafeInteger));
    const id = missing[0]!;
    const title = unpublished.get(id);
    if (title !== undefined) throw new CartError('unavailable_product', `The product '${title}' is not available for sale.`);
    throw new CartError('unknown_variant', `Cannot find variant ${id}.`);
  }

  /** Applies a change to the stored cart (or to a new one when the token names none) and stores the difference. */
  private async change(db: Queryable, token: string | undefined, apply: (cart: Cart, lookup: VariantLookup) => Cart, options: ChangeOptions = {}): Promise<CartView> {
    const lookup = this.lookup();
    if (!isCartToken(token)) {
      if (options.mustExist) throw new CartNotFound(token);
      return this.createCart(db, this.tokens.issue(), apply, lookup);
    }
    const batched = isDatabase(db);
    return this.inTurn(db, token, async () => {
      // A token this store handed out keeps its cart; any other token (or one an expired cart still holds) gets a new one.
      let keepToken = this.tokens.issued(token);
      for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
        const cached = attempt === 1 && batched ? this.recent.get(token) : undefined;
        const stored = cached ?? (await readCart(db, token));
        if (!stored) {
          if (options.mustExist) throw new CartNotFound(token);
          // A token whose cart was closed (ordered) or canceled never starts another: its holders saw the old one.
          if (keepToken && (await isRetiredCartToken(db, token))) keepToken = false;
          try {
            return await this.createCart(db, keepToken ? token : this.tokens.issue(), apply, lookup);
          } catch (error) {
            // The token is taken: by a cart another change just started (apply this change to it on the next
            // read), or by an expired cart not yet purged (then the next attempt starts under a new token).
            if (keepToken && batched && isUniqueViolation(error)) {
              keepToken = false;
              continue;
            }
            throw error;
          }
        }
        const before = liveLines(stored.cart, lookup);
        let after: Cart;
        try {
          after = apply(before, lookup);
        } catch (error) {
          // The cached copy may be stale (another instance changed the cart): judge the change again on a fresh read.
          if (cached && error instanceof CartError) {
            this.recent.forget(token);
            continue;
          }
          throw error;
        }
        // Diffed against what is stored, so lines dropped by liveLines are deleted too.
        const write = { id: stored.id, version: stored.version, cart: after, changes: lineChanges(stored.cart, after) };
        const written = batched ? await this.batcherFor(db).write(write) : (await writeCarts(db, [write])).has(stored.id);
        if (written) {
          if (batched) this.recent.remember({ id: stored.id, version: stored.version + 1, cart: after });
          return this.view(after, lookup, true);
        }
        this.recent.forget(token);
      }
      throw new Error(`cart changed by others ${MAX_WRITE_ATTEMPTS} times in a row while we tried to change it`);
    });
  }

  /** A new cart under a token; one the change leaves empty is not stored, so crawlers write no rows. */
  private async createCart(db: Queryable, token: string, apply: (cart: Cart, lookup: VariantLookup) => Cart, lookup: VariantLookup): Promise<CartView> {
    const after = apply(emptyCart(token), lookup);
    if (isEmptyCart(after)) return this.view(after, lookup, false);
    const id = await createCart(db, after);
    if (isDatabase(db)) this.recent.remember({ id, version: 0, cart: after });
    return this.view(after, lookup, true);
  }

  private batcherFor(db: Database): CartWriteBatcher {
    let batcher = this.batchers.get(db);
    if (!batcher) {
      batcher = new CartWriteBatcher(db, db.kind === 'pglite' ? 1 : SERVER_WRITES_IN_FLIGHT);
      this.batchers.set(db, batcher);
    }
    return batcher;
  }

  /**
   * On the store's database, runs changes to one cart one after another within this instance (other instances
   * are kept out by the version). Inside a caller's transaction the change runs at once: waiting there for a
   * queued change could wait for the transaction itself (PGlite runs one at a time).
   */
  private async inTurn<T>(db: Queryable, token: string, work: () => Promise<T>): Promise<T> {
    if (!isDatabase(db)) return work();
    const previous = this.pending.get(token) ?? Promise.resolve();
    const run = previous.then(work);
    const settled = run.then(
      () => {},
      () => {},
    );
    this.pending.set(token, settled);
    try {
      return await run;
    } finally {
      if (this.pending.get(token) === settled) this.pending.delete(token);
    }
  }
}
