/** The cart's pure rules (src/cart/cart.ts, cart-json.ts), without a database. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  addItems,
  CartError,
  changeLine,
  emptyCart,
  lineChanges,
  lineKey,
  liveLines,
  priceCart,
  setQuantities,
  type Cart,
  type Purchasable,
  type VariantLookup,
} from '../../src/cart/cart.js';
import { cartJson } from '../../src/storefront/cart-json.js';
import type { Product, Variant } from '../../src/catalog/types.js';
import { stockLevels } from '../../src/inventory/stock.js';

function variant(id: number, overrides: Partial<Variant> = {}): Variant {
  return {
    id,
    productId: 1,
    position: 1,
    title: `Variant ${id}`,
    sku: `SKU-${id}`,
    optionValues: [`Variant ${id}`],
    priceCents: 1000,
    compareAtCents: null,
    inventoryTracked: true,
    inventoryPolicy: 'deny',
    requiresShipping: true,
    taxable: true,
    barcode: null,
    weightGrams: 100,
    ...overrides,
  };
}

const product: Product = {
  id: 1,
  handle: 'drink-stick',
  title: 'Drink Stick',
  descriptionHtml: '<p>Tear, <b>pour</b>, shake.</p>',
  vendor: 'Vendor',
  productType: 'Drink Stick',
  tags: [],
  optionNames: ['Flavour'],
  published: true,
  complementaryHandles: [],
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
  publishedAt: '2026-01-01T00:00:00Z',
  variants: [
    variant(11),
    variant(12),
    variant(13),
    variant(14, { inventoryPolicy: 'continue' }),
    variant(15, { priceCents: 1999 }),
  ],
  images: [{ id: 1, position: 1, src: '/assets/demo/drink-stick.svg', alt: 'Drink Stick', width: 600, height: 600 }],
  sellingPlanGroups: [
    {
      id: 7,
      name: 'Subscribe & save',
      plans: [
        { id: 71, groupId: 7, name: 'Delivery every month', description: 'Save 10%', discountPercent: 10, intervalUnit: 'month', intervalCount: 1 },
      ],
    },
  ],
};

const catalog = new Map<number, Purchasable>(product.variants.map((v) => [v.id, { product, variant: v }]));
const lookup: VariantLookup = (id) => catalog.get(id);
/** Units on hand: 12 has 5, 13 none, 14 none but back-orderable, the rest 50. */
const onHand = new Map([[11, 50], [12, 5], [13, 0], [14, 0], [15, 50]]);
const limits = { maxLineQuantity: 10, stock: stockLevels(onHand) };

function cartWith(...items: Parameters<typeof addItems>[1]): Cart {
  return addItems(emptyCart('token'), items, lookup, limits);
}

