/**
 * What the merchant's catalog text and URLs may hold, checked once as an import reads them (either format): every
 * text field on one line, but the HTML descriptions, with no control, bidirectional or invisible format character
 * (src/fields/text.ts, the rule every person-facing field follows), within its length; every image an https address
 * on a named host or a path on this store (../catalog-urls.ts). Lengths are Shopify's where it has one (a title, a
 * tag, an option's name or value: 255). No I/O.
 */
import { textFault, textFaultSentence, type TextRule } from '../../fields/text.js';
import { catalogUrlFault } from '../catalog-urls.js';
import type { CollectionInput, ProductInput } from './catalog-document.js';

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

type Check = [field: string, value: string | null | undefined, rule: TextRule | 'url'];

function firstFault(checks: Iterable<Check>): CatalogFieldFault | undefined {
  for (const [field, value, rule] of checks) {
    if (value === undefined || value === null) continue;
    if (rule === 'url') {
      const problem = catalogUrlFault(value);
      if (problem) return { field, problem };
      continue;
    }
    const fault = textFault(value, rule);
    if (fault) return { field, problem: textFaultSentence(fault, rule) };
  }
  return undefined;
}

function* productChecks(product: ProductInput): Generator<Check> {
  yield ['title', product.title, CATALOG_TEXT.title];
  yield ['vendor', product.vendor, CATALOG_TEXT.vendor];
  yield ['product_type', product.product_type, CATALOG_TEXT.productType];
  for (const [i, tag] of (product.tags ?? []).entries()) yield [`tags.${i}`, tag, CATALOG_TEXT.tag];
  for (const [i, name] of (product.options ?? []).entries()) yield [`options.${i}`, name, CATALOG_TEXT.optionName];
  for (const [v, variant] of product.variants.entries()) {
    yield [`variants.${v}.title`, variant.title, CATALOG_TEXT.variantTitle];
    yield [`variants.${v}.sku`, variant.sku, CATALOG_TEXT.sku];
    yield [`variants.${v}.barcode`, variant.barcode, CATALOG_TEXT.barcode];
    for (const [i, value] of (variant.options ?? []).entries()) yield [`variants.${v}.options.${i}`, value, CATALOG_TEXT.optionValue];
  }
  for (const [i, image] of (product.images ?? []).entries()) {
    yield [`images.${i}.src`, image.src, 'url'];
    yield [`images.${i}.alt`, image.alt, CATALOG_TEXT.imageAlt];
  }
  for (const [g, group] of (product.selling_plan_groups ?? []).entries()) {
    yield [`selling_plan_groups.${g}.name`, group.name, CATALOG_TEXT.sellingPlanGroupName];
    for (const [p, plan] of group.plans.entries()) {
      yield [`selling_plan_groups.${g}.plans.${p}.name`, plan.name, CATALOG_TEXT.sellingPlanName];
      yield [`selling_plan_groups.${g}.plans.${p}.description`, plan.description, CATALOG_TEXT.sellingPlanDescription];
    }
  }
  // Last: the longest, and the one a merchant least often gets wrong.
  yield ['description_html', product.description_html, CATALOG_TEXT.descriptionHtml];
}

/** The first text or URL of a product (already of the document's shape) that may not be stored, or undefined. */
export function productFault(product: ProductInput): CatalogFieldFault | undefined {
  return firstFault(productChecks(product));
}

/** The first text of a collection (already of the document's shape) that may not be stored, or undefined. */
export function collectionFault(collection: CollectionInput): CatalogFieldFault | undefined {
  return firstFault([
    ['title', collection.title, CATALOG_TEXT.title],
    ['description_html', collection.description_html, CATALOG_TEXT.descriptionHtml],
  ]);
}
