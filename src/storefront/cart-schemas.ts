/**
 * The cart's JSON shapes (spec: Cart, LineItem, addCartItems, changeCartItem; Shopify's cart.js fields where
 * cheap), one source for request validation, TypeScript types and the OpenAPI document.
 */
import { Type, type Static } from 'typebox';
import { MAX_CART_TEXT_BYTES } from '../cart/cart.js';
import { PERSON_FIELDS } from '../fields/person-fields.js';

const Cents = Type.Integer({ minimum: 0, description: 'US cents' });
const NullableString = Type.Union([Type.String(), Type.Null()]);
/** Ids are int64 in the spec; ours stay below 2^53 so a JSON number carries them exactly. */
const id = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });

/**
 * Text a cart stores (property and attribute names and values, the note): no NUL and no unpaired surrogate,
 * which PostgreSQL text cannot hold. Ajv compiles patterns with the `u` flag, so a surrogate pair (an emoji) is
 * one code point and passes; only a lone half matches the class.
 */
export const STORABLE_TEXT = '^[^\\u0000\\uD800-\\uDFFF]*$';
const StorableText = (options: { maxLength: number }) => Type.String({ ...options, pattern: STORABLE_TEXT });
// Lengths from the fields' table; the characters a field may hold are the cart's to refuse (src/fields), naming it.
const storableNames = { maxLength: PERSON_FIELDS.linePropertyName.max, pattern: STORABLE_TEXT };

export const LineProperties = Type.Record(Type.String(), StorableText({ maxLength: PERSON_FIELDS.linePropertyValue.max }), {
  maxProperties: 30,
  propertyNames: storableNames,
  description:
    'custom line-item properties; a blank value is not kept. A cart holds at most ' +
    `${MAX_CART_TEXT_BYTES} bytes (UTF-8) of properties, attributes and note together: more is 422 Cart Error`,
});

export const SellingPlanAllocationSchema = Type.Object({
  price: Cents,
  compare_at_price: Cents,
  per_delivery_price: Cents,
  price_adjustments: Type.Array(Type.Object({ position: Type.Integer(), price: Cents })),
  selling_plan_group_id: Type.Integer(),
  selling_plan: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    options: Type.Array(Type.Object({ name: Type.String(), position: Type.Integer(), value: Type.String() })),
    recurring_deliveries: Type.Boolean(),
    fixed_selling_plan: Type.Boolean(),
    price_adjustments: Type.Array(
      Type.Object({ order_count: Type.Null(), position: Type.Integer(), value_type: Type.Literal('percentage'), value: Type.Integer() }),
    ),
  }),
});

