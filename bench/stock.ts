/**
 * Product reads while stock changes: the p99 of GET /products/{handle}.js over a catalog of PRODUCTS
 * generated products, without and then with 20 stock changes per second (each through the store's control
 * socket, the way `storefront stock set` reaches a running store on the embedded database), and how often
 * the catalog was reloaded meanwhile (it never should be: stock lives apart from the catalog).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sendControlCommand } from '../src/cli/control-socket.js';
import type { StockListing } from '../src/inventory/inventory-store.js';
import { load, startTarget } from './harness.js';

const CHANGES_PER_SECOND = 20;

export async function benchStockChurn(options: { products: number; seconds: number }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'sf-bench-'));
  const socket = path.join(dir, 'control.sock');
  const store = await startTarget(['store', String(options.products), 'pglite', socket]);
  try {
    const origin = `http://127.0.0.1:${store.port}`;
    const url = `${origin}/products/hydration-drink-stick.js`;
    const skus = (await sendControlCommand<StockListing[]>(socket, 'GET', '/stock')).flatMap((row) => (row.sku ? [row.sku] : []));
    const catalogLoads = async () => ((await (await fetch(`${origin}/__bench/catalog`)).json()) as { loads: number }).loads;

    await load(url); // warm up
    const without = await load(url);
    const loadsBefore = await catalogLoads();
    let changes = 0;
    let failedChanges = 0;
    let running = true;
    const started = Date.now();
    const writer = (async () => {
      for (let i = 0; running; i++) {
        const due = started + (i * 1000) / CHANGES_PER_SECOND;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (!running) break;
        // Every SKU in turn; one change in ten sells a variant out, so availability flips too.
        const sku = skus[(i * 7919) % skus.length]!;
        const onHand = i % 10 === 0 ? 0 : 1 + (i % 200);
        try {
          await sendControlCommand(socket, 'POST', '/stock', { sku, onHand });
          changes++;
        } catch {
          failedChanges++;
        }
      }
    })();
    const withChanges = await load(url);
    running = false;
    await writer;
    const elapsed = (Date.now() - started) / 1000;
    return {
      p99Without: without.p99Ms,
      p99With: withChanges.p99Ms,
      rpsWithout: without.requestsPerSecond,
      rpsWith: withChanges.requestsPerSecond,
      changes,
      failedChanges,
      changesPerSecond: changes / elapsed,
      catalogReloads: (await catalogLoads()) - loadsBefore,
    };
  } finally {
    await store.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
