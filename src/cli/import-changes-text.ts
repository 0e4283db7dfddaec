/**
 * What `storefront import` prints of the changes an import made, and what `storefront import --dry-run` prints of
 * those it would make: product by product, the products added, the fields changed (was → now), the images added and
 * removed, the variants added, changed and archived, the stock set. The strings come inert (runMerchantCommand).
 */
import { fieldChangeText, type ImportChanges, type ProductChange, type VariantChange } from '../catalog/import/import-changes.js';
import type { ImportReport } from '../catalog/import/import-catalog.js';
import { describeImport } from './merchant-commands.js';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

const variantName = (variant: Pick<VariantChange, 'sku' | 'title'>) => variant.sku ?? variant.title;

function variantLines(variant: VariantChange): string[] {
  const name = variantName(variant);
  const stock = variant.stock;
  if (variant.change === 'removed') return [`variant removed: ${name} (archived: it leaves the catalog, orders keep it)`];
  if (variant.change === 'added') return [`variant added: ${name}${stock ? `, ${stock.to} on hand` : ''}`];
  const lines = variant.fields.map((field) => `${name}: ${fieldChangeText(field)}`);
  if (stock && stock.fileQuantity === undefined) lines.push(`${name}: units on hand ${stock.from ?? 0} → ${stock.to}`);
  return lines;
}

function productLines(product: ProductChange): string[] {
  const head = `${product.change === 'added' ? '+' : '~'} ${product.handle} ${JSON.stringify(product.title)}`;
  if (product.change === 'added') {
    const images = product.images.length ? `, ${plural(product.images.length, 'image', 'images')}` : '';
    return [`${head}: added, ${plural(product.variants.length, 'variant', 'variants')}${images}`, ...product.variants.flatMap(variantLines).map((line) => `    ${line}`)];
  }
  const lines = [
    ...product.fields.map(fieldChangeText),
    ...product.images.map((image) =>
      image.change === 'changed' ? `image ${image.src}: ${(image.fields ?? []).map(fieldChangeText).join('; ')}` : `image ${image.change}: ${image.src}`,
    ),
    ...product.variants.flatMap(variantLines),
  ];
  return [`${head}:`, ...lines.map((line) => `    ${line}`)];
}

/** The changes, one block per product and collection; [] when there are none. */
export function describeImportChanges(changes: ImportChanges): string[] {
  const lines = [
    ...changes.products.flatMap(productLines),
    ...changes.collections.map((collection) => {
      const parts = [
        ...collection.fields.map(fieldChangeText),
        ...(collection.productsAdded.length ? [`products added: ${collection.productsAdded.join(', ')}`] : []),
        ...(collection.productsRemoved.length ? [`products removed: ${collection.productsRemoved.join(', ')}`] : []),
      ];
      return `${collection.change === 'added' ? '+' : '~'} collection ${collection.handle}: ${collection.change === 'added' ? 'added; ' : ''}${parts.join('; ')}`;
    }),
    ...(changes.unlisted > 0 ? [`… and ${plural(changes.unlisted, 'more product', 'more products')} added or changed (counted above, not listed)`] : []),
  ];
  if (lines.length === 0) return [];
  const images = changes.images.added || changes.images.removed ? `images: ${changes.images.added} added, ${changes.images.removed} removed` : undefined;
  return [...(images ? [images] : []), 'changes:', ...lines.map((line) => `  ${line}`)];
}

/** `storefront import`'s answer: the counts, then every change listed. */
export function describeImportWithChanges(report: ImportReport): string {
  return [describeImport(report), ...describeImportChanges(report.changes).map((line) => `  ${line}`)].join('\n');
}

/** `storefront import --dry-run`'s answer: what importing the file would change, saying that nothing was. */
export function describeImportPreview(report: ImportReport): string {
  // The counts as the import prints them, told as what it would do.
  const counts = describeImport(report)
    .split('\n')
    .slice(1)
    .map((line) => line.replace(/levels? set to/, (set) => set.replace('set', 'would be set')).replace(/ (was|were) kept/, ' would be kept'));
  const changes = describeImportChanges(report.changes);
  return [
    'dry run: nothing was imported or changed; importing the file would make these changes',
    ...counts,
    ...(changes.length ? changes.map((line) => `  ${line}`) : ['  no change: the catalog already holds the file as it is']),
  ].join('\n');
}
