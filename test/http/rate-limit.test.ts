/**
 * Rate limits on every endpoint (issue #11, item 1; issue 24, item 3) and what one client can store: each route
 * declares its class, each class has a budget per client address (RATE_LIMITS sets them), counted before the body is
 * read (so malformed, oversized and wrong-Host requests count too), 429 with Retry-After (the wait for the next
 * request, never a whole period) and the storefront Error (the commerce endpoint's JSON-RPC error is in
 * test/ucp/rate-limit.test.ts); X-Forwarded-For believed only from TRUST_PROXY peers; RATE_LIMIT=off lifts every
 * limit. A cart holds a bounded amount of text, and one address starts a bounded number of carts. Per-cart and
 * per-profile budgets: rate-limit-shoppers.test.ts and rate-limit-agents.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { MAX_CART_TEXT_BYTES } from '../../src/cart/cart.js';
import { ConfigError, loadConfig, RATE_LIMIT_DEFAULTS, type BudgetName } from '../../src/config.js';
import type { RouteClass } from '../../src/http/rate-limit.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const PRODUCT = '/products/decaf-capsules.js';
const SKU = 'ESP-RIS-10';
const MCP_HEADERS = { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' };
const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const randomToken = () => randomBytes(24).toString('base64url');

/**
 * Budgets small enough to spend in a test, each refilled by at most one request every few minutes: none comes back
 * while a test runs, so a budget's edge is exact. Set through RATE_LIMITS, the variable a merchant sets.
 */
const RATE_LIMITS =
  'catalog=12/h,search=10/h,cart-read=30/h,cart-write=10/h,cart-write-per-cart=4/h,cart-start=12/h,mcp=10/h,' +
  'mcp-per-profile=5/h,profile=8/h,page=8/h,approval-post=5/h,admin=8/h,admin-sign-in=5/h,health=12/h,other=8/h';
const { rateLimits } = loadConfig({ RATE_LIMITS });
const budget = (name: BudgetName) => rateLimits.budgets[name].max;
/** The longest Retry-After of a budget: the wait for one request's share of its period. */
const longestWait = (name: BudgetName) => Math.ceil(rateLimits.budgets[name].periodMs / rateLimits.budgets[name].max / 1000);

function variantId(test: TestStore, sku = SKU): number {
  const variant = test.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  assert.ok(variant, `variant ${sku}`);
  return variant.id;
}

function cartCookie(response: LightMyRequestResponse): string {
  const cookie = ([] as string[]).concat(response.headers['set-cookie'] ?? []).find((c) => c.startsWith('cart='));
  assert.ok(cookie, 'the answer sets the cart cookie');
  return cookie.split(';')[0]!;
}

/**
 * The storefront 429 of budget `name`: Retry-After in whole seconds, at most one request's share of the budget's
 * period (never the period), the Error body, and the x-ratelimit-* headers.
 */
function assertLimited(response: LightMyRequestResponse, name: BudgetName): void {
  assert.equal(response.statusCode, 429, `${name}: ${response.body}`);
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= longestWait(name), `${name}: Retry-After ${retryAfter}`);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const body = JSON.parse(response.body);
  // The commerce endpoint's error is the storefront Error and a JSON-RPC error in one body.
  const rpc = name === 'mcp' ? ['error', 'id', 'jsonrpc'] : [];
  assert.deepEqual(Object.keys(body).sort(), ['description', ...rpc, 'message', 'status'].sort());
  assert.equal(body.status, 429);
  assert.equal(body.message, 'Too many requests');
  assert.equal(response.headers['x-ratelimit-limit'], String(budget(name)), name);
  assert.equal(response.headers['x-ratelimit-remaining'], '0');
  assert.equal(response.headers['x-ratelimit-reset'], String(retryAfter));
}

/** Sends `count` requests; each must be answered, none refused 429 and none 5xx. */
async function sendAnswered(app: FastifyInstance, request: InjectOptions, count: number, what: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await app.inject(request);
    assert.ok(response.statusCode !== 429 && response.statusCode < 500, `${what}, request ${i + 1}: ${response.statusCode}`);
  }
}

