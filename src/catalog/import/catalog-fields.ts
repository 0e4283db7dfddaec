/**
 * What the merchant's catalog text and URLs may hold, checked once as an import reads them (either format): every
 * text field on one line, but the HTML descriptions, with no control, bidirectional or invisible format character
 * (src/fields/text.ts, the rule every person-facing field follows), within its length; every image an https address
 * on a named host or a path on this store (../catalog-urls.ts). Lengths are Shopify's where it has one (a title, a
 * tag, an option's name or value: 255). No I/O.
 */
import { textFault, textFaultSentence, type TextRule } from '../../fields/text.js';
import { catalogUrlFault } from '../catalog-urls.js';
import type { CollectionInput, ProductInput, SellingPlanInput } from './catalog-document.js';

const single = (max: number): TextRule => ({ max, lines: 'single' });

export const CATALOG_TEXT = {
  title: single(255),
  /** Sanitized to an allow-list when shown; its line breaks are the merchant's. */
  descriptionHtml: { max: 100_000, lines: 'multi' },
  vendor: single(255),
  productType: single(255),
  tag: single(255),
  optionName: single(255),
  optionValue: single(255),
  variantTitle: single(255),
  sku: single(255),
  barcode: single(255),
  imageAlt: single(512),
  sellingPlanGroupName: single(255),
  sellingPlanName: single(255),
  sellingPlanDescription: single(2000),
} as const satisfies Record<string, TextRule>;

/** A text or URL of an entry refused: where in the entry (`images.0.src`), and why (the end of a sentence). */
export interface CatalogFieldFault {
  field: string;
  problem: string;
}

/** Why `value` may not be stored under `rule` (a text rule, or an address), as the end of a sentence; undefined when it may. */
function problemOf(value: string | null | undefined, rule: TextRule | 'url'): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (rule === 'url') return catalogUrlFault(value);
  const fault = textFault(value, rule);
  return fault && textFaultSentence(fault, rule);
}

/** The first of a list's values that may not be stored, with its place (`tags.3`); a field's path is built only for a fault. */
function listFault(path: string, values: readonly string[] = [], rule: TextRule): CatalogFieldFault | undefined {
  for (let i = 0; i < values.length; i++) {
    const problem = problemOf(values[i], rule);
    if (problem) return { field: `${path}.${i}`, problem };
  }
  return undefined;
}

function fieldFault(field: string, value: string | null | undefined, rule: TextRule | 'url'): CatalogFieldFault | undefined {
  const problem = problemOf(value, rule);
  return problem ? { field, problem } : undefined;
}

const within = (path: string, fault: CatalogFieldFault | undefined) => fault && { ...fault, field: `${path}.${fault.field}` };

const planFault = (plan: SellingPlanInput) =>
  fieldFault('name', plan.name, CATALOG_TEXT.sellingPlanName) ?? fieldFault('description', plan.description, CATALOG_TEXT.sellingPlanDescription);

/** The first text or URL of a product (already of the document's shape) that may not be stored, or undefined. */
export function productFault(product: ProductInput): CatalogFieldFault | undefined {
  const fault =
    fieldFault('title', product.title, CATALOG_TEXT.title) ??
    fieldFault('vendor', product.vendor, CATALOG_TEXT.vendor) ??
    fieldFault('product_type', product.product_type, CATALOG_TEXT.productType) ??
    listFault('tags', product.tags, CATALOG_TEXT.tag) ??
    listFault('options', product.options, CATALOG_TEXT.optionName);
  if (fault) return fault;
  for (const [v, variant] of product.variants.entries()) {
    const variantFault =
      fieldFault('title', variant.title, CATALOG_TEXT.variantTitle) ??
      fieldFault('sku', variant.sku, CATALOG_TEXT.sku) ??
      fieldFault('barcode', variant.barcode, CATALOG_TEXT.barcode) ??
      listFault('options', variant.options, CATALOG_TEXT.optionValue);
    if (variantFault) return within(`variants.${v}`, variantFault);
  }
  for (const [i, image] of (product.images ?? []).entries()) {
    const imageFault = fieldFault('src', image.src, 'url') ?? fieldFault('alt', image.alt, CATALOG_TEXT.imageAlt);
    if (imageFault) return within(`images.${i}`, imageFault);
  }
  for (const [g, group] of (product.selling_plan_groups ?? []).entries()) {
    const groupFault =
      fieldFault('name', group.name, CATALOG_TEXT.sellingPlanGroupName) ??
      group.plans.reduce<CatalogFieldFault | undefined>((found, plan, p) => found ?? within(`plans.${p}`, planFault(plan)), undefined);
    if (groupFault) return within(`selling_plan_groups.${g}`, groupFault);
  }
  return fieldFault('description_html', product.description_html, CATALOG_TEXT.descriptionHtml);
}

/** The first text of a collection (already of the document's shape) that may not be stored, or undefined. */
export function collectionFault(collection: CollectionInput): CatalogFieldFault | undefined {
  return fieldFault('title', collection.title, CATALOG_TEXT.title) ?? fieldFault('description_html', collection.description_html, CATALOG_TEXT.descriptionHtml);
}
