/**
 * The token handed out is the token the cart keeps: GET /cart.js gives a new visitor a signed token (no row is
 * written), and the first add keeps it. A client cannot choose its own token: one the store did not sign
 * starts a cart under a new token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { countRows, Shopper, variantId } from './shopper.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`cart tokens (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('the cookie GET /cart.js sets is the cart the first add creates', async () => {
      const shopper = new Shopper(t.app);
      const carts = await countRows(t, 'carts');
      const read = await shopper.cart();
      const handedOut = shopper.token!;
      assert.equal(read.body.token, handedOut);
      assert.equal(await countRows(t, 'carts'), carts, 'reading writes no row');
      const added = await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      assert.equal(added.status, 200);
      assert.equal(added.body.token, handedOut);
      assert.equal(shopper.token, handedOut, 'the browser keeps the cookie it was given');
      assert.equal((await shopper.cart()).body.item_count, 1);
    });

    it('two first adds at once with the handed-out token end in one cart holding both', async () => {
      const shopper = new Shopper(t.app);
      await shopper.cart();
      const token = shopper.token!;
      const id = variantId(t, 'ESP-RIS-10');
      const answers = await Promise.all([Shopper.holding(t.app, token).add([{ id, quantity: 1 }]), Shopper.holding(t.app, token).add([{ id, quantity: 2 }])]);
      assert.deepEqual(answers.map((a) => [a.status, a.body.token]), [[200, token], [200, token]]);
      assert.equal((await Shopper.holding(t.app, token).cart()).body.item_count, 3);
    });

    it('a token the store did not hand out, even well-formed, is not adopted', async () => {
      const forged = 'ForgedTokenForgedTokenForgedToke';
      const added = await Shopper.holding(t.app, forged).add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      assert.equal(added.status, 200);
      assert.notEqual(added.body.token, forged);
      assert.deepEqual(await t.store.db.query('select 1 from carts where token = $1', [forged]), []);
    });
  });
}
