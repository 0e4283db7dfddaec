/**
 * What serve prints on a terminal: where the shop, its JSON, the MCP endpoint, approvals and the admin are, how the
 * first owner is made (and, on an IP address, how staff sign in), its catalog, where mail goes and the store's zone;
 * commands named as the merchant types them; every line inert on a terminal.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CHECKOUT_COMMAND, INSTALLED_COMMAND, storefrontCommand } from '../../src/cli/command-name.js';
import { startBanner } from '../../src/cli/start-banner.js';
import { inertLines } from '../../src/cli/terminal-text.js';
import { loadConfig } from '../../src/config.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { PROJECT_ROOT } from '../helpers/project-root.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const row = (label: string, value: string) => new RegExp(`^ {2}${label.replace(/[()]/g, '\\$&')}: +${value}$`, 'm');

describe('the start banner', () => {
  let t: TestStore;
  before(async () => {
    t = await startTestStore(backends[0]!);
  });
  after(() => t.close());

  it('says where each door is, the demo catalog, and the database', () => {
    const config = loadConfig({ BASE_URL: 'https://shop.example', STORE_NAME: 'Harbor Tea Co.', DATA_DIR: 'store-data' });
    const banner = startBanner(config, t.store.catalog.snapshot, { command: CHECKOUT_COMMAND });
    const lines = banner.split('\n');
    assert.equal(lines[0], 'Harbor Tea Co. is open');
    assert.match(banner, /^ {2}Shop: +https:\/\/shop\.example\/$/m);
    assert.match(banner, /^ {2}Agents \(MCP\): +https:\/\/shop\.example\/api\/ucp\/mcp \(profile: https:\/\/shop\.example\/\.well-known\/ucp\)$/m);
    assert.match(banner, /^ {2}Approvals: +https:\/\/shop\.example\/checkout\/approve\//m);
    const products = t.store.catalog.snapshot.products.length;
    assert.match(banner, new RegExp(`^ {2}Catalog: +${products} products in \\d+ collections \\(the demo catalog: \`npm run storefront -- import FILE\` replaces it\\)$`, 'm'));
    assert.match(banner, /^ {2}Database: +embedded PostgreSQL in .*store-data$/m);
    const onServer = startBanner(loadConfig({ DATABASE_URL: 'postgres://shop:s3cret@db.internal:6543/shop' }), t.store.catalog.snapshot);
    assert.match(onServer, /^ {2}Database: +PostgreSQL at db\.internal:6543\/shop$/m);
    assert.doesNotMatch(onServer, /s3cret/);
  });

  it('says where the admin is and the command that makes the first owner, as a checkout or an installed store runs it', () => {
    const config = loadConfig({ BASE_URL: 'https://shop.example' });
    const checkout = startBanner(config, t.store.catalog.snapshot, { command: CHECKOUT_COMMAND });
    assert.match(checkout, row('Admin', 'https://shop\\.example/admin'));
    assert.match(checkout, row('First owner', 'npm run storefront -- staff add EMAIL --role owner \\(prints a 30-minute link where they make their passkey\\)'));
    assert.doesNotMatch(checkout, /sign-in-link/, 'a host name has passkeys: no sign-in links');
    const installed = startBanner(config, t.store.catalog.snapshot, { command: INSTALLED_COMMAND });
    assert.match(installed, row('First owner', 'storefront staff add EMAIL --role owner .*'));
    assert.match(installed, /`storefront import FILE` replaces it/);
    assert.doesNotMatch(installed, /npm run/);
    // Once an owner exists, the banner says how to add staff instead.
    const staffed = startBanner(config, t.store.catalog.snapshot, { command: INSTALLED_COMMAND, hasOwner: true });
    assert.doesNotMatch(staffed, /First owner/);
    assert.match(staffed, row('Staff', 'storefront staff add EMAIL \\[--role owner\\|staff\\]; storefront staff lists them'));
  });

  it('BASE_URL on an IP address (no passkey can exist there): staff sign in with a link from `staff sign-in-link`', () => {
    for (const baseUrl of ['http://192.168.1.20:3000', 'http://[::1]:3000']) {
      const banner = startBanner(loadConfig({ BASE_URL: baseUrl }), t.store.catalog.snapshot, { command: CHECKOUT_COMMAND });
      assert.match(banner, row('Admin', `${baseUrl.replace(/[.[\]]/g, '\\$&')}/admin`), baseUrl);
      assert.match(banner, row('First owner', 'npm run storefront -- staff add EMAIL --role owner'), baseUrl);
      assert.match(banner, row('Staff sign-in', 'no passkey can exist where BASE_URL is an IP address: `npm run storefront -- staff sign-in-link EMAIL` prints a 5-minute link'), baseUrl);
    }
    const localhost = startBanner(loadConfig({ BASE_URL: 'http://localhost:3000' }), t.store.catalog.snapshot);
    assert.doesNotMatch(localhost, /Staff sign-in/);
  });

  it('says where mail goes: the .eml folder under DATA_DIR, or the SMTP server without its credentials; and the zone', () => {
    const files = startBanner(loadConfig({ DATA_DIR: 'store-data', STORE_TIMEZONE: 'Europe/Berlin' }), t.store.catalog.snapshot);
    assert.match(files, row('Mail', `\\.eml files in store-data\\${path.sep}mail\\${path.sep} \\(SMTP_URL unset\\); MERCHANT_EMAIL unset: no mail to you of new orders`));
    assert.match(files, row('Times', 'Europe/Berlin \\(STORE_TIMEZONE\\)'));
    const elsewhere = path.join(tmpdir(), 'shop-data');
    assert.match(startBanner(loadConfig({ DATA_DIR: elsewhere }), t.store.catalog.snapshot), row('Mail', `\\.eml files in ${path.join(elsewhere, 'mail').replace(/[\\.]/g, '\\$&')}.*`));
    const smtp = startBanner(
      loadConfig({ SMTP_URL: 'smtps://orders%40shop.example:pa55word@smtp.example.com:465', MERCHANT_EMAIL: 'owner@shop.example' }),
      t.store.catalog.snapshot,
    );
    assert.match(smtp, row('Mail', 'through the SMTP server smtp\\.example\\.com:465'));
    assert.doesNotMatch(smtp, /pa55word|orders%40|owner@shop/);
    assert.match(startBanner(loadConfig({ SMTP_URL: 'smtp://mail.internal' }), t.store.catalog.snapshot), row('Mail', 'through the SMTP server mail\\.internal; MERCHANT_EMAIL unset: no mail to you of new orders'));
  });

  it('every line is inert on a terminal: a DATA_DIR with an escape sequence is printed as its escape', () => {
    const banner = startBanner(loadConfig({ DATA_DIR: 'shop\u001b[2Jdata' }), t.store.catalog.snapshot);
    assert.equal(inertLines(banner), banner);
    assert.ok(!banner.includes('\u001b'));
    assert.match(banner, /shop\\u001b\[2Jdata/);
  });

  it('an imported catalog is not called the demo', async () => {
    await importCatalog(t.store.db, { products: [{ handle: 'travel-kettle', title: 'Travel Kettle', variants: [{ sku: 'KET-1', price: 3400, inventory_quantity: 4 }] }] });
    await t.store.catalog.refresh(t.store.db);
    const banner = startBanner(loadConfig({}), t.store.catalog.snapshot);
    assert.match(banner, /^ {2}Catalog: +\d+ products in \d+ collections$/m);
  });
});

describe('how the merchant runs the CLI here', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(tmpdir(), 'storefront-command-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('a checkout (the sources, and tsx to run them): `npm run storefront --`; only the built package: `storefront`', () => {
    assert.equal(storefrontCommand(root), INSTALLED_COMMAND);
    mkdirSync(path.join(root, 'src'));
    writeFileSync(path.join(root, 'src', 'main.ts'), '');
    assert.equal(storefrontCommand(root), INSTALLED_COMMAND, 'sources without tsx cannot run `npm run storefront`');
    mkdirSync(path.join(root, 'node_modules', 'tsx'), { recursive: true });
    writeFileSync(path.join(root, 'node_modules', 'tsx', 'package.json'), '{}');
    assert.equal(storefrontCommand(root), CHECKOUT_COMMAND);
    // This project, where the tests run, is a checkout.
    assert.equal(storefrontCommand(PROJECT_ROOT), CHECKOUT_COMMAND);
  });
});
