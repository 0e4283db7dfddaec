/**
 * CartService.replaceLines: the cart's lines become exactly the items given, as one change through the cart's
 * queue and version check. Lines that stay keep their keys, a refused replacement stores nothing, and a line
 * another door (/cart/add.js, here or on another instance) adds before the replacement does not survive it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { CartError, type CartView, type ReplacementItem } from '../../src/cart/cart-service.js';
import type { Store } from '../../src/store.js';
import { cartJson } from '../../src/storefront/cart-json.js';
import type { CartJson } from '../../src/storefront/cart-schemas.js';
import { backends, dropTestDatabases, startSecondInstance, startTestStore, type TestStore } from '../helpers/store.js';
import { Shopper, storedVariantId, variantId } from './shopper.js';

after(dropTestDatabases);

/** A line as the cart shows it: variant, properties and quantity (the identity a replacement sets). */
type Shown = [variantId: number, properties: Record<string, string>, quantity: number];

type ShownView = Omit<CartView, 'cart'> & { cart: CartJson };

/** The store's cart service on its database, answering the cart as /cart.js shows it. */
function replacer(store: Store) {
  return {
    replaceLines: async (token: string | undefined, items: ReplacementItem[]): Promise<ShownView> => {
      const view = await store.carts.replaceLines(store.db, token, items);
      return { ...view, cart: cartJson(view.cart, store.config.baseUrl, store.config.cartMaxLineQuantity) };
    },
  };
}
type Replacer = ReturnType<typeof replacer>;

function shown(view: ShownView): Shown[] {
  return view.cart.items.map((item) => [item.id, { ...(item.properties ?? {}) }, item.quantity] as Shown);
}

