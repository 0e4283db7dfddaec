/** Domain cart -> the storefront Cart JSON (spec Resources; Shopify's /cart.js shape). Prices come from the live catalog. */
import { absoluteUrl, plainDescription, STORE_CURRENCY } from '../catalog/types.js';
import type { PricedCart, PricedLine } from '../cart/cart.js';
import type { CartJson, LineItemJson, SellingPlanAllocationJson } from './cart-schemas.js';

function sellingPlanAllocation(priced: PricedLine): SellingPlanAllocationJson | null {
  if (!priced.sellingPlan) return null;
  const { group, plan } = priced.sellingPlan;
  return {
    price: priced.price,
    compare_at_price: priced.originalPrice,
    per_delivery_price: priced.price,
    price_adjustments: [{ position: 1, price: priced.price }],
    selling_plan_group_id: group.id,
    selling_plan: {
      id: plan.id,
      name: plan.name,
      description: plan.description,
      options: [{ name: 'Delivery every', position: 1, value: plan.name }],
      recurring_deliveries: true,
      fixed_selling_plan: false,
      price_adjustments: [{ order_count: null, position: 1, value_type: 'percentage', value: plan.discountPercent }],
    },
  };
}

function lineItemJson(priced: PricedLine, baseUrl: string, maxLineQuantity: number): LineItemJson {
  const { line, item } = priced;
  const { product, variant } = item;
  const onlyDefaultVariant = product.optionNames.length === 0;
  const image = product.images[0];
  const imageUrl = image ? absoluteUrl(baseUrl, image.src) : null;
  const url = `/products/${product.handle}?variant=${variant.id}${line.sellingPlanId === null ? '' : `&selling_plan=${line.sellingPlanId}`}`;
  return {
    key: line.key,
    id: variant.id,
    variant_id: variant.id,
    quantity: line.quantity,
    properties: line.properties,
    title: priced.title,
    price: priced.price,
    original_price: priced.originalPrice,
    discounted_price: priced.price,
    final_price: priced.price,
    line_price: priced.linePrice,
    original_line_price: priced.originalLinePrice,
    final_line_price: priced.linePrice,
    total_discount: priced.discount,
    discounts: priced.sellingPlan && priced.discount > 0 ? [{ amount: priced.discount, title: priced.sellingPlan.plan.name }] : [],
    line_level_discount_allocations: [],
    line_level_total_discount: 0,
    sku: variant.sku,
    grams: variant.weightGrams,
    vendor: product.vendor,
    taxable: variant.taxable,
    requires_shipping: variant.requiresShipping,
    gift_card: false,
    product_id: product.id,
    product_has_only_default_variant: onlyDefaultVariant,
    product_title: product.title,
    product_description: plainDescription(product),
    product_type: product.productType,
    variant_title: onlyDefaultVariant ? null : variant.title,
    variant_options: onlyDefaultVariant ? [variant.title] : variant.optionValues,
    options_with_values: onlyDefaultVariant
      ? [{ name: 'Title', value: variant.title }]
      : product.optionNames.map((name, index) => ({ name, value: variant.optionValues[index] ?? '' })),
    handle: product.handle,
    url,
    image: imageUrl,
    featured_image:
      image && imageUrl
        ? {
            aspect_ratio: image.width && image.height ? Math.round((image.width / image.height) * 1000) / 1000 : 1,
            alt: image.alt,
            height: image.height,
            url: imageUrl,
            width: image.width,
          }
        : null,
    quantity_rule: { min: 1, max: maxLineQuantity, increment: 1 },
    selling_plan_allocation: sellingPlanAllocation(priced),
  };
}

/** The domain's priced cart -> the storefront Cart JSON; `maxLineQuantity`: the units a line may hold (its quantity_rule.max). */
export function cartJson(cart: PricedCart, baseUrl: string, maxLineQuantity: number): CartJson {
  const { lines: priced, totals } = cart;
  const visibleAttributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(cart.attributes)) {
    // Shopify keeps attributes named `__…` private: stored, never returned.
    if (!name.startsWith('__')) visibleAttributes[name] = value;
  }
  return {
    token: cart.token,
    note: cart.note,
    attributes: visibleAttributes,
    original_total_price: totals.originalTotalPrice,
    total_price: totals.totalPrice,
    total_discount: totals.totalDiscount,
    total_weight: totals.totalWeight,
    item_count: totals.itemCount,
    items: priced.map((line) => lineItemJson(line, baseUrl, maxLineQuantity)),
    requires_shipping: totals.requiresShipping,
    currency: STORE_CURRENCY,
    items_subtotal_price: totals.totalPrice,
    cart_level_discount_applications: [],
  };
}
