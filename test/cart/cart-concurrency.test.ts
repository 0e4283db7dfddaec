/**
 * Concurrent requests on one cart never lose an update and never duplicate a line: within one app (changes
 * to a cart queue up) and across two app instances on one database (the version compare-and-set decides).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { backends, dropTestDatabases, startSecondInstance, startTestStore, type TestStore } from '../helpers/store.js';
import { Shopper, variantId } from './shopper.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`cart: concurrent requests (${backend.name})`, () => {
    let t: TestStore;
    /** A second instance on the same database: its own app, cart service, queue and cache. */
    let other: { app: FastifyInstance; close(): Promise<void> };
    before(async () => {
      t = await startTestStore(backend, { config: { cartMaxLineQuantity: 100 } });
      other = await startSecondInstance(backend, t, { cartMaxLineQuantity: 100 });
    });
    after(async () => {
      await other.close();
      await t.close();
    });

    async function cartLines(token: string) {
      return t.store.db.query<{ line_key: string; quantity: number }>(
        'select l.line_key, l.quantity from cart_lines l join carts c on c.id = l.cart_id where c.token = $1 order by l.line_key',
        [token],
      );
    }

    it('50 parallel adds of quantity 1 to one cart end at exactly 50', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const id = variantId(t, 'SLP-60');
      const answers = await Promise.all(Array.from({ length: 50 }, () => Shopper.holding(t.app, shopper.token!).add([{ id, quantity: 1 }])));
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
      const cart = (await shopper.cart()).body;
      const line = cart.items.filter((i: { sku: string }) => i.sku === 'SLP-60');
      assert.equal(line.length, 1);
      assert.equal(line[0].quantity, 50);
      assert.deepEqual(
        answers.map((a) => a.body.items.find((i: { sku: string }) => i.sku === 'SLP-60').quantity).sort((a, b) => a - b),
        Array.from({ length: 50 }, (_, i) => i + 1),
        'each add answered the cart as it left it',
      );
    });

    it('50 parallel adds to one cart spread over two instances end at exactly 50', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const id = variantId(t, 'SLP-60');
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => Shopper.holding(i % 2 === 0 ? t.app : other.app, shopper.token!).add([{ id, quantity: 1 }])),
      );
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
      const quantities = (await cartLines(shopper.token!)).map((l) => l.quantity).sort((a, b) => a - b);
      assert.deepEqual(quantities, [1, 50]);
      assert.equal((await Shopper.holding(other.app, shopper.token!).cart()).body.item_count, 51);
    });

    it('parallel adds with differing properties on two instances never duplicate a line', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const id = variantId(t, 'SLP-60');
      const engravings = ['Ana', 'Ben', 'Cy', 'Dee'];
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          Shopper.holding(i % 3 === 0 ? other.app : t.app, shopper.token!).add([{ id, quantity: 1, properties: { Engraving: engravings[i % 4]! } }]),
        ),
      );
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
      const cart = (await shopper.cart()).body;
      const engraved = cart.items.filter((i: { sku: string }) => i.sku === 'SLP-60');
      assert.equal(engraved.length, 4);
      assert.deepEqual(engraved.map((i: { properties: { Engraving: string } }) => i.properties.Engraving).sort(), engravings);
      for (const line of engraved) assert.equal(line.quantity, 10);
      assert.equal((await cartLines(shopper.token!)).length, 5);
    });

    it('parallel changes, adds and updates on one cart never duplicate a line and lose no add', async () => {
      const shopper = new Shopper(t.app);
      const first = await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const changedKey = first.body.items[0].key;
      const id = variantId(t, 'SLP-60');
      const requests = Array.from({ length: 45 }, (_, i) => {
        const on = Shopper.holding(i % 2 === 0 ? t.app : other.app, shopper.token!);
        if (i % 3 === 0) return on.change({ id: changedKey, quantity: (i % 9) + 1 });
        if (i % 3 === 1) return on.add([{ id, quantity: 1, properties: { Side: i % 2 === 0 ? 'left' : 'right' } }]);
        return on.update({ updates: { [changedKey]: (i % 9) + 1 } });
      });
      const answers = await Promise.all(requests);
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
      const stored = await cartLines(shopper.token!);
      assert.equal(stored.length, 3, JSON.stringify(stored));
      const cart = (await shopper.cart()).body;
      const sides = cart.items.filter((i: { sku: string }) => i.sku === 'SLP-60');
      assert.equal(
        sides.reduce((sum: number, i: { quantity: number }) => sum + i.quantity, 0),
        15,
      );
      const changed = cart.items.find((i: { key: string }) => i.key === changedKey);
      assert.ok(changed.quantity >= 1 && changed.quantity <= 9);
    });

    it('a refused add racing accepted ones changes nothing: the line ends at exactly the ceiling', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const id = variantId(t, 'SLP-60');
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => Shopper.holding(i % 2 === 0 ? t.app : other.app, shopper.token!).add([{ id, quantity: 4 }])),
      );
      const accepted = answers.filter((a) => a.status === 200).length;
      assert.equal(accepted, 25);
      assert.equal(answers.filter((a) => a.status === 422 && a.body.message === 'Cart Error').length, 5);
      const line = (await shopper.cart()).body.items.find((i: { sku: string }) => i.sku === 'SLP-60');
      assert.equal(line.quantity, 100);
    });

    it('parallel first adds without a cookie each get their own new cart', async () => {
      const id = variantId(t, 'ESP-RIS-10');
      const shoppers = Array.from({ length: 20 }, (_, i) => new Shopper(i % 2 === 0 ? t.app : other.app));
      await Promise.all(shoppers.map((s) => s.add([{ id, quantity: 1 }])));
      const tokens = new Set(shoppers.map((s) => s.token));
      assert.equal(tokens.size, 20);
      for (const shopper of shoppers) assert.equal((await shopper.cart()).body.item_count, 1);
    });

    it('the database itself refuses a second line with the same identity in one cart', async () => {
      const shopper = new Shopper(t.app);
      const answer = await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const [cart] = await t.store.db.query<{ id: number }>('select id from carts where token = $1', [shopper.token]);
      await assert.rejects(
        t.store.db.query(
          `insert into cart_lines (cart_id, line_key, variant_id, properties, quantity, position) values ($1, $2, $3, '{}', 1, 99)`,
          [cart!.id, answer.body.items[0].key, answer.body.items[0].id],
        ),
      );
    });
  });
}
