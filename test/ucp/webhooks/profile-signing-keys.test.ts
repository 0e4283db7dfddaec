/**
 * The business profile publishes the store's signing keys (`signing_keys`, the 2026-04-08 profile's name): public
 * halves only, valid against the official profile schema, in the profile and its version leaf, and a rotation
 * shows at once with the retired key still listed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../../helpers/store.js';
import { OfficialSchema, officialSchemaErrors } from '../official-schemas.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`${backend.name}: signing keys in /.well-known/ucp`, () => {
    let test: TestStore;
    before(async () => {
      test = await startTestStore(backend, { config: { baseUrl: 'https://shop.example' } });
    });
    after(() => test.close());

    it('the profile and its version leaf list the key the store signs with, public only, valid against the profile schema', async () => {
      const { kid } = test.store.signingKeys.current();
      for (const path of ['/.well-known/ucp', '/.well-known/ucp/2026-04-08']) {
        const { status, body, raw } = await getJson(test.app, path);
        assert.equal(status, 200);
        assert.deepEqual(officialSchemaErrors(OfficialSchema.businessProfile, body), [], path);
        assert.deepEqual(body.signing_keys, test.store.signingKeys.published(), path);
        assert.equal(body.signing_keys[0].kid, kid, path);
        assert.deepEqual(Object.keys(body.signing_keys[0]).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
        assert.doesNotMatch(raw, /"d"\s*:/, `${path} carries no private member`);
      }
    });

    it('after a rotation the profile lists the new key first and keeps the retired one', async () => {
      const old = test.store.signingKeys.current().kid;
      const { kid } = await test.store.signingKeys.rotate(test.store.db);
      const { body } = await getJson(test.app, '/.well-known/ucp');
      assert.deepEqual(body.signing_keys.map((key: { kid: string }) => key.kid), [kid, old]);
      assert.deepEqual(officialSchemaErrors(OfficialSchema.businessProfile, body), []);
    });
  });
}
