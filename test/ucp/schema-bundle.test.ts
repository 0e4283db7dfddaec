/**
 * The service carries its own bundle of the official UCP schemas (tools/list needs self-contained
 * schemas; the service does not read vendor/ at run time). It must be exactly what bundling the
 * official files gives, and the bundled request views must accept and refuse what UCP says.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { bundleUcpSchemas } from '../../src/ucp/schemas/bundle-schemas.js';
import { bundledRef, selfContained, validatorFor } from '../../src/ucp/schemas/schema-bundle.js';
import { ucpSchemaBundle } from '../../src/ucp/schemas/ucp-schemas.generated.js';
import { readOfficial } from './official-schemas.js';

describe('bundled UCP schemas', () => {
  it('match a fresh bundle of the official 2026-04-08 schemas (regenerate with src/ucp/schemas/bundle-schemas.ts)', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(ucpSchemaBundle)), bundleUcpSchemas(readOfficial));
  });

  it('resolve the create view of a cart: line items need only item.id and quantity', () => {
    const validate = validatorFor(bundledRef('cart_create_request'));
    assert.equal(validate({ line_items: [{ item: { id: '42100000001' }, quantity: 2 }] }), true);
    assert.equal(validate({ line_items: [{ item: {}, quantity: 2 }] }), false);
    assert.equal(validate({ line_items: [{ item: { id: 'x' }, quantity: 0 }] }), false);
    assert.equal(validate({}), false);
  });

  it('let the update view carry line ids, and take the cart id beside the cart (MCP)', () => {
    const validate = validatorFor(bundledRef('cart_update_request'));
    assert.equal(validate({ line_items: [{ id: 'line-1', item: { id: 'x' }, quantity: 1 }] }), true);
    assert.equal(validate({ line_items: [] }), true);
  });

  it('stand alone for a draft-07 client (the MCP SDK client validates with plain Ajv)', () => {
    const ajv = new Ajv({ strict: false, validateSchema: false, allErrors: true });
    for (const name of ['search_response', 'lookup_response', 'get_product_response', 'cart', 'error_response']) {
      const schema = selfContained({ type: 'object', oneOf: [bundledRef(name), bundledRef('error_response')] });
      assert.equal(JSON.stringify(schema).includes('"$id"'), false);
      assert.equal(JSON.stringify(schema).includes('"$schema"'), false);
      assert.doesNotThrow(() => ajv.compile(schema), name);
    }
  });
});
