/**
 * The dashboard's figures (src/reports/dashboard.ts), on both backends, over orders placed through the real checkout:
 * two agent orders from two platforms, one browser order, one refund and one canceled order; each figure equals what
 * was placed, days are the store's zone's, and the waiting lists, low stock and failed deliveries name what they should.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Order } from '../../src/orders/orders.js';
import { addDays, DashboardCache, dashboardFigures, type DashboardFigures, type PeriodName } from '../../src/reports/dashboard.js';
import { openStore, type Store } from '../../src/store.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';
import { placedAt, placeOrderBy, variantOf } from './placing.js';

after(dropTestDatabases);

const NOW = new Date('2030-01-15T12:00:00Z');
const hoursBefore = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000);
const period = (figures: DashboardFigures, name: PeriodName) => figures.periods.find((p) => p.name === name)!;

for (const backend of backends) {
  describe(`the dashboard's figures (${backend.name})`, () => {
    let store: Store;
    let chat: Order;
    let assistant: Order;
    let browser: Order;
    let canceled: Order;
    before(async () => {
      const { db } = await backend.open({ migrated: true, demo: true });
      store = await openStore(testConfig(), { db, deliver: false });
      const variant = (sku: string) => variantOf(store, sku);
      chat = await placeOrderBy(store, { by: 'agent', platform: 'chat.example' }, [{ variantId: variant('ESP-CLA-10'), quantity: 2 }], 'ada@example.com');
      assistant = await placeOrderBy(store, { by: 'agent', platform: 'assist.example:8443' }, [{ variantId: variant('ESP-DEC-10'), quantity: 1 }], 'bo@example.com');
      browser = await placeOrderBy(store, { by: 'browser' }, [{ variantId: variant('SLP-120'), quantity: 1 }], 'cy@example.com');
      canceled = await placeOrderBy(store, { by: 'agent', platform: 'chat.example' }, [{ variantId: variant('ESP-CLA-10'), quantity: 1 }], 'di@example.com');
      await store.orders.capture(store.db, String(chat.number));
      await store.orders.refund(store.db, String(chat.number), 500, 'one capsule box dented');
      await store.orders.cancel(store.db, String(canceled.number), 'the buyer asked');
      // The moments the figures are read at: 03:00 UTC today (the evening before in New York), 3 and 10 days ago.
      await placedAt(store, chat, new Date('2030-01-15T03:00:00Z'));
      await placedAt(store, canceled, hoursBefore(2));
      await placedAt(store, assistant, hoursBefore(3 * 24));
      await placedAt(store, browser, hoursBefore(10 * 24));
      await store.db.query(`update order_adjustments set occurred_at = $1`, [hoursBefore(0.5).toISOString()]);
      // Waiting: the assistant's order holds a card authorization lapsing in 5 hours; the browser's payment is overdue.
      await store.db.query(`update orders set payment_state = 'authorized', payment_authorized = total, payment_authorized_until = $2, payment_due_at = null where id = $1`, [
        assistant.id,
        new Date(NOW.getTime() + 5 * 3_600_000).toISOString(),
      ]);
      await store.db.query('update orders set payment_due_at = $2 where id = $1', [browser.id, hoursBefore(3 * 24).toISOString()]);
      // Stock: everything plenty, but two variants low.
      await store.db.query('update inventory_levels set on_hand = 100');
      await store.db.query('update inventory_levels set on_hand = 3 where variant_id = $1', [variant('ESP-DEC-10')]);
      await store.db.query('update inventory_levels set on_hand = 5 where variant_id = $1', [variant('ESP-RIS-10')]);
      await store.db.query('update inventory_levels set on_hand = 6 where variant_id = $1', [variant('ESP-CLA-10')]);
      // A mail about the chat order given up, its last error naming the buyer's address.
      await store.db.query(
        `update outbox set failed_at = $2, attempts = 7, last_error = '550 5.1.1 <ada@example.com>: no such mailbox'
          where id = (select min(id) from outbox where order_id = $1 and kind = 'mail')`,
        [chat.id, hoursBefore(1).toISOString()],
      );
    });
    after(() => store?.close());

    it('sales, orders and the average order of today, 7 and 30 days beside the days before; a canceled order counts nowhere; the refund in its period', async () => {
      const figures = await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC' });
      assert.equal(figures.today, '2030-01-15');
      assert.equal(figures.currency, 'USD');
      assert.deepEqual(period(figures, 'today'), {
        name: 'today',
        span: { from: '2030-01-15', to: '2030-01-15' },
        current: { sales: chat.total, orders: 1, averageOrder: chat.total, refunds: 500 },
        beforeSpan: { from: '2030-01-14', to: '2030-01-14' },
        before: { sales: 0, orders: 0, averageOrder: 0, refunds: 0 },
      });
      assert.deepEqual(period(figures, '7d'), {
        name: '7d',
        span: { from: '2030-01-09', to: '2030-01-15' },
        current: { sales: chat.total + assistant.total, orders: 2, averageOrder: Math.round((chat.total + assistant.total) / 2), refunds: 500 },
        beforeSpan: { from: '2030-01-02', to: '2030-01-08' },
        before: { sales: browser.total, orders: 1, averageOrder: browser.total, refunds: 0 },
      });
      const all = chat.total + assistant.total + browser.total;
      assert.deepEqual(period(figures, '30d'), {
        name: '30d',
        span: { from: '2029-12-17', to: '2030-01-15' },
        current: { sales: all, orders: 3, averageOrder: Math.round(all / 3), refunds: 500 },
        beforeSpan: { from: '2029-11-17', to: '2029-12-16' },
        before: { sales: 0, orders: 0, averageOrder: 0, refunds: 0 },
      });
    });

    it("days are the store's zone's: in New York the order of 03:00 UTC was yesterday's", async () => {
      const figures = await dashboardFigures(store.db, { now: NOW, timeZone: 'America/New_York' });
      assert.equal(figures.today, '2030-01-15');
      const today = period(figures, 'today');
      assert.deepEqual(today.current, { sales: 0, orders: 0, averageOrder: 0, refunds: 500 });
      assert.deepEqual(today.before, { sales: chat.total, orders: 1, averageOrder: chat.total, refunds: 0 });
      assert.equal(figures.ordersByDay.days.find((day) => day.day === '2030-01-14')?.total, 1);
    });

    it('orders per day for 30 days by who prepared them: the browser, then each platform', async () => {
      const { preparers, days } = (await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC' })).ordersByDay;
      assert.deepEqual(preparers, [
        { key: 'browser', prepared: 'browser', platform: null },
        { key: 'agent:assist.example:8443', prepared: 'agent', platform: 'assist.example:8443' },
        { key: 'agent:chat.example', prepared: 'agent', platform: 'chat.example' },
      ]);
      assert.equal(days.length, 30);
      assert.equal(days[0]!.day, '2029-12-17');
      assert.equal(days.at(-1)!.day, '2030-01-15');
      const nonEmpty = days.filter((day) => day.total > 0).map((day) => [day.day, day.byPreparer]);
      assert.deepEqual(nonEmpty, [
        ['2030-01-05', { browser: 1, 'agent:assist.example:8443': 0, 'agent:chat.example': 0 }],
        ['2030-01-12', { browser: 0, 'agent:assist.example:8443': 1, 'agent:chat.example': 0 }],
        ['2030-01-15', { browser: 0, 'agent:assist.example:8443': 0, 'agent:chat.example': 1 }],
      ]);
    });

    it('units sold per product over 30 days, most first, without the canceled order', async () => {
      const { products, otherUnits } = (await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC' })).unitsByProduct;
      const line = (order: Order) => order.lines[0]!;
      const expected = [
        { productId: String(line(chat).productId), title: line(chat).productTitle, units: 2, sales: line(chat).lineTotal },
        ...[assistant, browser]
          .map((order) => ({ productId: String(line(order).productId), title: line(order).productTitle, units: 1, sales: line(order).lineTotal }))
          .sort((a, b) => (a.title < b.title ? -1 : 1)),
      ];
      assert.deepEqual(products, expected);
      assert.equal(otherUnits, 0);
    });

    it('low stock: tracked variants at or below the threshold (5 unless told), the lowest first', async () => {
      const { lowStock } = await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC' });
      assert.equal(lowStock.threshold, 5);
      assert.equal(lowStock.count, 2);
      assert.deepEqual(
        lowStock.variants.map((v) => [v.sku, v.onHand]),
        [
          ['ESP-DEC-10', 3],
          ['ESP-RIS-10', 5],
        ],
      );
      const higher = await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC', lowStockAt: 6 });
      assert.equal(higher.lowStock.count, 3);
    });

    it('orders waiting for a capture, a shipment, a payment past due and a hold about to lapse: counts and numbers', async () => {
      const { waiting } = await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC' });
      assert.deepEqual(waiting, {
        capture: { count: 1, numbers: [assistant.number] },
        shipment: { count: 3, numbers: [browser.number, assistant.number, chat.number] },
        overdue: { count: 1, numbers: [browser.number] },
        expiring: { count: 1, numbers: [assistant.number] },
      });
      // Six hours later the hold has lapsed: no longer "about to".
      const later = await dashboardFigures(store.db, { now: new Date(NOW.getTime() + 6 * 3_600_000), timeZone: 'UTC' });
      assert.deepEqual(later.waiting.expiring, { count: 0, numbers: [] });
    });

    it('deliveries given up: how many, and the latest with kind, topic, order and the error without the address', async () => {
      const { failedDeliveries } = await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC' });
      assert.equal(failedDeliveries.count, 1);
      const [failed] = failedDeliveries.latest;
      assert.equal(failed!.kind, 'mail');
      assert.equal(failed!.orderNumber, chat.number);
      assert.equal(failed!.attempts, 7);
      assert.equal(failed!.lastError, '550 5.1.1 <…@example.com>: no such mailbox');
      assert.doesNotMatch(JSON.stringify(failedDeliveries), /ada@/);
    });

    it('kept between requests, the days before today still follow a cancel made since (on any instance: the latest cancel is read)', async () => {
      const cache = new DashboardCache();
      const first = await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC', cache });
      assert.deepEqual(await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC', cache }), first, 'the same figures from the kept days');
      await store.orders.cancel(store.db, String(browser.number), 'never paid');
      const after = await dashboardFigures(store.db, { now: NOW, timeZone: 'UTC', cache });
      assert.deepEqual(period(after, '7d').before, { sales: 0, orders: 0, averageOrder: 0, refunds: 0 });
      assert.equal(period(after, '30d').current.orders, 2);
      assert.equal(after.ordersByDay.days.find((day) => day.day === '2030-01-05')?.total, 0);
      assert.equal(after.unitsByProduct.products.length, 2);
    });

    it('an empty store: every figure zero, 30 empty days', async () => {
      const figures = await dashboardFigures(store.db, { now: new Date('2020-01-01T00:00:00Z'), timeZone: 'UTC' });
      assert.ok(figures.periods.every((p) => p.current.orders === 0 && p.before.sales === 0));
      assert.equal(figures.ordersByDay.days.length, 30);
      assert.deepEqual(figures.ordersByDay.preparers, []);
      assert.equal(addDays('2020-03-01', -1), '2020-02-29');
    });
  });
}
