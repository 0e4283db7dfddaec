/**
 * A cart's token never starts another cart once its cart was closed (its order placed) or canceled: whoever was
 * given the old cart (an agent holding its id, the continue_url link) must not see the buyer's next one, which the
 * browser starts under the same cookie.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { Shopper, variantId } from './shopper.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`cart: a closed cart's token is never reused (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('a cart started under a new visitor\'s token keeps it (the signed token starts its first cart)', async () => {
      const shopper = new Shopper(t.app);
      await shopper.cart();
      const shown = shopper.token;
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      assert.equal(shopper.token, shown);
    });

    for (const how of ['closed by its order', 'canceled'] as const) {
      it(`after its cart was ${how}, the next add under the old cookie starts a cart under a new token`, async () => {
        const shopper = new Shopper(t.app);
        await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
        const old = shopper.token!;
        if (how === 'canceled') await t.store.carts.cancel(t.store.db, old);
        else await t.store.db.transaction((tx) => t.store.carts.close(tx, old));
        assert.equal(await t.store.carts.findCart(t.store.db, old), undefined);

        const answer = await shopper.add([{ id: variantId(t, 'ESP-DEC-10'), quantity: 2 }]);
        assert.equal(answer.status, 200);
        assert.notEqual(shopper.token, old, 'a new token, set in the cookie');
        assert.equal(answer.body.item_count, 2);
        // The old token (what the agent or the link holds) still names nothing.
        assert.equal(await t.store.carts.findCart(t.store.db, old), undefined);
        const held = Shopper.holding(t.app, old);
        const read = await held.cart();
        assert.equal(read.body.item_count, 0);
        assert.notEqual(read.body.token, old);
      });
    }
  });
}
