/** What serve prints on a terminal: where the shop, its JSON, the MCP endpoint and approvals are, and its catalog. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startBanner } from '../../src/cli/start-banner.js';
import { loadConfig } from '../../src/config.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

describe('the start banner', () => {
  let t: TestStore;
  before(async () => {
    t = await startTestStore(backends[0]!);
  });
  after(() => t.close());

  it('says where each door is, the demo catalog, and the database', () => {
    const config = loadConfig({ BASE_URL: 'https://shop.example', STORE_NAME: 'Harbor Tea Co.', DATA_DIR: 'store-data' });
    const banner = startBanner(config, t.store.catalog.snapshot);
    const lines = banner.split('\n');
    assert.equal(lines[0], 'Harbor Tea Co. is open');
    assert.match(banner, /^ {2}Shop: +https:\/\/shop\.example\/$/m);
    assert.match(banner, /^ {2}Agents \(MCP\): +https:\/\/shop\.example\/api\/ucp\/mcp \(profile: https:\/\/shop\.example\/\.well-known\/ucp\)$/m);
    assert.match(banner, /^ {2}Approvals: +https:\/\/shop\.example\/checkout\/approve\//m);
    const products = t.store.catalog.snapshot.products.length;
    assert.match(banner, new RegExp(`^ {2}Catalog: +${products} products in \\d+ collections \\(the demo catalog`, 'm'));
    assert.match(banner, /^ {2}Database: +embedded PostgreSQL in .*store-data$/m);
    const onServer = startBanner(loadConfig({ DATABASE_URL: 'postgres://shop:s3cret@db.internal:6543/shop' }), t.store.catalog.snapshot);
    assert.match(onServer, /^ {2}Database: +PostgreSQL at db\.internal:6543\/shop$/m);
    assert.doesNotMatch(onServer, /s3cret/);
  });

  it('an imported catalog is not called the demo', async () => {
    await importCatalog(t.store.db, { products: [{ handle: 'travel-kettle', title: 'Travel Kettle', variants: [{ sku: 'KET-1', price: 3400, inventory_quantity: 4 }] }] });
    await t.store.catalog.refresh(t.store.db);
    const banner = startBanner(loadConfig({}), t.store.catalog.snapshot);
    assert.match(banner, /^ {2}Catalog: +\d+ products in \d+ collections$/m);
  });
});
