/**
 * The session cart, door-agnostic: the storefront routes and the commerce-protocol tools both call these.
 * A cart is addressed by its token (the `cart` cookie's value). A change reads the cart (or takes it as this
 * instance last wrote it), applies the pure rules of cart.ts and writes the difference as a compare-and-set
 * on the cart's version: if another instance changed the cart in between, nothing is written and the change
 * is applied again to what is stored now, so no update is lost. Within one instance, changes to one cart
 * wait for each other, and changes to different carts share statements (write-batcher.ts). A refused change
 * throws a CartError and stores nothing; no row is written until a cart first changes.
 */
import type { Config } from '../config.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Database } from '../db/database.js';
import type { Store } from '../store.js';
import {
  addItems,
  CartError,
  changeLine,
  clearLines,
  emptyCart,
  isEmptyCart,
  lineChanges,
  liveLines,
  replaceLines,
  setDetails,
  setQuantities,
  type Cart,
  type ItemToAdd,
  type LineTarget,
  type ReplacementItem,
  type VariantLookup,
} from './cart.js';
import { cartJson } from './cart-json.js';
import { createCart, deleteCart, purgeExpiredCarts, readCart, unpublishedProductTitles, type StoredCart } from './cart-store.js';
import { isCartToken, newCartToken } from './cart-token.js';
import { CartWriteBatcher } from './write-batcher.js';
import type { CartJson } from './schemas.js';

export { CartError } from './cart.js';
export type { ItemToAdd, LineTarget, ReplacementItem } from './cart.js';

export interface CartView {
  /** The token of the cart shown: a new one when the token asked for named no live cart. */
  token: string;
  cart: CartJson;
  /** True when the call stored a change (and so renewed the cart's lifetime). */
  changed: boolean;
}

/** Quantities for update.js: `{line key or variant id: quantity}`, or one quantity per line in the cart's order. */
export type QuantityUpdates = Record<string, number> | readonly number[];

export interface CartDetails {
  note?: string | undefined;
  attributes?: Record<string, string> | undefined;
}

/** What a line's `id` names: a line key (`{variantId}:{hash}`) or, as Shopify allows, a variant id (its first line). */
export function lineTargetFromId(id: string | number): LineTarget {
  const text = String(id);
  if (/^\d{1,15}$/.test(text)) return { variantId: Number(text) };
  return { key: text };
}

/** A change that keeps losing the compare-and-set gives up; only many instances hammering one cart get near this. */
const MAX_WRITE_ATTEMPTS = 50;
/** How many carts an instance remembers as it last wrote them. */
const RECENT_CARTS = 10_000;
/** Cart write statements running at once on a PostgreSQL server (of the pool's connections); PGlite runs one at a time. */
const SERVER_WRITES_IN_FLIGHT = 4;

