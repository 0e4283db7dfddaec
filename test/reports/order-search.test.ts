/**
 * The orders list's filters and search (src/reports/order-search.ts), on both backends, over orders placed through the
 * real checkout: each filter (order state, payment, fulfilment, prepared by, platform, waiting, a date range in the
 * store's zone) and the search (number, email exact or by its start, any case) finds exactly its orders, newest first,
 * 50 a page; the query parameters read back into the same search; values the list does not know are left out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Order } from '../../src/orders/orders.js';
import { orderSearchFromQuery, orderSearchParams, searchOrders, type OrderSearch } from '../../src/reports/order-search.js';
import { openStore, type Store } from '../../src/store.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';
import { placedAt, placeOrderBy, variantOf } from './placing.js';

after(dropTestDatabases);

const NOW = new Date('2030-03-10T12:00:00Z');

describe('the list\'s query parameters', () => {
  it('read into a search and written back the same; unknown values, bad days and page 1 are left out', () => {
    const search = orderSearchFromQuery({
      status: 'placed',
      payment: 'captured',
      fulfilment: 'unshipped',
      prepared: 'agent',
      platform: 'Chat.Example:8443',
      waiting: 'shipment',
      from: '2030-03-01',
      to: '2030-03-10',
      q: ' Ada@Example ',
      page: '3',
    });
    assert.deepEqual(search, {
      status: 'placed',
      payment: 'captured',
      fulfilment: 'unshipped',
      prepared: 'agent',
      platform: 'chat.example:8443',
      waiting: 'shipment',
      from: '2030-03-01',
      to: '2030-03-10',
      q: 'Ada@Example',
      page: 3,
    });
    assert.deepEqual(orderSearchFromQuery(Object.fromEntries(orderSearchParams(search))), search);
    assert.deepEqual(
      orderSearchFromQuery({ status: 'lost', payment: ['captured', 'pending'], fulfilment: 'x', prepared: 'robot', platform: 'a b', from: '2030-02-30', to: 'soon', page: '1', q: '' }),
      {},
    );
    assert.equal(orderSearchParams({ page: 1 }).toString(), '');
  });
});

for (const backend of backends) {
  describe(`the orders list's filters and search (${backend.name})`, () => {
    let store: Store;
    let ada: Order;
    let bo: Order;
    let cy: Order;
    let di: Order;
    const context = { timeZone: 'UTC', now: NOW };
    const numbers = async (search: OrderSearch) => (await searchOrders(store.db, search, context)).rows.map((row) => row.number);

    before(async () => {
      const { db } = await backend.open({ migrated: true, demo: true });
      store = await openStore(testConfig(), { db, deliver: false });
      const line = (sku: string, quantity = 1) => [{ variantId: variantOf(store, sku), quantity }];
      ada = await placeOrderBy(store, { by: 'agent', platform: 'chat.example' }, [...line('ESP-CLA-10', 2), ...line('ESP-DEC-10')], 'Ada.Lovelace@Example.com');
      bo = await placeOrderBy(store, { by: 'agent', platform: 'assist.example' }, line('ESP-DEC-10'), 'bo@example.com');
      cy = await placeOrderBy(store, { by: 'browser' }, line('SLP-120'), 'adam@example.org');
      di = await placeOrderBy(store, { by: 'browser' }, line('ESP-CLA-10'), 'di@example.com');
      // Ada's order: paid, one of its two lines shipped. Bo's: paid and shipped. Di's: canceled.
      await store.orders.capture(store.db, String(ada.number));
      await store.orders.fulfill(store.db, String(ada.number), { lines: new Map([[ada.lines[0]!.id, 2]]) });
      await store.orders.capture(store.db, String(bo.number));
      await store.orders.fulfill(store.db, String(bo.number));
      await store.orders.cancel(store.db, String(di.number), 'the buyer asked');
      // Placed on the 8th (Di), 9th (Cy), 10th at 01:00 UTC (Bo) and 10th at 11:00 UTC (Ada).
      await placedAt(store, di, new Date('2030-03-08T12:00:00Z'));
      await placedAt(store, cy, new Date('2030-03-09T12:00:00Z'));
      await placedAt(store, bo, new Date('2030-03-10T01:00:00Z'));
      await placedAt(store, ada, new Date('2030-03-10T11:00:00Z'));
      // Cy's payment is overdue.
      await store.db.query('update orders set payment_due_at = $2 where id = $1', [cy.id, new Date('2030-03-09T12:00:00Z').toISOString()]);
    });
    after(() => store?.close());

    it('every order, newest first, with what the list shows of each', async () => {
      const page = await searchOrders(store.db, {}, context);
      assert.deepEqual(
        page.rows.map((row) => row.number),
        [ada.number, bo.number, cy.number, di.number],
      );
      assert.equal(page.total, 4);
      assert.equal(page.hasNext, false);
      const [first] = page.rows;
      assert.deepEqual(first, {
        id: ada.id,
        number: ada.number,
        createdAt: new Date('2030-03-10T11:00:00Z'),
        buyerEmail: 'Ada.Lovelace@example.com',
        total: ada.total,
        currency: 'USD',
        status: 'placed',
        paymentState: 'captured',
        fulfilmentState: 'partially_fulfilled',
        channel: 'agent',
        agentPlatform: 'chat.example',
      });
      assert.deepEqual(
        page.rows.map((row) => row.fulfilmentState),
        ['partially_fulfilled', 'fulfilled', 'unfulfilled', 'canceled'],
      );
    });

    it('filters: order state, payment, fulfilment, who prepared it, its platform, what it waits for', async () => {
      assert.deepEqual(await numbers({ status: 'canceled' }), [di.number]);
      assert.deepEqual(await numbers({ status: 'placed' }), [ada.number, bo.number, cy.number]);
      assert.deepEqual(await numbers({ payment: 'captured' }), [ada.number, bo.number]);
      assert.deepEqual(await numbers({ payment: 'pending' }), [cy.number]);
      assert.deepEqual(await numbers({ fulfilment: 'partial' }), [ada.number]);
      assert.deepEqual(await numbers({ fulfilment: 'unfulfilled' }), [cy.number]);
      assert.deepEqual(await numbers({ fulfilment: 'unshipped' }), [ada.number, cy.number]);
      assert.deepEqual(await numbers({ fulfilment: 'fulfilled' }), [bo.number]);
      assert.deepEqual(await numbers({ fulfilment: 'canceled' }), [di.number]);
      assert.deepEqual(await numbers({ prepared: 'agent' }), [ada.number, bo.number]);
      assert.deepEqual(await numbers({ prepared: 'browser' }), [cy.number, di.number]);
      assert.deepEqual(await numbers({ platform: 'assist.example' }), [bo.number]);
      assert.deepEqual(await numbers({ prepared: 'agent', platform: 'nobody.example' }), []);
      assert.deepEqual(await numbers({ waiting: 'shipment' }), [ada.number, cy.number]);
      assert.deepEqual(await numbers({ waiting: 'overdue' }), [cy.number]);
      assert.deepEqual(await numbers({ waiting: 'capture' }), []);
      assert.deepEqual(await numbers({ status: 'placed', prepared: 'browser', fulfilment: 'unshipped' }), [cy.number]);
    });

    it("a date range is days in the store's zone, both ends included", async () => {
      assert.deepEqual(await numbers({ from: '2030-03-10', to: '2030-03-10' }), [ada.number, bo.number]);
      assert.deepEqual(await numbers({ from: '2030-03-09' }), [ada.number, bo.number, cy.number]);
      assert.deepEqual(await numbers({ to: '2030-03-08' }), [di.number]);
      // In New York, 01:00 UTC on the 10th is the evening of the 9th.
      const newYork = await searchOrders(store.db, { from: '2030-03-10', to: '2030-03-10' }, { ...context, timeZone: 'America/New_York' });
      assert.deepEqual(
        newYork.rows.map((row) => row.number),
        [ada.number],
      );
    });

    it('search: the order number (with or without #), an email exact or by its start, whatever its case', async () => {
      assert.deepEqual(await numbers({ q: String(bo.number) }), [bo.number]);
      assert.deepEqual(await numbers({ q: `#${cy.number}` }), [cy.number]);
      assert.deepEqual(await numbers({ q: 'ada.lovelace@example.com' }), [ada.number]);
      assert.deepEqual(await numbers({ q: 'ADA.' }), [ada.number]);
      assert.deepEqual(await numbers({ q: 'lovelace' }), [], 'a start, not a part');
      assert.deepEqual(await numbers({ q: 'ad' }), [ada.number, cy.number]);
      assert.deepEqual(await numbers({ q: 'a%' }), [], 'a % is a character, not a wildcard');
      assert.deepEqual(await numbers({ q: '_' }), []);
      assert.deepEqual(await numbers({ q: 'nobody@example.com' }), []);
    });

    it('pages of the given size, newest first, and whether there is a next one', async () => {
      const first = await searchOrders(store.db, {}, { ...context, pageSize: 3 });
      assert.deepEqual(
        first.rows.map((row) => row.number),
        [ada.number, bo.number, cy.number],
      );
      assert.equal(first.hasNext, true);
      const second = await searchOrders(store.db, { page: 2 }, { ...context, pageSize: 3 });
      assert.deepEqual(
        second.rows.map((row) => row.number),
        [di.number],
      );
      assert.equal(second.hasNext, false);
      assert.equal(second.total, 4);
      const beyond = await searchOrders(store.db, { page: 9 }, { ...context, pageSize: 3 });
      assert.deepEqual(beyond.rows, []);
      assert.equal(beyond.total, 4);
    });
  });
}
