/**
 * The cart's rules, with no I/O: what makes two lines one (line identity and key), adding and changing
 * quantities, replacing every line at once, the per-line ceiling and stock limits, selling-plan prices and the totals. Every function takes
 * a cart and returns a new one or throws a CartError; the service persists the difference.
 */
import { createHash } from 'node:crypto';
import { itemName as catalogItemName, sellingPlanPrice, type Product, type SellingPlan, type SellingPlanGroup, type Variant } from '../catalog/types.js';
import { isVariantAvailable, sellableQuantity, type StockLevels } from '../inventory/stock.js';
import { fieldFault, fieldFaultSentence, type PersonField } from '../fields/person-fields.js';
import { textFault } from '../fields/text.js';

/** A cart unchanged for this long is no longer live; the cookie lives as long. */
export const CART_LIFETIME_DAYS = 14;
/** Distinct lines one cart may hold, so line properties cannot grow a cart without bound. */
export const MAX_CART_LINES = 100;
/**
 * Bytes of shopper-written text one cart may hold (line property names and values, attribute names and values and
 * the note, in UTF-8): room for engravings, gift messages and a long note, while a client cannot make each cart
 * megabytes (100 lines of 30 properties of 1,000 characters would be 3.7 MB).
 */
export const MAX_CART_TEXT_BYTES = 16 * 1024;

export interface CartLine {
  /** `{variantId}:{hash of properties and selling plan}`: stable for the same identity, opaque to clients. */
  key: string;
  variantId: number;
  sellingPlanId: number | null;
  properties: Record<string, string>;
  quantity: number;
  /** Order of first addition; the cart lists its newest line first, as Shopify does. */
  position: number;
}

export interface Cart {
  token: string;
  note: string | null;
  attributes: Record<string, string>;
  /** Newest line first. */
  lines: CartLine[];
}

export interface CartLimits {
  /** The per-line quantity ceiling (CART_MAX_LINE_QUANTITY). */
  maxLineQuantity: number;
  /** Units on hand, for the stock limit (a cart only checks; stock is taken at checkout). */
  stock: StockLevels;
}

export type CartErrorReason =
  | 'unknown_variant'
  | 'unavailable_product'
  | 'sold_out'
  | 'invalid_selling_plan'
  | 'quantity_limit'
  | 'no_such_line'
  | 'too_many_lines'
  | 'too_much_text'
  | 'invalid_text';

/** A request the cart refuses; `description` is written for the shopper. Nothing was changed. */
export class CartError extends Error {
  constructor(
    readonly reason: CartErrorReason,
    readonly description: string,
  ) {
    super(description);
    this.name = 'CartError';
  }
}

/** A name as a refusal quotes it: short, and only when it is itself printable (else its length). */
const shown = (name: string) => (textFault(name, { max: 40, lines: 'single' }) === undefined ? name : `${name.length} characters`);

/** Refuses text that breaks its field's rule (src/fields), naming the field: nothing of the change is kept. */
function checkCartText(field: PersonField, value: string, named: string): void {
  const fault = fieldFault(field, value);
  if (fault) throw new CartError('invalid_text', `${named} ${fieldFaultSentence(fault)}.`);
}

/** A published variant with its product, as the catalog snapshot gives it. */
export interface Purchasable {
  product: Product;
  variant: Variant;
}

export type VariantLookup = (variantId: number) => Purchasable | undefined;

export interface ItemToAdd {
  variantId: number;
  quantity: number;
  properties?: Record<string, string> | undefined;
  sellingPlanId?: number | null | undefined;
}

/** Which line a change addresses: its key, its 1-based place in the cart, or the first line of a variant. */
export type LineTarget = { key: string } | { line: number } | { variantId: number };

export function emptyCart(token: string): Cart {
  return { token, note: null, attributes: {}, lines: [] };
}

/** Shopify's item name: the product title, then the variant title unless the product has only the default variant. */
export function itemName({ product, variant }: Purchasable): string {
  return catalogItemName(product, variant);
}

/** Properties with a blank value are not kept (themes post empty inputs), and key order does not matter. */
export function lineProperties(raw: Record<string, string> | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of Object.keys(raw ?? {}).sort()) {
    const value = raw![name]!;
    if (value !== '') kept[name] = value;
  }
  return kept;
}

