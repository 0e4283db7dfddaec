/**
 * Scale-out (issue #11, item 2): stateless instances behind any load balancer share one PostgreSQL database.
 * Two instances on their own ports: a cart written through one is read through the other; stock and catalog
 * changes made through one reach the other within a second by LISTEN/NOTIFY (the poll runs every 30 s: each
 * propagation time is reported, and a test fails past PROPAGATION_LIMIT_MS); an
 * approval page rendered by one is approved through the other; a rolled-back change announces nothing; a lost
 * listening connection is made again; with REDIS_URL a rate limit is shared (the shared Redis on 6379, under a key
 * prefix of this run's own, whose keys are deleted afterwards). On PGlite (one process) only the triggers are checked.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { CATALOG_CHANNEL } from '../../src/catalog/catalog.js';
import { demoCatalog } from '../../src/catalog/demo-catalog.js';
import { importCatalog } from '../../src/catalog/import/import-catalog.js';
import { LISTEN_APPLICATION_NAME } from '../../src/db/database.js';
import { loadConfig } from '../../src/config.js';
import { STOCK_CHANNEL } from '../../src/inventory/inventory.js';
import { setOnHandBySku } from '../../src/inventory/inventory-store.js';
import { openStore } from '../../src/store.js';
import { backends, dropTestDatabases, POSTGRES_URL, startSecondInstance, startTestStore, testConfig, type TestStore } from '../helpers/store.js';
import { ANA_AT_MARKET_ST } from '../helpers/orders.js';

after(dropTestDatabases);

const SKU = 'ESP-RIS-10';
const HANDLE = 'espresso-capsules';
/**
 * The longest another instance may take to show a change made through the first. The issue asks for a second, and
 * each test reports the time it saw; the limit leaves a loaded machine room and is still far below the 30 s poll, so
 * a change seen within it was notified.
 */
const PROPAGATION_LIMIT_MS = 5000;
const ASKED_MS = 1000;

interface Instance extends TestStore {
  url: string;
}

