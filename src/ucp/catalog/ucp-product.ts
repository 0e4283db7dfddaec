/**
 * Domain product -> UCP Product (types/product.json, 2026-04-08). Ids are the storefront's ids as strings,
 * so the variant id an agent reads here is the `item.id` it puts in a cart. Amounts are integer cents.
 */
import type { OptionSelection } from '../../catalog/catalog-queries.js';
import { absoluteUrl, itemName, optionValues, plainDescription, STORE_CURRENCY, type Product, type Variant } from '../../catalog/types.js';
import { availabilityStatus, type StockLevels } from '../../inventory/stock.js';

export interface UcpPrice {
  amount: number;
  currency: string;
}

export type UcpSelectedOption = OptionSelection;

export interface UcpVariant {
  id: string;
  title: string;
  description: { plain: string };
  price: UcpPrice;
  list_price?: UcpPrice;
  sku?: string;
  barcodes?: { type: string; value: string }[];
  url: string;
  availability: { available: boolean; status: 'in_stock' | 'backorder' | 'out_of_stock' };
  options?: UcpSelectedOption[];
  /** The units one line of a cart or checkout may hold, as the storefront's `quantity_rule` says them (UCP has no member of its own). */
  metadata: { quantity_rule: QuantityRule };
}

/** Units per cart or checkout line: from `min` to `max`, in steps of `increment`; more is refused (quantity_limit). */
export interface QuantityRule {
  min: number;
  max: number;
  increment: number;
}

export interface UcpProduct {
  id: string;
  handle: string;
  title: string;
  description: { html: string; plain: string };
  url: string;
  categories: { value: string; taxonomy: string }[];
  price_range: { min: UcpPrice; max: UcpPrice };
  list_price_range?: { min: UcpPrice; max: UcpPrice };
  media: { type: 'image'; url: string; alt_text?: string; width?: number; height?: number }[];
  options?: { name: string; values: { label: string }[] }[];
  variants: UcpVariant[];
  tags: string[];
  metadata?: { vendor: string };
}

export const price = (amount: number): UcpPrice => ({ amount, currency: STORE_CURRENCY });

function availabilityOf(variant: Variant, stock: StockLevels): UcpVariant['availability'] {
  const status = availabilityStatus(variant, stock);
  return { available: status !== 'out_of_stock', status };
}

/** A barcode's standard, told by its length; other values are not barcodes a platform can use. */
function barcodeOf(barcode: string | null): UcpVariant['barcodes'] {
  if (!barcode || !/^(\d{8}|\d{12,14})$/.test(barcode)) return undefined;
  const type = barcode.length === 12 ? 'UPC' : barcode.length === 13 ? 'EAN' : 'GTIN';
  return [{ type, value: barcode }];
}

/** The selections that define a variant (`Flavour: Lemon-Lime`); none for a product without options. */
export function variantOptions(product: Product, variant: Variant): UcpSelectedOption[] {
  return product.optionNames.flatMap((name, index) => {
    const label = variant.optionValues[index];
    return label ? [{ name, label }] : [];
  });
}

/** `maxLineQuantity`: the units one line may hold (CART_MAX_LINE_QUANTITY), told as the variant's quantity rule. */
export function ucpVariant(product: Product, variant: Variant, baseUrl: string, stock: StockLevels, maxLineQuantity: number): UcpVariant {
  const options = variantOptions(product, variant);
  return {
    id: String(variant.id),
    title: variant.title,
    description: { plain: itemName(product, variant) },
    price: price(variant.priceCents),
    ...(variant.compareAtCents !== null && variant.compareAtCents > variant.priceCents ? { list_price: price(variant.compareAtCents) } : {}),
    ...(variant.sku ? { sku: variant.sku } : {}),
    ...(barcodeOf(variant.barcode) ? { barcodes: barcodeOf(variant.barcode) } : {}),
    url: `${baseUrl}/products/${product.handle}?variant=${variant.id}`,
    availability: availabilityOf(variant, stock),
    ...(options.length ? { options } : {}),
    metadata: { quantity_rule: { min: 1, max: maxLineQuantity, increment: 1 } },
  };
}

function range(amounts: number[]): { min: UcpPrice; max: UcpPrice } {
  return { min: price(Math.min(...amounts)), max: price(Math.max(...amounts)) };
}

/** `categories`: the product type and the titles of the collections the product is in; `maxLineQuantity`: units per line. */
export function ucpProduct(
  product: Product,
  baseUrl: string,
  stock: StockLevels,
  collectionTitles: readonly string[],
  maxLineQuantity: number,
  variants?: readonly Variant[],
): UcpProduct {
  const listed = variants ?? product.variants;
  const onSale = product.variants.some((v) => v.compareAtCents !== null && v.compareAtCents > v.priceCents);
  const categories = [product.productType, ...collectionTitles].filter(Boolean).map((value) => ({ value, taxonomy: 'merchant' }));
  const options = product.optionNames.map((name, index) => ({
    name,
    values: optionValues(product, index).map((label) => ({ label })),
  }));
  return {
    id: String(product.id),
    handle: product.handle,
    title: product.title,
    description: { html: product.descriptionHtml, plain: plainDescription(product) },
    url: `${baseUrl}/products/${product.handle}`,
    categories,
    price_range: range(product.variants.map((v) => v.priceCents)),
    ...(onSale ? { list_price_range: range(product.variants.map((v) => Math.max(v.priceCents, v.compareAtCents ?? 0))) } : {}),
    media: product.images.map((image) => ({
      type: 'image' as const,
      url: absoluteUrl(baseUrl, image.src),
      ...(image.alt ? { alt_text: image.alt } : {}),
      ...(image.width && image.width > 0 ? { width: image.width } : {}),
      ...(image.height && image.height > 0 ? { height: image.height } : {}),
    })),
    ...(options.some((o) => o.values.length > 0) ? { options: options.filter((o) => o.values.length > 0) } : {}),
    variants: listed.map((variant) => ucpVariant(product, variant, baseUrl, stock, maxLineQuantity)),
    tags: product.tags,
    ...(product.vendor ? { metadata: { vendor: product.vendor } } : {}),
  };
}
