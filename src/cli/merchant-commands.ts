/**
 * The merchant's commands (stock, import), as plain functions over a database handle: the CLI runs them on
 * the database directly (PostgreSQL; an embedded database no server holds), and a running store runs them
 * in-process when the CLI asks through the control socket (an embedded database the server holds).
 */
import type { Database } from '../db/database.js';
import { importCatalog, type ImportReport } from '../catalog/import/import-catalog.js';
import { listStock, type StockListing } from '../inventory/inventory-store.js';
import { UnknownSku, type Inventory } from '../inventory/inventory.js';

/** Largest stock a variant may hold (the same bound the catalog import accepts). */
export const MAX_ON_HAND = 1_000_000_000;

/** A merchant's mistake (unknown SKU, bad quantity): one clear line, exit 1, nothing changed. */
export class CommandError extends Error {}

export function parseQuantity(raw: string | undefined): number {
  if (raw === undefined || !/^[0-9]{1,10}$/.test(raw) || Number(raw) > MAX_ON_HAND) {
    throw new CommandError(`QUANTITY must be a whole number from 0 to ${MAX_ON_HAND}, got ${raw === undefined ? 'nothing' : `"${raw.slice(0, 40)}"`}`);
  }
  return Number(raw);
}

export interface StockSet {
  sku: string;
  variantId: number;
  previous: number;
  onHand: number;
}

export interface MerchantCommands {
  stock(): Promise<StockListing[]>;
  setStock(sku: string, onHand: number): Promise<StockSet>;
  importCatalog(document: unknown): Promise<ImportReport>;
}

/**
 * The commands run on a database through the inventory (the one writer of stock). In a running store that is
 * the store's own inventory, and `afterImport` takes an import in at once; the CLI on its own passes a fresh one.
 */
export function merchantCommands(db: Database, inventory: Pick<Inventory, 'setOnHand'>, afterImport: () => Promise<void> = async () => {}): MerchantCommands {
  return {
    stock: () => listStock(db),
    async setStock(sku, onHand) {
      try {
        const result = await inventory.setOnHand(db, sku, onHand);
        return { sku, variantId: result.variantId, previous: result.previous, onHand };
      } catch (error) {
        if (error instanceof UnknownSku) throw new CommandError(`no variant has the SKU "${sku.slice(0, 100)}"`);
        throw error;
      }
    },
    async importCatalog(document) {
      const report = await importCatalog(db, document);
      await afterImport();
      return report;
    },
  };
}

export function describeStock(rows: readonly StockListing[]): string {
  const table = [
    ['SKU', 'VARIANT ID', 'PRODUCT', 'ON HAND'],
    ...rows.map((row) => [
      row.sku ?? '-',
      String(row.variantId),
      row.variantTitle === 'Default Title' ? row.productTitle : `${row.productTitle} - ${row.variantTitle}`,
      row.tracked ? String(row.onHand) : `${row.onHand} (not tracked)`,
    ]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((line) => line[column]!.length)));
  return table.map((line) => line.map((cell, column) => (column === line.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')).join('\n');
}

export function describeImport(report: ImportReport): string {
  const line = (name: string, t: ImportReport['products']) =>
    `${name}: ${t.created} created, ${t.updated} changed, ${t.unchanged} unchanged${t.removed ? `, ${t.removed} removed` : ''}`;
  return ['imported', line('products', report.products), line('variants', report.variants), line('collections', report.collections)].join('\n  ');
}
