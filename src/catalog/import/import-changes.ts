/**
 * What an import changes, product by product: the products it adds, the fields it changes (was, now), the images it
 * adds and removes, the variants it adds, changes and archives, and the stock it sets. Worked out for every batch
 * from what the store held before the batch was written and what the file says, so a preview (a dry run) and the
 * import itself report the same changes. No I/O: the import reads the rows (import-catalog.ts).
 *
 * A report keeps the changes of at most `listLimit` products (a file of 100,000 new products is counted, not
 * listed): what is beyond is counted in `unlisted`, as the import streams with the memory of one batch.
 */
import { formatMoney } from '../types.js';
import { carries, type CollectionInput, type ImportedProduct, type ProductInput, type UncarriedField, type VariantInput } from './catalog-document.js';

/** A field's value as it was or will be: cents for prices, lists for tags and options. */
export type FieldValue = string | number | boolean | null | string[];

/** One field whose value an import (or an edit) changes. */
export interface FieldChange {
  field: string;
  from: FieldValue;
  to: FieldValue;
}

/** An image by its address: added, removed, or kept with its alt text, size or place changed. */
export interface ImageChange {
  change: 'added' | 'removed' | 'changed';
  src: string;
  alt: string | null;
  /** What changed of a kept image (alt, width, height, position). */
  fields?: FieldChange[];
}

/** A variant's stock: where it starts (added), what it is set to (`--set-stock`), or a file's quantity left aside. */
export interface StockChange {
  /** Units on hand before; null for a new variant. */
  from: number | null;
  to: number;
  /** The file's quantity when it differs from the level kept (the import was not asked to set stock). */
  fileQuantity?: number;
}

export interface VariantChange {
  /** added: new (or an archived one listed again); removed: the file no longer lists it (archived). */
  change: 'added' | 'changed' | 'removed';
  /** The variant's id; null for one the import would create. */
  variantId: number | null;
  sku: string | null;
  title: string;
  fields: FieldChange[];
  stock?: StockChange;
}

export interface ProductChange {
  change: 'added' | 'changed';
  handle: string;
  title: string;
  /** The product's id; null for one the import would create. */
  productId: number | null;
  fields: FieldChange[];
  images: ImageChange[];
  variants: VariantChange[];
}

export interface CollectionChange {
  change: 'added' | 'changed';
  handle: string;
  title: string;
  fields: FieldChange[];
  /** Handles of the products it gains and loses. */
  productsAdded: string[];
  productsRemoved: string[];
}

export interface ImportChanges {
  /** Products added or changed, in the file's order (at most the list limit). */
  products: ProductChange[];
  collections: CollectionChange[];
  /** Products added or changed beyond the list limit (counted, not listed). */
  unlisted: number;
  images: { added: number; removed: number };
}

/** Products whose changes a report lists: enough for a page to show, a few hundred kilobytes at most. */
export const LISTED_PRODUCTS = 1000;

export const noChanges = (): ImportChanges => ({ products: [], collections: [], unlisted: 0, images: { added: 0, removed: 0 } });

/** A product as the store holds it before a batch is written (the rows import-catalog.ts reads). */
export interface StoredProduct {
  id: number;
  handle: string;
  title: string;
  descriptionHtml: string;
  vendor: string;
  productType: string;
  tags: string[];
  optionNames: string[];
  published: boolean;
  complementary: string[];
  images: StoredImage[];
  /** Every variant, archived ones too (a SKU listed again brings one back). */
  variants: Map<number, StoredVariant>;
  /** Its selling plans, each as one line (group: plan, discount, interval). */
  sellingPlans: string[];
}

export interface StoredImage {
  position: number;
  src: string;
  alt: string | null;
  width: number | null;
  height: number | null;
}