describe('RATE_LIMIT', () => {
  it('limits are on unless the environment turns them off; a value that is neither on nor off stops the start naming it', () => {
    assert.equal(loadConfig({}).rateLimit, true);
    for (const on of ['on', 'true', '1', 'yes', ' ON ']) assert.equal(loadConfig({ RATE_LIMIT: on }).rateLimit, true, on);
    for (const off of ['off', 'false', '0', 'no', 'Off']) assert.equal(loadConfig({ RATE_LIMIT: off }).rateLimit, false, off);
    assert.throws(
      () => loadConfig({ RATE_LIMIT: 'sometimes' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'RATE_LIMIT',
    );
  });
});

describe('RATE_LIMITS', () => {
  it('sets budgets per second, minute or hour over the defaults, and trusted agent platforms\' budgets by profile URL', () => {
    assert.deepEqual(loadConfig({}).rateLimits, { budgets: RATE_LIMIT_DEFAULTS, agentProfiles: new Map() });
    const { budgets, agentProfiles } = loadConfig({
      RATE_LIMITS:
        ' cart-write=120/min, search = 600 / min,cart-start=5000/h,health=20/s,' +
        'mcp-per-profile[https://Platform.example.com/agents/profile.json]=6000/min,mcp-per-profile[https://x.example.com/a,b]=7/min',
    }).rateLimits;
    assert.deepEqual(budgets['cart-write'], { max: 120, periodMs: 60_000 });
    assert.deepEqual(budgets.search, { max: 600, periodMs: 60_000 });
    assert.deepEqual(budgets['cart-start'], { max: 5000, periodMs: 3_600_000 });
    assert.deepEqual(budgets.health, { max: 20, periodMs: 1_000 });
    assert.deepEqual(budgets.catalog, RATE_LIMIT_DEFAULTS.catalog, 'a budget not named keeps its default');
    assert.deepEqual(budgets['mcp-per-profile'], RATE_LIMIT_DEFAULTS['mcp-per-profile'], 'a trusted platform does not change the others\'');
    // Profile URLs as `new URL()` writes them (the host in lower case); a comma inside the brackets is the URL's.
    assert.deepEqual([...agentProfiles], [
      ['https://platform.example.com/agents/profile.json', { max: 6000, periodMs: 60_000 }],
      ['https://x.example.com/a,b', { max: 7, periodMs: 60_000 }],
    ]);
  });

  it('an unknown budget, a unit other than /s, /min or /h, no requests, or a bad profile URL stops the start with one line naming RATE_LIMITS', () => {
    for (const value of [
      'cart-write=120',
      'cart-write=120/day',
      'cart-write=1.5/min',
      'cart-write=0/min',
      'cart-write=-1/min',
      'cart-writes=1/min',
      '=1/min',
      'cart-write=1/min;search=1/min',
      'catalog[https://platform.example.com/profile]=1/min',
      'mcp-per-profile[not a url]=1/min',
      'mcp-per-profile[ftp://platform.example.com/profile]=1/min',
    ]) {
      assert.throws(
        () => loadConfig({ RATE_LIMITS: value }),
        (error: unknown) => error instanceof ConfigError && error.variable === 'RATE_LIMITS' && !error.message.includes('\n'),
        value,
      );
    }
  });
});

describe('REDIS_URL and REDIS_KEY_PREFIX', () => {
  it('take redis:// and rediss:// URLs and a plain prefix; anything else stops the start naming the variable, never echoing a password', () => {
    assert.equal(loadConfig({ REDIS_URL: 'rediss://user:pw@cache.internal:6380/2' }).redisUrl, 'rediss://user:pw@cache.internal:6380/2');
    assert.equal(loadConfig({}).redisUrl, undefined);
    assert.equal(loadConfig({}).redisKeyPrefix, 'storefront:');
    for (const [env, variable] of [
      [{ REDIS_URL: 'http://user:secret@cache:6379' }, 'REDIS_URL'],
      [{ REDIS_URL: 'cache:6379' }, 'REDIS_URL'],
      [{ REDIS_KEY_PREFIX: 'has space' }, 'REDIS_KEY_PREFIX'],
    ] as const) {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && error.variable === variable && !error.message.includes('secret'),
      );
    }
  });
});

for (const backend of backends) {
  describe(`${backend.name}: rate limits on every endpoint`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(backend, { config: { rateLimit: true, rateLimits, trustProxy: ['127.0.0.0/8', '::1/128'] } });
    });
    after(() => test.close());

    it('each route class answers its budget (from RATE_LIMITS), then 429 with Retry-After and the JSON Error; each class counts on its own', async () => {
      // A live cart, made from another address, for the cart reads.
      const added = await test.app.inject({ method: 'POST', url: '/cart/add.js', payload: { id: variantId(test), quantity: 1 }, remoteAddress: '192.0.2.200' });
      assert.equal(added.statusCode, 200);
      const cookie = cartCookie(added);
      const remoteAddress = '192.0.2.1';
      const requests: [RouteClass, InjectOptions][] = [
        ['catalog', { url: PRODUCT }],
        ['search', { url: '/search/suggest.json?q=caps' }],
        ['cart-read', { url: '/cart.js', headers: { cookie } }],
        // Not a cart token: only the address's budget counts it.
        ['cart-write', { url: '/cart/c/not-a-cart-token' }],
        ['mcp', { method: 'POST', url: '/api/ucp/mcp', headers: MCP_HEADERS, payload: ping }],
        ['profile', { url: '/.well-known/ucp' }],
        ['page', { url: '/policies/terms-of-service' }],
        ['approval-post', { method: 'POST', url: `/checkout/approve/${randomBytes(32).toString('base64url')}`, payload: 'action=approve&form_token=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
        ['admin', { url: '/admin' }],
        ['admin-sign-in', { url: '/admin/sign-in' }],
        ['health', { url: '/healthz' }],
        ['other', { url: '/no-such-page' }],
      ];
      // One address for every class, in turn: each class still answers after the ones before it were spent.
      for (const [name, request] of requests) {
        await sendAnswered(test.app, { ...request, remoteAddress }, budget(name), name);
        assertLimited(await test.app.inject({ ...request, remoteAddress }), name);
      }
      // Another address is not affected.
      assert.equal((await test.app.inject({ url: PRODUCT, remoteAddress: '192.0.2.2' })).statusCode, 200);
      // Each refusal is counted in the metrics by its class.
      const metrics = (await test.app.inject({ url: '/metrics', remoteAddress: '127.0.0.1' })).body;
      for (const [name] of requests) {
        const counted = new RegExp(`^storefront_rate_limited_requests_total\\{route_class="${name}"\\} (\\d+)`, 'm').exec(metrics)?.[1];
        assert.ok(Number(counted) >= 1, `${name} refusals in the metrics`);
      }
    });

    it('every route counts against the class it declares: once a class is spent, each of its routes is refused', async () => {
      const approval = `/checkout/approve/${randomBytes(32).toString('base64url')}`;
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      // A live cart for the cart reads (a read without one starts a cart, which has a budget of its own).
      const added = await test.app.inject({ method: 'POST', url: '/cart/add.js', payload: { id: variantId(test), quantity: 1 }, remoteAddress: '192.0.2.201' });
      const cookie = cartCookie(added);
      const routes: Record<RouteClass, (InjectOptions & { url: string })[]> = {
        catalog: [
          { url: PRODUCT },
          { method: 'HEAD', url: PRODUCT },
          { url: '/products/decaf-capsules' },
          { url: '/collections/all/products.json' },
          { url: '/collections/all' },
          { url: '/products.json' },
          { url: '/' },
          { url: '/recommendations/products.json?product_id=1' },
          { url: '/sitemap.xml' },
          { url: '/openapi.json' },
          { url: '/scopes.json' },
          { url: '/assets/demo/decaf-capsules.svg' },
          { url: '/assets/storefront.js' },
        ],
        search: [{ url: '/search/suggest.json?q=caps' }, { url: '/search?q=caps' }],
        'cart-read': [{ url: '/cart.js', headers: { cookie } }, { url: '/cart.json', headers: { cookie } }],
        'cart-write': [
          { url: '/cart/c/not-a-cart-token' },
          ...['add', 'change', 'update', 'clear'].flatMap((path) => [
            { method: 'POST' as const, url: `/cart/${path}.js`, payload: {} },
            { method: 'POST' as const, url: `/cart/${path}`, payload: '', headers: form },
          ]),
          { method: 'POST', url: '/checkout', payload: '', headers: form },
        ],
        mcp: [{ method: 'POST', url: '/api/ucp/mcp', headers: MCP_HEADERS, payload: ping }, { url: '/api/ucp/mcp', headers: MCP_HEADERS }],
        profile: [{ url: '/.well-known/ucp' }, { url: '/.well-known/ucp/2026-04-08' }],
        page: [
          { url: '/policies/terms-of-service' },
          { url: '/cart' },
          { url: '/checkout' },
          { url: approval },
          { url: '/checkouts/no-such-checkout' },
          { url: '/orders/no-such-order' },
          { method: 'POST', url: '/orders/no-such-order/passkey/options', payload: {} },
          { method: 'POST', url: '/orders/no-such-order/passkey', payload: '', headers: form },
        ],
        'approval-post': [
          { method: 'POST', url: approval, payload: 'action=approve', headers: form },
          { method: 'POST', url: `${approval}/passkey`, payload: {} },
        ],
        admin: [{ url: '/admin' }, { url: '/admin/assets/webauthn.js' }, { method: 'POST', url: '/admin/sign-out', payload: '', headers: form }],
        'admin-sign-in': [{ url: '/admin/sign-in' }, { method: 'POST', url: '/admin/sign-in/options', payload: {} }],
        health: [{ url: '/healthz' }, { url: '/readyz' }],
        other: [
          { url: '/no-such-page' },
          { url: '/metrics' },
          { url: '/checkout/webauthn.js' },
          { method: 'DELETE', url: '/products.json' },
          { url: '/%zz' },
        ],
      };
      for (const [index, [name, [first, ...others]]] of Object.entries(routes).entries()) {
        const remoteAddress = `192.0.2.${100 + index}`;
        await sendAnswered(test.app, { ...first, remoteAddress }, budget(name as RouteClass), name);
        for (const request of [first!, ...others]) {
          const refused = await test.app.inject({ ...request, remoteAddress });
          assert.equal(refused.statusCode, 429, `${request.method ?? 'GET'} ${request.url} (${name})`);
          assert.equal(refused.headers['x-ratelimit-limit'], String(budget(name as RouteClass)), `${request.url} counts as ${name}`);
        }
      }
    });

    it('a route that declares no rate-limit class stops the app from starting, naming the route', async () => {
      let unfinished: FastifyInstance | undefined;
      await assert.rejects(
        buildApp(test.store, {
          extend: (app) => {
            unfinished = app;
            app.get('/unclassed', async () => 'never');
          },
        }),
        /GET \/unclassed declares no rate-limit class/,
      );
      await unfinished?.close();
    });

    it('the approval page is limited by the page budget: 429 with Retry-After and the JSON Error once it is spent', async () => {
      const request = { url: `/checkout/approve/${randomBytes(32).toString('base64url')}`, remoteAddress: '192.0.2.3' };
      await sendAnswered(test.app, request, budget('page'), 'approval page');
      assertLimited(await test.app.inject(request), 'page');
    });

    it('200-request bursts at /cart/add.js, /search/suggest.json, a product, /cart/c/{token} and /healthz each end in 429, with no 5xx', async (t) => {
      await test.app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}`;
      const bursts: { name: BudgetName; path: string; init?: RequestInit }[] = [
        { name: 'cart-write', path: '/cart/add.js', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: variantId(test), quantity: 1 }) } },
        { name: 'search', path: '/search/suggest.json?q=espresso' },
        { name: 'catalog', path: PRODUCT },
        // One cart token: its cart's budget is the smaller.
        { name: 'cart-write-per-cart', path: `/cart/c/${randomToken()}` },
        { name: 'health', path: '/healthz' },
      ];
      for (const [index, burst] of bursts.entries()) {
        // Each burst from its own client, told by the trusted proxy on loopback.
        const client = `198.51.100.${index + 10}`;
        const statuses = new Map<number, number>();
        let next = 0;
        const worker = async () => {
          while (next < 200) {
            next++;
            const response = await fetch(`${base}${burst.path}`, { ...burst.init, headers: { ...(burst.init?.headers as object), 'x-forwarded-for': client } });
            await response.arrayBuffer();
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          }
        };
        await Promise.all(Array.from({ length: 20 }, worker));
        t.diagnostic(`${burst.path}: ${JSON.stringify(Object.fromEntries(statuses))}`);
        assert.equal(statuses.get(429), 200 - budget(burst.name), burst.path);
        assert.ok([...statuses.keys()].every((status) => status < 500), burst.path);
      }
    });

    it('malformed, oversized and wrong-Host MCP requests are counted before their body is read, then answered 429 (JSON-RPC, id null)', async () => {
      const remoteAddress = '192.0.2.30';
      const malformed = { method: 'POST' as const, url: '/api/ucp/mcp', headers: MCP_HEADERS, payload: '{"jsonrpc": "2.0", "id": 7,', remoteAddress };
      const oversized = { ...malformed, payload: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ping', params: { pad: 'x'.repeat(300 * 1024) } }) };
      const wrongHost = { ...malformed, headers: { ...MCP_HEADERS, host: 'evil.example' }, payload: ping };
      // Each a JSON-RPC error with HTTP 200 (the spec): parse error, too large, a Host not allowed.
      const expected = [
        [malformed, -32700],
        [oversized, -32000],
        [wrongHost, -32000],
      ] as const;
      for (const [request, code] of expected) {
        const response = await test.app.inject(request);
        assert.equal(response.statusCode, 200);
        assert.equal(JSON.parse(response.body).error.code, code);
        assert.equal(response.headers['x-ratelimit-remaining'], undefined, 'within budget, no rate-limit headers');
      }
      // Exactly the rest of the budget is answered: the three above were counted.
      await sendAnswered(test.app, malformed, budget('mcp') - expected.length, 'malformed MCP');
      for (const request of [malformed, oversized, wrongHost]) {
        const limited = await test.app.inject(request);
        assert.equal(limited.statusCode, 429);
        assert.ok(Number(limited.headers['retry-after']) >= 1);
        const body = JSON.parse(limited.body);
        assert.equal(body.jsonrpc, '2.0');
        assert.equal(body.id, null);
        assert.equal(body.error.code, -32000);
        assert.equal(body.error.data.retry_after, Number(limited.headers['retry-after']));
      }
    });

    it('malformed JSON at /cart/add.js counts against the cart-write budget, then is answered 429', async () => {
      const request: InjectOptions = { method: 'POST', url: '/cart/add.js', headers: { 'content-type': 'application/json' }, payload: '{"id":', remoteAddress: '192.0.2.31' };
      const first = await test.app.inject(request);
      assert.equal(first.statusCode, 400);
      await sendAnswered(test.app, request, budget('cart-write') - 1, 'malformed add');
      assertLimited(await test.app.inject(request), 'cart-write');
    });

    it('X-Forwarded-For names the client only when a TRUST_PROXY peer sends it', async () => {
      const other = budget('other');
      // Through the trusted proxy (loopback): each forwarded address has its own budget.
      await sendAnswered(test.app, { url: '/nowhere', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '198.51.100.1' } }, other, 'via proxy');
      assertLimited(await test.app.inject({ url: '/nowhere', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '198.51.100.1' } }), 'other');
      assert.equal((await test.app.inject({ url: '/nowhere', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '198.51.100.2' } })).statusCode, 404);
      // From anyone else the header is ignored: a new X-Forwarded-For does not buy a new budget.
      await sendAnswered(test.app, { url: '/nowhere', remoteAddress: '203.0.113.60', headers: { 'x-forwarded-for': '198.51.100.3' } }, other, 'direct');
      assertLimited(await test.app.inject({ url: '/nowhere', remoteAddress: '203.0.113.60', headers: { 'x-forwarded-for': '198.51.100.4' } }), 'other');
    });

    it(`one address starts at most its cart-start budget of carts; a cookie naming a live cart is still served`, async () => {
      const remoteAddress = '192.0.2.40';
      const adds = 5;
      const live = await test.app.inject({ method: 'POST', url: '/cart/add.js', payload: { id: variantId(test), quantity: 1 }, remoteAddress });
      assert.equal(live.statusCode, 200);
      const cookie = cartCookie(live);
      // Starts: the add above, more adds without a cookie, then cart reads without a cookie (each hands a new token).
      await sendAnswered(test.app, { method: 'POST', url: '/cart/add.js', payload: { id: variantId(test), quantity: 1 }, remoteAddress }, adds - 1, 'adds');
      await sendAnswered(test.app, { url: '/cart.js', remoteAddress }, budget('cart-start') - adds, 'new carts');
      assertLimited(await test.app.inject({ url: '/cart.js', remoteAddress }), 'cart-start');
      // A cookie naming no live cart would be handed a new one: refused too.
      assertLimited(await test.app.inject({ url: '/cart.js', remoteAddress, headers: { cookie: `cart=${randomToken()}` } }), 'cart-start');
      // The shopper whose cart lives goes on.
      const read = await test.app.inject({ url: '/cart.js', remoteAddress, headers: { cookie } });
      assert.equal(read.statusCode, 200);
      assert.equal(JSON.parse(read.body).item_count, 1);
    });
  });

  describe(`${backend.name}: what one cart may store`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(backend, { config: { rateLimit: false } });
    });
    after(() => test.close());

    const countRows = async () => {
      const [rows] = await test.store.db.query<{ carts: number; lines: number }>(
        'select (select count(*)::int from carts) as carts, (select count(*)::int from cart_lines) as lines',
      );
      return rows!;
    };
    const properties = (count: number, length: number, tag = '') =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`${tag}Field ${i}`, 'x'.repeat(length)]));

    it(`an add over ${MAX_CART_TEXT_BYTES} bytes of properties is 422 Cart Error, and no cart is stored`, async () => {
      const rows = await countRows();
      const response = await test.app.inject({
        method: 'POST',
        url: '/cart/add.js',
        payload: { items: [{ id: variantId(test), quantity: 1, properties: properties(20, 900) }] },
      });
      assert.equal(response.statusCode, 422);
      const body = JSON.parse(response.body);
      assert.equal(body.message, 'Cart Error');
      assert.match(body.description, /at most 16,384 bytes/);
      assert.equal(response.headers['set-cookie'], undefined);
      assert.deepEqual(await countRows(), rows);
    });

    it('a cart near the bound refuses more text (properties, note, attributes), keeps what it has, and still takes plain adds', async () => {
      const first = await test.app.inject({ method: 'POST', url: '/cart/add.js', payload: { items: [{ id: variantId(test), quantity: 1, properties: properties(12, 1000) }] } });
      assert.equal(first.statusCode, 200);
      const cookie = cartCookie(first);
      const before = JSON.parse((await test.app.inject({ url: '/cart.js', headers: { cookie } })).body);
      const rows = await countRows();
      const refused = [
        { url: '/cart/add.js', payload: { items: [{ id: variantId(test), quantity: 1, properties: properties(5, 1000, 'more ') }] } },
        { url: '/cart/update.js', payload: { note: 'n'.repeat(5000) } },
        { url: '/cart/update.js', payload: { attributes: properties(5, 1000) } },
      ];
      for (const { url, payload } of refused) {
        const response = await test.app.inject({ method: 'POST', url, payload, headers: { cookie } });
        assert.equal(response.statusCode, 422, url);
        assert.equal(JSON.parse(response.body).message, 'Cart Error');
      }
      assert.deepEqual(JSON.parse((await test.app.inject({ url: '/cart.js', headers: { cookie } })).body), before);
      assert.deepEqual(await countRows(), rows);
      const plain = await test.app.inject({ method: 'POST', url: '/cart/add.js', payload: { id: variantId(test, 'SLP-60'), quantity: 1 }, headers: { cookie } });
      assert.equal(plain.statusCode, 200);
      assert.equal(JSON.parse(plain.body).item_count, 2);
    });
  });

  describe(`${backend.name}: RATE_LIMIT=off`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(backend, { config: { rateLimit: false, rateLimits } });
    });
    after(() => test.close());

    it('never answers 429 and sends no rate-limit headers, whatever RATE_LIMITS says', async () => {
      for (const [request, count] of [
        [{ url: `/cart/c/${randomToken()}` }, budget('cart-write-per-cart') * 2],
        [{ url: '/nowhere' }, budget('other') * 2],
        [{ url: '/cart.js' }, budget('cart-start') + 1],
      ] as const) {
        for (let i = 0; i < count; i++) {
          const response = await test.app.inject({ ...request, remoteAddress: '192.0.2.50' });
          assert.notEqual(response.statusCode, 429);
          assert.equal(response.headers['x-ratelimit-limit'], undefined);
        }
      }
    });
  });
}
