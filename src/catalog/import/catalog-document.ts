/**
 * The project's own JSON catalog format, and the common form every importer (JSON, Shopify CSV) produces.
 * Money is integer cents. Products are matched by handle, variants by SKU (or by option values when a
 * variant has no SKU), collections by handle.
 */
import { Type, type Static } from 'typebox';
import { MAX_CATALOG_URL_LENGTH } from '../catalog-urls.js';
import { CATALOG_TEXT } from './catalog-fields.js';

const Handle = Type.String({ pattern: '^[a-z0-9-]+$', minLength: 1, maxLength: 255 });
const Cents = Type.Integer({ minimum: 0, maximum: 100_000_000 });

export const VariantInputSchema = Type.Object(
  {
    sku: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: CATALOG_TEXT.sku.max }), Type.Null()])),
    title: Type.Optional(Type.String({ maxLength: CATALOG_TEXT.variantTitle.max })),
    options: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: CATALOG_TEXT.optionValue.max }), { maxItems: 3 })),
    price: Cents,
    compare_at_price: Type.Optional(Type.Union([Cents, Type.Null()])),
    inventory_quantity: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    inventory_tracked: Type.Optional(Type.Boolean()),
    inventory_policy: Type.Optional(Type.Union([Type.Literal('deny'), Type.Literal('continue')])),
    requires_shipping: Type.Optional(Type.Boolean()),
    taxable: Type.Optional(Type.Boolean()),
    barcode: Type.Optional(Type.Union([Type.String({ maxLength: CATALOG_TEXT.barcode.max }), Type.Null()])),
    weight_grams: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const SellingPlanInputSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: CATALOG_TEXT.sellingPlanName.max }),
    description: Type.Optional(Type.String({ maxLength: CATALOG_TEXT.sellingPlanDescription.max })),
    discount_percent: Type.Integer({ minimum: 0, maximum: 100 }),
    interval_unit: Type.Optional(
      Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month'), Type.Literal('year')]),
    ),
    interval_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
  },
  { additionalProperties: false },
);

export const ProductInputSchema = Type.Object(
  {
    handle: Handle,
    title: Type.String({ minLength: 1, maxLength: CATALOG_TEXT.title.max }),
    description_html: Type.Optional(Type.String({ maxLength: CATALOG_TEXT.descriptionHtml.max })),
    vendor: Type.Optional(Type.String({ maxLength: CATALOG_TEXT.vendor.max })),
    product_type: Type.Optional(Type.String({ maxLength: CATALOG_TEXT.productType.max })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: CATALOG_TEXT.tag.max }), { maxItems: 250 })),
    published: Type.Optional(Type.Boolean()),
    options: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: CATALOG_TEXT.optionName.max }), { maxItems: 3 })),
    images: Type.Optional(
      Type.Array(
        Type.Object(
          {
            src: Type.String({ minLength: 1, maxLength: MAX_CATALOG_URL_LENGTH }),
            alt: Type.Optional(Type.Union([Type.String({ maxLength: CATALOG_TEXT.imageAlt.max }), Type.Null()])),
            width: Type.Optional(Type.Integer({ minimum: 1 })),
            height: Type.Optional(Type.Integer({ minimum: 1 })),
          },
          { additionalProperties: false },
        ),
        { maxItems: 250 },
      ),
    ),
    variants: Type.Array(VariantInputSchema, { minItems: 1, maxItems: 250 }),
    selling_plan_groups: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: CATALOG_TEXT.sellingPlanGroupName.max }),
            plans: Type.Array(SellingPlanInputSchema, { minItems: 1, maxItems: 20 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 10 },
      ),
    ),
    /** Handles of products the merchant recommends alongside this one (intent=complementary). */
    complementary: Type.Optional(Type.Array(Handle, { maxItems: 10 })),
  },
  { additionalProperties: false },
);

export const CollectionInputSchema = Type.Object(
  {
    handle: Handle,
    title: Type.String({ minLength: 1, maxLength: CATALOG_TEXT.title.max }),
    description_html: Type.Optional(Type.String({ maxLength: CATALOG_TEXT.descriptionHtml.max })),
    published: Type.Optional(Type.Boolean()),
    /** Product handles, in the collection's order. */
    products: Type.Array(Handle),
  },
  { additionalProperties: false },
);

export const CatalogDocumentSchema = Type.Object(
  {
    products: Type.Array(ProductInputSchema),
    collections: Type.Optional(Type.Array(CollectionInputSchema)),
  },
  { additionalProperties: false },
);

export type VariantInput = Static<typeof VariantInputSchema>;
export type SellingPlanInput = Static<typeof SellingPlanInputSchema>;
export type ProductInput = Static<typeof ProductInputSchema>;
export type CollectionInput = Static<typeof CollectionInputSchema>;
export type CatalogDocument = Static<typeof CatalogDocumentSchema>;

/**
 * The fields of a product a format may not carry: its selling plans (a Shopify CSV never has them: Shopify's
 * subscription apps keep them) and its complementary products (the project's own field). The import leaves what the
 * store holds of such a field as it is; a product of the JSON catalog states them all (none listed: none).
 */
export type UncarriedField = Extract<keyof ProductInput, 'selling_plan_groups' | 'complementary'>;

/** The mark naming the fields an importer's format does not carry. A symbol, so nothing a file holds can set it. */
export const FIELDS_NOT_CARRIED: unique symbol = Symbol('fields not carried');

/** A product as an importer hands it over: the common form, marked with the fields its format does not carry. */
export type ImportedProduct = ProductInput & { readonly [FIELDS_NOT_CARRIED]?: readonly UncarriedField[] };

/** Whether the product states `field` (the JSON catalog states every one), so the import sets it to what it lists. */
export const carries = (product: ImportedProduct, field: UncarriedField): boolean => !product[FIELDS_NOT_CARRIED]?.includes(field);

/** A file that cannot be imported; `where` names the row and column, or the JSON path, at fault. */
export class ImportError extends Error {
  constructor(readonly where: string, problem: string) {
    super(`${where}: ${problem}`);
  }
}