export interface StoredVariant {
  id: number;
  position: number;
  title: string;
  sku: string | null;
  optionValues: string[];
  priceCents: number;
  compareAtCents: number | null;
  inventoryTracked: boolean;
  inventoryPolicy: string;
  requiresShipping: boolean;
  taxable: boolean;
  barcode: string | null;
  weightGrams: number;
  archived: boolean;
  /** Units on hand; null when it has no level row. */
  onHand: number | null;
}

/** A selling plan as one line, the same for a stored plan and a file's. */
export function sellingPlanLine(group: string, plan: { name: string; discountPercent: number; intervalCount: number; intervalUnit: string; description: string }): string {
  return `${group}: ${plan.name}, ${plan.discountPercent}% off, every ${plan.intervalCount} ${plan.intervalUnit}${plan.description ? ` (${plan.description})` : ''}`;
}

/** The variant title the import stores: the file's, else its option values, else Shopify's "Default Title". */
export function importedVariantTitle(variant: VariantInput): string {
  return variant.title || (variant.options ?? []).join(' / ') || 'Default Title';
}

const same = (a: FieldValue, b: FieldValue) => JSON.stringify(a) === JSON.stringify(b);

/** The fields whose values differ, in the order given: [field, was, now]. */
export function changedFields(pairs: readonly [string, FieldValue, FieldValue][]): FieldChange[] {
  return pairs.filter(([, from, to]) => !same(from, to)).map(([field, from, to]) => ({ field, from, to }));
}

/** What the import stores of a product's own fields (defaults as upsertProducts writes them). */
function productFields(input: ProductInput): [string, FieldValue][] {
  return [
    ['title', input.title],
    ['description_html', input.description_html ?? ''],
    ['vendor', input.vendor ?? ''],
    ['product_type', input.product_type ?? ''],
    ['tags', input.tags ?? []],
    ['options', input.options ?? []],
    ['published', input.published ?? true],
    ['complementary', input.complementary ?? []],
    ['selling_plans', (input.selling_plan_groups ?? []).flatMap((group) =>
      group.plans.map((plan) =>
        sellingPlanLine(group.name, {
          name: plan.name,
          discountPercent: plan.discount_percent,
          intervalCount: plan.interval_count ?? 1,
          intervalUnit: plan.interval_unit ?? 'month',
          description: plan.description ?? '',
        }),
      ),
    )],
  ];
}

/** The report's name of each product field a file may not carry. */
const REPORTED_AS: Record<UncarriedField, string> = { selling_plan_groups: 'selling_plans', complementary: 'complementary' };

/** Whether the file states the report's `field` of the product (every field but those its format does not carry). */
const statedBy = (input: ImportedProduct, field: string): boolean =>
  (Object.keys(REPORTED_AS) as UncarriedField[]).every((uncarried) => REPORTED_AS[uncarried] !== field || carries(input, uncarried));

function storedProductFields(stored: StoredProduct): FieldValue[] {
  return [stored.title, stored.descriptionHtml, stored.vendor, stored.productType, stored.tags, stored.optionNames, stored.published, stored.complementary, stored.sellingPlans];
}

/** What the import stores of a variant (defaults as upsertVariants writes them), with its place (1-based). */
function variantFields(input: VariantInput, position: number): [string, FieldValue][] {
  return [
    ['title', importedVariantTitle(input)],
    ['sku', input.sku ?? null],
    ['options', input.options ?? []],
    ['price', input.price],
    ['compare_at_price', input.compare_at_price ?? null],
    ['inventory_tracked', input.inventory_tracked ?? true],
    ['inventory_policy', input.inventory_policy ?? 'deny'],
    ['requires_shipping', input.requires_shipping ?? true],
    ['taxable', input.taxable ?? true],
    ['barcode', input.barcode ?? null],
    ['weight_grams', input.weight_grams ?? 0],
    ['position', position],
  ];
}

