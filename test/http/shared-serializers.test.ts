/** Response serializers compiled once per process: shared by equal schemas only, never across different ones. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { appSchemaController } from '../../src/storefront/body-validation.js';

/** An app on the store's schema controller whose one route answers `answer` through `response` (200). */
async function appAnswering(response: object, answer: unknown, shared?: object) {
  const app = Fastify({ schemaController: appSchemaController });
  if (shared) app.addSchema(shared);
  app.get('/', { schema: { response: { 200: response } } }, async () => answer);
  await app.ready();
  const body = (await app.inject({ method: 'GET', url: '/' })).json();
  await app.close();
  return body;
}

describe('shared response serializers', () => {
  const row = { a: 1, b: 'two', secret: 'not in any schema' };

  it('serialize as each app’s own schema says: the same schema twice, then a different one', async () => {
    const ab = { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'string' } } };
    assert.deepEqual(await appAnswering(ab, row), { a: 1, b: 'two' });
    assert.deepEqual(await appAnswering(structuredClone(ab), row), { a: 1, b: 'two' }, 'an equal schema in a new app');
    assert.deepEqual(await appAnswering({ type: 'object', properties: { a: { type: 'integer' } } }, row), { a: 1 }, 'a different schema');
  });

  it('a schema naming a shared one serializes with that app’s shared schema, not an earlier app’s of the same $id', async () => {
    const named = { $ref: 'Row#' };
    const onlyA = { $id: 'Row', type: 'object', properties: { a: { type: 'integer' } } };
    const onlyB = { $id: 'Row', type: 'object', properties: { b: { type: 'string' } } };
    assert.deepEqual(await appAnswering(named, row, onlyA), { a: 1 });
    assert.deepEqual(await appAnswering(named, row, onlyB), { b: 'two' });
  });
});
