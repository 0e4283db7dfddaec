/**
 * The cart tools: one cart model, two doors. A cart made with create_cart is the cart /cart.js shows to a
 * browser holding its token, its continue_url shows it and hands it over to the browser that takes it, and changes
 * through either door show in the other. Refusals are UCP error results; cancel_cart is idempotent by key.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { officialSchemaErrors, resultSchemaFor } from './official-schemas.js';

after(dropTestDatabases);

const HEADERS = { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' };

for (const backend of backends) {
  describe(`${backend.name}: cart tools`, () => {
    let test: TestStore;
    let nextId = 1;
    const rpc = async (name: string, args: unknown) => {
      const response = await test.app.inject({
        method: 'POST',
        url: '/api/ucp/mcp',
        headers: HEADERS,
        payload: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }),
      });
      return { status: response.statusCode, body: JSON.parse(response.body) };
    };
    const call = async (name: string, args: unknown) => {
      const { body } = await rpc(name, args);
      assert.ok(body.result, JSON.stringify(body));
      const structured = body.result.structuredContent;
      assert.deepEqual(officialSchemaErrors(resultSchemaFor(name, structured), structured), []);
      assert.equal(body.result.isError, structured.ucp.status === 'error');
      return structured;
    };
    const browserCart = async (token: string) => JSON.parse((await test.app.inject({ url: '/cart.js', cookies: { cart: token } })).body);
    /** Variant ids as an agent finds them: from the catalog tools, by SKU. */
    const variantIds = async (...skus: string[]) => {
      const { products } = await call('lookup_catalog', { catalog: { ids: skus } });
      const bySku = new Map(products.flatMap((p: any) => p.variants.map((v: any) => [v.sku, v.id])));
      return skus.map((sku) => bySku.get(sku) as string);
    };

    before(async () => {
      test = await startTestStore(backend, { config: { rateLimit: false } });
    });
    after(() => test.close());

    it('create_cart makes the cart /cart.js shows for its token, with the same lines and totals in cents', async () => {
      const [stick, espresso] = await variantIds('HYD-LEMONLIME-10', 'ESP-CLA-10');
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: stick }, quantity: 2 }, { item: { id: espresso }, quantity: 1 }] } });
      assert.equal(cart.ucp.status, 'success');
      assert.equal(cart.currency, 'USD');
      const browser = await browserCart(cart.id);
      assert.equal(browser.token, cart.id);
      assert.equal(browser.item_count, 3);
      assert.deepEqual(cart.totals, [
        { type: 'subtotal', amount: browser.original_total_price },
        { type: 'total', amount: browser.total_price },
      ]);
      assert.deepEqual(
        cart.line_items.map((line: any) => [line.id, line.item.id, line.quantity, line.item.price]).sort(),
        browser.items.map((item: any) => [item.key, String(item.id), item.quantity, item.price]).sort(),
      );
      assert.equal(cart.continue_url, `http://store.test/cart/c/${cart.id}`);
    });

    it("continue_url, opened, shows the cart and takes nothing; taken over (POST), its lines go under a new cart cookie and the cart's id names no cart", async () => {
      const [sleep] = await variantIds('SLP-120');
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: sleep }, quantity: 1 }] } });
      const link = new URL(cart.continue_url).pathname;
      const read = await test.app.inject({ url: link });
      assert.equal(read.statusCode, 200);
      assert.equal(JSON.parse(read.body).token, cart.id);
      assert.deepEqual(read.cookies, [], 'opening the link sets no cookie');
      assert.equal((await call('get_cart', { id: cart.id })).id, cart.id, 'the agent still holds the cart');
      const opened = await test.app.inject({ method: 'POST', url: link });
      assert.equal(opened.statusCode, 200);
      const taken = JSON.parse(opened.body);
      assert.notEqual(taken.token, cart.id);
      assert.equal(taken.items[0].id, Number(sleep));
      assert.ok(opened.cookies.some((c) => c.name === 'cart' && c.value === taken.token));
      const gone = (await call('get_cart', { id: cart.id })).messages[0];
      assert.equal(gone.code, 'not_found');
      assert.match(gone.content, /^The buyer took this cart over in their browser/, 'the agent is told why');
      const never = (await call('get_cart', { id: 'A'.repeat(32) })).messages[0];
      assert.match(never.content, /may have expired or been canceled/, 'a cart that never was, or expired, is not said to be taken over');
    });

    it('a change made in the browser shows in get_cart, and one made by update_cart shows in the browser', async () => {
      const [decaf, energy] = await variantIds('ESP-DEC-10', 'NRG-CITRUS-12');
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: decaf }, quantity: 1 }] } });
      const added = await test.app.inject({
        method: 'POST',
        url: '/cart/add.js',
        cookies: { cart: cart.id },
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ items: [{ id: Number(energy), quantity: 2 }] }),
      });
      assert.equal(added.statusCode, 200, added.body);
      const seen = await call('get_cart', { id: cart.id });
      assert.deepEqual(seen.line_items.map((l: any) => [l.item.id, l.quantity]).sort(), [[decaf, 1], [energy, 2]].sort());
      const decafLine = seen.line_items.find((l: any) => l.item.id === decaf);
      const updated = await call('update_cart', { id: cart.id, cart: { line_items: [{ id: decafLine.id, item: { id: decaf }, quantity: 4 }] } });
      assert.deepEqual(updated.line_items.map((l: any) => [l.id, l.quantity]), [[decafLine.id, 4]]);
      const browser = await browserCart(cart.id);
      assert.deepEqual(browser.items.map((i: any) => [i.key, i.quantity]), [[decafLine.id, 4]]);
    });

    it('update_cart replaces every line: new variants are added, lines left out removed, an empty list empties the cart', async () => {
      const [a, b, c] = await variantIds('HYD-MIXEDBERRY-10', 'ESP-LUN-10', 'SLP-60');
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: a }, quantity: 1 }, { item: { id: b }, quantity: 1 }] } });
      const replaced = await call('update_cart', { id: cart.id, cart: { line_items: [{ item: { id: b }, quantity: 2 }, { item: { id: c }, quantity: 1 }] } });
      assert.deepEqual(replaced.line_items.map((l: any) => [l.item.id, l.quantity]).sort(), [[b, 2], [c, 1]].sort());
      assert.equal(replaced.id, cart.id);
      const emptied = await call('update_cart', { id: cart.id, cart: { line_items: [] } });
      assert.deepEqual(emptied.line_items, []);
      assert.deepEqual(emptied.totals, [{ type: 'subtotal', amount: 0 }, { type: 'total', amount: 0 }]);
    });

    it('update_cart after a storefront add leaves only the requested lines', async () => {
      const [decaf, energy, stick] = await variantIds('ESP-DEC-10', 'NRG-CHERRYCOLA-12', 'HYD-MIXEDBERRY-30');
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: decaf }, quantity: 1 }] } });
      const decafLine = cart.line_items[0].id;
      const browserAdd = (items: unknown[]) =>
        test.app.inject({
          method: 'POST',
          url: '/cart/add.js',
          cookies: { cart: cart.id },
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ items }),
        });
      // The agent has not seen these lines: the replacement removes them all the same.
      const added = await browserAdd([{ id: Number(energy), quantity: 2 }, { id: Number(decaf), quantity: 1, properties: { Gift: 'yes' } }]);
      assert.equal(added.statusCode, 200, added.body);
      const updated = await call('update_cart', {
        id: cart.id,
        cart: { line_items: [{ id: decafLine, item: { id: decaf }, quantity: 3 }, { item: { id: stick }, quantity: 1 }] },
      });
      assert.equal(updated.ucp.status, 'success');
      assert.deepEqual(updated.line_items.map((l: any) => [l.item.id, l.quantity]).sort(), [[decaf, 3], [stick, 1]].sort());
      assert.equal(updated.line_items.find((l: any) => l.item.id === decaf).id, decafLine, 'the line named by id keeps its id');
      const browser = await browserCart(cart.id);
      assert.deepEqual(
        browser.items.map((i: any) => [i.key, i.quantity]),
        updated.line_items.map((l: any) => [l.id, l.quantity]),
      );

      // Adds racing updates: the cart ends as the last update left it, plus only adds made after it.
      const wanted = (i: number) => [[decaf, i + 1], [stick, (i % 5) + 1]].sort();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          Promise.all([
            browserAdd([{ id: Number(energy), quantity: 1, properties: { Add: String(i) } }]),
            call('update_cart', { id: cart.id, cart: { line_items: wanted(i).map(([id, quantity]) => ({ item: { id }, quantity })) } }),
          ]),
        ),
      );
      for (const [i, [add, update]] of answers.entries()) {
        assert.equal(add.statusCode, 200, add.body);
        assert.deepEqual(update.line_items.map((l: any) => [l.item.id, l.quantity]).sort(), wanted(i));
      }
      /** Whether cart.js items show update i's lines (decaf and stick quantities together name one update). */
      const showsUpdate = (items: any[], i: number) =>
        JSON.stringify(items.filter((item) => String(item.id) !== energy).map((item) => [String(item.id), item.quantity]).sort()) ===
        JSON.stringify(wanted(i));
      const final = await browserCart(cart.id);
      const last = answers.findIndex((_, i) => showsUpdate(final.items, i));
      assert.ok(last >= 0, `the cart shows no update's lines: ${JSON.stringify(final.items)}`);
      const later = answers.flatMap(([add], i) => (showsUpdate(JSON.parse(add.body).items, last) ? [String(i)] : []));
      assert.deepEqual(
        final.items.filter((i: any) => String(i.id) === energy).map((i: any) => i.properties.Add).sort(),
        later.sort(),
        'besides the last update, only the adds made after it',
      );
      assert.equal(final.items.length, 2 + later.length);
    });

    it('update_cart keeps a subscription line named by its id; a line without id is the plain line of its variant', async () => {
      const { products } = await call('lookup_catalog', { catalog: { ids: ['HYD-LEMONLIME-30'] } });
      const variant = products[0].variants.find((v: any) => v.sku === 'HYD-LEMONLIME-30').id as string;
      const product = JSON.parse((await test.app.inject({ url: `/products/${products[0].handle}.js` })).body);
      const plan = product.selling_plan_groups[0].selling_plans[0].id;
      const added = await test.app.inject({
        method: 'POST',
        url: '/cart/add.js',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ items: [{ id: Number(variant), quantity: 1, selling_plan: plan }] }),
      });
      const token = added.cookies.find((c) => c.name === 'cart')!.value;
      const subscription = (await call('get_cart', { id: token })).line_items[0].id;
      const kept = await call('update_cart', { id: token, cart: { line_items: [{ id: subscription, item: { id: variant }, quantity: 2 }] } });
      assert.deepEqual(kept.line_items.map((l: any) => [l.id, l.quantity]), [[subscription, 2]]);
      assert.equal((await browserCart(token)).items[0].selling_plan_allocation.selling_plan.id, plan);
      const plain = await call('update_cart', { id: token, cart: { line_items: [{ item: { id: variant }, quantity: 2 }] } });
      assert.equal(plain.line_items.length, 1);
      assert.notEqual(plain.line_items[0].id, subscription);
      assert.equal((await browserCart(token)).items[0].selling_plan_allocation, null);
    });

    it('refusals are UCP error results with recoverable messages, and change nothing', async () => {
      const [stick, soldOut] = await variantIds('HYD-LEMONLIME-30', 'HYD-WATERMELON-30');
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: stick }, quantity: 1 }] } });
      const cases: [unknown, string][] = [
        [{ line_items: [{ item: { id: soldOut }, quantity: 1 }] }, 'out_of_stock'],
        [{ line_items: [{ item: { id: stick }, quantity: 11 }] }, 'quantity_limit'],
        [{ line_items: [{ item: { id: '999999999' }, quantity: 1 }] }, 'not_found'],
        [{ line_items: [{ item: { id: 'not-a-variant' }, quantity: 1 }] }, 'not_found'],
      ];
      for (const [change, code] of cases) {
        const refused = await call('update_cart', { id: cart.id, cart: change });
        assert.equal(refused.ucp.status, 'error');
        assert.deepEqual([refused.messages[0].code, refused.messages[0].severity], [code, 'recoverable']);
        assert.equal(refused.continue_url, cart.continue_url);
        const created = await call('create_cart', { cart: change });
        assert.equal(created.messages[0].code, code);
      }
      const unchanged = await browserCart(cart.id);
      assert.deepEqual(unchanged.items.map((i: any) => [String(i.id), i.quantity]), [[stick, 1]]);
    });

    it('a product id is not an item id: not_found, saying where variant ids come from', async () => {
      const { products } = await call('search_catalog', { catalog: { query: 'decaf' } });
      const refused = await call('create_cart', { cart: { line_items: [{ item: { id: products[0].id }, quantity: 1 }] } });
      assert.equal(refused.messages[0].code, 'not_found');
      assert.match(refused.messages[0].content, /variant id/);
    });

    it('an empty new cart is refused; a quantity below 1 is invalid params', async () => {
      const empty = await call('create_cart', { cart: { line_items: [] } });
      assert.equal(empty.messages[0].code, 'empty_cart');
      const [stick] = await variantIds('HYD-LEMONLIME-10');
      const { body } = await rpc('create_cart', { cart: { line_items: [{ item: { id: stick }, quantity: 0 }] } });
      assert.equal(body.error.code, -32602);
    });

    it('get_cart and update_cart of an unknown cart answer not_found', async () => {
      for (const [name, args] of [
        ['get_cart', { id: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
        ['get_cart', { id: '../../etc' }],
        ['update_cart', { id: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', cart: { line_items: [] } }],
      ] as const) {
        const result = await call(name, args);
        assert.deepEqual([result.ucp.status, result.messages[0].code, result.messages[0].severity], ['error', 'not_found', 'unrecoverable']);
      }
    });

    it('a subscription line bought in the browser shows its saving as a negative items_discount', async () => {
      const { products } = await call('lookup_catalog', { catalog: { ids: ['HYD-LEMONLIME-10'] } });
      const product = (await test.app.inject({ url: `/products/${products[0].handle}.js` })).body;
      const plan = JSON.parse(product).selling_plan_groups[0].selling_plans[0].id;
      const added = await test.app.inject({
        method: 'POST',
        url: '/cart/add.js',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ items: [{ id: Number(products[0].variants[0].id), quantity: 2, selling_plan: plan }] }),
      });
      const token = JSON.parse(added.body).token ?? added.cookies.find((c) => c.name === 'cart')?.value;
      const cart = await call('get_cart', { id: token });
      const browser = await browserCart(token);
      assert.deepEqual(cart.totals, [
        { type: 'subtotal', amount: browser.original_total_price },
        { type: 'items_discount', amount: -browser.total_discount, display_text: 'Subscription savings' },
        { type: 'total', amount: browser.total_price },
      ]);
      assert.ok(browser.total_discount > 0);
    });

    it('cancel_cart needs an idempotency key, answers the cart as it was, and then the cart is gone from both doors', async () => {
      const [stick] = await variantIds('NRG-CHERRYCOLA-12');
      const cart = await call('create_cart', { cart: { line_items: [{ item: { id: stick }, quantity: 1 }] } });
      const { body } = await rpc('cancel_cart', { id: cart.id });
      assert.equal(body.error.code, -32602);
      const key = randomUUID();
      const canceled = await call('cancel_cart', { meta: { 'idempotency-key': key }, id: cart.id });
      assert.equal(canceled.id, cart.id);
      assert.deepEqual(canceled.line_items, cart.line_items);
      assert.equal((await call('get_cart', { id: cart.id })).messages[0].code, 'not_found');
      assert.equal((await test.app.inject({ url: `/cart/c/${cart.id}` })).statusCode, 404);
      assert.equal((await browserCart(cart.id)).item_count, 0);

      const retried = await call('cancel_cart', { meta: { 'idempotency-key': key }, id: cart.id });
      assert.deepEqual(retried, canceled);
      const conflict = await rpc('cancel_cart', { meta: { 'idempotency-key': key }, id: 'BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' });
      assert.equal(conflict.status, 200);
      assert.equal(conflict.body.error.code, -32000);
      assert.equal(conflict.body.error.data.code, 'idempotency_conflict');
    });
  });
}