/** The line key: the variant, then a hash of what else makes the line distinct. */
export function lineKey(variantId: number, properties: Record<string, string>, sellingPlanId: number | null): string {
  const identity = JSON.stringify([Object.entries(lineProperties(properties)), sellingPlanId]);
  return `${variantId}:${createHash('sha256').update(identity).digest('hex').slice(0, 32)}`;
}

export function findSellingPlan(product: Product, planId: number): { group: SellingPlanGroup; plan: SellingPlan } | undefined {
  for (const group of product.sellingPlanGroups) {
    const plan = group.plans.find((p) => p.id === planId);
    if (plan) return { group, plan };
  }
  return undefined;
}

/** Lines whose variant (or selling plan) left the catalog are dropped; the next change stores that. */
export function liveLines(cart: Cart, lookup: VariantLookup): Cart {
  const lines = cart.lines.filter((line) => {
    const found = lookup(line.variantId);
    return found !== undefined && (line.sellingPlanId === null || findSellingPlan(found.product, line.sellingPlanId) !== undefined);
  });
  return lines.length === cart.lines.length ? cart : { ...cart, lines };
}

function purchasableOrThrow(lookup: VariantLookup, variantId: number): Purchasable {
  const found = lookup(variantId);
  if (!found) throw new CartError('unknown_variant', `Cannot find variant ${variantId}.`);
  return found;
}

function byPosition(lines: CartLine[]): CartLine[] {
  return [...lines].sort((a, b) => b.position - a.position);
}

/** Adds items: the same identity raises that line's quantity, a new identity starts a new line. All or nothing. */
export function addItems(cart: Cart, items: readonly ItemToAdd[], lookup: VariantLookup, limits: CartLimits): Cart {
  const next = mergeItems(cart, items, lookup);
  checkQuantities(cart, next, lookup, limits);
  return next;
}

/** What makes a line distinct, with its key. */
type LineIdentity = Pick<CartLine, 'key' | 'variantId' | 'sellingPlanId' | 'properties'>;

/** The line an item belongs to: its variant must be sold and its selling plan offered for the variant's product. */
function itemIdentity(item: ItemToAdd, lookup: VariantLookup): LineIdentity {
  const found = purchasableOrThrow(lookup, item.variantId);
  const sellingPlanId = item.sellingPlanId ?? null;
  if (sellingPlanId !== null && !findSellingPlan(found.product, sellingPlanId)) {
    throw new CartError(
      'invalid_selling_plan',
      `Selling plan ${sellingPlanId} is not offered for '${found.product.title}'.`,
    );
  }
  const properties = lineProperties(item.properties);
  for (const [name, value] of Object.entries(properties)) {
    checkCartText('linePropertyName', name, `The name of the property '${shown(name)}'`);
    checkCartText('linePropertyValue', value, `The property '${shown(name)}'`);
  }
  return { key: lineKey(item.variantId, properties, sellingPlanId), variantId: item.variantId, sellingPlanId, properties };
}

function nextLinePosition(cart: Cart): number {
  return Math.max(0, ...cart.lines.map((line) => line.position)) + 1;
}

function mergeItems(cart: Cart, items: readonly ItemToAdd[], lookup: VariantLookup): Cart {
  const lines = new Map(cart.lines.map((line) => [line.key, { ...line }]));
  let nextPosition = nextLinePosition(cart);
  for (const item of items) {
    const identity = itemIdentity(item, lookup);
    const existing = lines.get(identity.key);
    if (existing) existing.quantity += item.quantity;
    else lines.set(identity.key, { ...identity, quantity: item.quantity, position: nextPosition++ });
  }
  return { ...cart, lines: byPosition([...lines.values()]) };
}

/**
 * An item of a replacement. `key` (optional) names a line of the cart the item stands for: when the cart
 * has a line with that key and the item's variant, the item is that line (its properties and selling plan,
 * whatever the item says); otherwise the item's own variant, properties and selling plan make its line.
 */
export interface ReplacementItem extends ItemToAdd {
  key?: string | undefined;
}

