/**
 * GET /metrics (#11, item 3) on both backends: the Prometheus text format, requests and latency by route pattern
 * and status, the store figures read from the database at scrape time (and a scrape that still answers when the
 * database is down or slow), rate limiting, the pool, and who may read it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import type { LineInput } from '../../src/checkout/checkout-service.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { collectProcessMetrics, installMetrics, UNMATCHED_ROUTE } from '../../src/http/metrics.js';
import { STORE_FIGURES_DEADLINE_MS } from '../../src/store-figures.js';
import type { Store } from '../../src/store.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
// Prometheus reads values with Go's ParseFloat: Inf and NaN in any case (prom-client writes NaN as `Nan`).
const VALUE = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf|nan)$/i;

/**
 * Parses the Prometheus text exposition format (0.0.4) strictly: every line is a HELP or TYPE comment or a sample
 * whose family was declared before it, with well-formed labels and a number.
 */
function parseExposition(text: string): Sample[] {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a line feed');
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    const comment = new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`).exec(line);
    if (comment) {
      if (comment[1] === 'TYPE') {
        assert.match(comment[3]!, /^(?:counter|gauge|histogram|summary|untyped)$/, line);
        assert.ok(!types.has(comment[2]!), `${comment[2]} is declared once`);
        types.set(comment[2]!, comment[3]!);
      }
      continue;
    }
    assert.ok(!line.startsWith('#'), `an unknown comment: ${line}`);
    const sample = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`).exec(line);
    assert.ok(sample, `not a sample line: ${line}`);
    const [, name, labelText = '', value] = sample as unknown as [string, string, string | undefined, string];
    const family = types.has(name) ? name : name.replace(/_(?:bucket|sum|count)$/, '');
    assert.ok(types.has(family), `${name} belongs to a declared family`);
    const labels: Record<string, string> = {};
    const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(?:,|$)/y;
    while (label.lastIndex < labelText.length) {
      const found = label.exec(labelText);
      assert.ok(found, `malformed labels: ${line}`);
      labels[found[1]!] = found[2]!.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
    }
    assert.match(value, VALUE, line);
    samples.push({ name, labels, value: Number(value) });
  }
  return samples;
}

/** The value of the one sample with this name and these labels (among others), or undefined. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} names one sample`);
  return found[0]?.value;
}

/** Every histogram series: buckets never fall as `le` grows, and the +Inf bucket equals its _count. */
function assertHistogramsConsistent(text: string, samples: Sample[]): void {
  const histograms = [...text.matchAll(new RegExp(`^# TYPE (${NAME}) histogram$`, 'gm'))].map((match) => match[1]!);
  assert.ok(histograms.includes('storefront_http_request_duration_seconds'));
  for (const family of histograms) {
    const series = new Map<string, Sample[]>();
    for (const sample of samples.filter((s) => s.name === `${family}_bucket`)) {
      const { le: _le, ...rest } = sample.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      series.set(key, [...(series.get(key) ?? []), sample]);
    }
    for (const [key, buckets] of series) {
      const bounds = buckets.map((b) => (b.labels.le === '+Inf' ? Infinity : Number(b.labels.le)));
      assert.deepEqual(bounds, [...bounds].sort((x, y) => x - y), `${family} ${key}: buckets in order`);
      assert.equal(bounds.at(-1), Infinity, `${family} ${key}: ends with +Inf`);
      for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]!.value >= buckets[i - 1]!.value, `${family} ${key}: cumulative`);
      const labels = Object.fromEntries(JSON.parse(key) as [string, string][]);
      assert.equal(valueOf(samples, `${family}_count`, labels), buckets.at(-1)!.value, `${family} ${key}: +Inf is the count`);
    }
  }
}

async function scrape(app: { inject: TestStore['app']['inject'] }, headers: Record<string, string> = {}) {
  const response = await app.inject({ method: 'GET', url: '/metrics', headers });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(response.body);
}

