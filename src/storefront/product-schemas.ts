/** The storefront JSON shapes of the catalog (spec: Resources), one source for types, validation and OpenAPI. */
import { Type, type Static } from 'typebox';

const Cents = Type.Integer({ minimum: 0, description: 'US cents' });
const NullableCents = Type.Union([Cents, Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const SellingPlanAllocationSchema = Type.Object({
  selling_plan_id: Type.Integer(),
  selling_plan_group_id: Type.Integer(),
  price: Cents,
  compare_at_price: Cents,
  per_delivery_price: Cents,
  price_adjustments: Type.Array(Type.Object({ position: Type.Integer(), price: Cents })),
});

export const VariantSchema = Type.Object(
  {
    id: Type.Integer({ description: 'Variant id; passed as items[].id to /cart/add.js' }),
    title: Type.String(),
    option1: NullableString,
    option2: NullableString,
    option3: NullableString,
    sku: NullableString,
    requires_shipping: Type.Boolean(),
    taxable: Type.Boolean(),
    featured_image: Type.Null(),
    available: Type.Boolean(),
    name: Type.String(),
    public_title: NullableString,
    options: Type.Array(Type.String()),
    price: Cents,
    weight: Type.Integer({ description: 'grams' }),
    compare_at_price: NullableCents,
    inventory_management: NullableString,
    barcode: NullableString,
    requires_selling_plan: Type.Boolean(),
    selling_plan_allocations: Type.Array(SellingPlanAllocationSchema),
    quantity_rule: Type.Object(
      {
        min: Type.Integer({ minimum: 1 }),
        max: Type.Integer({ minimum: 1, description: 'the most units of this variant one cart line may hold; a quantity over it is refused with 422' }),
        increment: Type.Integer({ minimum: 1 }),
      },
      { description: 'units per cart line: from min to max, in steps of increment' },
    ),
  },
  { $id: 'Variant' },
);

export const SellingPlanGroupSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  options: Type.Array(Type.Object({ name: Type.String(), position: Type.Integer(), values: Type.Array(Type.String()) })),
  selling_plans: Type.Array(
    Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      description: Type.String(),
      options: Type.Array(Type.Object({ name: Type.String(), position: Type.Integer(), value: Type.String() })),
      recurring_deliveries: Type.Boolean(),
      price_adjustments: Type.Array(
        Type.Object({ order_count: Type.Null(), position: Type.Integer(), value_type: Type.Literal('percentage'), value: Type.Integer() }),
      ),
    }),
  ),
});

export const ProductSchema = Type.Object(
  {
    id: Type.Integer({ description: 'Used as product_id for recommendations' }),
    title: Type.String(),
    handle: Type.String({ pattern: '^[a-z0-9-]+$' }),
    description: Type.String({ description: 'HTML' }),
    published_at: NullableString,
    created_at: Type.String(),
    vendor: Type.String(),
    type: Type.String(),
    tags: Type.Array(Type.String()),
    price: Cents,
    price_min: Cents,
    price_max: Cents,
    available: Type.Boolean(),
    price_varies: Type.Boolean(),
    compare_at_price: NullableCents,
    compare_at_price_min: Cents,
    compare_at_price_max: Cents,
    compare_at_price_varies: Type.Boolean(),
    variants: Type.Array(Type.Ref('Variant')),
    images: Type.Array(Type.String({ format: 'uri' })),
    featured_image: Type.Union([Type.String({ format: 'uri' }), Type.Null()]),
    options: Type.Array(Type.Object({ name: Type.String(), position: Type.Integer(), values: Type.Array(Type.String()) })),
    url: Type.String(),
    requires_selling_plan: Type.Boolean(),
    selling_plan_groups: Type.Array(SellingPlanGroupSchema),
  },
  { $id: 'Product' },
);

export type ProductJson = Static<typeof ProductSchema>;
export type VariantJson = Static<typeof VariantSchema>;

export const ProductListSchema = Type.Object({ products: Type.Array(Type.Ref('Product')) });
