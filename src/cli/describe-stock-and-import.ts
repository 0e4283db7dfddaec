/** What `storefront stock` and `storefront import` print: stock with committed backorders, and which levels an import set. */
import type { ImportReport } from '../catalog/import/import-catalog.js';
import type { StockListing } from '../inventory/inventory-store.js';

/** Lines of cells as columns two spaces apart; `right` names the columns aligned right (numbers). */
// The same as merchant-commands.ts's `columns`: drop this copy when these functions move there.
function columns(table: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string[] {
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
  return table.map((line) =>
    line
      .map((cell, column) => {
        if (right.has(column)) return cell.padStart(widths[column]!);
        return column === line.length - 1 ? cell : cell.padEnd(widths[column]!);
      })
      .join('  ')
      .trimEnd(),
  );
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** Units on hand, and what they do not show: stock not tracked, units sold beyond stock and not shipped yet. */
function onHandCell(row: StockListing): string {
  const notes = [...(row.tracked ? [] : ['not tracked']), ...(row.backordered > 0 ? [`${row.backordered} backordered`] : [])];
  return notes.length ? `${row.onHand} (${notes.join(', ')})` : String(row.onHand);
}

export function describeStock(rows: readonly StockListing[]): string {
  const table = [
    ['SKU', 'VARIANT ID', 'PRODUCT', 'ON HAND'],
    ...rows.map((row) => [
      row.sku ?? '-',
      String(row.variantId),
      row.variantTitle === 'Default Title' ? row.productTitle : `${row.productTitle} - ${row.variantTitle}`,
      onHandCell(row),
    ]),
  ];
  return columns(table).join('\n');
}

/** The stock part of an import: every existing level it set (was, now), or how many it kept because --set-stock was not given. */
function describeImportedStock(stock: ImportReport['stock']): string[] {
  if (stock.set.length > 0) {
    const table = [
      ['SKU', 'VARIANT ID', 'WAS', 'NOW'],
      ...stock.set.map((level) => [level.sku ?? '-', String(level.variantId), String(level.previous), String(level.onHand)]),
    ];
    return [`stock: ${plural(stock.set.length, 'existing level', 'existing levels')} set to the file's quantity:`, ...columns(table, new Set([1, 2, 3])).map((line) => `  ${line}`)];
  }
  if (stock.keptExisting > 0) {
    const kept = plural(stock.keptExisting, 'existing level differs from the file and was kept', 'existing levels differ from the file and were kept');
    return [`stock: ${kept} (sales since the export stay counted; --set-stock sets the file's quantities)`];
  }
  return ['stock: no existing level changed'];
}

export function describeImport(report: ImportReport): string {
  const line = (name: string, t: ImportReport['products']) =>
    `${name}: ${t.created} created, ${t.updated} changed, ${t.unchanged} unchanged${t.removed ? `, ${t.removed} removed` : ''}`;
  return [
    'imported',
    line('products', report.products),
    line('variants', report.variants),
    line('collections', report.collections),
    ...describeImportedStock(report.stock),
  ].join('\n  ');
}
