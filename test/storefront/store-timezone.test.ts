/**
 * STORE_TIMEZONE on the buyer's pages, through the real app on both backends: the order page's times and the manual
 * payment's due day, and the approval link's end, in the store's zone with the zone named (Europe/Berlin: CET in
 * winter); UTC by default.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { placeOrder, SHIP_TO } from '../helpers/orders.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

/** 23:30 UTC on 29 November: already 30 November in Berlin. */
const LATE_EVENING_UTC = new Date('2026-11-29T23:30:00Z');

for (const backend of backends) {
  describe(`times on the pages in STORE_TIMEZONE (${backend.name})`, () => {
    let berlin: TestStore;
    let utc: TestStore;
    before(async () => {
      berlin = await startTestStore(backend, { config: { storeTimeZone: 'Europe/Berlin' } });
      utc = await startTestStore(backend);
    });
    after(async () => {
      await berlin?.close();
      await utc?.close();
    });

    const variant = (t: TestStore, sku: string) => t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;

    /** An order placed and then dated 23:30 UTC on 29 November, its manual payment due at the same time a week later. */
    async function lateOrderPage(t: TestStore): Promise<string> {
      const order = await placeOrder(t.store, [{ variantId: variant(t, 'ESP-DEC-10'), quantity: 1 }]);
      await t.store.db.query('update orders set created_at = $2, payment_due_at = $3 where id = $1', [
        order.id,
        LATE_EVENING_UTC,
        new Date(LATE_EVENING_UTC.getTime() + 7 * 24 * 3600 * 1000),
      ]);
      const response = await t.app.inject({ method: 'GET', url: `/orders/${order.id}` });
      assert.equal(response.statusCode, 200);
      return response.body;
    }

    it("the order page says when it was placed, and the payment's due day, in Berlin with the zone", async () => {
      const html = await lateOrderPage(berlin);
      assert.ok(html.includes('<time datetime="2026-11-29T23:30:00.000Z">30 November 2026, 00:30 CET</time>'), html);
      assert.match(html, /Pay \$[\d.,]+ by 7 December 2026 using:/);
    });

    it('without STORE_TIMEZONE the same order reads in UTC, the zone named', async () => {
      const html = await lateOrderPage(utc);
      assert.ok(html.includes('<time datetime="2026-11-29T23:30:00.000Z">29 November 2026, 23:30 UTC</time>'), html);
      assert.match(html, /Pay \$[\d.,]+ by 6 December 2026 using:/);
    });

    it("the approval page says until when its link works in the store's zone", async () => {
      const t = berlin;
      const lines = [{ variantId: variant(t, 'ESP-DEC-10'), quantity: 1 }];
      const created = await t.store.checkouts.create(t.store.db, { lines, buyer: { email: 'buyer@example.com' }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await t.store.checkouts.requestCompletion(t.store.db, created.view.record.id, 'agent');
      const response = await t.app.inject({ method: 'GET', url: `/checkout/approve/${asked.approval!.token}` });
      assert.equal(response.statusCode, 200);
      const berlinClock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'Europe/Berlin' });
      const until = new Date(Date.now() + 15 * 60_000);
      // The link's end (15 minutes on), as a Berlin clock reads it; the minute may tick over between the two clocks.
      const clocks = [until, new Date(until.getTime() - 60_000)].map((at) => berlinClock.format(at));
      assert.match(response.body, new RegExp(`This link works for 1[45] more minutes \\(until (?:\\d{1,2} [A-Z][a-z]+ \\d{4}, )?(?:${clocks.join('|')}) CES?T\\)\\.`));
    });
  });
}
