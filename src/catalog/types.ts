/** The catalog as the domain sees it: plain data, money in integer cents. */
import { htmlToText } from '../search/text-normalisation.js';

export interface ProductImage {
  id: number;
  position: number;
  /** An absolute URL, or a path on this store ("/assets/…") made absolute with BASE_URL when emitted. */
  src: string;
  alt: string | null;
  width: number | null;
  height: number | null;
}

export interface SellingPlan {
  id: number;
  groupId: number;
  name: string;
  description: string;
  discountPercent: number;
  intervalUnit: 'day' | 'week' | 'month' | 'year';
  intervalCount: number;
}

export interface SellingPlanGroup {
  id: number;
  name: string;
  plans: SellingPlan[];
}

export interface Variant {
  id: number;
  productId: number;
  position: number;
  title: string;
  sku: string | null;
  optionValues: string[];
  priceCents: number;
  compareAtCents: number | null;
  inventoryTracked: boolean;
  inventoryPolicy: 'deny' | 'continue';
  requiresShipping: boolean;
  taxable: boolean;
  barcode: string | null;
  weightGrams: number;
}

export interface Product {
  id: number;
  handle: string;
  title: string;
  descriptionHtml: string;
  vendor: string;
  productType: string;
  tags: string[];
  optionNames: string[];
  published: boolean;
  complementaryHandles: string[];
  createdAt: string;
  updatedAt: string;
  publishedAt: string | null;
  variants: Variant[];
  images: ProductImage[];
  sellingPlanGroups: SellingPlanGroup[];
}

export interface Collection {
  id: number;
  handle: string;
  title: string;
  descriptionHtml: string;
  published: boolean;
  createdAt: string;
  updatedAt: string;
  /** Product ids in the collection's order. */
  productIds: number[];
}

/** The store's only currency (spec: money is US cents); UCP amounts are ISO 4217 minor units too. */
export const STORE_CURRENCY = 'USD';

/** Integer cents as people read them: 123456 -> $1,234.56 (another currency: 1,234.56 EUR). */
export function formatMoney(cents: number, currency: string = STORE_CURRENCY): string {
  const sign = cents < 0 ? '-' : '';
  const whole = Math.trunc(Math.abs(cents) / 100).toLocaleString('en-US');
  const amount = `${whole}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;
  return currency === 'USD' ? `${sign}$${amount}` : `${sign}${amount} ${currency}`;
}

/** Shopify's item name: the product title, then the variant title unless the product has only the default variant. */
export function itemName(product: Product, variant: Variant): string {
  return product.optionNames.length === 0 ? product.title : `${product.title} - ${variant.title}`;
}

/** The distinct values of a product's option (by position), in variant order. */
export function optionValues(product: Product, index: number): string[] {
  return [...new Set(product.variants.map((v) => v.optionValues[index]).filter((v): v is string => !!v))];
}

/** Store paths ("/assets/…") become absolute under BASE_URL; a merchant's absolute image URLs pass through. */
export function absoluteUrl(baseUrl: string, src: string): string {
  return src.startsWith('/') && !src.startsWith('//') ? baseUrl + src : src;
}

/** The plan's price for one unit of a variant: the discount rounds to the nearest cent. */
export function sellingPlanPrice(variant: Variant, plan: SellingPlan): number {
  return variant.priceCents - Math.round((variant.priceCents * plan.discountPercent) / 100);
}

const plainDescriptions = new WeakMap<Product, string>();

/** The description as plain text (tags dropped, entities decoded, white space collapsed), once per product object. */
export function plainDescription(product: Product): string {
  let text = plainDescriptions.get(product);
  if (text === undefined) {
    text = htmlToText(product.descriptionHtml).replace(/\s+/g, ' ').trim();
    plainDescriptions.set(product, text);
  }
  return text;
}
