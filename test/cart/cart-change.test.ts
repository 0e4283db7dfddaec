/** POST /cart/change.js, /cart/update.js and /cart/clear.js (spec changeCartItem; Shopify's update and clear). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { assertCartError, cartSchemaErrors, countRows, Shopper, variantId } from './shopper.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`cart: changing lines (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    /** A shopper whose cart holds ESP-RIS-10 × 2 (line 2) and then NRG-CITRUS-12 × 1 (line 1, newest first). */
    async function shopperWithTwoLines() {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 2 }]);
      const answer = await shopper.add([{ id: variantId(t, 'NRG-CITRUS-12'), quantity: 1 }]);
      const keys = Object.fromEntries(answer.body.items.map((i: { sku: string; key: string }) => [i.sku, i.key])) as Record<string, string>;
      return { shopper, keys };
    }

    const quantities = async (shopper: Shopper) =>
      Object.fromEntries((await shopper.cart()).body.items.map((i: { sku: string; quantity: number }) => [i.sku, i.quantity]));

    it('change.js with a line key sets that line to the quantity and answers the updated Cart', async () => {
      const { shopper, keys } = await shopperWithTwoLines();
      const answer = await shopper.change({ id: keys['ESP-RIS-10'], quantity: 5 });
      assert.equal(answer.status, 200, answer.raw);
      assert.deepEqual(cartSchemaErrors(answer.body), []);
      assert.equal(answer.body.item_count, 6);
      assert.equal(answer.body.total_price, 5 * 650 + 1999);
      assert.deepEqual(await quantities(shopper), { 'ESP-RIS-10': 5, 'NRG-CITRUS-12': 1 });
    });

    it('change.js with quantity 0 removes the line', async () => {
      const { shopper, keys } = await shopperWithTwoLines();
      const answer = await shopper.change({ id: keys['NRG-CITRUS-12'], quantity: 0 });
      assert.equal(answer.status, 200);
      assert.deepEqual(
        answer.body.items.map((i: { sku: string }) => i.sku),
        ['ESP-RIS-10'],
      );
      assert.deepEqual(await quantities(shopper), { 'ESP-RIS-10': 2 });
    });

    it('change.js with line (1-based, in Cart.items order) changes that line', async () => {
      const { shopper } = await shopperWithTwoLines();
      assert.equal((await shopper.change({ line: 2, quantity: 4 })).status, 200);
      assert.equal((await shopper.change({ line: 1, quantity: 3 })).status, 200);
      assert.deepEqual(await quantities(shopper), { 'ESP-RIS-10': 4, 'NRG-CITRUS-12': 3 });
    });

    it('change.js with a variant id changes the first line of that variant', async () => {
      const { shopper } = await shopperWithTwoLines();
      assert.equal((await shopper.change({ id: variantId(t, 'ESP-RIS-10'), quantity: 7 })).status, 200);
      assert.deepEqual(await quantities(shopper), { 'ESP-RIS-10': 7, 'NRG-CITRUS-12': 1 });
    });

    it('change.js with an unknown key, a line past the end or a variant not in the cart answers 422 Cart Error and changes nothing', async () => {
      const { shopper, keys } = await shopperWithTwoLines();
      const unknownKey = keys['ESP-RIS-10']!.replace(/:.*/, ':00000000000000000000000000000000');
      assertCartError(await shopper.change({ id: unknownKey, quantity: 1 }), /no line with the key/);
      assertCartError(await shopper.change({ id: 'not-a-key', quantity: 1 }), /no line with the key/);
      assertCartError(await shopper.change({ line: 3, quantity: 1 }), /no line 3; it has 2 lines/);
      assertCartError(await shopper.change({ id: variantId(t, 'ESP-LUN-10'), quantity: 1 }), /no line of variant/);
      assert.deepEqual(await quantities(shopper), { 'ESP-RIS-10': 2, 'NRG-CITRUS-12': 1 });
    });

    it('change.js needs id or line, and quantity as an integer of at least 0: 422 naming the field', async () => {
      const { shopper, keys } = await shopperWithTwoLines();
      const cases: [unknown, RegExp][] = [
        [{ quantity: 1 }, /\bid\b.*\bline\b/],
        [{ id: keys['ESP-RIS-10'] }, /quantity/],
        [{ id: keys['ESP-RIS-10'], quantity: -1 }, /quantity/],
        [{ id: keys['ESP-RIS-10'], quantity: 'lots' }, /quantity/],
        [{ line: 0, quantity: 1 }, /line/],
        [{ id: '', quantity: 1 }, /\bid\b/],
      ];
      for (const [body, field] of cases) {
        const answer = await shopper.change(body);
        assert.equal(answer.status, 422, `${JSON.stringify(body)}: ${answer.raw}`);
        assert.equal(answer.body.message, 'Invalid parameter error');
        assert.match(answer.body.description, field);
      }
      assert.deepEqual(await quantities(shopper), { 'ESP-RIS-10': 2, 'NRG-CITRUS-12': 1 });
    });

    it('change.js applies the ceiling when raising a line and says how many can still be added; nothing changes', async () => {
      const { shopper, keys } = await shopperWithTwoLines();
      assertCartError(await shopper.change({ id: keys['ESP-RIS-10'], quantity: 11 }), /at most 10 per line, so only 8 more can be added/);
      assert.deepEqual(await quantities(shopper), { 'ESP-RIS-10': 2, 'NRG-CITRUS-12': 1 });
      assert.equal((await shopper.change({ id: keys['ESP-RIS-10'], quantity: 10 })).status, 200);
    });

    it('change.js on a session without a cart answers 422 Cart Error and writes no cart', async () => {
      const before = await countRows(t, 'carts');
      const shopper = new Shopper(t.app);
      assertCartError(await shopper.change({ line: 1, quantity: 1 }), /no line 1/);
      assert.equal(await countRows(t, 'carts'), before);
    });

    it('update.js sets several quantities by line key and by variant id; 0 removes; a variant not in the cart is added', async () => {
      const { shopper, keys } = await shopperWithTwoLines();
      const answer = await shopper.update({
        updates: { [keys['ESP-RIS-10']!]: 4, [String(variantId(t, 'NRG-CITRUS-12'))]: 0, [String(variantId(t, 'ESP-LUN-10'))]: 2 },
      });
      assert.equal(answer.status, 200, answer.raw);
      assert.deepEqual(cartSchemaErrors(answer.body), []);
      assert.deepEqual(await quantities(shopper), { 'ESP-RIS-10': 4, 'ESP-LUN-10': 2 });
    });

    it('update.js accepts one quantity per line, in Cart.items order; a list of another length is refused', async () => {
      const { shopper } = await shopperWithTwoLines();
      assert.equal((await shopper.update({ updates: [3, 4] })).status, 200);
      assert.deepEqual(await quantities(shopper), { 'NRG-CITRUS-12': 3, 'ESP-RIS-10': 4 });
      assertCartError(await shopper.update({ updates: [1] }), /1 quantities but the cart has 2 lines/);
    });

    it('update.js that breaches a limit changes nothing, not even its valid updates', async () => {
      const { shopper, keys } = await shopperWithTwoLines();
      const answer = await shopper.update({
        updates: { [keys['NRG-CITRUS-12']!]: 2, [keys['ESP-RIS-10']!]: 11 },
        note: 'not kept',
      });
      assertCartError(answer, /only 8 more can be added/);
      const cart = (await shopper.cart()).body;
      assert.equal(cart.note, null);
      assert.deepEqual(await quantities(shopper), { 'ESP-RIS-10': 2, 'NRG-CITRUS-12': 1 });
      assertCartError(await shopper.update({ updates: { [String(variantId(t, 'HYD-WATERMELON-30'))]: 1 } }), /sold out/);
      assertCartError(await shopper.update({ updates: { '99999999999': 1 } }), /Cannot find variant/);
    });

    it('update.js sets the note and attributes; an attribute set to "" is removed and __private ones are never shown', async () => {
      const { shopper } = await shopperWithTwoLines();
      let answer = await shopper.update({ note: 'Ring twice', attributes: { 'Gift wrap': 'Yes', __internal: 'x' } });
      assert.equal(answer.status, 200);
      assert.equal(answer.body.note, 'Ring twice');
      assert.deepEqual(answer.body.attributes, { 'Gift wrap': 'Yes' });
      answer = await shopper.update({ attributes: { 'Gift wrap': '' } });
      assert.deepEqual(answer.body.attributes, {});
      assert.equal((await shopper.cart()).body.note, 'Ring twice');
    });

    it('update.js with invalid updates answers 422 naming updates', async () => {
      const { shopper } = await shopperWithTwoLines();
      for (const updates of [{ abc: -1 }, { abc: 'x' }, 'all', [1.5, 1]]) {
        const answer = await shopper.update({ updates });
        assert.equal(answer.status, 422, `${JSON.stringify(updates)}: ${answer.raw}`);
        assert.match(answer.body.description, /updates/);
      }
    });

    it('clear.js removes every line, keeps the note and attributes, and answers the empty Cart', async () => {
      const { shopper } = await shopperWithTwoLines();
      await shopper.update({ note: 'keep me', attributes: { a: 'b' } });
      const answer = await shopper.clear();
      assert.equal(answer.status, 200);
      assert.equal(answer.body.item_count, 0);
      assert.deepEqual(answer.body.items, []);
      assert.equal(answer.body.total_price, 0);
      const cart = (await shopper.cart()).body;
      assert.equal(cart.item_count, 0);
      assert.equal(cart.note, 'keep me');
      assert.deepEqual(cart.attributes, { a: 'b' });
      assert.equal(cart.token, answer.body.token);
    });

    it('clear.js on a session without a cart answers an empty Cart and writes no cart', async () => {
      const before = await countRows(t, 'carts');
      const answer = await new Shopper(t.app).clear();
      assert.equal(answer.status, 200);
      assert.equal(answer.body.item_count, 0);
      assert.equal(await countRows(t, 'carts'), before);
    });
  });
}
