/**
 * The business profiles publish the store's signing keys (`keys`, a JWK Set, in the 2026-08-25 profile; `signing_keys`
 * in the 2026-04-08 leaf): public halves only, valid against each release's profile schema, and a rotation shows at
 * once with the retired key still listed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../../helpers/store.js';
import { officialSchemaErrorsFor, OfficialSchemas, type UcpRelease } from '../official-schemas.js';

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
      const profiles: [string, UcpRelease, 'keys' | 'signing_keys'][] = [
        ['/.well-known/ucp', '2026-08-25', 'keys'],
        ['/.well-known/ucp/2026-08-25', '2026-08-25', 'keys'],
        ['/.well-known/ucp/2026-04-08', '2026-04-08', 'signing_keys'],
      ];
      for (const [path, release, member] of profiles) {
        const { status, body, raw } = await getJson(test.app, path);
        assert.equal(status, 200);
        assert.deepEqual(officialSchemaErrorsFor(release, OfficialSchemas[release].businessProfile, body), [], path);
        const published = (body as Record<string, { kid: string }[]>)[member]!;
        assert.deepEqual(published, test.store.signingKeys.published(), path);
        assert.equal(published[0]!.kid, kid, path);
        assert.deepEqual(Object.keys(published[0]!).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
        assert.doesNotMatch(raw, /"d"\s*:/, `${path} carries no private member`);
      }
    });

    it('after a rotation the profile lists the new key first and keeps the retired one', async () => {
      const old = test.store.signingKeys.current().kid;
      const { kid } = await test.store.signingKeys.rotate(test.store.db);
      const { body } = await getJson(test.app, '/.well-known/ucp');
      assert.deepEqual(body.keys.map((key: { kid: string }) => key.kid), [kid, old]);
      assert.deepEqual(officialSchemaErrorsFor('2026-08-25', OfficialSchemas['2026-08-25'].businessProfile, body), []);
      const { body: leaf } = await getJson(test.app, '/.well-known/ucp/2026-04-08');
      assert.deepEqual(leaf.signing_keys.map((key: { kid: string }) => key.kid), [kid, old]);
    });
  });
}