function refusal(fn: () => unknown): CartError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof CartError, `expected a CartError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a CartError');
}

describe('line identity', () => {
  it('a line key is the variant id and a 32-hex hash, the same for the same properties in any order and without blank values', () => {
    const key = lineKey(11, { a: '1', b: '2' }, null);
    assert.match(key, /^11:[0-9a-f]{32}$/);
    assert.equal(lineKey(11, { b: '2', a: '1' }, null), key);
    assert.equal(lineKey(11, { b: '2', a: '1', empty: '' }, null), key);
  });

  it('other properties or another selling plan give another key', () => {
    const key = lineKey(11, { a: '1' }, null);
    assert.notEqual(lineKey(11, { a: '2' }, null), key);
    assert.notEqual(lineKey(11, { a: '1' }, 71), key);
    assert.notEqual(lineKey(11, {}, null), key);
  });

  it('adding the same identity again raises that line; other properties start a new line, listed first', () => {
    let cart = cartWith({ variantId: 11, quantity: 2, properties: { engraving: 'A' } });
    cart = addItems(cart, [{ variantId: 11, quantity: 3, properties: { engraving: 'A' } }], lookup, limits);
    assert.equal(cart.lines.length, 1);
    assert.equal(cart.lines[0]!.quantity, 5);
    cart = addItems(cart, [{ variantId: 11, quantity: 1, properties: { engraving: 'B' } }], lookup, limits);
    assert.deepEqual(
      cart.lines.map((l) => [l.properties.engraving, l.quantity]),
      [
        ['B', 1],
        ['A', 5],
      ],
    );
  });

  it('one add listing the same identity twice makes one line', () => {
    const cart = cartWith({ variantId: 11, quantity: 1 }, { variantId: 11, quantity: 2 });
    assert.equal(cart.lines.length, 1);
    assert.equal(cart.lines[0]!.quantity, 3);
  });
});

describe('limits', () => {
  it('an unknown variant, a sold-out variant or a foreign selling plan is refused with a reason', () => {
    assert.equal(refusal(() => cartWith({ variantId: 99, quantity: 1 })).reason, 'unknown_variant');
    const soldOut = refusal(() => cartWith({ variantId: 13, quantity: 1 }));
    assert.equal(soldOut.reason, 'sold_out');
    assert.equal(soldOut.description, "The product 'Drink Stick - Variant 13' is already sold out.");
    assert.equal(refusal(() => cartWith({ variantId: 11, quantity: 1, sellingPlanId: 999 })).reason, 'invalid_selling_plan');
  });

  it('the ceiling applies per line and the refusal says how many can still be added', () => {
    const cart = cartWith({ variantId: 11, quantity: 8 });
    const error = refusal(() => addItems(cart, [{ variantId: 11, quantity: 3 }], lookup, limits));
    assert.equal(error.reason, 'quantity_limit');
    assert.match(error.description, /only 2 more can be added/);
    const full = addItems(cart, [{ variantId: 11, quantity: 2 }], lookup, limits);
    assert.match(refusal(() => addItems(full, [{ variantId: 11, quantity: 1 }], lookup, limits)).description, /maximum quantity/);
    // Another line of the same variant has its own ceiling.
    assert.equal(addItems(full, [{ variantId: 11, quantity: 10, properties: { gift: 'yes' } }], lookup, limits).lines.length, 2);
  });

  it('stock applies to all lines of a variant together', () => {
    const cart = cartWith({ variantId: 12, quantity: 3, properties: { a: '1' } });
    const error = refusal(() => addItems(cart, [{ variantId: 12, quantity: 3, properties: { a: '2' } }], lookup, limits));
    assert.equal(error.reason, 'quantity_limit');
    assert.match(error.description, /only 2 more can be added \(5 in stock\)/);
  });

  it('a back-orderable variant is limited by the ceiling only', () => {
    assert.equal(cartWith({ variantId: 14, quantity: 10 }).lines[0]!.quantity, 10);
    assert.equal(refusal(() => cartWith({ variantId: 14, quantity: 11 })).reason, 'quantity_limit');
  });

  it('a refused add leaves the cart as it was, even for the items before the bad one', () => {
    const cart = cartWith({ variantId: 11, quantity: 1 });
    const snapshot = structuredClone(cart);
    refusal(() => addItems(cart, [{ variantId: 15, quantity: 1 }, { variantId: 13, quantity: 1 }], lookup, limits));
    assert.deepEqual(cart, snapshot);
  });

  it('lowering a quantity is allowed even when stock fell below it', () => {
    const cart = cartWith({ variantId: 12, quantity: 5 });
    const fewer = { ...limits, stock: stockLevels(new Map([...onHand, [12, 1]])) };
    const changed = changeLine(cart, { line: 1 }, 4, lookup, fewer);
    assert.equal(changed.lines[0]!.quantity, 4);
    assert.equal(refusal(() => changeLine(changed, { line: 1 }, 5, lookup, fewer)).reason, 'quantity_limit');
  });
});

describe('changing quantities', () => {
  it('changeLine finds a line by key, by 1-based place or by variant; 0 removes it; an unknown line is refused', () => {
    let cart = cartWith({ variantId: 11, quantity: 1 }, { variantId: 15, quantity: 1 });
    const key = cart.lines.find((l) => l.variantId === 11)!.key;
    cart = changeLine(cart, { key }, 4, lookup, limits);
    assert.equal(cart.lines.find((l) => l.key === key)!.quantity, 4);
    cart = changeLine(cart, { variantId: 15 }, 2, lookup, limits);
    assert.equal(cart.lines.find((l) => l.variantId === 15)!.quantity, 2);
    cart = changeLine(cart, { line: 1 }, 0, lookup, limits);
    assert.equal(cart.lines.length, 1);
    assert.equal(refusal(() => changeLine(cart, { key: '11:nope' }, 1, lookup, limits)).reason, 'no_such_line');
    assert.equal(refusal(() => changeLine(cart, { line: 2 }, 1, lookup, limits)).reason, 'no_such_line');
    assert.equal(refusal(() => changeLine(cart, { variantId: 12 }, 1, lookup, limits)).reason, 'no_such_line');
  });

  it('setQuantities adds a line for a variant not in the cart and checks everything together', () => {
    const cart = cartWith({ variantId: 11, quantity: 1 });
    const next = setQuantities(cart, [{ target: { variantId: 15 }, quantity: 2 }, { target: { line: 1 }, quantity: 3 }], lookup, limits);
    assert.deepEqual(
      next.lines.map((l) => [l.variantId, l.quantity]),
      [
        [15, 2],
        [11, 3],
      ],
    );
    assert.equal(refusal(() => setQuantities(cart, [{ target: { variantId: 15 }, quantity: 2 }, { target: { line: 1 }, quantity: 11 }], lookup, limits)).reason, 'quantity_limit');
  });

  it('lineChanges lists the lines to write and the keys to delete', () => {
    const before = cartWith({ variantId: 11, quantity: 1 }, { variantId: 15, quantity: 1 });
    const after = setQuantities(before, [{ target: { variantId: 11 }, quantity: 0 }, { target: { variantId: 15 }, quantity: 3 }], lookup, limits);
    const changes = lineChanges(before, after);
    assert.deepEqual(changes.removals, [before.lines.find((l) => l.variantId === 11)!.key]);
    assert.deepEqual(changes.upserts.map((l) => [l.variantId, l.quantity]), [[15, 3]]);
  });

  it('lines whose variant left the catalog are dropped from the cart', () => {
    const cart = cartWith({ variantId: 11, quantity: 1 }, { variantId: 15, quantity: 1 });
    assert.deepEqual(liveLines(cart, (id) => (id === 15 ? undefined : lookup(id))).lines.map((l) => l.variantId), [11]);
  });
});

describe('prices and totals', () => {
  it('totals are integer cents: item_count, total_price and total_weight sum the lines', () => {
    const json = cartJson(priceCart(cartWith({ variantId: 11, quantity: 2 }, { variantId: 15, quantity: 3 }), lookup), 'https://shop.test', 10);
    assert.equal(json.item_count, 5);
    assert.equal(json.total_price, 2 * 1000 + 3 * 1999);
    assert.equal(json.original_total_price, json.total_price);
    assert.equal(json.total_discount, 0);
    assert.equal(json.total_weight, 500);
    assert.equal(json.currency, 'USD');
    const line = json.items.find((i) => i.id === 15)!;
    assert.equal(line.line_price, 3 * 1999);
    assert.equal(line.product_description, 'Tear, pour, shake.');
    assert.equal(line.image, 'https://shop.test/assets/demo/drink-stick.svg');
    assert.equal(line.url, '/products/drink-stick?variant=15');
  });

  it("a selling plan's discount lowers the line's price and shows in total_discount", () => {
    const json = cartJson(priceCart(cartWith({ variantId: 11, quantity: 3, sellingPlanId: 71 }), lookup), 'https://shop.test', 10);
    const line = json.items[0]!;
    assert.equal(line.price, 900);
    assert.equal(line.original_price, 1000);
    assert.equal(line.line_price, 2700);
    assert.equal(json.total_price, 2700);
    assert.equal(json.original_total_price, 3000);
    assert.equal(json.total_discount, 300);
    assert.deepEqual(
      {
        id: line.selling_plan_allocation?.selling_plan.id,
        name: line.selling_plan_allocation?.selling_plan.name,
        price: line.selling_plan_allocation?.price,
        compare_at_price: line.selling_plan_allocation?.compare_at_price,
        per_delivery_price: line.selling_plan_allocation?.per_delivery_price,
      },
      { id: 71, name: 'Delivery every month', price: 900, compare_at_price: 1000, per_delivery_price: 900 },
    );
    assert.equal(line.url, '/products/drink-stick?variant=11&selling_plan=71');
  });
});

