/**
 * A missing cart is not a new cart: get_cart, update_cart and cancel_cart on an unknown or canceled cart answer
 * the UCP not-found business error, never a new cart. The storefront keeps Shopify's rule for a stale cookie:
 * a fresh empty cart. And cancel_cart takes its turn with the cart's other changes, so it never races an update.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CartNotFound } from '../../src/cart/cart-service.js';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { Shopper, variantId } from '../cart/shopper.js';
import { callTool, startListeningStore, type ListeningStore } from './mcp-harness.js';

after(dropTestDatabases);

const UNKNOWN = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

for (const backend of backends) {
  describe(`missing carts (${backend.name})`, () => {
    let t: ListeningStore;
    before(async () => {
      t = await startListeningStore(backend);
    });
    after(() => t.close());

    const item = () => String(variantId(t, 'ESP-RIS-10'));
    const call = async (name: string, args: unknown) => {
      const answer = await callTool(t.mcpUrl, name, args);
      assert.equal(answer.status, 200, answer.text);
      return answer.body.result as { isError: boolean; structuredContent: any };
    };
    const cartCount = async () => (await t.store.db.query<{ n: number }>('select count(*)::int as n from carts'))[0]!.n;

    async function canceledCart(): Promise<string> {
      const created = await call('create_cart', { cart: { line_items: [{ item: { id: item() }, quantity: 1 }] } });
      const id = created.structuredContent.id as string;
      assert.equal((await call('cancel_cart', { meta: { 'idempotency-key': randomUUID() }, id })).isError, false);
      return id;
    }

    for (const [what, cartId] of [
      ['an unknown cart', async () => UNKNOWN],
      ['a canceled cart', canceledCart],
    ] as const) {
      it(`get_cart, update_cart and cancel_cart on ${what} answer not_found and create nothing`, async () => {
        const id = await cartId();
        const before = await cartCount();
        for (const [tool, args] of [
          ['get_cart', { id }],
          ['update_cart', { id, cart: { line_items: [{ item: { id: item() }, quantity: 2 }] } }],
          ['update_cart', { id, cart: { line_items: [] } }],
          ['cancel_cart', { meta: { 'idempotency-key': randomUUID() }, id }],
        ] as const) {
          const result = await call(tool, args);
          assert.equal(result.isError, true, `${tool}: ${JSON.stringify(result.structuredContent)}`);
          assert.equal(result.structuredContent.ucp.status, 'error');
          assert.deepEqual(
            [result.structuredContent.messages[0].code, result.structuredContent.messages[0].severity],
            ['not_found', 'unrecoverable'],
            tool,
          );
          assert.equal(result.structuredContent.id, undefined, `${tool} answered a cart`);
        }
        assert.equal(await cartCount(), before);
      });
    }

    it('the cart service refuses to replace the lines of a canceled cart when told it must exist (it used to start a new one)', async () => {
      const id = await canceledCart();
      const { carts, db } = t.store;
      await assert.rejects(carts.replaceLines(db, id, [{ variantId: Number(item()), quantity: 1 }], { mustExist: true }), CartNotFound);
      await assert.rejects(carts.cancel(db, id), CartNotFound);
    });

    it('the storefront keeps Shopify’s rule: a stale cookie gets a fresh empty cart, and the first add starts a cart', async () => {
      const shopper = Shopper.holding(t.app, UNKNOWN);
      const read = await shopper.cart();
      assert.equal(read.status, 200);
      assert.equal(read.body.item_count, 0);
      assert.notEqual(read.body.token, UNKNOWN);
      const added = await Shopper.holding(t.app, UNKNOWN).add([{ id: Number(item()), quantity: 1 }]);
      assert.equal(added.status, 200);
      assert.equal(added.body.item_count, 1);
      assert.notEqual(added.body.token, UNKNOWN, 'a token the store did not hand out is never adopted');
    });

    it('cancel_cart racing update_cart: the update answers the same cart or not_found, never another cart, and a canceled cart stays gone', async () => {
      for (let round = 0; round < 10; round++) {
        const created = await call('create_cart', { cart: { line_items: [{ item: { id: item() }, quantity: 1 }] } });
        const id = created.structuredContent.id as string;
        const [updated, canceled] = await Promise.all([
          call('update_cart', { id, cart: { line_items: [{ item: { id: item() }, quantity: 3 }] } }),
          call('cancel_cart', { meta: { 'idempotency-key': randomUUID() }, id }),
        ]);
        assert.equal(canceled.isError, false);
        if (updated.isError) assert.equal(updated.structuredContent.messages[0].code, 'not_found');
        else assert.equal(updated.structuredContent.id, id);
        const after = await call('get_cart', { id });
        assert.equal(after.isError, true, 'the cart was canceled: nothing may bring it back');
      }
    });
  });
}
