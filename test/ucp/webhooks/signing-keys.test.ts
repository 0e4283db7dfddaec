/**
 * The store's signing keys on both backends: generated once and shared by every instance (two starting at once on
 * a fresh database end with one key), published without private material, rotated with the old key kept
 * published for the grace, or given as SIGNING_KEY (JWK or PEM) with an error that never quotes a bad value.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../../src/db/database.js';
import { migrate } from '../../../src/db/migrate.js';
import { businessProfile } from '../../../src/ucp/profile.js';
import { SigningKeys } from '../../../src/ucp/webhooks/signing-keys.js';
import { backends, dropTestDatabases, type Backend } from '../../helpers/store.js';
import { OfficialSchema, officialSchemaErrors } from '../official-schemas.js';

after(dropTestDatabases);

/** RFC 7638 thumbprint of an EC public JWK, computed here independently of the store's code. */
const thumbprint = (jwk: { x?: string; y?: string }) =>
  createHash('sha256').update(`{"crv":"P-256","kty":"EC","x":"${jwk.x}","y":"${jwk.y}"}`).digest('base64url');

const newP256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

async function freshDatabase(backend: Backend): Promise<{ db: Database; database?: string }> {
  const opened = await backend.open({ migrated: true });
  await migrate(opened.db);
  return opened;
}

const keyRows = async (db: Database) => db.query<{ kid: string; retired_at: Date | null }>('select kid, retired_at from signing_keys order by created_at');

