/**
 * `storefront buyers` lists the buyers holding passkeys; `storefront buyers revoke EMAIL [--passkey ID]` removes
 * them (one, or all of a buyer's), through the function the binary runs, on both backends. Revoking what is not
 * there is one line on stderr, exit 1, and nothing removed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertPasskey } from '../../src/checkout/buyer-proof-store.js';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/store.js';
import { cliScratch, cliTargets, commandSession } from '../helpers/cli.js';

const { scratch, databases } = cliScratch('sf-buyers');

const passkey = (id: string, email: string, deviceType = 'multiDevice') => ({
  id,
  email,
  publicKey: new Uint8Array([1, 2, 3]),
  counter: 0,
  transports: ['internal'],
  deviceType,
  backedUp: deviceType === 'multiDevice',
  createdAt: new Date('2026-11-25T10:00:00Z'),
});

for (const target of cliTargets(scratch, 'sf_buyers', databases)) {
  describe(`storefront buyers (${target.name})`, () => {
    let env: Record<string, string>;
    const session = commandSession(() => env);
    after(() => session.close());
    const cli = (...args: string[]) => session.run(...args);

    before(async () => {
      env = await target.env();
      const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
      try {
        await insertPasskey(store.db, passkey('cred-ann-phone', 'ann@example.com'));
        await insertPasskey(store.db, passkey('cred-ann-laptop', 'ann@example.com', 'singleDevice'));
        await insertPasskey(store.db, passkey('cred-bo', 'bo@example.com'));
      } finally {
        await store.close();
      }
    });

    it('lists each buyer with their passkeys', async () => {
      const listed = await cli('buyers');
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /^ann@example\.com: 2 passkeys$/m);
      assert.match(listed.stdout, /^ {2}cred-ann-phone {2}synced, backed up {2}created 2026-11-25T10:00:00\.000Z {2}last used never$/m);
      assert.match(listed.stdout, /^ {2}cred-ann-laptop {2}this device only/m);
      assert.match(listed.stdout, /^bo@example\.com: 1 passkey$/m);
    });

    it('revokes one passkey, then the rest of a buyer (the email in any case); what is not there changes nothing', async () => {
      const one = await cli('buyers', 'revoke', 'ANN@example.com', '--passkey', 'cred-ann-laptop');
      assert.equal(one.code, 0, one.stderr);
      assert.equal(one.stdout.trim(), 'ann@example.com: 1 passkey removed');
      const missing = await cli('buyers', 'revoke', 'ann@example.com', '--passkey', 'cred-ann-laptop');
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /ann@example\.com holds no passkey cred-ann-laptop; nothing was changed/);
      assert.match((await cli('buyers')).stdout, /^ann@example\.com: 1 passkey$/m);
      const all = await cli('buyers', 'revoke', 'ann@example.com');
      assert.equal(all.code, 0, all.stderr);
      assert.equal(all.stdout.trim(), 'ann@example.com: 1 passkey removed');
      const listed = (await cli('buyers')).stdout;
      assert.doesNotMatch(listed, /ann@example\.com/);
      assert.match(listed, /^bo@example\.com: 1 passkey$/m);
    });

    it('a wrong use of the command says how to use it', async () => {
      for (const args of [['buyers', 'remove', 'x@example.com'], ['buyers', 'revoke'], ['buyers', 'revoke', 'not-an-email'], ['buyers', 'revoke', 'x@example.com', '--device', 'y']]) {
        const result = await cli(...args);
        assert.equal(result.code, 1, args.join(' '));
        assert.match(result.stderr, /usage: storefront buyers|unknown option --device/, args.join(' '));
      }
    });
  });
}
