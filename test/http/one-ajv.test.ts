/**
 * One Ajv per distinct option set in the whole app, three in all: the app's request validation (coercing; Fastify
 * validates on it, src/storefront/body-validation.ts), the cart's JSON bodies (the same without coercion), and the
 * commerce door's (JSON Schema 2020-12, every error). For the UCP schemas, the tool-input validators (one-ajv.ts) and
 * the MCP SDK's JSON Schema validator (the SDK servers' `jsonSchemaValidator`) are built on the same instance.
 * It counts every Ajv its process made, so no other test file may share that process:
 */
// test-runner: own process
import { compilingAjvs, optionSet } from './ajv-census.js';
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore } from '../helpers/store.js';
import { ucpAjv, ucpJsonSchemaValidator, validatorFor } from '../../src/ucp/schemas/one-ajv.js';
import { searchCatalogTool } from '../../src/ucp/tools/catalog-tools.js';
import { SdkServers } from '../../src/ucp/mcp/sdk-servers.js';
import type { ToolCalls } from '../../src/ucp/tools/tool-calls.js';

after(dropTestDatabases);

describe('one Ajv per distinct option set', () => {
  it('a store validating queries, cart JSON and forms, and commerce tool calls compiles on three instances, no two alike', async () => {
    const t = await startTestStore(backends[0]!);
    try {
      const host = { host: 'store.test' };
      const variant = t.store.catalog.snapshot.products[0]!.variants[0]!.id;
      const answers = await Promise.all([
        t.app.inject({ url: '/products.json?limit=2', headers: host }),
        t.app.inject({ method: 'POST', url: '/cart/add.js', headers: host, payload: { items: [{ id: variant, quantity: 1 }] } }),
        t.app.inject({
          method: 'POST',
          url: '/cart/add.js',
          headers: { ...host, 'content-type': 'application/x-www-form-urlencoded' },
          payload: `id=${variant}&quantity=1`,
        }),
        t.app.inject({
          method: 'POST',
          url: '/api/ucp/mcp',
          headers: { ...host, accept: 'application/json' },
          payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_catalog', arguments: { catalog: { query: 'tea' } } } },
        }),
      ]);
      assert.deepEqual(answers.map((answer) => answer.statusCode), [200, 200, 200, 200]);
      const sets = [...compilingAjvs].map(optionSet).sort();
      assert.deepEqual(sets, [
        'Ajv coerceTypes=array useDefaults=true allErrors=false',
        'Ajv coerceTypes=false useDefaults=true allErrors=false',
        'Ajv2020 coerceTypes=false useDefaults=false allErrors=true',
      ]);
      assert.ok(compilingAjvs.has(ucpAjv()));
    } finally {
      await t.close();
    }
  });
});

describe('one Ajv for the UCP schemas', () => {
  it('is made once', () => {
    assert.equal(ucpAjv(), ucpAjv());
  });

  it('the SDK servers validate with the validator built on it', () => {
    const sdk = new SdkServers({ listed: [] } as unknown as ToolCalls, {
      storeName: 'Tea',
      storeDescription: 'Tea is an online store.',
      storeContactEmail: 'help@tea.example',
      checkout: { approvalProof: 'code' },
      payment: { provider: 'manual', captureOn: 'fulfillment' },
    });
    assert.equal(sdk.jsonSchemaValidator, ucpJsonSchemaValidator);
    // What it compiles lands in the one instance (a schema with an $id is registered there).
    ucpJsonSchemaValidator.getValidator({ $id: 'urn:test:one-ajv', type: 'string' });
    assert.ok(ucpAjv().getSchema('urn:test:one-ajv'));
  });

  it('the tool-input validators come from the same instance, compiled once per schema', () => {
    const validate = validatorFor(searchCatalogTool.inputSchema);
    assert.equal(validatorFor(searchCatalogTool.inputSchema), validate);
    assert.equal(validate({ catalog: { query: 'tea' } }), true);
    // Compiled by the one instance: a schema with an $id lands there.
    validatorFor({ $id: 'urn:test:tool-input', type: 'object' });
    assert.ok(ucpAjv().getSchema('urn:test:tool-input'));
  });

  it('validates as the SDK expects: JSON Schema 2020-12 with formats, a message naming the problem', () => {
    const validate = ucpJsonSchemaValidator.getValidator<{ email: string }>({
      type: 'object',
      properties: { email: { type: 'string', format: 'email' }, tags: { type: 'array', prefixItems: [{ type: 'string' }] } },
      required: ['email'],
    });
    assert.deepEqual(validate({ email: 'a@b.example' }), { valid: true, data: { email: 'a@b.example' }, errorMessage: undefined });
    const refused = validate({ email: 'not an address' });
    assert.equal(refused.valid, false);
    assert.match(refused.errorMessage ?? '', /email/);
    assert.equal(validate({ email: 'a@b.example', tags: [1] }).valid, false, 'prefixItems (2020-12) is understood');
  });
});
