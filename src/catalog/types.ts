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
  return planUnitPrice(variant.priceCents, plan.discountPercent);
}

/** A one-time unit price less a plan's discount (percent), rounded to the nearest cent. */
export function planUnitPrice(fullCents: number, discountPercent: number): number {
  return fullCents - Math.round((fullCents * discountPercent) / 100);
}

/**
 * A selling plan's terms as bought: kept on a renewal's checkout line, the order line and the subscription, so a
 * later change to the catalog's plan never rewrites what the buyer agreed to.
 */
export interface PlanTerms {
  sellingPlanId: number;
  groupId: number;
  groupName: string;
  name: string;
  description: string;
  intervalUnit: SellingPlan['intervalUnit'];
  intervalCount: number;
  discountPercent: number;
}

export function planTermsOf(group: SellingPlanGroup, plan: SellingPlan): PlanTerms {
  return {
    sellingPlanId: plan.id,
    groupId: group.id,
    groupName: group.name,
    name: plan.name,
    description: plan.description,
    intervalUnit: plan.intervalUnit,
    intervalCount: plan.intervalCount,
    discountPercent: plan.discountPercent,
  };
}

/** "every month", "every 2 weeks". */
export function intervalWords(unit: SellingPlan['intervalUnit'], count: number): string {
  return count === 1 ? `every ${unit}` : `every ${count} ${unit}s`;
}

/** The plan as a line names it: "Delivery every month (every month, save 10%)" reads badly, so: name, then the saving. */
export function planWords(terms: Pick<PlanTerms, 'name' | 'intervalUnit' | 'intervalCount' | 'discountPercent'>): string {
  const saving = terms.discountPercent > 0 ? `, save ${terms.discountPercent}%` : '';
  return `${terms.name} (${intervalWords(terms.intervalUnit, terms.intervalCount)}${saving})`;
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
