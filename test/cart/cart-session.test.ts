/** The `cart` session cookie, cart lifetime and purge, the continue_url routes (read, take over), scope, and the OpenAPI description. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { countRows, Shopper, variantId } from './shopper.js';

after(dropTestDatabases);

const FOURTEEN_DAYS = 14 * 24 * 60 * 60;

function cookieAttributes(setCookie: string | undefined): Map<string, string> {
  assert.ok(setCookie, 'expected a cart cookie');
  return new Map(
    setCookie
      .split(';')
      .slice(1)
      .map((part) => part.trim().split('='))
      .map(([name, value]) => [name!.toLowerCase(), value ?? ''] as [string, string]),
  );
}

for (const backend of backends) {
  describe(`cart: session cookie and lifetime (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    const addOne = (shopper: Shopper, sku = 'ESP-RIS-10') => shopper.add([{ id: variantId(t, sku), quantity: 1 }]);

    it('without a cookie, GET /cart.js answers an empty cart and sets `cart` with Path=/, SameSite=Lax, HttpOnly, Max-Age 14 days, no Secure on http', async () => {
      const shopper = new Shopper(t.app);
      const answer = await shopper.cart();
      assert.equal(answer.status, 200);
      assert.equal(answer.body.item_count, 0);
      assert.deepEqual(answer.body.items, []);
      assert.equal(answer.body.total_price, 0);
      assert.equal(answer.body.currency, 'USD');
      assert.equal(answer.body.token, shopper.token);
      const attributes = cookieAttributes(answer.setCookie);
      assert.equal(attributes.get('path'), '/');
      assert.equal(attributes.get('samesite')?.toLowerCase(), 'lax');
      assert.ok(attributes.has('httponly'));
      assert.equal(attributes.get('max-age'), String(FOURTEEN_DAYS));
      assert.ok(!attributes.has('secure'));
    });

    it('tokens are opaque and random: 32 URL-safe characters (192 bits), a new one for each session', async () => {
      const tokens = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const shopper = new Shopper(t.app);
        await shopper.cart();
        assert.match(shopper.token!, /^[A-Za-z0-9_-]{32}$/);
        tokens.add(shopper.token!);
      }
      assert.equal(tokens.size, 20);
    });

    it('reading carts writes no database row; the first change does', async () => {
      const before = await countRows(t, 'carts');
      const shopper = new Shopper(t.app);
      for (let i = 0; i < 5; i++) await shopper.cart();
      for (let i = 0; i < 5; i++) await new Shopper(t.app).send('GET', '/cart.json');
      assert.equal(await countRows(t, 'carts'), before);
      await addOne(shopper);
      assert.equal(await countRows(t, 'carts'), before + 1);
    });

    it('the cookie set by the first add names the cart from then on; GET of a live cart sets no cookie', async () => {
      const shopper = new Shopper(t.app);
      const added = await addOne(shopper);
      assert.ok(added.setCookie);
      assert.equal(added.body.token, shopper.token);
      const read = await shopper.cart();
      assert.equal(read.setCookie, undefined);
      assert.equal(read.body.token, shopper.token);
      assert.equal(read.body.item_count, 1);
    });

    it('every change renews the cookie for another 14 days', async () => {
      const shopper = new Shopper(t.app);
      await addOne(shopper);
      const token = shopper.token;
      for (const answer of [await addOne(shopper), await shopper.change({ line: 1, quantity: 3 }), await shopper.update({ note: 'hi' }), await shopper.clear()]) {
        assert.equal(answer.status, 200);
        assert.equal(cookieAttributes(answer.setCookie).get('max-age'), String(FOURTEEN_DAYS));
        assert.equal(shopper.token, token);
      }
    });

    it('/cart.json answers the same cart as /cart.js', async () => {
      const shopper = new Shopper(t.app);
      await addOne(shopper);
      const js = await shopper.cart();
      const json = await shopper.send('GET', '/cart.json');
      assert.equal(json.status, 200);
      assert.deepEqual(json.body, js.body);
    });

    it('cart answers are never cached: Cache-Control no-store', async () => {
      const shopper = new Shopper(t.app);
      assert.equal((await shopper.cart()).headers['cache-control'], 'no-store');
      assert.equal((await addOne(shopper)).headers['cache-control'], 'no-store');
    });

    it('a malformed cookie is never a 500: it gets a fresh empty cart and a new cookie', async () => {
      const lookalike = 'A'.repeat(32);
      const cookies = [
        'cart=',
        'cart=abc',
        `cart=${'x'.repeat(4000)}`,
        'cart=%E0%A4%A',
        "cart=' or 1=1 --",
        'cart="quoted"',
        `cart=${lookalike}`,
        `cart=${lookalike}; cart=other`,
        '=;;; ;=',
        'cart',
      ];
      for (const cookie of cookies) {
        const shopper = new Shopper(t.app);
        const read = await shopper.send('GET', '/cart.js', { cookie });
        assert.equal(read.status, 200, `${cookie}: ${read.raw}`);
        assert.equal(read.body.item_count, 0);
        assert.match(shopper.token ?? '', /^[A-Za-z0-9_-]{32}$/, cookie);
        assert.notEqual(shopper.token, lookalike);
        const added = await new Shopper(t.app).send('POST', '/cart/add.js', { cookie, json: { id: variantId(t, 'ESP-RIS-10') } });
        assert.equal(added.status, 200, `${cookie}: ${added.raw}`);
        assert.notEqual(added.body.token, lookalike);
      }
    });

    it('a cookie naming no live cart is never adopted: the first change stores the cart under a new token', async () => {
      const stranger = 'B'.repeat(32);
      const shopper = new Shopper(t.app);
      shopper.token = stranger;
      const answer = await addOne(shopper);
      assert.equal(answer.status, 200);
      assert.notEqual(shopper.token, stranger);
      const [row] = await t.store.db.query<{ count: number }>('select count(*)::int as count from carts where token = $1', [stranger]);
      assert.equal(row!.count, 0);
    });

    it('a cart unchanged for 14 days is no longer live: its cookie gets a fresh cart, and the purge deletes it', async () => {
      const stale = new Shopper(t.app);
      await addOne(stale);
      const staleToken = stale.token!;
      const fresh = new Shopper(t.app);
      await addOne(fresh);
      await t.store.db.query(`update carts set updated_at = now() - interval '14 days 1 minute' where token = $1`, [staleToken]);

      const read = await stale.cart();
      assert.equal(read.body.item_count, 0);
      assert.notEqual(read.body.token, staleToken);
      stale.token = staleToken;
      const added = await addOne(stale);
      assert.notEqual(added.body.token, staleToken);
      assert.equal(added.body.item_count, 1);

      assert.ok((await t.store.carts.purgeExpired(t.store.db)) >= 1);
      const rows = await t.store.db.query<{ token: string }>('select token from carts where token = any($1::text[])', [[staleToken, fresh.token]]);
      assert.deepEqual(
        rows.map((r) => r.token),
        [fresh.token],
      );
      assert.equal((await fresh.cart()).body.item_count, 1);
    });

    it('a cart changed 13 days ago is still live and is not purged', async () => {
      const shopper = new Shopper(t.app);
      await addOne(shopper);
      await t.store.db.query(`update carts set updated_at = now() - interval '13 days' where token = $1`, [shopper.token]);
      await t.store.carts.purgeExpired(t.store.db);
      const read = await shopper.cart();
      assert.equal(read.body.token, shopper.token);
      assert.equal(read.body.item_count, 1);
    });

    it('a cookie reaches only its own cart: two sessions never see each other’s lines', async () => {
      const ana = new Shopper(t.app);
      const ben = new Shopper(t.app);
      await addOne(ana, 'ESP-RIS-10');
      await addOne(ben, 'NRG-CITRUS-12');
      assert.deepEqual(
        (await ana.cart()).body.items.map((i: { sku: string }) => i.sku),
        ['ESP-RIS-10'],
      );
      assert.deepEqual(
        (await ben.cart()).body.items.map((i: { sku: string }) => i.sku),
        ['NRG-CITRUS-12'],
      );
      const key = (await ana.cart()).body.items[0].key;
      assert.equal((await ben.change({ id: key, quantity: 5 })).status, 422);
      assert.equal((await ana.cart()).body.items[0].quantity, 1);
    });

    it('the cart grants cart:write only: its answers carry no customer or order data', async () => {
      const shopper = new Shopper(t.app);
      const answer = await addOne(shopper);
      const keys = new Set<string>();
      const collect = (value: unknown): void => {
        if (Array.isArray(value)) value.forEach(collect);
        else if (value && typeof value === 'object') {
          for (const [key, inner] of Object.entries(value)) {
            keys.add(key);
            collect(inner);
          }
        }
      };
      collect(answer.body);
      for (const forbidden of ['customer', 'customer_id', 'email', 'order', 'order_id', 'orders', 'shipping_address', 'billing_address', 'phone']) {
        assert.ok(!keys.has(forbidden), `the cart exposes ${forbidden}`);
      }
      const scopes = await shopper.send('GET', '/scopes.json');
      const cartScope = scopes.body.scopes.find((s: { security_scheme: string }) => s.security_scheme === 'sessionCart');
      assert.equal(cartScope.scope, 'cart:write');
    });

    it('GET /cart/c/{token} (continue_url) answers the Cart and changes nothing; POST takes it over: a new token, set as the cookie, and the old one names no cart', async () => {
      const owner = new Shopper(t.app);
      await addOne(owner);
      const given = owner.token!;
      const browser = new Shopper(t.app);
      const read = await browser.send('GET', `/cart/c/${given}`);
      assert.equal(read.status, 200, read.raw);
      assert.equal(read.body.token, given);
      assert.equal(read.body.item_count, 1);
      assert.equal(read.setCookie, undefined, 'reading sets no cookie');
      assert.equal(read.headers['referrer-policy'], 'no-referrer');
      assert.equal(read.headers['cache-control'], 'no-store');
      assert.equal((await owner.cart()).body.token, given, 'the owner still holds the cart');

      const answer = await browser.send('POST', `/cart/c/${given}`);
      assert.equal(answer.status, 200, answer.raw);
      assert.notEqual(answer.body.token, given);
      assert.equal(answer.body.item_count, 1);
      assert.equal(browser.token, answer.body.token);
      assert.equal(cookieAttributes(answer.setCookie).get('max-age'), String(FOURTEEN_DAYS));
      assert.equal(answer.headers['referrer-policy'], 'no-referrer');
      await addOne(browser, 'NRG-CITRUS-12');
      assert.equal((await browser.cart()).body.item_count, 2);
      // The old token's holder sees a fresh empty cart, never the browser's.
      const left = await owner.cart();
      assert.equal(left.body.item_count, 0);
      assert.notEqual(owner.token, browser.token);
      // Taken by a client that already holds the cart: the same token, one renewed cookie, not two.
      const again = await browser.send('POST', `/cart/c/${browser.token}`);
      assert.equal(again.body.token, answer.body.token);
      const cartCookies = ([] as string[]).concat((again.headers['set-cookie'] as string | string[] | undefined) ?? []).filter((c) => c.startsWith('cart='));
      assert.equal(cartCookies.length, 1);
    });

    it('GET and POST /cart/c/{token} for no live cart answer 404 JSON and set no cookie', async () => {
      for (const token of ['C'.repeat(32), 'short', 'x'.repeat(300), '%00']) {
        for (const method of ['GET', 'POST'] as const) {
          const browser = new Shopper(t.app);
          const answer = await browser.send(method, `/cart/c/${token}`);
          assert.equal(answer.status, 404, `${method} ${token}: ${answer.raw}`);
          assert.equal(answer.body.status, 404);
          assert.equal(answer.body.message, 'Not found');
          assert.equal(answer.setCookie, undefined);
        }
      }
    });

    it('the OpenAPI document describes every cart operation with its operationId, the cart tag, sessionCart security and Cart/Error responses', async () => {
      const doc = (await new Shopper(t.app).send('GET', '/openapi.json')).body;
      const operations: [string, string, string][] = [
        ['/cart.js', 'get', 'getCart'],
        ['/cart/add.js', 'post', 'addCartItems'],
        ['/cart/change.js', 'post', 'changeCartItem'],
        ['/cart/update.js', 'post', 'updateCart'],
        ['/cart/clear.js', 'post', 'clearCart'],
        ['/cart/c/{token}', 'get', 'getCartByToken'],
        ['/cart/c/{token}', 'post', 'takeCartByToken'],
      ];
      for (const [path, method, operationId] of operations) {
        const operation = doc.paths[path]?.[method];
        assert.ok(operation, `${method} ${path} is not described`);
        assert.equal(operation.operationId, operationId);
        assert.deepEqual(operation.tags, ['cart']);
        assert.deepEqual(operation.security, [{ sessionCart: ['cart:write'] }]);
        assert.ok(operation.summary);
        assert.equal(operation.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Cart');
        assert.equal(operation.responses['429'].content['application/json'].schema.$ref, '#/components/schemas/Error');
        if (method === 'post' && !path.startsWith('/cart/c/')) assert.equal(operation.responses['422'].content['application/json'].schema.$ref, '#/components/schemas/Error');
      }
      assert.ok(doc.components.schemas.Cart.properties.items);
      assert.deepEqual(doc.paths['/cart/add.js'].post.requestBody.content['application/json'].schema.required, ['items']);
      for (const hidden of ['/cart.json', '/cart/add', '/cart/change', '/cart/update', '/cart/clear']) assert.equal(doc.paths[hidden], undefined, hidden);
    });
  });

  describe(`cart: session cookie on an https store (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend, { config: { baseUrl: 'https://shop.example' } });
    });
    after(() => t.close());

    it('the cart cookie is Secure when BASE_URL is https', async () => {
      const answer = await new Shopper(t.app).cart();
      assert.ok(cookieAttributes(answer.setCookie).has('secure'));
    });
  });
}
