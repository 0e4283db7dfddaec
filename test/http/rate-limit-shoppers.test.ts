/**
 * Limits a store can live with (issue 24, item 3): with the default budgets, several hundred shoppers behind one
 * address (a carrier's NAT, an office) each start a cart and change it without a 429, because a cart write counts
 * against its own cart's budget as well as the address's, and the address's budgets are sized for such a crowd. One
 * client hammering its cart is refused by that cart's budget, and its refusals spend nothing the others need. Run
 * with the counters in memory and in Redis (the shared one on 127.0.0.1:6379, under a prefix of this run's own).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { RATE_LIMIT_DEFAULTS } from '../../src/config.js';
import { counterSetups } from '../helpers/limit-setups.js';
import { dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const SHOPPERS = 300;
const NAT = '203.0.113.50';
const { setups } = counterSetups('shoppers');


function cartCookie(response: LightMyRequestResponse): string {
  const cookie = ([] as string[]).concat(response.headers['set-cookie'] ?? []).find((c) => c.startsWith('cart='));
  assert.ok(cookie, 'the answer sets the cart cookie');
  return cookie.split(';')[0]!;
}

for (const setup of setups) {
  describe(`${setup.name}: ${SHOPPERS} shoppers behind one address`, () => {
    let test: TestStore;
    let variantId: number;
    before(async () => {
      test = await startTestStore(setup.backend, { config: { rateLimit: true, ...setup.config } });
      variantId = test.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === 'ESP-RIS-10')!.id;
    });
    after(() => test.close());

    /** One shopper's cart write, with its own cookie jar (undefined: a first visit). */
    const write = (url: string, payload: object, cookie?: string) =>
      test.app.inject({ method: 'POST', url, payload, remoteAddress: NAT, headers: cookie ? { cookie } : {} });

    const cookies: string[] = [];

    /** Runs `each` for every shopper, ten at a time, as a crowd arrives. */
    const crowd = async (count: number, each: (index: number) => Promise<void>) => {
      for (let from = 0; from < count; from += 10) await Promise.all(Array.from({ length: Math.min(10, count - from) }, (_, i) => each(from + i)));
    };

    it('each starts a cart by adding to it, changes it, and none is refused', async () => {
      await crowd(SHOPPERS, async (shopper) => {
        const added = await write('/cart/add.js', { id: variantId, quantity: 1 });
        assert.equal(added.statusCode, 200, `shopper ${shopper}: ${added.body}`);
        const cookie = cartCookie(added);
        cookies[shopper] = cookie;
        const changed = await write('/cart/change.js', { line: 1, quantity: 2 }, cookie);
        assert.equal(changed.statusCode, 200, `shopper ${shopper}, change: ${changed.body}`);
        assert.equal(JSON.parse(changed.body).item_count, 2);
      });
      assert.equal(new Set(cookies).size, SHOPPERS, 'each shopper has a cart of its own');
    });

    it("one client hammering its cart is refused by that cart's budget; the others behind the address go on", async () => {
      const perCart = RATE_LIMIT_DEFAULTS['cart-write-per-cart'].max;
      const cookie = cookies[0]!;
      // Its change above was counted against its cart; the rest of the cart's budget is answered.
      let answered = 1;
      let refused: LightMyRequestResponse | undefined;
      for (let i = 0; i < 3 * perCart && !refused; i++) {
        const response = await write('/cart/change.js', { line: 1, quantity: 1 + (i % 5) }, cookie);
        if (response.statusCode === 429) refused = response;
        else {
          assert.equal(response.statusCode, 200, response.body);
          answered++;
        }
      }
      assert.ok(refused, `no 429 within ${3 * perCart} writes to one cart`);
      assert.ok(answered >= perCart, `refused after ${answered} writes, within the cart's budget of ${perCart}`);
      assert.equal(refused.headers['x-ratelimit-limit'], String(perCart), "the cart's budget refused it");
      // One write's share of the cart's minute: a second, never the minute.
      assert.equal(refused.headers['retry-after'], '1');
      // It keeps hammering, as many writes as the whole address may make: refused, they take nothing from the
      // address's budget, and every other shopper still changes its cart.
      for (let i = 0; i < RATE_LIMIT_DEFAULTS['cart-write'].max; i++) {
        assert.ok((await write('/cart/change.js', { line: 1, quantity: 2 }, cookie)).statusCode < 500);
      }
      await crowd(SHOPPERS - 1, async (index) => {
        const changed = await write('/cart/change.js', { line: 1, quantity: 3 }, cookies[index + 1]);
        assert.equal(changed.statusCode, 200, `shopper ${index + 1}: ${changed.body}`);
      });
      // And another address's client is not affected either.
      const elsewhere = await test.app.inject({ method: 'POST', url: '/cart/add.js', payload: { id: variantId, quantity: 1 }, remoteAddress: '198.51.100.77' });
      assert.equal(elsewhere.statusCode, 200);
    });
  });
}