/**
 * The carts this instance wrote last, as written, so the next change to one skips reading it. Safe on a
 * shared database: the write checks the version, and a stale entry only costs a read and a retry.
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

export class CartService {
  /** The last change queued for each cart token being changed on this instance. */
  private readonly pending = new Map<string, Promise<void>>();
  private readonly recent = new RecentCarts();
  private readonly writes: CartWriteBatcher;

  constructor(private readonly store: { db: Database; catalog: Catalog; config: Pick<Config, 'baseUrl' | 'cartMaxLineQuantity'> }) {
    this.writes = new CartWriteBatcher(store.db, store.db.kind === 'pglite' ? 1 : SERVER_WRITES_IN_FLIGHT);
  }

  /** The cart a token names, or a fresh empty one (with a new token, not stored) when it names no live cart. */
  async getCart(token: string | undefined): Promise<CartView> {
    return (await this.findCart(token)) ?? this.view(emptyCart(newCartToken()), this.lookup(), false);
  }

  /** The live cart a token names, or undefined. */
  async findCart(token: string | undefined): Promise<CartView | undefined> {
    if (!isCartToken(token)) return undefined;
    const lookup = this.lookup();
    const stored = await readCart(this.store.db, token);
    return stored ? this.view(stored.cart, lookup, false) : undefined;
  }

  /** Adds items to the cart (a new cart when the token names none): all of them, or none with a CartError. */
  async addItems(token: string | undefined, items: readonly ItemToAdd[]): Promise<CartView> {
    await this.explainMissingVariants(items.map((item) => item.variantId));
    return this.change(token, (cart, lookup) => addItems(cart, items, lookup, this.limits));
  }

  /** Sets one line's quantity (0 removes it). */
  async changeLine(token: string | undefined, target: LineTarget, quantity: number): Promise<CartView> {
    return this.change(token, (cart, lookup) => changeLine(cart, target, quantity, lookup, this.limits));
  }

  /** Sets several quantities at once, and the note and attributes; a variant id with no line adds one. */
  async setQuantities(token: string | undefined, updates: QuantityUpdates, details: CartDetails = {}): Promise<CartView> {
    if (!Array.isArray(updates)) {
      const variantIds = Object.keys(updates).map(lineTargetFromId).flatMap((t) => ('variantId' in t ? [t.variantId] : []));
      await this.explainMissingVariants(variantIds);
    }
    return this.change(token, (cart, lookup) => {
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
   * Sets the cart's lines to exactly these items (a new cart when the token names none), as one change:
   * whatever another change stored before it is replaced too, and it applies whole or, with a CartError,
   * not at all. Lines that stay keep their keys; an item's `key` keeps the line it names (replaceLines in
   * cart.ts); an empty list empties the cart. The note and attributes stay.
   */
  async replaceLines(token: string | undefined, items: readonly ReplacementItem[]): Promise<CartView> {
    await this.explainMissingVariants(items.map((item) => item.variantId));
    return this.change(token, (cart, lookup) => replaceLines(cart, items, lookup, this.limits));
  }

  /** Removes every line; the note and attributes stay, as on Shopify. */
  async clear(token: string | undefined): Promise<CartView> {
    return this.change(token, (cart) => clearLines(cart));
  }

  /** Deletes the cart; its token then names no live cart. True when there was one. */
  async cancel(token: string | undefined): Promise<boolean> {
    if (!isCartToken(token)) return false;
    this.recent.forget(token);
    return deleteCart(this.store.db, token);
  }

  /** Deletes carts unchanged for the cart lifetime (14 days); returns how many. */
  purgeExpired(): Promise<number> {
    return purgeExpiredCarts(this.store.db);
  }

  private get limits() {
    return { maxLineQuantity: this.store.config.cartMaxLineQuantity };
  }

  /** One catalog snapshot for the whole operation, so a concurrent reload cannot mix two catalogs in one answer. */
  private lookup(): VariantLookup {
    const snapshot = this.store.catalog.snapshot;
    return (variantId) => snapshot.variantById(variantId);
  }

  private view(cart: Cart, lookup: VariantLookup, changed: boolean): CartView {
    return { token: cart.token, cart: cartJson(cart, lookup, this.store.config.baseUrl), changed };
  }

  /** A variant the shop does not sell: say whether its product is unpublished or the variant does not exist. */
  private async explainMissingVariants(variantIds: readonly number[]): Promise<void> {
    const snapshot = this.store.catalog.snapshot;
    const missing = [...new Set(variantIds)].filter((id) => !snapshot.variantById(id));
    if (missing.length === 0) return;
    const unpublished = await unpublishedProductTitles(this.store.db, missing.filter(Number.isSafeInteger));
    const id = missing[0]!;
    const title = unpublished.get(id);
    if (title !== undefined) throw new CartError('unavailable_product', `The product '${title}' is not available for sale.`);
    throw new CartError('unknown_variant', `Cannot find variant ${id}.`);
  }

  /** Applies a change to the stored cart (or to a new one when the token names none) and stores the difference. */
  private async change(token: string | undefined, apply: (cart: Cart, lookup: VariantLookup) => Cart): Promise<CartView> {
    const lookup = this.lookup();
    if (!isCartToken(token)) return this.createCart(apply, lookup);
    return this.oneAtATime(token, async () => {
      for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt++) {
        const cached = attempt === 1 ? this.recent.get(token) : undefined;
        const stored = cached ?? (await readCart(this.store.db, token));
        if (!stored) return this.createCart(apply, lookup);
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
        if (await this.writes.write({ id: stored.id, version: stored.version, cart: after, changes: lineChanges(stored.cart, after) })) {
          this.recent.remember({ id: stored.id, version: stored.version + 1, cart: after });
          return this.view(after, lookup, true);
        }
        this.recent.forget(token);
      }
      throw new Error(`cart changed by others ${MAX_WRITE_ATTEMPTS} times in a row while we tried to change it`);
    });
  }

  /** A new cart with a new token; one the change leaves empty is not stored, so crawlers write no rows. */
  private async createCart(apply: (cart: Cart, lookup: VariantLookup) => Cart, lookup: VariantLookup): Promise<CartView> {
    const after = apply(emptyCart(newCartToken()), lookup);
    if (isEmptyCart(after)) return this.view(after, lookup, false);
    this.recent.remember({ id: await createCart(this.store.db, after), version: 0, cart: after });
    return this.view(after, lookup, true);
  }

  /** Runs changes to one cart one after another within this instance (other instances are kept out by the version). */
  private async oneAtATime<T>(token: string, work: () => Promise<T>): Promise<T> {
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

const services = new WeakMap<Store, CartService>();

/** The store's one cart service: both doors share it, so their changes to one cart queue together. */
export function cartServiceFor(store: Store): CartService {
  let service = services.get(store);
  if (!service) {
    service = new CartService(store);
    services.set(store, service);
  }
  return service;
}
