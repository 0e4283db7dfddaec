/**
 * Operations (#11, item 3): liveness and readiness, request ids, the security headers every answer carries, and
 * CORS by class of route (public reads from anywhere; the cart, the buyer's pages and the commerce endpoint
 * same-origin only).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const FOREIGN = 'https://theme.example';

/**
 * The security headers every answer carries (`hsts`: when BASE_URL is https). A public read (`publicRead`: public
 * data any site may fetch) goes without X-Frame-Options and Referrer-Policy, and is cross-origin for CORP.
 */
function assertSecurityHeaders(headers: Record<string, unknown>, what: string, options: { referrer?: string; publicRead?: boolean } = {}): void {
  assert.equal(headers['x-content-type-options'], 'nosniff', what);
  assert.equal(headers['x-frame-options'], options.publicRead ? undefined : 'DENY', what);
  assert.equal(headers['referrer-policy'], options.publicRead ? undefined : (options.referrer ?? 'strict-origin-when-cross-origin'), what);
  assert.equal(headers['cross-origin-resource-policy'], options.publicRead ? 'cross-origin' : 'same-site', what);
  assert.match(String(headers['x-request-id']), UUID, what);
  assert.equal(headers['strict-transport-security'], undefined, what);
}

/** Sends raw bytes to a listening app and returns what came back before the server closed the connection. */
function rawExchange(port: number, request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

/**
 * GET /readyz until it answers 200, for up to 10 s, and the last answer. Readiness gives the database 2 s to
 * answer, which one read on a loaded machine may miss while the instance is fine; `alsoUntil` keeps asking while
 * an answer is not yet the one a test looks for (used only to wait out such a slow read).
 */
async function readyz(app: FastifyInstance, alsoUntil: (answer: Awaited<ReturnType<typeof getJson>>) => boolean = () => false) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await getJson(app, '/readyz');
    if (answer.status === 200 || alsoUntil(answer) || Date.now() >= deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('TRUST_PROXY', () => {
  it('takes loopback, addresses and CIDRs, and names itself when a value is bad', () => {
    assert.deepEqual(loadConfig({}).trustProxy, []);
    assert.deepEqual(loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy, ['127.0.0.0/8', '::1/128']);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.7, 10.1.0.0/16,fd00::/8' }).trustProxy, ['10.0.0.7/32', '10.1.0.0/16', 'fd00::/8']);
    for (const bad of ['10.0.0.0/33', 'proxy.internal', '127.1', 'loopback,10.0.0.300']) {
      assert.throws(() => loadConfig({ TRUST_PROXY: bad }), /^Error: TRUST_PROXY: expected comma-separated IP addresses or CIDRs/);
    }
  });
});

for (const backend of backends) {
  describe(`liveness and readiness (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('/healthz answers ok, /readyz ready with the database and every migration checked', async () => {
      const health = await getJson(t.app, '/healthz');
      assert.equal(health.status, 200);
      assert.deepEqual(health.body, { status: 'ok' });
      const ready = await readyz(t.app);
      assert.equal(ready.status, 200, JSON.stringify(ready.body));
      assert.deepEqual(ready.body, { status: 'ready', database: 'ok', migrations: 'current' });
      assertSecurityHeaders(ready.headers, '/readyz');
    });

    it('/readyz answers 503 with Retry-After naming the migration that is not applied; /healthz stays ok', async () => {
      const [last] = await t.store.db.query<{ version: number; name: string }>('select version, name from schema_migrations order by version desc limit 1');
      await t.store.db.query('delete from schema_migrations where version = $1', [last!.version]);
      try {
        // Asked again only while the answer is the one a slow database read gives (not the one looked for here).
        const ready = await readyz(t.app, (answer) => !/^The database does not answer/.test(String(answer.body?.description)));
        assert.equal(ready.status, 503);
        assert.equal(ready.headers['retry-after'], '5');
        assert.equal(ready.body.status, 503);
        assert.equal(ready.body.message, 'Service unavailable');
        assert.match(ready.body.description, new RegExp(`Migrations not applied: ${String(last!.version).padStart(3, '0')}_${last!.name}`));
        assert.equal((await getJson(t.app, '/healthz')).status, 200);
      } finally {
        await t.store.db.query('insert into schema_migrations (version, name) values ($1, $2)', [last!.version, last!.name]);
      }
      assert.equal((await readyz(t.app)).status, 200, 'ready again once the migration is back');
    });
  });

  describe(`readiness with the database closed (${backend.name})`, () => {
    it('/readyz answers 503 naming the database, /healthz still answers ok (it never asks the database)', async () => {
      const t = await startTestStore(backend);
      try {
        await t.store.db.close();
        const ready = await getJson(t.app, '/readyz');
        assert.equal(ready.status, 503);
        assert.equal(ready.headers['retry-after'], '5');
        assert.match(ready.body.description, /^The database does not answer: select 1 failed or took over 2 s\.$/);
        assert.deepEqual((await getJson(t.app, '/healthz')).body, { status: 'ok' });
      } finally {
        await t.app.close();
        await t.store.close().catch(() => {}); // the database is already closed
      }
    });
  });
}

describe('request ids', () => {
  const [pglite] = backends;
  let plain: TestStore;
  let behindProxy: TestStore;
  let otherProxy: TestStore;
  const showIp = (app: FastifyInstance) => app.get('/test/ip', { config: { rateLimit: 'other' } }, async (request) => ({ ip: request.ip, id: request.id }));
  before(async () => {
    plain = await startTestStore(pglite!, { app: { extend: showIp } });
    behindProxy = await startTestStore(pglite!, { config: { trustProxy: loadConfig({ TRUST_PROXY: 'loopback' }).trustProxy }, app: { extend: showIp } });
    otherProxy = await startTestStore(pglite!, { config: { trustProxy: ['10.0.0.0/8'] }, app: { extend: showIp } });
  });
  after(async () => {
    await plain.close();
    await behindProxy.close();
    await otherProxy.close();
  });

  it('each answer carries a new id (a UUID) when the client sends none', async () => {
    const first = await getJson(plain.app, '/products/decaf-capsules.js');
    const second = await getJson(plain.app, '/products/decaf-capsules.js');
    assert.match(String(first.headers['x-request-id']), UUID);
    assert.match(String(second.headers['x-request-id']), UUID);
    assert.notEqual(first.headers['x-request-id'], second.headers['x-request-id']);
  });

  it('a client id is ignored unless the connection comes from a trusted proxy', async () => {
    const sent = { 'x-request-id': 'edge-1234.abc:5', 'x-forwarded-for': '203.0.113.9' };
    const direct = await getJson(plain.app, '/test/ip', sent);
    assert.match(String(direct.headers['x-request-id']), UUID);
    assert.equal(direct.body.ip, '127.0.0.1');
    const untrusted = await getJson(otherProxy.app, '/test/ip', sent);
    assert.match(String(untrusted.headers['x-request-id']), UUID);
    assert.equal(untrusted.body.ip, '127.0.0.1');

    const trusted = await getJson(behindProxy.app, '/test/ip', sent);
    assert.equal(trusted.headers['x-request-id'], 'edge-1234.abc:5');
    assert.equal(trusted.body.id, 'edge-1234.abc:5');
    assert.equal(trusted.body.ip, '203.0.113.9', 'request.ip follows X-Forwarded-For from a trusted proxy');
    const fromTen = await otherProxy.app.inject({ method: 'GET', url: '/test/ip', headers: sent, remoteAddress: '10.2.3.4' });
    assert.equal(fromTen.headers['x-request-id'], 'edge-1234.abc:5');
  });

  it('a malformed id from a trusted proxy is replaced by a new one', async () => {
    for (const bad of ['has space', 'semi;colon', 'x'.repeat(129), 'ünïcode', '']) {
      const answer = await behindProxy.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': bad } });
      assert.match(String(answer.headers['x-request-id']), UUID, JSON.stringify(bad));
    }
    const longest = 'a'.repeat(128);
    assert.equal((await behindProxy.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': longest } })).headers['x-request-id'], longest);
  });
});

describe('security headers', () => {
  const [pglite] = backends;
  let t: TestStore;
  let port: number;
  before(async () => {
    t = await startTestStore(pglite!);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  after(() => t.close());

  it('on JSON answers: the public reads cross-origin, the rest same-site', async () => {
    assertSecurityHeaders((await getJson(t.app, '/products/decaf-capsules.js')).headers, 'product', { publicRead: true });
    assertSecurityHeaders((await getJson(t.app, '/cart.js')).headers, 'cart');
    assertSecurityHeaders((await getJson(t.app, '/healthz')).headers, 'healthz');
  });

  it('on errors: 404, 405, 422 and a JSON body that is not JSON', async () => {
    assertSecurityHeaders((await getJson(t.app, '/nothing-here')).headers, '404');
    assertSecurityHeaders((await t.app.inject({ method: 'DELETE', url: '/cart.js' })).headers, '405');
    assertSecurityHeaders((await getJson(t.app, '/collections/all/products.json?limit=0')).headers, '422', { publicRead: true });
    const badJson = await t.app.inject({ method: 'POST', url: '/cart/add.js', headers: { 'content-type': 'application/json' }, payload: '{' });
    assert.equal(badJson.statusCode, 400);
    assertSecurityHeaders(badJson.headers, 'bad JSON');
  });

  it('on HTML pages, which keep their own stricter referrer policy', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/policies/terms-of-service' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assertSecurityHeaders(page.headers, 'policy page', { referrer: 'no-referrer' });
    const unknown = await t.app.inject({ method: 'GET', url: '/orders/ord_0000000000000000000000' });
    assert.equal(unknown.statusCode, 404);
    assertSecurityHeaders(unknown.headers, 'unknown order page', { referrer: 'no-referrer' });
  });

  it("on the answers Node's HTTP layer writes itself: malformed HTTP and an unmet Expect", async () => {
    const malformed = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    assert.equal(malformed.status, 400);
    assertSecurityHeaders(malformed.headers, 'malformed');
    const expect = await rawExchange(port, 'POST /cart/add.js HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}');
    assert.equal(expect.status, 417);
    assertSecurityHeaders(expect.headers, 'expect');
  });

  it('Strict-Transport-Security only when BASE_URL is https', async () => {
    const https = await startTestStore(pglite!, { config: { baseUrl: 'https://store.test' } });
    try {
      const answer = await getJson(https.app, '/products/decaf-capsules.js');
      assert.equal(answer.headers['strict-transport-security'], 'max-age=31536000');
      assert.equal((await getJson(https.app, '/nothing-here')).headers['strict-transport-security'], 'max-age=31536000');
    } finally {
      await https.close();
    }
  });
});

describe('CORS', () => {
  const [pglite] = backends;
  let t: TestStore;
  before(async () => {
    t = await startTestStore(pglite!);
  });
  after(() => t.close());

  const PUBLIC_READS = [
    '/products/decaf-capsules.js',
    '/collections/all/products.json',
    '/products.json',
    '/search/suggest.json?q=espresso',
    '/sitemap.xml',
    '/openapi.json',
    '/scopes.json',
    '/.well-known/ucp',
  ];

  it('the storefront reads answer any origin, GET and HEAD alike', async () => {
    const [product] = (await getJson(t.app, '/products.json')).body.products as { id: number }[];
    for (const url of [...PUBLIC_READS, `/recommendations/products.json?product_id=${product!.id}`]) {
      for (const method of ['GET', 'HEAD'] as const) {
        const answer = await t.app.inject({ method, url, headers: { origin: FOREIGN } });
        assert.equal(answer.statusCode, 200, `${method} ${url}`);
        assert.equal(answer.headers['access-control-allow-origin'], '*', `${method} ${url}`);
        assert.equal(answer.headers['cross-origin-resource-policy'], 'cross-origin', `${method} ${url}`);
      }
    }
  });

  it('a preflight for a storefront read answers 204 allowing GET and HEAD', async () => {
    for (const url of PUBLIC_READS) {
      const answer = await t.app.inject({ method: 'OPTIONS', url, headers: { origin: FOREIGN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-request-id' } });
      assert.equal(answer.statusCode, 204, url);
      assert.equal(answer.headers['access-control-allow-origin'], '*', url);
      assert.equal(answer.headers['access-control-allow-methods'], 'GET, HEAD', url);
      assert.match(String(answer.headers['access-control-allow-headers']), /X-Request-Id/i, url);
      assert.equal(answer.body, '');
    }
  });

  it('cart writes, the buyer pages and the commerce endpoint answer no allow-origin to another origin', async () => {
    const add = await t.app.inject({ method: 'POST', url: '/cart/add.js', headers: { origin: FOREIGN, 'content-type': 'application/json' }, payload: { items: [] } });
    const cart = await t.app.inject({ method: 'GET', url: '/cart.js', headers: { origin: FOREIGN } });
    const page = await t.app.inject({ method: 'GET', url: '/policies/refund-policy', headers: { origin: FOREIGN } });
    const order = await t.app.inject({ method: 'GET', url: '/orders/ord_0000000000000000000000', headers: { origin: FOREIGN } });
    const approvalUrl = `/checkout/approve/${'A'.repeat(43)}`;
    const approvalPage = await t.app.inject({ method: 'GET', url: approvalUrl, headers: { origin: FOREIGN } });
    const approvalPost = await t.app.inject({
      method: 'POST',
      url: approvalUrl,
      headers: { origin: FOREIGN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'action=approve&form_token=x',
    });
    const mcp = await t.app.inject({
      method: 'POST',
      url: '/api/ucp/mcp',
      headers: { origin: FOREIGN, host: 'store.test', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    assert.equal(mcp.json().error?.data?.code, 'forbidden', 'the commerce endpoint keeps its own Origin rule');
    for (const [what, answer] of Object.entries({ add, cart, page, order, approvalPage, approvalPost, mcp })) {
      assert.equal(answer.headers['access-control-allow-origin'], undefined, what);
      assert.equal(answer.headers['cross-origin-resource-policy'], 'same-site', what);
    }
  });

  it('a cross-origin preflight to the cart or a buyer page is refused with 403 JSON; a same-origin OPTIONS is not', async () => {
    for (const url of ['/cart/add.js', '/cart/change', '/cart.js', '/checkout/approve/abc', '/orders/ord_0000000000000000000000']) {
      const answer = await t.app.inject({ method: 'OPTIONS', url, headers: { origin: FOREIGN, 'access-control-request-method': 'POST' } });
      assert.equal(answer.statusCode, 403, url);
      assert.deepEqual(JSON.parse(answer.body), { status: 403, message: 'Forbidden', description: 'Cross-origin requests are not allowed here: only the storefront reads are.' });
      assert.equal(answer.headers['access-control-allow-origin'], undefined, url);
    }
    const own = await t.app.inject({ method: 'OPTIONS', url: '/cart/add.js', headers: { origin: 'http://store.test', 'access-control-request-method': 'POST' } });
    assert.equal(own.statusCode, 405);
  });

  it('/healthz and /readyz are in the interface description, with no credential', async () => {
    const { body } = await getJson(t.app, '/openapi.json');
    for (const path of ['/healthz', '/readyz']) {
      const operation = body.paths[path]?.get;
      assert.ok(operation, path);
      assert.deepEqual(operation.security[0], {}, path);
      assert.ok(operation.responses['200'] && operation.responses['503'], path);
    }
  });
});