/**
 * Sets the cart's lines to exactly the items given (UCP's full replacement): items with one identity make
 * one line with their quantities added up (an identity totalling 0 makes none), a line that stays keeps its
 * key and place, lines no item names are removed, and new lines are added in the items' order. The same
 * rules as adding (unknown variant, selling plan, sold out, per-line ceiling, stock, line count) apply to
 * what the replacement grows, checked as a whole: all of it applies, or none. Note and attributes stay.
 * The service stores the difference from the old cart (lineChanges).
 */
export function replaceLines(cart: Cart, items: readonly ReplacementItem[], lookup: VariantLookup, limits: CartLimits): Cart {
  const current = new Map(cart.lines.map((line) => [line.key, line]));
  const wanted = new Map<string, { identity: LineIdentity; quantity: number }>();
  for (const item of items) {
    const named = item.key === undefined ? undefined : current.get(item.key);
    const identity = named !== undefined && named.variantId === item.variantId ? named : itemIdentity(item, lookup);
    const entry = wanted.get(identity.key);
    if (entry) entry.quantity += item.quantity;
    else wanted.set(identity.key, { identity, quantity: item.quantity });
  }
  let nextPosition = nextLinePosition(cart);
  const lines: CartLine[] = [];
  for (const { identity, quantity } of wanted.values()) {
    if (quantity <= 0) continue;
    const staying = current.get(identity.key);
    lines.push(
      staying
        ? { ...staying, quantity }
        : {
            key: identity.key,
            variantId: identity.variantId,
            sellingPlanId: identity.sellingPlanId,
            properties: identity.properties,
            quantity,
            position: nextPosition++,
          },
    );
  }
  const next = { ...cart, lines: byPosition(lines) };
  checkQuantities(cart, next, lookup, limits);
  return next;
}

/** The line a target names, or a CartError saying the cart has no such line. */
export function findLine(cart: Cart, target: LineTarget): CartLine {
  if ('key' in target) {
    const line = cart.lines.find((l) => l.key === target.key);
    if (!line) throw new CartError('no_such_line', `The cart has no line with the key '${target.key.slice(0, 100)}'.`);
    return line;
  }
  if ('line' in target) {
    const line = cart.lines[target.line - 1];
    if (!line) {
      const count = cart.lines.length;
      throw new CartError('no_such_line', `The cart has no line ${target.line}; it has ${count} line${count === 1 ? '' : 's'}.`);
    }
    return line;
  }
  const line = cart.lines.find((l) => l.variantId === target.variantId);
  if (!line) throw new CartError('no_such_line', `The cart has no line of variant ${target.variantId}.`);
  return line;
}

/** Sets one line's quantity; 0 removes it. The line must be in the cart (change.js never adds one). */
export function changeLine(cart: Cart, target: LineTarget, quantity: number, lookup: VariantLookup, limits: CartLimits): Cart {
  const line = findLine(cart, target);
  return setQuantities(cart, [{ target: { key: line.key }, quantity }], lookup, limits);
}

/**
 * Sets several quantities at once (Shopify's update.js): a target naming a variant with no line adds one,
 * 0 removes a line. Checked as a whole, so all apply or none.
 */
export function setQuantities(
  cart: Cart,
  updates: readonly { target: LineTarget; quantity: number }[],
  lookup: VariantLookup,
  limits: CartLimits,
): Cart {
  const quantities = new Map(cart.lines.map((line) => [line.key, line.quantity]));
  const toAdd: ItemToAdd[] = [];
  for (const { target, quantity } of updates) {
    if ('variantId' in target && !cart.lines.some((l) => l.variantId === target.variantId)) {
      purchasableOrThrow(lookup, target.variantId);
      const pending = toAdd.find((item) => item.variantId === target.variantId);
      if (pending) pending.quantity = quantity;
      else toAdd.push({ variantId: target.variantId, quantity });
      continue;
    }
    quantities.set(findLine(cart, target).key, quantity);
  }
  const kept = { ...cart, lines: cart.lines.filter((l) => quantities.get(l.key)! > 0).map((l) => ({ ...l, quantity: quantities.get(l.key)! })) };
  const next = mergeItems(kept, toAdd.filter((item) => item.quantity > 0), lookup);
  checkQuantities(cart, next, lookup, limits);
  return next;
}