async function listening(t: TestStore): Promise<Instance> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { ...t, url: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` };
}

function variantIdOf(t: TestStore, sku: string): number {
  const variant = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  if (!variant) throw new Error(`no published variant ${sku}`);
  return variant.id;
}

/** Waits until `check` holds; returns how long that took (ms), or fails after `limitMs`. */
async function timeUntil(check: () => Promise<boolean>, limitMs: number, what: string): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await check()) return performance.now() - start;
    if (performance.now() - start > limitMs) assert.fail(`${what}: not seen within ${limitMs} ms`);
    await sleep(5);
  }
}

/** Waits until `check` holds, failing past PROPAGATION_LIMIT_MS; reports how long that took. */
async function propagated(t: TestContext, what: string, check: () => Promise<boolean>): Promise<void> {
  const ms = await timeUntil(check, PROPAGATION_LIMIT_MS, what);
  t.diagnostic(`${what}: propagated in ${ms.toFixed(1)} ms${ms > ASKED_MS ? ` (over the ${ASKED_MS} ms asked for)` : ''}`);
}

async function productJson(instance: Instance, handle: string): Promise<any> {
  const response = await fetch(`${instance.url}/products/${handle}.js`);
  assert.equal(response.status, 200);
  return response.json();
}

const variantAvailable = async (instance: Instance, sku: string) =>
  (await productJson(instance, HANDLE)).variants.find((v: { sku: string }) => v.sku === sku).available as boolean;

function cookieFrom(response: Response, name: string): string {
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  assert.ok(cookie, `the answer sets the ${name} cookie`);
  return cookie.split(';')[0]!;
}

const databaseUrl = (database: string) => Object.assign(new URL(POSTGRES_URL), { pathname: `/${database}` }).toString();

const postgres = backends.find((backend) => backend.name === 'postgres')!;

describe('two instances on one PostgreSQL database', () => {
  let a: Instance;
  let b: Instance;
  const reportedByB: string[] = [];

  before(async () => {
    a = await listening(await startTestStore(postgres));
    // B is opened here rather than by startTestStore, to hear what it reports about its background work.
    const { db } = await postgres.open({ database: a.database! });
    const store = await openStore(testConfig(), { db, onBackgroundError: (what, error) => reportedByB.push(`${what}: ${(error as Error).message}`) });
    const app = await buildApp(store);
    b = await listening({ store, app, database: a.database, close: async () => (await app.close(), await store.close()) });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('a cart written through one instance is read through the other', async () => {
    const added = await fetch(`${a.url}/cart/add.js`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: variantIdOf(a, SKU), quantity: 2 }),
    });
    assert.equal(added.status, 200);
    const cookie = cookieFrom(added, 'cart');
    const read = await fetch(`${b.url}/cart.js`, { headers: { cookie } });
    assert.equal(read.status, 200);
    const cart = (await read.json()) as { item_count: number; items: { sku: string; quantity: number }[] };
    assert.equal(cart.item_count, 2);
    assert.deepEqual(cart.items.map((item) => [item.sku, item.quantity]), [[SKU, 2]]);
  });

  it('a stock change through one instance shows in the other by notification (its poll is every 30 s)', async (t) => {
    assert.equal(await variantAvailable(b, SKU), true);
    await a.store.inventory.setOnHand(a.store.db, SKU, 0);
    await propagated(t, 'sold out on B (product JSON)', async () => !(await variantAvailable(b, SKU)));
    await a.store.inventory.setOnHand(a.store.db, SKU, 12);
    await propagated(t, 'restocked on B (onHand)', async () => b.store.inventory.onHand(variantIdOf(b, SKU)) === 12);
  });

  it('an import through one instance shows in the other by notification', async (t) => {
    const renamed = structuredClone(demoCatalog) as typeof demoCatalog;
    const product = renamed.products.find((p) => p.handle === HANDLE)!;
    product.title = 'Espresso Capsules (Spring Roast)';
    const versionBefore = b.store.catalog.snapshot.version;
    await importCatalog(a.store.db, renamed); // bumps catalog_version in its transaction, as `storefront import` does
    await propagated(t, 'import: new title on B', async () => (await productJson(b, HANDLE)).title === product.title);
    assert.ok(b.store.catalog.snapshot.version > versionBefore);
    // A hears its own import by the same notification; later tests price checkouts on A, so wait for it too
    // (a checkout priced on A's old snapshot is re-priced on the new one, and its approval voided as changed).
    await propagated(t, 'import: new title on A', async () => (await productJson(a, HANDLE)).title === product.title);
  });

  it('an approval page rendered by one instance is approved through the other', async () => {
    const { checkouts, db } = a.store;
    const created = await checkouts.create(
      db,
      {
        lines: [{ variantId: variantIdOf(a, 'ESP-CLA-10'), quantity: 1 }],
        buyer: { email: 'ana@example.com' },
        destination: ANA_AT_MARKET_ST,
        shippingOption: 'standard',
      },
      'agent',
      'agent',
    );
    const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
    const token = asked.approval!.token;

    const page = await fetch(`${a.url}/checkout/approve/${token}`);
    assert.equal(page.status, 200);
    const html = await page.text();
    const field = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1];
    const form = new URLSearchParams({ action: 'approve', form_token: field('form_token')!, digest: field('digest')! });

    const approved = await fetch(`${b.url}/checkout/approve/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieFrom(page, 'approval_form') },
      body: form.toString(),
      redirect: 'manual',
    });
    assert.equal(approved.status, 303, await approved.text());
    assert.match(approved.headers.get('location') ?? '', /^\/orders\//);
    assert.equal((await a.store.checkouts.get(a.store.db, created.view.record.id))!.view.record.status, 'completed');
  });

  it('a rolled-back stock change announces nothing: the other instance keeps the committed level', async (t) => {
    const variantId = variantIdOf(b, SKU);
    await a.store.inventory.setOnHand(a.store.db, SKU, 12);
    await propagated(t, 'the level before, on B', async () => b.store.inventory.onHand(variantId) === 12);
    const heard: string[] = [];
    const ear = await a.store.db.listen([STOCK_CHANNEL], (_channel, payload) => heard.push(payload));
    try {
      await assert.rejects(
        a.store.db.transaction(async (tx) => {
          await setOnHandBySku(tx, SKU, 77);
          throw new Error('the merchant changed their mind');
        }),
        /changed their mind/,
      );
      await a.store.inventory.setOnHand(a.store.db, 'ESP-CLA-50', 33); // committed after it: once this is heard, the other would have been
      await propagated(t, 'the committed change, on B', async () => b.store.inventory.onHand(variantIdOf(b, 'ESP-CLA-50')) === 33);
      await propagated(t, 'the committed change, notified', async () => heard.length > 0);
      assert.equal(heard.length, 1, `one notification, for the committed change: ${heard.join(', ')}`);
      assert.equal(b.store.inventory.onHand(variantId), 12);
    } finally {
      await ear.close();
    }
  });

  it('after the listening connection is killed, an instance listens again and catches up', async (t) => {
    const admin = new pg.Client({ connectionString: databaseUrl(a.database!) });
    await admin.connect();
    try {
      const listeners = async () =>
        (
          await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and application_name = $1', [
            LISTEN_APPLICATION_NAME,
          ])
        ).rows.map((row) => row.pid);
      const before = await listeners();
      assert.equal(before.length, 2, 'one listening connection per instance');
      const { rows } = await admin.query<{ pid: number; query: string }>('select pid, query from pg_stat_activity where pid = any($1)', [before]);
      assert.ok(rows.every((row) => /^listen /i.test(row.query)), 'the connections only listen');

      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where pid = any($1)', [before]);
      // Changed while the instances may not be listening: the refresh after reconnecting catches it.
      await a.store.inventory.setOnHand(a.store.db, SKU, 5);
      const caughtUp = await timeUntil(async () => b.store.inventory.onHand(variantIdOf(b, SKU)) === 5, 5000, 'the change made during the reconnect');
      await timeUntil(async () => (await listeners()).filter((pid) => !before.includes(pid)).length === 2, 5000, 'both instances listening again');
      assert.ok(
        reportedByB.some((line) => /connection listening .* was lost/.test(line)),
        `B reports the lost connection: ${reportedByB.join(' | ')}`,
      );

      await a.store.inventory.setOnHand(a.store.db, SKU, 6);
      t.diagnostic(`after the kill: caught up after ${caughtUp.toFixed(1)} ms`);
      await propagated(t, 'after the kill, a later change on B', async () => b.store.inventory.onHand(variantIdOf(b, SKU)) === 6);
    } finally {
      await admin.end();
    }
  });
});