export const LineItemSchema = Type.Object({
  key: Type.String({ description: 'line identifier, `{variant id}:{hash}`; passed as `id` to /cart/change.js' }),
  id: Type.Integer({ description: 'the variant id' }),
  variant_id: Type.Integer(),
  quantity: Type.Integer({ minimum: 0 }),
  properties: Type.Record(Type.String(), Type.String()),
  title: Type.String(),
  price: Type.Integer({ minimum: 0, description: 'unit price paid, cents (after a selling plan discount)' }),
  original_price: Type.Integer({ minimum: 0, description: 'unit price before any discount, cents' }),
  discounted_price: Cents,
  final_price: Cents,
  line_price: Type.Integer({ minimum: 0, description: 'line total, cents' }),
  original_line_price: Cents,
  final_line_price: Cents,
  total_discount: Cents,
  discounts: Type.Array(Type.Object({ amount: Cents, title: Type.String() })),
  line_level_discount_allocations: Type.Array(Type.Unknown()),
  line_level_total_discount: Cents,
  sku: NullableString,
  grams: Type.Integer(),
  vendor: Type.String(),
  taxable: Type.Boolean(),
  requires_shipping: Type.Boolean(),
  gift_card: Type.Boolean(),
  product_id: Type.Integer(),
  product_has_only_default_variant: Type.Boolean(),
  product_title: Type.String(),
  product_description: Type.String({ description: 'plain text' }),
  product_type: Type.String(),
  variant_title: NullableString,
  variant_options: Type.Array(Type.String()),
  options_with_values: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
  handle: Type.String(),
  url: Type.String({ description: 'the product page path, with the variant (and selling plan)' }),
  image: NullableString,
  featured_image: Type.Union([
    Type.Object({
      aspect_ratio: Type.Number(),
      alt: NullableString,
      height: Type.Union([Type.Integer(), Type.Null()]),
      url: Type.String(),
      width: Type.Union([Type.Integer(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  quantity_rule: Type.Object(
    {
      min: Type.Integer({ minimum: 1 }),
      max: Type.Integer({ minimum: 1, description: 'the most units this line may hold; a quantity over it is refused with 422' }),
      increment: Type.Integer({ minimum: 1 }),
    },
    { description: 'units per cart line: from min to max, in steps of increment' },
  ),
  selling_plan_allocation: Type.Union([SellingPlanAllocationSchema, Type.Null()], {
    description: 'present when the line is a subscription',
  }),
});

export const CartSchema = Type.Object(
  {
    token: Type.String({ description: 'opaque cart identifier; the value of the `cart` cookie' }),
    note: NullableString,
    attributes: Type.Record(Type.String(), Type.String()),
    item_count: Type.Integer({ minimum: 0 }),
    items: Type.Array(LineItemSchema, { description: 'newest line first' }),
    original_total_price: Cents,
    items_subtotal_price: Cents,
    total_price: Cents,
    total_discount: Cents,
    total_weight: Type.Integer({ minimum: 0, description: 'grams' }),
    requires_shipping: Type.Boolean(),
    currency: Type.String({ description: 'three-letter currency code' }),
    cart_level_discount_applications: Type.Array(Type.Unknown()),
  },
  { $id: 'Cart' },
);

export type LineItemJson = Static<typeof LineItemSchema>;
export type CartJson = Static<typeof CartSchema>;
export type SellingPlanAllocationJson = Static<typeof SellingPlanAllocationSchema>;

export const AddCartItemsBody = Type.Object({
  items: Type.Array(
    Type.Object({
      id: id('variant id'),
      quantity: Type.Integer({ minimum: 1, default: 1 }),
      properties: Type.Optional(LineProperties),
      selling_plan: Type.Optional(id('subscription selling plan id, offered by the variant’s product')),
    }),
    { minItems: 1, maxItems: 100, description: 'also accepted: a single top-level {id, quantity, properties, selling_plan}' },
  ),
});
export type AddCartItemsInput = Static<typeof AddCartItemsBody>;

export const ChangeCartItemBody = Type.Object({
  id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'the line key (or a variant id: its first line); required unless `line` is given' }),
  ),
  line: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: '1-based place of the line in Cart.items' })),
  quantity: Type.Integer({ minimum: 0, description: 'the new quantity; 0 removes the line' }),
});
export type ChangeCartItemInput = Static<typeof ChangeCartItemBody>;

export const UpdateCartBody = Type.Object({
  updates: Type.Optional(
    Type.Union(
      [
        Type.Record(Type.String({ maxLength: 200 }), Type.Integer({ minimum: 0 }), { maxProperties: 100 }),
        Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 100 }),
      ],
      { description: '{line key or variant id: quantity}, or one quantity per line in Cart.items order' },
    ),
  ),
  note: Type.Optional(StorableText({ maxLength: PERSON_FIELDS.cartNote.max })),
  attributes: Type.Optional(
    Type.Record(Type.String(), StorableText({ maxLength: PERSON_FIELDS.cartAttributeValue.max }), {
      maxProperties: 30,
      propertyNames: { maxLength: PERSON_FIELDS.cartAttributeName.max, pattern: STORABLE_TEXT },
    }),
  ),
});
export type UpdateCartInput = Static<typeof UpdateCartBody>;