export function clearLines(cart: Cart): Cart {
  return { ...cart, lines: [] };
}

/**
 * Note and attributes as update.js sets them: an attribute set to "" is removed, a blank note clears it. A change
 * that grows the cart's text past MAX_CART_TEXT_BYTES is refused.
 */
export function setDetails(cart: Cart, details: { note?: string | undefined; attributes?: Record<string, string> | undefined }): Cart {
  if (details.note) checkCartText('cartNote', details.note, 'The note');
  for (const [name, value] of Object.entries(details.attributes ?? {})) {
    checkCartText('cartAttributeName', name, `The name of the attribute '${shown(name)}'`);
    if (value !== '') checkCartText('cartAttributeValue', value, `The attribute '${shown(name)}'`);
  }
  const attributes = { ...cart.attributes };
  for (const [name, value] of Object.entries(details.attributes ?? {})) {
    if (value === '') delete attributes[name];
    else attributes[name] = value;
  }
  const note = details.note === undefined ? cart.note : details.note === '' ? null : details.note;
  const next = { ...cart, note, attributes };
  checkText(cart, next);
  return next;
}

/** The bytes of shopper-written text a cart holds (UTF-8): line properties, attributes and the note. */
export function cartTextBytes(cart: Cart): number {
  const recordBytes = (record: Record<string, string>) => {
    let bytes = 0;
    for (const name in record) bytes += Buffer.byteLength(name) + Buffer.byteLength(record[name]!);
    return bytes;
  };
  let bytes = Buffer.byteLength(cart.note ?? '') + recordBytes(cart.attributes);
  for (const line of cart.lines) bytes += recordBytes(line.properties);
  return bytes;
}

/** A change may not grow a cart's text past MAX_CART_TEXT_BYTES (shrinking it is always allowed). */
function checkText(before: Cart, after: Cart): void {
  const bytes = cartTextBytes(after);
  if (bytes <= MAX_CART_TEXT_BYTES || bytes <= cartTextBytes(before)) return;
  throw new CartError(
    'too_much_text',
    `A cart holds at most ${MAX_CART_TEXT_BYTES.toLocaleString('en-US')} bytes of line properties, attributes and note; ` +
      `this change would make it ${bytes.toLocaleString('en-US')}. Shorten or remove some before adding more.`,
  );
}

/**
 * The limits a change must respect, checked only where it grows the cart (lowering a quantity is always
 * allowed, even after stock fell): a sold-out variant cannot grow, no line exceeds the ceiling, and the lines
 * of one variant together never exceed its stock when stock is tracked and overselling is denied.
 */
export function checkQuantities(before: Cart, after: Cart, lookup: VariantLookup, limits: CartLimits): void {
  const previous = new Map(before.lines.map((line) => [line.key, line.quantity]));
  if (after.lines.length > MAX_CART_LINES && after.lines.length > before.lines.length) {
    throw new CartError('too_many_lines', `A cart holds at most ${MAX_CART_LINES} lines; remove one before adding another.`);
  }
  checkText(before, after);
  const variantTotals = (cart: Cart) => {
    const totals = new Map<number, number>();
    for (const line of cart.lines) totals.set(line.variantId, (totals.get(line.variantId) ?? 0) + line.quantity);
    return totals;
  };
  const totalsBefore = variantTotals(before);
  for (const [variantId, total] of variantTotals(after)) {
    const had = totalsBefore.get(variantId) ?? 0;
    if (total <= had) continue;
    const found = purchasableOrThrow(lookup, variantId);
    if (!isVariantAvailable(found.variant, limits.stock)) {
      throw new CartError('sold_out', `The product '${itemName(found)}' is already sold out.`);
    }
  }
  for (const line of after.lines) {
    const had = previous.get(line.key) ?? 0;
    if (line.quantity <= had || line.quantity <= limits.maxLineQuantity) continue;
    const name = itemName(purchasableOrThrow(lookup, line.variantId));
    const room = Math.max(0, limits.maxLineQuantity - had);
    throw new CartError(
      'quantity_limit',
      room === 0
        ? `The maximum quantity of '${name}' is already in your cart (at most ${limits.maxLineQuantity} per line).`
        : `You can't add ${line.quantity - had} more of '${name}' to the cart: at most ${limits.maxLineQuantity} per line, so only ${room} more can be added.`,
    );
  }
  for (const [variantId, total] of variantTotals(after)) {
    const had = totalsBefore.get(variantId) ?? 0;
    const found = purchasableOrThrow(lookup, variantId);
    const inStock = sellableQuantity(found.variant, limits.stock);
    if (total <= had || total <= inStock) continue;
    const room = Math.max(0, inStock - had);
    throw new CartError(
      'quantity_limit',
      room === 0
        ? `All ${inStock} in stock of '${itemName(found)}' are already in your cart.`
        : `You can't add ${total - had} more of '${itemName(found)}' to the cart: only ${room} more can be added (${inStock} in stock).`,
    );
  }
}

