/** Domain product -> the storefront Product JSON (spec Resources; Shopify's /products/{handle}.js shape). */
import type { ProductJson, VariantJson } from './product-schemas.js';
import { absoluteUrl, itemName, optionValues, sellingPlanPrice, type Product, type Variant } from '../catalog/types.js';
import { isProductAvailable, isVariantAvailable, type StockLevels } from '../inventory/stock.js';

function variantJson(product: Product, variant: Variant, stock: StockLevels, maxLineQuantity: number): VariantJson {
  const isDefault = product.optionNames.length === 0;
  return {
    id: variant.id,
    title: variant.title,
    option1: variant.optionValues[0] ?? (isDefault ? variant.title : null),
    option2: variant.optionValues[1] ?? null,
    option3: variant.optionValues[2] ?? null,
    sku: variant.sku,
    requires_shipping: variant.requiresShipping,
    taxable: variant.taxable,
    featured_image: null,
    available: isVariantAvailable(variant, stock),
    name: itemName(product, variant),
    public_title: isDefault ? null : variant.title,
    options: isDefault ? [variant.title] : variant.optionValues,
    price: variant.priceCents,
    weight: variant.weightGrams,
    compare_at_price: variant.compareAtCents,
    inventory_management: variant.inventoryTracked ? 'shopify' : null,
    barcode: variant.barcode,
    requires_selling_plan: false,
    selling_plan_allocations: product.sellingPlanGroups.flatMap((group) =>
      group.plans.map((plan) => {
        const price = sellingPlanPrice(variant, plan);
        return {
          selling_plan_id: plan.id,
          selling_plan_group_id: group.id,
          price,
          compare_at_price: variant.priceCents,
          per_delivery_price: price,
          price_adjustments: [{ position: 1, price }],
        };
      }),
    ),
    quantity_rule: { min: 1, max: maxLineQuantity, increment: 1 },
  };
}

/** `maxLineQuantity`: the units one cart line may hold (CART_MAX_LINE_QUANTITY), each variant's quantity_rule.max. */
export function productJson(product: Product, baseUrl: string, stock: StockLevels, maxLineQuantity: number): ProductJson {
  const prices = product.variants.map((v) => v.priceCents);
  const compareAts = product.variants.map((v) => v.compareAtCents ?? 0);
  const price = prices.length ? Math.min(...prices) : 0;
  const cheapest = product.variants.find((v) => v.priceCents === price);
  const images = product.images.map((image) => absoluteUrl(baseUrl, image.src));
  const options = product.optionNames.length
    ? product.optionNames.map((name, index) => ({
        name,
        position: index + 1,
        values: optionValues(product, index),
      }))
    : [{ name: 'Title', position: 1, values: product.variants.map((v) => v.title) }];
  return {
    id: product.id,
    title: product.title,
    handle: product.handle,
    description: product.descriptionHtml,
    published_at: product.publishedAt,
    created_at: product.createdAt,
    vendor: product.vendor,
    type: product.productType,
    tags: product.tags,
    price,
    price_min: price,
    price_max: prices.length ? Math.max(...prices) : 0,
    available: isProductAvailable(product, stock),
    price_varies: new Set(prices).size > 1,
    compare_at_price: cheapest?.compareAtCents ?? null,
    compare_at_price_min: compareAts.length ? Math.min(...compareAts) : 0,
    compare_at_price_max: compareAts.length ? Math.max(...compareAts) : 0,
    compare_at_price_varies: new Set(compareAts).size > 1,
    variants: product.variants.map((variant) => variantJson(product, variant, stock, maxLineQuantity)),
    images,
    featured_image: images[0] ?? null,
    options,
    url: `/products/${product.handle}`,
    requires_selling_plan: false,
    selling_plan_groups: product.sellingPlanGroups.map((group) => ({
      id: group.id,
      name: group.name,
      options: [{ name: 'Delivery every', position: 1, values: group.plans.map((plan) => plan.name) }],
      selling_plans: group.plans.map((plan) => ({
        id: plan.id,
        name: plan.name,
        description: plan.description,
        options: [{ name: 'Delivery every', position: 1, value: plan.name }],
        recurring_deliveries: true,
        price_adjustments: [{ order_count: null, position: 1, value_type: 'percentage' as const, value: plan.discountPercent }],
      })),
    })),
  };
}