/**
 * A scrape that has the store figures: the figures come from a database read a scrape waits at most
 * STORE_FIGURES_DEADLINE_MS for, which a loaded machine may miss once while the product is fine. Scrapes again
 * (for up to 10 s) until one has them, and returns the last one; the caller asserts what it needs.
 */
async function scrapeWithFigures(app: { inject: TestStore['app']['inject'] }): Promise<Sample[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const samples = await scrape(app);
    if (valueOf(samples, 'storefront_store_figures_up') === 1 || Date.now() >= deadline) return samples;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const BUYER = { email: 'ada@example.com', firstName: 'Ada' };
const ADDRESS = { streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' };

function variantId(store: Store, sku: string): number {
  const found = store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  if (!found) throw new Error(`no variant ${sku}`);
  return found.id;
}

describe('METRICS_TOKEN', () => {
  it('is 16 to 256 visible characters; anything else stops the process naming the variable', () => {
    assert.equal(loadConfig({}).metricsToken, undefined);
    assert.equal(loadConfig({ METRICS_TOKEN: 'a'.repeat(16) }).metricsToken, 'a'.repeat(16));
    for (const bad of ['short', 'has a space in it 1234', 'x'.repeat(257)]) {
      assert.throws(() => loadConfig({ METRICS_TOKEN: bad }), (error: unknown) => error instanceof ConfigError && error.variable === 'METRICS_TOKEN');
    }
  });
});

describe('process figures', () => {
  it("prom-client's event-loop monitor and GC observer are caught, so that closing an app stops them", () => {
    const register = new Registry();
    const processMetrics = collectProcessMetrics(register);
    assert.equal(processMetrics.monitors, 2);
    assert.ok(register.getSingleMetric('nodejs_eventloop_lag_seconds'));
    assert.ok(register.getSingleMetric('nodejs_gc_duration_seconds'));
    processMetrics.stop();
    processMetrics.stop();
  });
});

for (const backend of backends) {
  describe(`/metrics (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('answers the Prometheus text format: every line a declared family, labels and a number', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.equal((await t.app.inject({ method: 'GET', url: '/products/decaf-capsules.js' })).statusCode, 200);
      const samples = parseExposition(response.body);
      assertHistogramsConsistent(response.body, samples);
      const again = await t.app.inject({ method: 'GET', url: '/metrics' });
      assertHistogramsConsistent(again.body, parseExposition(again.body));
      for (const name of ['nodejs_eventloop_lag_seconds', 'process_cpu_user_seconds_total', 'nodejs_heap_size_used_bytes', 'storefront_store_figures_up']) {
        assert.ok(valueOf(samples, name) !== undefined, `${name} is reported`);
      }
      assert.ok(valueOf(samples, 'nodejs_eventloop_lag_seconds')! >= 0);
      assert.equal(valueOf(samples, 'storefront_rate_limit_store_failures_total'), 0);
    });

    it('another method on /metrics is 405 with Allow, like every route', async () => {
      const response = await t.app.inject({ method: 'POST', url: '/metrics' });
      assert.equal(response.statusCode, 405);
      assert.equal(response.headers.allow, 'GET, HEAD');
      assert.equal(response.json().status, 405);
    });

    it('a product read and a 404 each count once under their route pattern and status, with their latency', async () => {
      const product = { method: 'GET', route: '/products/:handle.js', status_code: '200' };
      const missing = { method: 'GET', route: UNMATCHED_ROUTE, status_code: '404' };
      const before = await scrape(t.app);
      const count = (samples: Sample[], labels: Record<string, string>) => valueOf(samples, 'storefront_http_requests_total', labels) ?? 0;
      const latencyCount = (samples: Sample[], labels: Record<string, string>) => valueOf(samples, 'storefront_http_request_duration_seconds_count', labels) ?? 0;

      assert.equal((await t.app.inject({ method: 'GET', url: '/products/decaf-capsules.js' })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'GET', url: '/no/such/page-12345' })).statusCode, 404);
      const afterwards = await scrape(t.app);

      assert.equal(count(afterwards, product) - count(before, product), 1);
      assert.equal(count(afterwards, missing) - count(before, missing), 1);
      assert.equal(latencyCount(afterwards, product) - latencyCount(before, product), 1);
      assert.equal(valueOf(afterwards, 'storefront_http_request_duration_seconds_bucket', { ...product, le: '+Inf' }), latencyCount(afterwards, product));
      assert.ok(valueOf(afterwards, 'storefront_http_request_duration_seconds_sum', product)! > 0);
      const routes = new Set(afterwards.filter((s) => s.name === 'storefront_http_requests_total').map((s) => s.labels.route));
      assert.ok(!routes.has('/no/such/page-12345'), 'an unmatched path never becomes a label value');
      assert.equal(count(afterwards, { method: 'GET', route: '/metrics', status_code: '200' }), count(before, { method: 'GET', route: '/metrics', status_code: '200' }) + 1);
    });

    it('shows open carts, checkouts by status, approval links and orders as the database has them', async () => {
      const before = await scrapeWithFigures(t.app);
      const figure = (samples: Sample[], name: string, labels: Record<string, string>) => valueOf(samples, name, labels);
      assert.equal(figure(before, 'storefront_store_figures_up', {}), 1);
      for (const status of ['incomplete', 'requires_escalation', 'ready_for_complete', 'complete_in_progress', 'completed', 'canceled']) {
        assert.notEqual(figure(before, 'storefront_checkouts', { status }), undefined, `checkouts ${status} is reported, zero or not`);
      }

      const added = await t.app.inject({ method: 'POST', url: '/cart/add.js', payload: { id: variantId(t.store, 'ESP-DEC-10'), quantity: 1 } });
      assert.equal(added.statusCode, 200, added.body);
      const lines: LineInput[] = [{ variantId: variantId(t.store, 'ESP-LUN-10'), quantity: 1 }];
      await t.store.checkouts.create(t.store.db, { lines }, 'agent', 'agent');
      const ready = await t.store.checkouts.create(t.store.db, { lines, buyer: BUYER, destination: ADDRESS, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await t.store.checkouts.requestCompletion(t.store.db, ready.view.record.id, 'agent');
      const approval = asked.approval!;
      const waiting = await scrapeWithFigures(t.app);
      const delta = (samples: Sample[], name: string, labels: Record<string, string>) => figure(samples, name, labels)! - figure(before, name, labels)!;
      assert.equal(delta(waiting, 'storefront_carts', { status: 'open' }), 1);
      assert.equal(delta(waiting, 'storefront_checkouts', { status: 'incomplete' }), 1);
      assert.equal(delta(waiting, 'storefront_checkouts', { status: 'requires_escalation' }), 1);
      assert.equal(delta(waiting, 'storefront_checkout_approvals', { state: 'pending' }), 1);

      const outcome = await t.store.checkouts.approve(t.store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
      assert.equal(outcome.kind, 'placed');
      const placed = await scrapeWithFigures(t.app);
      assert.equal(delta(placed, 'storefront_checkouts', { status: 'requires_escalation' }), 0);
      assert.equal(delta(placed, 'storefront_checkouts', { status: 'completed' }), 1);
      assert.equal(delta(placed, 'storefront_checkout_approvals', { state: 'pending' }), 0);
      assert.equal(delta(placed, 'storefront_checkout_approvals', { state: 'used' }), 1);
      assert.equal(delta(placed, 'storefront_orders', { status: 'placed' }), 1);
      // The buyer's confirmation waits in the outbox (this store does not deliver); the webhook kind is reported at zero.
      assert.equal(delta(placed, 'storefront_outbox_messages', { kind: 'mail', state: 'pending' }), 1);
      assert.equal(delta(placed, 'storefront_outbox_messages', { kind: 'mail', state: 'delivered' }), 0);
      assert.notEqual(figure(placed, 'storefront_outbox_messages', { kind: 'webhook', state: 'failed' }), undefined);
      await t.store.db.query(`update outbox set sent_at = now() where order_id = $1`, [outcome.kind === 'placed' ? outcome.order.id : '']);
      const delivered = await scrapeWithFigures(t.app);
      assert.equal(delta(delivered, 'storefront_outbox_messages', { kind: 'mail', state: 'pending' }), 0);
      assert.equal(delta(delivered, 'storefront_outbox_messages', { kind: 'mail', state: 'delivered' }), 1);
    });

    it('rateLimited() and rateLimitStoreFailed() are counted, the former by route class', async () => {
      const app = Fastify();
      const metrics = installMetrics(app, t.store);
      metrics.routes(app);
      await app.ready();
      try {
        metrics.rateLimited('catalog');
        metrics.rateLimited('catalog');
        metrics.rateLimited('cart');
        metrics.rateLimitStoreFailed();
        const samples = await scrape(app);
        assert.equal(valueOf(samples, 'storefront_rate_limited_requests_total', { route_class: 'catalog' }), 2);
        assert.equal(valueOf(samples, 'storefront_rate_limited_requests_total', { route_class: 'cart' }), 1);
        assert.equal(valueOf(samples, 'storefront_rate_limit_store_failures_total'), 1);
      } finally {
        await app.close();
      }
    });

    it("reads the pool's figures from the database when it has a pool (a stand-in database here)", async () => {
      const app = Fastify();
      const db = Object.assign(Object.create(t.store.db) as Store['db'], { poolStats: () => ({ total: 7, idle: 5, waiting: 2 }) });
      installMetrics(app, { ...t.store, db }).routes(app);
      await app.ready();
      try {
        const samples = await scrape(app);
        assert.equal(valueOf(samples, 'storefront_db_pool_connections'), 7);
        assert.equal(valueOf(samples, 'storefront_db_pool_idle_connections'), 5);
        assert.equal(valueOf(samples, 'storefront_db_pool_waiting_queries'), 2);
      } finally {
        await app.close();
      }
    });

    it(backend.name === 'postgres' ? "the pg pool's connections, idle ones and waiting queries" : 'no pool figures: PGlite is one embedded connection', async (context) => {
      if (!('poolStats' in t.store.db)) return context.skip('the Database does not expose poolStats() yet');
      const samples = await scrape(t.app);
      const total = valueOf(samples, 'storefront_db_pool_connections');
      if (backend.name === 'pglite') {
        assert.equal(total, undefined);
        return;
      }
      assert.ok(total! >= 1);
      assert.ok(valueOf(samples, 'storefront_db_pool_idle_connections')! <= total!);
      assert.ok(valueOf(samples, 'storefront_db_pool_waiting_queries')! >= 0);
    });

    it(`a database slower than ${STORE_FIGURES_DEADLINE_MS / 1000} s: the scrape answers without the store figures, and has them again once it is back`, async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holding = t.store.db.transaction(async (tx) => {
        await tx.query('lock table checkouts in access exclusive mode');
        locked();
        await held;
      });
      try {
        await isLocked;
        const samples = await scrape(t.app);
        assert.equal(valueOf(samples, 'storefront_store_figures_up'), 0);
        assert.equal(valueOf(samples, 'storefront_checkouts', { status: 'incomplete' }), undefined, 'no figure is made up');
        assert.equal(valueOf(samples, 'storefront_carts', { status: 'open' }), undefined);
        assert.ok(valueOf(samples, 'storefront_http_requests_total', { route: '/metrics' })! >= 1, 'the request figures are there');
      } finally {
        release();
        await holding;
      }
      // The read the slow scrape started may still end in its statement timeout; a scrape after it reads afresh.
      assert.equal(valueOf(await scrapeWithFigures(t.app), 'storefront_store_figures_up'), 1, 'the figures are back within 10 s');
    });
  });

  describe(`/metrics with the database closed (${backend.name})`, () => {
    it('answers 200 with the request figures and storefront_store_figures_up 0', async () => {
      const t = await startTestStore(backend);
      try {
        assert.equal((await t.app.inject({ method: 'GET', url: '/products/decaf-capsules.js' })).statusCode, 200);
        await t.store.db.close();
        const samples = await scrape(t.app);
        assert.equal(valueOf(samples, 'storefront_store_figures_up'), 0);
        assert.equal(valueOf(samples, 'storefront_orders', { status: 'placed' }), undefined);
        assert.equal(valueOf(samples, 'storefront_http_requests_total', { route: '/products/:handle.js', status_code: '200' }), 1);
      } finally {
        await t.app.close();
        await t.store.close().catch(() => {}); // the database is already closed
      }
    });
  });

  describe(`who may read /metrics (${backend.name})`, () => {
    const TOKEN = 'metrics-token-0123456789';
    const FROM_OUTSIDE = { 'x-forwarded-for': '203.0.113.9' };
    let loopbackOnly: TestStore;
    let withToken: TestStore;
    const trustProxy = loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy;
    before(async () => {
      loopbackOnly = await startTestStore(backend, { config: { trustProxy } });
      withToken = await startTestStore(backend, { config: { trustProxy, metricsToken: TOKEN } });
    });
    after(async () => {
      await loopbackOnly.close();
      await withToken.close();
    });

    async function refused(t: TestStore, headers: Record<string, string>, description: RegExp) {
      const response = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      assert.equal(response.statusCode, 403, JSON.stringify(headers));
      assert.match(String(response.headers['content-type']), /^application\/json/);
      const body = JSON.parse(response.body);
      assert.deepEqual(Object.keys(body).sort(), ['description', 'message', 'status']);
      assert.equal(body.status, 403);
      assert.equal(body.message, 'Forbidden');
      assert.match(body.description, description);
      assert.ok(!response.body.includes('storefront_'), 'no figure leaks');
    }

    it('without METRICS_TOKEN: loopback reads it; a client behind the trusted proxy gets 403 JSON', async () => {
      await scrape(loopbackOnly.app);
      await scrape(loopbackOnly.app, { 'x-forwarded-for': '127.0.0.1' });
      await refused(loopbackOnly, FROM_OUTSIDE, /loopback.*METRICS_TOKEN/);
      await refused(loopbackOnly, { ...FROM_OUTSIDE, authorization: `Bearer ${TOKEN}` }, /loopback/);
      const direct = await loopbackOnly.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '198.51.100.4' });
      assert.equal(direct.statusCode, 403);
    });

    it('without TRUST_PROXY, a request a proxy forwarded is refused even though the proxy is on loopback', async () => {
      const t = await startTestStore(backend);
      try {
        await scrape(t.app);
        await refused(t, FROM_OUTSIDE, /loopback/);
        await refused(t, { forwarded: 'for=203.0.113.9' }, /loopback/);
      } finally {
        await t.close();
      }
    });

    it('with METRICS_TOKEN: the bearer token reads it from anywhere; no token or a wrong one gets 403, loopback too', async () => {
      await scrape(withToken.app, { ...FROM_OUTSIDE, authorization: `Bearer ${TOKEN}` });
      await scrape(withToken.app, { authorization: `bearer ${TOKEN}` });
      await refused(withToken, FROM_OUTSIDE, /Bearer/);
      await refused(withToken, {}, /Bearer/);
      for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${TOKEN}`, TOKEN, 'Bearer ', `Bearer ${TOKEN} extra`]) {
        await refused(withToken, { ...FROM_OUTSIDE, authorization: wrong }, /Bearer/);
      }
    });
  });
}
