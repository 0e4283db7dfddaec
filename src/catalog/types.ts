/** The catalog as the domain sees it: plain data, money in integer cents. */

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
  inventoryQuantity: number;
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

/** A variant can be bought when stock is not tracked, overselling is allowed, or units are on hand. */
export function isVariantAvailable(variant: Variant): boolean {
  return !variant.inventoryTracked || variant.inventoryPolicy === 'continue' || variant.inventoryQuantity > 0;
}

/** How many more units of a variant may be sold now; Infinity when stock does not limit it. */
export function sellableQuantity(variant: Variant): number {
  if (!variant.inventoryTracked || variant.inventoryPolicy === 'continue') return Number.POSITIVE_INFINITY;
  return variant.inventoryQuantity;
}

export function isProductAvailable(product: Product): boolean {
  return product.variants.some(isVariantAvailable);
}

/** The plan's price for one unit of a variant: the discount rounds to the nearest cent. */
export function sellingPlanPrice(variant: Variant, plan: SellingPlan): number {
  return variant.priceCents - Math.round((variant.priceCents * plan.discountPercent) / 100);
}
