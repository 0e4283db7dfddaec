import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, getJson, parseBody, startTestStore, type TestStore } from '../helpers/store.js';
import { schemaErrors } from '../helpers/schemas.js';

after(dropTestDatabases);

const LEAKS = /at \w+ \(|\.ts:\d+|node_modules|select |insert |relation "|\/src\/|\/work\//i;

for (const backend of backends) {
  describe(`JSON errors everywhere (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend, {
        app: {
          extend(app) {
            // A route that fails the way a real bug would: an internal error carrying SQL and a path.
            app.get('/__crash', { config: { rateLimit: 'other' } }, async () => {
              throw new Error('relation "secret_table" does not exist: select * from secret_table at /srv/app/src/x.ts:12');
            });
            app.post('/__echo', { config: { rateLimit: 'other' } }, async (request) => ({ received: request.body }));
          },
        },
      });
    });
    after(() => t.close());

    const expectError = (response: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number) => {
      assert.equal(response.statusCode, status);
      assert.match(String(response.headers['content-type']), /^application\/json/);
      const body = parseBody(response.body);
      assert.deepEqual(schemaErrors('Error', body), [], response.body);
      assert.equal(body.status, status);
      assert.doesNotMatch(response.body, LEAKS);
      return body;
    };

    it('an unknown route answers 404 JSON', async () => {
      expectError(await t.app.inject({ method: 'GET', url: '/no/such/route' }), 404);
      expectError(await t.app.inject({ method: 'DELETE', url: '/no/such/route' }), 404);
    });

    it('a known path with the wrong method answers 405 JSON with Allow', async () => {
      for (const url of ['/products/hydration-drink-stick.js', '/collections/all/products.json', '/sitemap.xml', '/openapi.json']) {
        const response = await t.app.inject({ method: 'POST', url });
        const body = expectError(response, 405);
        assert.equal(body.message, 'Method not allowed');
        assert.match(String(response.headers.allow), /GET/);
      }
      expectError(await t.app.inject({ method: 'DELETE', url: '/products/hydration-drink-stick.js' }), 405);
    });

    it('malformed JSON answers 400 JSON and names no parser internals', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/__echo',
        headers: { 'content-type': 'application/json' },
        payload: '{"items": [',
      });
      const body = expectError(response, 400);
      assert.match(body.description, /JSON/);
    });

    it('an empty JSON body answers 400', async () => {
      const response = await t.app.inject({ method: 'POST', url: '/__echo', headers: { 'content-type': 'application/json' }, payload: '' });
      expectError(response, 400);
    });

    it('a body over the limit answers 413 JSON', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/__echo',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ pad: 'x'.repeat(300 * 1024) }),
      });
      expectError(response, 413);
    });

    it('an unsupported content type answers 415 JSON', async () => {
      const response = await t.app.inject({ method: 'POST', url: '/__echo', headers: { 'content-type': 'application/x-unknown' }, payload: 'x' });
      expectError(response, 415);
    });

    it('a crash answers 500 JSON with no stack trace, SQL or path', async () => {
      const body = expectError(await t.app.inject({ method: 'GET', url: '/__crash' }), 500);
      assert.equal(body.message, 'Internal server error');
    });

    it('a malformed percent-encoding in the URL is a client error, not a 5xx', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/products/%E0%A4%A.js' });
      assert.ok(response.statusCode >= 400 && response.statusCode < 500, String(response.statusCode));
      assert.equal(parseBody(response.body).status, response.statusCode);
    });

    it('a JSON body naming __proto__ is accepted without it, not refused as malformed', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/__echo',
        headers: { 'content-type': 'application/json' },
        payload: '{"a":1,"__proto__":{"polluted":true}}',
      });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(JSON.parse(response.body), { received: { a: 1 } });
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    it('malformed HTTP and oversized headers answer JSON errors on a real socket', async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.app.server.address() as { port: number };
      const exchange = (request: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
          let answer = '';
          socket.on('data', (chunk) => (answer += chunk));
          socket.on('end', () => resolve(answer));
          socket.on('error', reject);
        });
      const badLength = await exchange('GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
      assert.match(badLength, /^HTTP\/1\.1 400 /);
      assert.equal(JSON.parse(badLength.split('\r\n\r\n')[1]!).status, 400);
      const hugeCookie = await exchange(`GET /cart.js HTTP/1.1\r\nHost: x\r\nCookie: cart=${'a'.repeat(20_000)}\r\n\r\n`);
      assert.match(hugeCookie, /^HTTP\/1\.1 431 /);
      assert.equal(JSON.parse(hugeCookie.split('\r\n\r\n')[1]!).status, 431);
    });

    it('limit and page in hex, exponent or Infinity are 422 naming the parameter on both list routes', async () => {
      for (const path of ['/products.json', '/collections/all/products.json']) {
        for (const query of ['limit=0x5', 'limit=5e0', 'page=Infinity']) {
          const { status, body } = await getJson(t.app, `${path}?${query}`);
          assert.equal(status, 422, `${path}?${query}`);
          assert.match(body.description, new RegExp(query.split('=')[0]!));
        }
      }
    });

    it('a huge or odd query string is a client error, never a 5xx', async () => {
      for (const query of ['limit=1e400', 'page=99999999999999999999999', 'limit[]=3', 'limit=3&limit=4', `page=${'9'.repeat(5000)}`]) {
        const { status, body } = await getJson(t.app, `/collections/all/products.json?${query}`);
        assert.ok(status === 200 || status === 422, `${query} -> ${status}`);
        assert.ok(body && (status === 200 ? Array.isArray(body.products) : body.status === 422));
      }
    });
  });
}
