import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';
import { officialSchemaErrors, officialSchemaErrorsFor, OfficialSchema, OfficialSchemas } from './official-schemas.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`${backend.name}: GET /.well-known/ucp`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(backend, { config: { baseUrl: 'https://shop.example' } });
    });
    after(() => test.close());

    it('serves the 2026-08-25 business profile, valid against the official profile schema, linking the 2026-04-08 leaf', async () => {
      const { status, headers, body } = await getJson(test.app, '/.well-known/ucp');
      assert.equal(status, 200);
      assert.match(String(headers['content-type']), /^application\/json/);
      assert.deepEqual(officialSchemaErrorsFor('2026-08-25', OfficialSchemas['2026-08-25'].businessProfile, body), []);
      assert.equal(body.ucp.version, '2026-08-25');
      assert.deepEqual(body.ucp.supported_versions, { '2026-04-08': 'https://shop.example/.well-known/ucp/2026-04-08' });
      // The keys as a JWK Set (2026-08-25), not the 2026-04-08 name.
      assert.ok(Array.isArray(body.keys) && body.keys.length >= 1, 'keys');
      assert.equal(body.signing_keys, undefined);
      // The one payment handler, under the store's own domain (BASE_URL https://shop.example): manual capture.
      assert.deepEqual(Object.keys(body.ucp.payment_handlers), ['example.shop.manual_capture']);
      assert.equal(body.ucp.payment_handlers['example.shop.manual_capture'][0].id, 'manual_capture');
      assert.equal(body.ucp.payment_handlers['example.shop.manual_capture'][0].config.capture, 'manual');
      assert.equal(body.ucp.payment_handlers['example.shop.manual_capture'][0].config.paid_on, 'instructions');
    });

    it('lists exactly one MCP service entry whose endpoint is BASE_URL + /api/ucp/mcp', async () => {
      const { body } = await getJson(test.app, '/.well-known/ucp');
      assert.deepEqual(Object.keys(body.ucp.services), ['dev.ucp.shopping']);
      const [entry, ...others] = body.ucp.services['dev.ucp.shopping'];
      assert.equal(others.length, 0);
      assert.equal(entry.transport, 'mcp');
      assert.equal(entry.endpoint, 'https://shop.example/api/ucp/mcp');
      assert.equal(entry.version, '2026-08-25');
      assert.equal(entry.schema, 'https://ucp.dev/2026-08-25/services/shopping/mcp.openrpc.json');
    });

    it('advertises the capabilities the tools implement, with spec and schema on ucp.dev', async () => {
      const { body } = await getJson(test.app, '/.well-known/ucp');
      const names = Object.keys(body.ucp.capabilities).sort();
      assert.ok(names.includes('dev.ucp.shopping.catalog.search'));
      assert.ok(names.includes('dev.ucp.shopping.catalog.lookup'));
      assert.ok(names.includes('dev.ucp.shopping.cart'));
      assert.ok(names.includes('dev.ucp.shopping.checkout'));
      assert.ok(names.includes('dev.ucp.shopping.order'));
      assert.equal(body.ucp.capabilities['dev.ucp.shopping.fulfillment'][0].extends, 'dev.ucp.shopping.checkout');
      assert.ok(!names.some((name) => /discount|buyer_consent|ap2/.test(name)), 'nothing that is not implemented: no AP2 (an agent never pays alone)');
      for (const name of names) {
        const [entry] = body.ucp.capabilities[name];
        // Every dev.ucp.* entry of a profile carries the profile's release (UCP overview, component versioning).
        assert.equal(entry.version, '2026-08-25');
        assert.match(entry.spec, /^https:\/\/ucp\.dev\/2026-08-25\//);
        assert.match(entry.schema, /^https:\/\/ucp\.dev\/2026-08-25\/schemas\/shopping\/.+\.json$/);
      }
    });

    it('is public and cacheable for at least 60 seconds, with no credential and no redirect', async () => {
      const { status, headers } = await getJson(test.app, '/.well-known/ucp', { authorization: 'Bearer nonsense', cookie: 'cart=x' });
      assert.equal(status, 200);
      const cacheControl = String(headers['cache-control']);
      assert.match(cacheControl, /\bpublic\b/);
      assert.doesNotMatch(cacheControl, /private|no-store|no-cache/);
      assert.ok(Number(/max-age=(\d+)/.exec(cacheControl)?.[1]) >= 60);
      assert.equal(headers.location, undefined);
    });

    it('serves the 2026-04-08 leaf profile named in supported_versions: complete, of that release, without supported_versions', async () => {
      const { status, body } = await getJson(test.app, '/.well-known/ucp/2026-04-08');
      assert.equal(status, 200);
      assert.deepEqual(officialSchemaErrors(OfficialSchema.businessProfile, body), []);
      assert.equal(body.ucp.version, '2026-04-08');
      assert.equal(body.ucp.supported_versions, undefined);
      const [service] = body.ucp.services['dev.ucp.shopping'];
      assert.equal(service.endpoint, 'https://shop.example/api/ucp/mcp');
      assert.equal(service.version, '2026-04-08');
      for (const [name, [entry]] of Object.entries<any[]>(body.ucp.capabilities)) {
        assert.equal(entry.version, '2026-04-08', name);
        assert.match(entry.schema, /^https:\/\/ucp\.dev\/2026-04-08\//, name);
      }
      // Its keys as 2026-04-08 names them: the same keys as the newest profile's.
      const { body: newest } = await getJson(test.app, '/.well-known/ucp');
      assert.deepEqual(body.signing_keys, newest.keys);
      assert.equal(body.keys, undefined);
      assert.deepEqual(Object.keys(body.ucp.capabilities).sort(), Object.keys(newest.ucp.capabilities).sort());
    });

    it('serves the 2026-08-25 profile as a leaf too (without supported_versions)', async () => {
      const { status, body } = await getJson(test.app, '/.well-known/ucp/2026-08-25');
      assert.equal(status, 200);
      assert.deepEqual(officialSchemaErrorsFor('2026-08-25', OfficialSchemas['2026-08-25'].businessProfile, body), []);
      assert.equal(body.ucp.version, '2026-08-25');
      assert.equal(body.ucp.supported_versions, undefined);
    });

    it('answers 404 with the storefront Error for a version it does not speak', async () => {
      const { status, body } = await getJson(test.app, '/.well-known/ucp/2026-01-11');
      assert.equal(status, 404);
      assert.equal(body.status, 404);
      assert.equal(body.message, 'Not found');
    });

    it('is described in /openapi.json with the MCP endpoint', async () => {
      const { body } = await getJson(test.app, '/openapi.json');
      assert.equal(body.paths['/.well-known/ucp'].get.operationId, 'getUcpProfile');
      assert.deepEqual(body.paths['/.well-known/ucp'].get.security, []);
      assert.equal(body.paths['/api/ucp/mcp'].post.operationId, 'callMcpEndpoint');
      assert.ok(body.paths['/api/ucp/mcp'].post.responses['429']);
    });
  });
}