for (const backend of backends) {
  describe(`${backend.name}: the store's signing keys`, () => {
    it('are generated once: reopening reads the same key, and the published JWK is public only and valid for the profile', async () => {
      const { db } = await freshDatabase(backend);
      try {
        const keys = await SigningKeys.open(db, undefined);
        const { kid } = keys.current();
        const again = await SigningKeys.open(db, undefined);
        assert.equal(again.current().kid, kid);
        assert.equal((await keyRows(db)).length, 1);
        const [published, ...others] = keys.published();
        assert.equal(others.length, 0);
        assert.deepEqual(Object.keys(published!).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
        assert.equal(published!.kid, kid);
        assert.equal(kid, thumbprint(published!), 'the kid is the RFC 7638 thumbprint');
        assert.deepEqual({ kty: published!.kty, crv: published!.crv, use: published!.use, alg: published!.alg }, { kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256' });
        assert.ok(!('d' in published!), 'no private member');
        const profile = businessProfile('https://shop.example', ['dev.ucp.shopping.order'], '2026-04-08', { signingKeys: keys.published() });
        assert.deepEqual(officialSchemaErrors(OfficialSchema.businessProfile, profile), []);
      } finally {
        await db.close();
      }
    });

    it('two instances opening a fresh database at once end with one key, the same for both', async () => {
      const first = await freshDatabase(backend);
      // On a server, the second instance has its own pool; PGlite is one process's, shared as a second process would share a server.
      const second = backend.name === 'postgres' ? await backend.open({ database: first.database }) : first;
      try {
        const [a, b] = await Promise.all([SigningKeys.open(first.db, undefined), SigningKeys.open(second.db, undefined)]);
        assert.equal(a.current().kid, b.current().kid);
        assert.deepEqual((await keyRows(first.db)).map((row) => row.kid), [a.current().kid]);
      } finally {
        if (second !== first) await second.db.close();
        await first.db.close();
      }
    });

    it('rotation signs with a new key and keeps the old one published; another instance picks it up on refresh', async () => {
      const { db } = await freshDatabase(backend);
      try {
        const keys = await SigningKeys.open(db, undefined);
        const other = await SigningKeys.open(db, undefined);
        const old = keys.current().kid;
        const { kid, retired } = await keys.rotate(db);
        assert.notEqual(kid, old);
        assert.deepEqual(retired, [old]);
        assert.equal(keys.current().kid, kid);
        assert.deepEqual(keys.published().map((key) => key.kid), [kid, old]);
        assert.equal(other.current().kid, old, 'not yet refreshed');
        await other.refresh(db);
        assert.equal(other.current().kid, kid);
        assert.deepEqual(other.published().map((key) => key.kid).sort(), [kid, old].sort());
        const rows = await keyRows(db);
        assert.equal(rows.filter((row) => row.retired_at === null).length, 1);
      } finally {
        await db.close();
      }
    });

    it('two rotations at once run one after the other: one active key, both old ones retired', async () => {
      const { db } = await freshDatabase(backend);
      try {
        const keys = await SigningKeys.open(db, undefined);
        const [a, b] = await Promise.all([keys.rotate(db), keys.rotate(db)]);
        assert.equal((await keyRows(db)).filter((row) => row.retired_at === null).length, 1);
        assert.equal((await keyRows(db)).length, 3);
        assert.notDeepEqual(a.retired, b.retired);
      } finally {
        await db.close();
      }
    });

    it('a key retired 7 days ago is no longer published; one retired 6 days ago still is', async () => {
      const { db } = await freshDatabase(backend);
      try {
        const keys = await SigningKeys.open(db, undefined);
        const first = keys.current().kid;
        const second = (await keys.rotate(db)).kid;
        const third = (await keys.rotate(db)).kid;
        await db.query(`update signing_keys set retired_at = now() - interval '7 days 1 minute' where kid = $1`, [first]);
        await db.query(`update signing_keys set retired_at = now() - interval '6 days' where kid = $1`, [second]);
        await keys.refresh(db);
        assert.deepEqual(keys.published().map((key) => key.kid), [third, second]);
        // In memory too: the grace runs out without a refresh.
        assert.deepEqual(keys.published(Date.now() + 2 * 24 * 3600 * 1000).map((key) => key.kid), [third]);
      } finally {
        await db.close();
      }
    });

    it('SIGNING_KEY as a JWK signs, is published first with its thumbprint as kid, and nothing is generated', async () => {
      const { db } = await freshDatabase(backend);
      try {
        const privateKey = newP256();
        const jwk = privateKey.export({ format: 'jwk' });
        const keys = await SigningKeys.open(db, JSON.stringify(jwk));
        assert.equal(keys.current().kid, thumbprint(jwk));
        assert.deepEqual(keys.published().map((key) => key.kid), [thumbprint(jwk)]);
        assert.deepEqual({ x: keys.published()[0]!.x, y: keys.published()[0]!.y }, { x: jwk.x, y: jwk.y });
        assert.equal((await keyRows(db)).length, 0);
        await assert.rejects(keys.rotate(db), /SIGNING_KEY/);
      } finally {
        await db.close();
      }
    });

    it("SIGNING_KEY as PKCS#8 PEM (with real or written-out line breaks) is the same key; the database's own key, which no longer signs, is not published", async () => {
      const { db } = await freshDatabase(backend);
      try {
        const generated = (await SigningKeys.open(db, undefined)).current().kid;
        const privateKey = newP256();
        const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
        const fromPem = await SigningKeys.open(db, pem);
        const fromEscaped = await SigningKeys.open(db, pem.trim().replace(/\n/g, '\\n'));
        const expected = thumbprint(privateKey.export({ format: 'jwk' }));
        assert.equal(fromPem.current().kid, expected);
        assert.equal(fromEscaped.current().kid, expected);
        assert.notEqual(generated, expected);
        assert.deepEqual(fromPem.published().map((key) => key.kid), [expected]);
      } finally {
        await db.close();
      }
    });

    it('a bad SIGNING_KEY is an error naming SIGNING_KEY that never quotes the value', async () => {
      const { db } = await freshDatabase(backend);
      try {
        const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
        const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
        const p256 = newP256().export({ format: 'jwk' });
        const bad = [
          'not a key at all: s3cr3t-material',
          JSON.stringify({ ...p256, d: 'AAAA-s3cr3t-material' }),
          JSON.stringify({ kty: 'EC', crv: 'P-256', x: p256.x, y: p256.y }), // public only
          JSON.stringify(p384.export({ format: 'jwk' })),
          rsa.export({ format: 'pem', type: 'pkcs8' }) as string,
          '-----BEGIN PRIVATE KEY-----\ns3cr3t-material\n-----END PRIVATE KEY-----',
        ];
        for (const value of bad) {
          await assert.rejects(SigningKeys.open(db, value), (error: Error) => {
            assert.match(error.message, /SIGNING_KEY/);
            assert.doesNotMatch(error.message, /s3cr3t|BEGIN|"d"\s*:|AAAA/);
            for (const part of value.split(/[\s"{}:,]+/).filter((p) => p.length >= 12)) assert.ok(!error.message.includes(part), 'quotes the value');
            assert.equal(error.cause, undefined);
            return true;
          });
        }
      } finally {
        await db.close();
      }
    });
  });
}