for (const backend of backends) {
  describe(`cart: replaceLines (${backend.name})`, () => {
    let t: TestStore;
    let service: Replacer;
    /** A second instance on the same database: its own app, cart service, queue and cache. */
    let other: { app: FastifyInstance; service: Replacer; close(): Promise<void> };

    before(async () => {
      t = await startTestStore(backend);
      service = replacer(t.store);
      const second = await startSecondInstance(backend, t);
      other = { app: second.app, service: replacer(second.store), close: () => second.close() };
    });
    after(async () => {
      await other.close();
      await t.close();
    });

    /** The stored lines of a cart, straight from the database. */
    async function storedLines(token: string) {
      const rows = await t.store.db.query<{ line_key: string; variant_id: number; quantity: number }>(
        `select l.line_key, l.variant_id, l.quantity from cart_lines l join carts c on c.id = l.cart_id
          where c.token = $1 order by l.line_key`,
        [token],
      );
      return rows.map((row) => [row.line_key, Number(row.variant_id), row.quantity]);
    }

    async function storedVersion(token: string): Promise<number> {
      const [row] = await t.store.db.query<{ version: number }>('select version from carts where token = $1', [token]);
      return row!.version;
    }

    const planOf = (sku: string) => {
      const product = t.store.catalog.snapshot.products.find((p) => p.variants.some((v) => v.sku === sku))!;
      return product.sellingPlanGroups[0]!.plans[0]!.id;
    };

    it('sets exactly the given lines: staying lines keep their keys, new ones are added, the rest removed, an empty list empties the cart', async () => {
      const [a, b, c, d] = [variantId(t, 'ESP-RIS-10'), variantId(t, 'SLP-120'), variantId(t, 'NRG-CITRUS-12'), variantId(t, 'HYD-LEMONLIME-10')];
      const shopper = new Shopper(t.app);
      await shopper.add([
        { id: a, quantity: 1 },
        { id: b, quantity: 2, properties: { Engraving: 'Ana' } },
        { id: d, quantity: 1 },
      ]);
      await shopper.update({ note: 'leave at the door', attributes: { gift: 'yes' } });
      const token = shopper.token!;
      const before = (await shopper.cart()).body;
      const keyOf = (id: number) => before.items.find((i: { id: number }) => i.id === id).key as string;

      const replaced = await service.replaceLines(token, [
        { variantId: a, quantity: 3 },
        { variantId: b, quantity: 1, key: keyOf(b) },
        { variantId: c, quantity: 1 },
        { variantId: c, quantity: 1 },
        { variantId: d, quantity: 2, sellingPlanId: planOf('HYD-LEMONLIME-10') },
      ]);
      assert.equal(replaced.token, token);
      assert.equal(replaced.changed, true);
      const items = replaced.cart.items;
      assert.equal(items.length, 4);
      assert.deepEqual(
        items.map((i) => [i.key, i.quantity]).filter(([key]) => key === keyOf(a) || key === keyOf(b)).sort(),
        [[keyOf(a), 3], [keyOf(b), 1]].sort(),
        'lines that stay keep their keys',
      );
      assert.deepEqual(items.find((i) => i.key === keyOf(b))!.properties, { Engraving: 'Ana' }, 'a line named by key keeps its properties');
      assert.equal(items.find((i) => i.id === c)!.quantity, 2, 'items with one identity add up');
      const subscribed = items.find((i) => i.id === d)!;
      assert.notEqual(subscribed.key, keyOf(d), 'a selling plan makes another line: the plain one is removed');
      assert.equal(subscribed.selling_plan_allocation?.selling_plan.id, planOf('HYD-LEMONLIME-10'));
      assert.equal(replaced.cart.note, 'leave at the door');
      assert.deepEqual(replaced.cart.attributes, { gift: 'yes' });
      assert.deepEqual(
        await storedLines(token),
        items.map((i) => [i.key, i.id, i.quantity]).sort(),
        'the database holds exactly the lines answered',
      );
      assert.deepEqual((await shopper.cart()).body.items.map((i: { key: string }) => i.key), items.map((i) => i.key));

      // The same identity given again by its properties (no key) is the same line.
      const again = await service.replaceLines(token, [{ variantId: b, quantity: 4, properties: { Engraving: 'Ana' } }]);
      assert.deepEqual(again.cart.items.map((i) => [i.key, i.quantity]), [[keyOf(b), 4]]);

      const emptied = await service.replaceLines(token, []);
      assert.deepEqual(emptied.cart.items, []);
      assert.equal(emptied.cart.note, 'leave at the door');
      assert.deepEqual(await storedLines(token), []);
    });

    it('on a token naming no cart it starts one with the items; an empty replacement of none stores nothing', async () => {
      const a = variantId(t, 'ESP-CLA-10');
      const created = await service.replaceLines(undefined, [{ variantId: a, quantity: 2 }]);
      assert.equal(created.changed, true);
      assert.deepEqual(shown(created), [[a, {}, 2]]);
      assert.deepEqual((await storedLines(created.token)).map(([, id, quantity]) => [id, quantity]), [[a, 2]]);
      const nothing = await service.replaceLines(undefined, []);
      assert.equal(nothing.changed, false);
      assert.deepEqual(await storedLines(nothing.token), []);
    });

    it('a refused replacement (one sold-out item among good ones, or any other refusal) changes nothing', async () => {
      const [a, b, soldOut, noPlans] = [
        variantId(t, 'ESP-LUN-10'),
        variantId(t, 'SLP-120'),
        variantId(t, 'HYD-WATERMELON-30'),
        variantId(t, 'NRG-CHERRYCOLA-12'),
      ];
      const unpublished = await storedVariantId(t, 'CBR-10');
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: a, quantity: 1 }, { id: b, quantity: 1 }]);
      const token = shopper.token!;
      const before = (await shopper.cart()).body;
      const linesBefore = await storedLines(token);
      const versionBefore = await storedVersion(token);
      const good = [
        { variantId: a, quantity: 2 },
        { variantId: variantId(t, 'ESP-DEC-10'), quantity: 1 },
      ];
      const cases: [string, ReplacementItem[]][] = [
        ['sold_out', [...good, { variantId: soldOut, quantity: 1 }]],
        ['quantity_limit', [...good, { variantId: b, quantity: 11 }]],
        ['quantity_limit', [...good, { variantId: b, quantity: 6 }, { variantId: b, quantity: 5 }]],
        ['unknown_variant', [...good, { variantId: 999_999_999, quantity: 1 }]],
        ['unavailable_product', [...good, { variantId: unpublished, quantity: 1 }]],
        ['invalid_selling_plan', [...good, { variantId: noPlans, quantity: 1, sellingPlanId: planOf('HYD-LEMONLIME-10') }]],
      ];
      for (const [reason, items] of cases) {
        await assert.rejects(service.replaceLines(token, items), (error: unknown) => {
          assert.ok(error instanceof CartError, String(error));
          assert.equal(error.reason, reason);
          return true;
        });
      }
      assert.deepEqual(await storedLines(token), linesBefore);
      assert.equal(await storedVersion(token), versionBefore, 'nothing was written');
      assert.deepEqual((await shopper.cart()).body, before);
    });

    it('lowering a line of a variant that sold out meanwhile is allowed; growing it is not', async () => {
      const b = variantId(t, 'SLP-120');
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: b, quantity: 5 }]);
      const token = shopper.token!;
      const { inventory, db } = t.store;
      const stock = inventory.onHand(b);
      await inventory.setOnHand(db, 'SLP-120', 0);
      await inventory.refresh(db);
      try {
        assert.deepEqual(shown(await service.replaceLines(token, [{ variantId: b, quantity: 3 }])), [[b, {}, 3]]);
        await assert.rejects(service.replaceLines(token, [{ variantId: b, quantity: 4 }]), { name: 'CartError', reason: 'sold_out' });
      } finally {
        await inventory.setOnHand(db, 'SLP-120', stock);
        await inventory.refresh(db);
      }
      assert.deepEqual((await storedLines(token)).map(([, id, quantity]) => [id, quantity]), [[b, 3]]);
    });

    it('a line added by /cart/add.js just before the replacement does not survive it, on this instance or another', async () => {
      const [a, b, c] = [variantId(t, 'ESP-RIS-10'), variantId(t, 'NRG-CITRUS-12'), variantId(t, 'ESP-DEC-10')];
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: a, quantity: 1 }]);
      const token = shopper.token!;

      // Same instance: the add and the replacement queue one after the other.
      assert.equal((await shopper.add([{ id: b, quantity: 2 }])).status, 200);
      const replaced = await service.replaceLines(token, [{ variantId: c, quantity: 1 }]);
      assert.deepEqual(shown(replaced), [[c, {}, 1]]);
      assert.deepEqual((await storedLines(token)).map(([, id, quantity]) => [id, quantity]), [[c, 1]]);

      // Another instance adds: this instance's remembered copy of the cart is stale, so the version check
      // refuses the first write and the replacement is applied again to what is stored now.
      assert.equal((await Shopper.holding(other.app, token).add([{ id: b, quantity: 1, properties: { Note: 'other door' } }])).status, 200);
      const again = await service.replaceLines(token, [{ variantId: a, quantity: 2 }]);
      assert.deepEqual(shown(again), [[a, {}, 2]]);
      assert.deepEqual((await storedLines(token)).map(([, id, quantity]) => [id, quantity]), [[a, 2]]);
      assert.deepEqual((await Shopper.holding(other.app, token).cart()).body.items.map((i: { id: number; quantity: number }) => [i.id, i.quantity]), [[a, 2]]);
    });

    for (const spread of ['one instance', 'two instances'] as const) {
      it(`20 concurrent add/replace pairs (${spread}) end at the last replacement plus only the adds after it`, async () => {
        const [a, b] = [variantId(t, 'ESP-CLA-10'), variantId(t, 'SLP-120')];
        const shopper = new Shopper(t.app);
        await shopper.add([{ id: b, quantity: 1 }]);
        const token = shopper.token!;
        // Every add and every replacement makes a line of its own (distinct properties), so any line that
        // survived a replacement it should not have, or was duplicated, shows.
        const pairs = Array.from({ length: 20 }, (_, i) => {
          const onOther = spread === 'two instances' && i % 2 === 1;
          const add = Shopper.holding(onOther ? other.app : t.app, token).add([{ id: a, quantity: 1, properties: { Add: String(i) } }]);
          // With two instances, each pair's add and replacement go through different doors on different instances.
          const replacer = spread === 'two instances' && !onOther ? other.service : service;
          const replace = replacer.replaceLines(token, [{ variantId: b, quantity: 1, properties: { Replace: String(i) } }]);
          return Promise.all([add, replace] as const);
        });
        const answers = await Promise.all(pairs);
        const adds = answers.map(([add]) => add);
        const replaces = answers.map(([, replace]) => replace);
        assert.deepEqual(new Set(adds.map((add) => add.status)), new Set([200]));
        for (const [i, replace] of replaces.entries()) {
          assert.deepEqual(shown(replace), [[b, { Replace: String(i) }, 1]], 'each replacement answered exactly its own lines');
        }

        const final = (await shopper.cart()).body;
        const lines: Shown[] = final.items.map((i: { id: number; properties: Record<string, string> | null; quantity: number }) => [
          i.id,
          { ...(i.properties ?? {}) },
          i.quantity,
        ]);
        assert.equal(new Set(final.items.map((i: { key: string }) => i.key)).size, lines.length, 'no duplicated line');
        const replacedBy = lines.filter(([id]) => id === b);
        assert.equal(replacedBy.length, 1, `exactly one replacement's line: ${JSON.stringify(lines)}`);
        const [, { Replace: last }] = replacedBy[0]!;
        assert.ok(last !== undefined);
        const lastKey = replaces[Number(last)]!.cart.items[0]!.key;
        // The adds applied after the last replacement are the ones whose answer shows its line.
        const later = adds.flatMap((add, i) => (add.body.items.some((item: { key: string }) => item.key === lastKey) ? [String(i)] : []));
        assert.deepEqual(
          lines.filter(([id]) => id === a).map(([, properties, quantity]) => [properties.Add, quantity]).sort(),
          later.map((i) => [i, 1]).sort(),
          'besides the last replacement, only the adds after it',
        );
        for (const [, properties, quantity] of lines) assert.equal(quantity, 1, JSON.stringify(properties));
        assert.deepEqual((await storedLines(token)).length, lines.length);
      });
    }
  });
}
