import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backends, getJson, startTestStore, type TestStore } from '../helpers/store.js';

describe('the interface description', () => {
  let t: TestStore;
  let doc: any;
  const scratch = mkdtempSync(path.join(tmpdir(), 'storefront-openapi-'));
  before(async () => {
    t = await startTestStore(backends[0]!);
    doc = (await getJson(t.app, '/openapi.json')).body;
  });
  after(async () => {
    await t.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('is OpenAPI 3.1 at version 1.0.0, served at BASE_URL', () => {
    assert.match(doc.openapi, /^3\.1\./);
    assert.equal(doc.info.version, '1.0.0');
    assert.deepEqual(doc.servers, [{ url: 'http://store.test' }]);
  });

  it('declares the security schemes publicRead, sessionCart and ucpSession', () => {
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['publicRead', 'sessionCart', 'ucpSession']);
    assert.equal(doc.components.securitySchemes.sessionCart.in, 'cookie');
    assert.equal(doc.components.securitySchemes.sessionCart.name, 'cart');
  });

  it('covers the catalog endpoints with their parameters, and every storefront path answers Error-shaped failures', () => {
    const operations = new Map<string, any>();
    for (const [url, item] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) operations.set(operation.operationId, { url, method, operation });
    }
    for (const id of [
      'getProductByHandle',
      'listCollectionProducts',
      'getSitemap',
      'getOpenApi',
      'getScopes',
      'getHealth',
      'searchProducts',
      'getProductRecommendations',
      'getCart',
      'addCartItems',
      'changeCartItem',
      'getUcpProfile',
      'callMcpEndpoint',
    ]) {
      assert.ok(operations.has(id), `${id} is described`);
    }
    assert.equal(operations.get('getProductByHandle').url, '/products/{handle}.js');
    const list = operations.get('listCollectionProducts').operation;
    const limit = list.parameters.find((p: { name: string }) => p.name === 'limit');
    assert.deepEqual([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [1, 250, 30]);
    assert.notEqual(limit.required, true, 'limit is optional');
    assert.notEqual(list.parameters.find((p: { name: string }) => p.name === 'page').required, true, 'page is optional');
    assert.equal(doc.components.schemas.Product.properties.price.type, 'integer');
  });

  it('every declared security scheme is used, and the commerce endpoint names ucpSession', () => {
    const used = new Set<string>();
    for (const item of Object.values<any>(doc.paths)) {
      for (const operation of Object.values<any>(item)) for (const requirement of operation.security ?? []) Object.keys(requirement).forEach((k) => used.add(k));
    }
    assert.deepEqual([...used].sort(), ['publicRead', 'sessionCart', 'ucpSession']);
    assert.ok(doc.paths['/api/ucp/mcp'].post.security.some((r: object) => 'ucpSession' in r));
  });

  it('passes `redocly lint` with no errors and no warnings', () => {
    const file = path.join(scratch, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const result = spawnSync(path.resolve('node_modules/.bin/redocly'), ['lint', file, '--format=stylish'], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout + result.stderr, /valid/i);
    assert.doesNotMatch(result.stdout + result.stderr, /You have \d+ warning/);
  });
});