const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('two instances with REDIS_URL share their rate limits', () => {
  const redisKeyPrefix = `storefront-test-${process.pid}-${Date.now()}:`;
  // An hourly budget: none of it comes back while the test counts to its edge.
  const { rateLimits } = loadConfig({ RATE_LIMITS: 'other=40/h' });
  const budget = rateLimits.budgets.other.max;
  // A command slower than the 200 ms default would serve a request unlimited (fail open, tested in
  // redis-outage.test.ts): the budget's edge is counted exactly only if no command times out.
  const shared = { rateLimit: true, rateLimits, redisUrl: SHARED_REDIS_URL, redisKeyPrefix, redisCommandTimeoutMs: 5000 };
  const instances: Instance[] = [];
  const redis = new Redis(SHARED_REDIS_URL, { lazyConnect: true });

  before(async () => {
    await redis.connect();
    const first = await startTestStore(postgres, { config: shared });
    instances.push(await listening(first));
    instances.push(await listening(await startSecondInstance(postgres, first, shared)));
    // The same pair without Redis, for contrast: each instance counts alone.
    const alone = await startTestStore(postgres, { database: first.database, config: { rateLimit: true, rateLimits } });
    instances.push(await listening(alone));
    instances.push(await listening(await startSecondInstance(postgres, alone, { rateLimit: true, rateLimits })));
  });
  after(async () => {
    for (const instance of instances.reverse()) await instance.close();
    // Only this run's keys.
    const keys = await redis.keys(`${redisKeyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const statusOf = async (instance: Instance) => {
    const response = await fetch(`${instance.url}/nowhere`);
    await response.arrayBuffer();
    return { status: response.status };
  };

  it('one budget across both instances: requests alternating between them are refused after the budget in all', async () => {
    const [a, b] = instances as [Instance, Instance];
    for (let i = 0; i < budget; i++) {
      // Each instance sees half the budget: with counters of their own, neither would refuse the next two.
      assert.equal((await statusOf(i % 2 === 0 ? a : b)).status, 404, `request ${i + 1}`);
    }
    assert.equal((await statusOf(a)).status, 429);
    assert.equal((await statusOf(b)).status, 429);
    assert.ok((await redis.keys(`${redisKeyPrefix}*`)).length > 0, 'the counters are in Redis, under the prefix');
  });

  it('without REDIS_URL each instance counts alone (a client gets the budget twice)', async () => {
    const [, , c, d] = instances as [Instance, Instance, Instance, Instance];
    for (let i = 0; i < 2 * budget; i++) assert.equal((await statusOf(i % 2 === 0 ? c : d)).status, 404, `request ${i + 1}`);
    assert.equal((await statusOf(c)).status, 429);
  });
});

describe('change notifications on the embedded database (pglite)', () => {
  const pglite = backends.find((backend) => backend.name === 'pglite')!;
  let t: TestStore;
  before(async () => {
    t = await startTestStore(pglite);
  });
  after(() => t.close());

  it('a committed stock change and an import notify; a rolled-back change does not', async (context) => {
    const heard: string[] = [];
    const ear = await t.store.db.listen([CATALOG_CHANNEL, STOCK_CHANNEL], (channel, payload) => heard.push(`${channel} ${payload}`));
    try {
      await assert.rejects(
        t.store.db.transaction(async (tx) => {
          await setOnHandBySku(tx, SKU, 77);
          throw new Error('rolled back');
        }),
      );
      await t.store.inventory.setOnHand(t.store.db, SKU, 3);
      const [{ seq }] = (await t.store.db.query<{ seq: number }>('select change_seq as seq from inventory_levels where variant_id = $1', [variantIdOf(t, SKU)])) as [{ seq: number }];
      await importCatalog(t.store.db, demoCatalog);
      const [{ version }] = (await t.store.db.query<{ version: number }>('select version from catalog_version')) as [{ version: number }];
      await propagated(context, 'the import, notified', async () => heard.includes(`${CATALOG_CHANNEL} ${version}`));
      assert.equal(heard[0], `${STOCK_CHANNEL} ${seq}`, 'the first notification is the committed stock change, not the rolled-back one');
    } finally {
      await ear.close();
    }
  });
});