/** What a change stores: lines to insert or update, keys to delete. */
export interface LineChanges {
  upserts: CartLine[];
  removals: string[];
}

export function lineChanges(before: Cart, after: Cart): LineChanges {
  const previous = new Map(before.lines.map((line) => [line.key, line]));
  const upserts = after.lines.filter((line) => previous.get(line.key)?.quantity !== line.quantity);
  const kept = new Set(after.lines.map((line) => line.key));
  const removals = before.lines.filter((line) => !kept.has(line.key)).map((line) => line.key);
  return { upserts, removals };
}

export function isEmptyCart(cart: Cart): boolean {
  return cart.lines.length === 0 && cart.note === null && Object.keys(cart.attributes).length === 0;
}

/** A line with its prices: the selling plan's discount lowers the unit price and counts as a discount. */
export interface PricedLine {
  line: CartLine;
  item: Purchasable;
  /** The item's name as a shopper reads it (product title, then variant title). */
  title: string;
  sellingPlan: { group: SellingPlanGroup; plan: SellingPlan } | undefined;
  /** Unit price before the selling plan's discount (the variant's price), cents. */
  originalPrice: number;
  /** Unit price paid, cents. */
  price: number;
  originalLinePrice: number;
  linePrice: number;
  discount: number;
}

export function priceLine(line: CartLine, item: Purchasable): PricedLine {
  const sellingPlan = line.sellingPlanId === null ? undefined : findSellingPlan(item.product, line.sellingPlanId);
  const originalPrice = item.variant.priceCents;
  const price = sellingPlan ? sellingPlanPrice(item.variant, sellingPlan.plan) : originalPrice;
  const originalLinePrice = originalPrice * line.quantity;
  const linePrice = price * line.quantity;
  return { line, item, title: itemName(item), sellingPlan, originalPrice, price, originalLinePrice, linePrice, discount: originalLinePrice - linePrice };
}

export interface CartTotals {
  itemCount: number;
  originalTotalPrice: number;
  totalPrice: number;
  totalDiscount: number;
  totalWeight: number;
  requiresShipping: boolean;
}

export function cartTotals(lines: readonly PricedLine[]): CartTotals {
  let itemCount = 0;
  let originalTotalPrice = 0;
  let totalPrice = 0;
  let totalWeight = 0;
  for (const priced of lines) {
    itemCount += priced.line.quantity;
    originalTotalPrice += priced.originalLinePrice;
    totalPrice += priced.linePrice;
    totalWeight += priced.item.variant.weightGrams * priced.line.quantity;
  }
  return {
    itemCount,
    originalTotalPrice,
    totalPrice,
    totalDiscount: originalTotalPrice - totalPrice,
    totalWeight,
    requiresShipping: lines.some((priced) => priced.item.variant.requiresShipping),
  };
}

/** A cart with every live line priced and its totals: what the cart service answers and each door maps. */
export interface PricedCart {
  token: string;
  note: string | null;
  attributes: Record<string, string>;
  /** Newest line first; lines whose variant left the catalog are not shown (the next change drops them). */
  lines: PricedLine[];
  totals: CartTotals;
}

export function priceCart(cart: Cart, lookup: VariantLookup): PricedCart {
  const lines = liveLines(cart, lookup).lines.map((line) => priceLine(line, lookup(line.variantId)!));
  return { token: cart.token, note: cart.note, attributes: cart.attributes, lines, totals: cartTotals(lines) };
}