function storedVariantFields(stored: StoredVariant): FieldValue[] {
  return [
    stored.title,
    stored.sku,
    stored.optionValues,
    stored.priceCents,
    stored.compareAtCents,
    stored.inventoryTracked,
    stored.inventoryPolicy,
    stored.requiresShipping,
    stored.taxable,
    stored.barcode,
    stored.weightGrams,
    stored.position,
  ];
}

const pairedWith = (now: [string, FieldValue][], was: FieldValue[]): [string, FieldValue, FieldValue][] => now.map(([field, to], i) => [field, was[i]!, to]);

/** Images by address: those the file no longer lists are removed, new addresses added, kept ones compared. */
export function imageChanges(before: readonly StoredImage[], after: readonly { src: string; alt?: string | null; width?: number; height?: number }[]): ImageChange[] {
  const changes: ImageChange[] = [];
  const kept = new Map<string, StoredImage[]>();
  for (const image of before) kept.set(image.src, [...(kept.get(image.src) ?? []), image]);
  // A kept image has moved when its place among the kept ones changed (not when one before it was added or removed).
  const afterSrcs = new Set(after.map((image) => image.src));
  const beforeSrcs = new Set(before.map((image) => image.src));
  const rankBefore = new Map(before.filter((image) => afterSrcs.has(image.src)).map((image, rank) => [image, rank]));
  let rankAfter = 0;
  after.forEach((image, index) => {
    const was = kept.get(image.src)?.shift();
    if (!was) return changes.push({ change: 'added', src: image.src, alt: image.alt ?? null });
    const moved = beforeSrcs.has(image.src) && rankBefore.get(was) !== rankAfter++;
    const fields = changedFields([
      ['alt', was.alt, image.alt ?? null],
      ['width', was.width, image.width ?? null],
      ['height', was.height, image.height ?? null],
      ['position', was.position, moved ? index + 1 : was.position],
    ]);
    if (fields.length > 0) changes.push({ change: 'changed', src: image.src, alt: image.alt ?? null, fields });
  });
  for (const left of kept.values()) for (const image of left) changes.push({ change: 'removed', src: image.src, alt: image.alt });
  return changes;
}

/** How the stock of a variant the import writes moves, as applyStockLevels moves it; undefined when it does not. */
function stockChange(stored: StoredVariant | undefined, quantity: number | undefined, setStock: boolean): StockChange | undefined {
  const onHand = stored?.onHand ?? null;
  if (onHand === null) return { from: null, to: quantity ?? 0 };
  if (quantity === undefined || quantity === onHand) return undefined;
  return setStock ? { from: onHand, to: quantity } : { from: onHand, to: onHand, fileQuantity: quantity };
}

/**
 * The changes to one product of a batch: `stored` is what the store held before (undefined: a new product), `matched`
 * the stored variant each of the file's variants was matched to (by SKU, else by option values), as the import matched them.
 */
export function productChange(
  input: ProductInput,
  stored: StoredProduct | undefined,
  matched: readonly (number | null)[],
  setStock: boolean,
): ProductChange | undefined {
  const variants: VariantChange[] = input.variants.map((variant, index) => {
    const was = matched[index] === null || matched[index] === undefined ? undefined : stored?.variants.get(matched[index]!);
    const now = variantFields(variant, index + 1);
    const stock = stockChange(was, variant.inventory_quantity, setStock);
    const common = { sku: variant.sku ?? null, title: importedVariantTitle(variant), ...(stock ? { stock } : {}) };
    if (!was || was.archived) return { change: 'added', variantId: was?.id ?? null, ...common, fields: [] };
    return { change: 'changed', variantId: was.id, ...common, fields: changedFields(pairedWith(now, storedVariantFields(was))) };
  });
  const listed = new Set(matched.filter((id): id is number => id !== null));
  for (const was of stored?.variants.values() ?? []) {
    if (!was.archived && !listed.has(was.id)) variants.push({ change: 'removed', variantId: was.id, sku: was.sku, title: was.title, fields: [] });
  }
  // A level kept apart from the file's quantity is no change (the report counts them): it shows beside a variant's other changes.
  const changedVariants = variants.filter((v) => v.change !== 'changed' || v.fields.length > 0 || (v.stock !== undefined && v.stock.fileQuantity === undefined));
  if (!stored) {
    return { change: 'added', handle: input.handle, title: input.title, productId: null, fields: [], images: imageChanges([], input.images ?? []), variants };
  }
  // A field the file does not carry (a Shopify CSV's plans and complementary products) is kept: no change to report.
  const fields = changedFields(pairedWith(productFields(input), storedProductFields(stored)).filter(([field]) => statedBy(input, field)));
  const images = imageChanges(stored.images, input.images ?? []);
  if (fields.length === 0 && images.length === 0 && changedVariants.length === 0) return undefined;
  return { change: 'changed', handle: input.handle, title: input.title, productId: stored.id, fields, images, variants: changedVariants };
}

