/**
 * One Ajv for the UCP schemas: the tool-input validators (one-ajv.ts) and the MCP SDK's JSON Schema
 * validator (the SDK servers' `jsonSchemaValidator`) are built on the same instance, not one each.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ucpAjv, ucpJsonSchemaValidator, validatorFor } from '../../src/ucp/schemas/one-ajv.js';
import { searchCatalogTool } from '../../src/ucp/tools/catalog-tools.js';
import { SdkServers } from '../../src/ucp/mcp/sdk-servers.js';
import type { ToolCalls } from '../../src/ucp/tools/tool-calls.js';

describe('one Ajv for the UCP schemas', () => {
  it('is made once', () => {
    assert.equal(ucpAjv(), ucpAjv());
  });

  it('the SDK servers validate with the validator built on it', () => {
    const sdk = new SdkServers({ listed: [] } as unknown as ToolCalls, { storeName: 'Tea', storeDescription: 'Tea is an online store.', storeContactEmail: 'help@tea.example' });
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
