/**
 * Stock rules, with no I/O: whether a variant can be sold and how many units, from the catalog's inventory
 * settings (tracked, policy) and the units on hand. The units on hand come from the inventory module.
 */
import type { Product, Variant } from '../catalog/types.js';

/** Units on hand per variant, as last read from the inventory table. */
export interface StockLevels {
  onHand(variantId: number): number;
}

/** A variant can be bought when stock is not tracked, overselling is allowed, or units are on hand. */
export function isVariantAvailable(variant: Variant, stock: StockLevels): boolean {
  return !variant.inventoryTracked || variant.inventoryPolicy === 'continue' || stock.onHand(variant.id) > 0;
}

export function isProductAvailable(product: Product, stock: StockLevels): boolean {
  return product.variants.some((variant) => isVariantAvailable(variant, stock));
}

/** How many more units of a variant may be sold now; Infinity when stock does not limit it. */
export function sellableQuantity(variant: Variant, stock: StockLevels): number {
  if (!variant.inventoryTracked || variant.inventoryPolicy === 'continue') return Number.POSITIVE_INFINITY;
  return stock.onHand(variant.id);
}

export type AvailabilityStatus = 'in_stock' | 'backorder' | 'out_of_stock';

export function availabilityStatus(variant: Variant, stock: StockLevels): AvailabilityStatus {
  if (!isVariantAvailable(variant, stock)) return 'out_of_stock';
  const backordered = variant.inventoryTracked && variant.inventoryPolicy === 'continue' && stock.onHand(variant.id) <= 0;
  return backordered ? 'backorder' : 'in_stock';
}

/** Units wanted per variant, summed over lines: two lines of one variant draw on one stock. */
export function demandByVariant(lines: readonly { variantId: number; quantity: number }[]): Map<number, number> {
  const demand = new Map<number, number>();
  for (const line of lines) demand.set(line.variantId, (demand.get(line.variantId) ?? 0) + line.quantity);
  return demand;
}

/** Fixed levels (tests, and a variant lookup frozen for one operation). */
export function stockLevels(levels: ReadonlyMap<number, number> | Record<number, number>): StockLevels {
  const map = levels instanceof Map ? levels : new Map(Object.entries(levels).map(([id, n]) => [Number(id), n]));
  return { onHand: (variantId) => map.get(variantId) ?? 0 };
}