/** What a collection's row and members were before (undefined: a new collection). */
export interface StoredCollection {
  title: string;
  descriptionHtml: string;
  published: boolean;
  productHandles: string[];
}

export function collectionChange(input: CollectionInput, stored: StoredCollection | undefined): CollectionChange | undefined {
  const members = [...new Set(input.products)];
  if (!stored) return { change: 'added', handle: input.handle, title: input.title, fields: [], productsAdded: members, productsRemoved: [] };
  const fields = changedFields([
    ['title', stored.title, input.title],
    ['description_html', stored.descriptionHtml, input.description_html ?? ''],
    ['published', stored.published, input.published ?? true],
  ]);
  const before = new Set(stored.productHandles);
  const now = new Set(members);
  const productsAdded = members.filter((handle) => !before.has(handle));
  const productsRemoved = stored.productHandles.filter((handle) => !now.has(handle));
  const reordered = productsAdded.length === 0 && productsRemoved.length === 0 && !same(stored.productHandles, members);
  if (reordered) fields.push({ field: 'order', from: stored.productHandles, to: members });
  if (fields.length === 0 && productsAdded.length === 0 && productsRemoved.length === 0) return undefined;
  return { change: 'changed', handle: input.handle, title: input.title, fields, productsAdded, productsRemoved };
}

/** Adds a product's changes to the report's: listed while under the limit, always counted. */
export function addProductChange(changes: ImportChanges, change: ProductChange | undefined, listLimit: number): void {
  if (!change) return;
  for (const image of change.images) {
    if (image.change === 'added') changes.images.added++;
    if (image.change === 'removed') changes.images.removed++;
  }
  if (changes.products.length < listLimit) changes.products.push(change);
  else changes.unlisted++;
}

const MONEY_FIELDS = new Set(['price', 'compare_at_price']);
/** Fields whose values are too long to show: only that they changed. */
const LONG_FIELDS = new Set(['description_html', 'selling_plans']);
const SHOWN_TEXT = 80;

/** A field's value as a person reads it: money as dollars, lists joined, text quoted (long text cut). */
export function fieldValueText(field: string, v: FieldValue): string {
  if (v === null) return 'none';
  if (MONEY_FIELDS.has(field) && typeof v === 'number') return formatMoney(v);
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.join(', ');
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return JSON.stringify(v.length > SHOWN_TEXT ? `${v.slice(0, SHOWN_TEXT - 1)}…` : v);
  return String(v);
}

/** One field's change as a person reads it (the terminal, the admin): `price: $4.50 → $5.00`. */
export function fieldChangeText(change: FieldChange): string {
  const name = change.field.replaceAll('_', ' ').replace(/\bsku\b/, 'SKU');
  if (LONG_FIELDS.has(change.field)) return `${name} changed`;
  if (change.field === 'published') return change.to ? 'published' : 'unpublished (hidden from the shop)';
  return `${name}: ${fieldValueText(change.field, change.from)} → ${fieldValueText(change.field, change.to)}`;
}
