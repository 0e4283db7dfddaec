/**
 * The merchant's moves on an order (src/orders/order-actions.ts), on both backends, on orders placed through the
 * real checkout (the buyer's approval): capture, fulfil, cancel and refund each run in one transaction on the
 * locked order row; a move that is not allowed is refused with OrderActionRefused and changes nothing; canceled
 * units go back to stock exactly once, and only the ones taken from stock; two refunds at once never give back
 * more than was captured; and every move writes its outbox rows (the buyer's mail) in its own transaction.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OrderActionRefused, OrderActions } from '../../src/orders/order-actions.js';
import type { OrderEventSubscriber } from '../../src/orders/order-events.js';
import { readOrder, type Order } from '../../src/orders/orders.js';
import { openStore, orderEventSubscribers, type Store } from '../../src/store.js';
import { placeOrder } from '../helpers/orders.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';

after(dropTestDatabases);

const BUYER = { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' };

/** Line of an order to place: a SKU of the demo catalog and its units. */
type Wanted = [sku: string, quantity: number];

for (const backend of backends) {
  describe(`the merchant's moves on an order (${backend.name})`, () => {
    let store: Store;
    before(async () => {
      const { db } = await backend.open({ migrated: true });
      store = await openStore(testConfig(), { db });
    });
    after(() => store.close());

    const variant = (sku: string): number => {
      const found = store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
      if (!found) throw new Error(`no variant ${sku}`);
      return found.id;
    };

    const onHand = async (sku: string) =>
      (await store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variant(sku)]))[0]!.on_hand;

    /** An order placed the way a buyer places one: an agent's checkout, then the buyer's approval. */
    const placed = (wanted: Wanted[]): Promise<Order> =>
      placeOrder(
        store,
        wanted.map(([sku, quantity]) => ({ variantId: variant(sku), quantity })),
        BUYER,
      );

    const reread = async (order: Order) => (await readOrder(store.db, order.id))!;

    const outboxTopics = async (order: Order) =>
      (await store.db.query<{ topic: string }>('select topic from outbox where order_id = $1 order by id', [order.id])).map((row) => row.topic);

    /** Everything a move may change for this order: the order with its lines and history, its payment, its outbox rows, its stock. */
    async function everything(order: Order) {
      return {
        order: await reread(order),
        payments: await store.db.query('select state, amount from payments where order_id = $1 order by id', [order.id]),
        outbox: await store.db.query('select id, kind, topic, payload from outbox where order_id = $1 order by id', [order.id]),
        stock: await Promise.all(order.lines.map((line) => onHand(line.sku!))),
      };
    }

    /** The move is refused with OrderActionRefused, its message matching `reason`. */
    const refused = (move: () => Promise<unknown>, reason: RegExp) =>
      assert.rejects(
        async () => move(),
        (error: unknown) => {
          assert.ok(error instanceof OrderActionRefused, `OrderActionRefused, not ${String(error)}`);
          assert.match(error.message, reason);
          return true;
        },
      );

    /** The move is refused and the order, its payment, its outbox rows and its stock are as they were. */
    async function refusedChangingNothing(order: Order, move: () => Promise<unknown>, reason: RegExp): Promise<void> {
      const before = await everything(order);
      await refused(move, reason);
      assert.deepEqual(await everything(order), before);
    }

    describe('capture', () => {
      it('captures a pending order: captured is the total, the payment state and the payment row are captured', async () => {
        const order = await placed([['ESP-CLA-10', 2]]);
        assert.equal(order.paymentState, 'pending');
        assert.equal(order.captured, 0);
        const captured = await store.orders.capture(store.db, order.id);
        assert.equal(captured.captured, order.total);
        assert.equal(captured.paymentState, 'captured');
        assert.equal(captured.refunded, 0);
        const stored = await reread(order);
        assert.deepEqual([stored.captured, stored.paymentState, stored.status], [order.total, 'captured', 'placed']);
        assert.deepEqual(await store.db.query('select state, amount from payments where order_id = $1', [order.id]), [{ state: 'captured', amount: order.total }]);
      });

      it('a second capture is refused and changes nothing', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        await store.orders.capture(store.db, `#${order.number}`);
        await refusedChangingNothing(order, () => store.orders.capture(store.db, order.id), /already paid/);
      });

      it('capturing an order canceled before anything shipped is refused and changes nothing', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        await store.orders.cancel(store.db, order.id);
        await refusedChangingNothing(order, () => store.orders.capture(store.db, order.id), /canceled before anything shipped/);
        assert.equal((await reread(order)).captured, 0);
      });

      it('an order canceled after a shipment is not voided: what shipped is still paid for, and a capture takes that (not the canceled line)', async () => {
        const order = await placed([
          ['ESP-CLA-10', 1],
          ['ESP-DEC-10', 1],
        ]);
        await store.orders.fulfill(store.db, order.id, { lines: new Map([[order.lines[0]!.id, 1]]) });
        const canceled = await store.orders.cancel(store.db, order.id);
        assert.equal(canceled.paymentState, 'pending');
        const paid = await store.orders.capture(store.db, order.id);
        assert.equal(paid.paymentState, 'captured');
        // The shipped line, its shipping, and its share of the tax (none here): not the canceled line's price.
        assert.equal(order.tax, 0);
        assert.equal(paid.captured, order.lines[0]!.lineTotal + order.shipping);
        assert.deepEqual(paid.payment, { ...order.payment, state: 'captured', captured: paid.captured });
        await refused(() => store.orders.capture(store.db, order.id), /already paid/);
      });
    });

    describe('fulfil', () => {
      it('ships everything by default: every line fulfilled in full, one fulfillment event with its tracking stored', async () => {
        const order = await placed([
          ['ESP-CLA-10', 2],
          ['ESP-DEC-10', 1],
        ]);
        const shipped = await store.orders.fulfill(store.db, order.id, {
          trackingNumber: ' 1Z999AA10123456784 ',
          trackingUrl: 'https://track.example/1Z999AA10123456784',
          carrier: 'UPS',
        });
        assert.deepEqual(
          shipped.lines.map((line) => [line.id, line.quantity, line.fulfilled, line.canceled]),
          [
            ['li_1', 2, 2, 0],
            ['li_2', 1, 1, 0],
          ],
        );
        const stored = await reread(order);
        assert.deepEqual(stored.lines, shipped.lines);
        assert.equal(stored.fulfillments.length, 1);
        const [event] = stored.fulfillments;
        assert.deepEqual(event!.lines, [
          { lineId: 'li_1', quantity: 2 },
          { lineId: 'li_2', quantity: 1 },
        ]);
        const rows = await store.db.query('select type, tracking_number, tracking_url, carrier from order_fulfillments where order_id = $1', [order.id]);
        assert.deepEqual(rows, [{ type: 'shipped', tracking_number: '1Z999AA10123456784', tracking_url: 'https://track.example/1Z999AA10123456784', carrier: 'UPS' }]);
        assert.equal(stored.status, 'placed');
      });

      it('ships part of an order by line id and then by SKU; each shipment is its own event', async () => {
        const order = await placed([
          ['ESP-CLA-10', 2],
          ['ESP-DEC-10', 3],
        ]);
        await store.orders.fulfill(store.db, order.id, { lines: new Map([['li_1', 1]]) });
        let stored = await reread(order);
        assert.deepEqual(
          stored.lines.map((line) => line.fulfilled),
          [1, 0],
        );
        await store.orders.fulfill(store.db, order.id, { lines: new Map([['ESP-DEC-10', 2]]), carrier: 'USPS' });
        stored = await reread(order);
        assert.deepEqual(
          stored.lines.map((line) => line.fulfilled),
          [1, 2],
        );
        assert.deepEqual(
          stored.fulfillments.map((f) => [f.lines, f.carrier, f.trackingNumber, f.trackingUrl]),
          [
            [[{ lineId: 'li_1', quantity: 1 }], null, null, null],
            [[{ lineId: 'li_2', quantity: 2 }], 'USPS', null, null],
          ],
        );
        // What is left ships by default: one of each.
        const rest = await store.orders.fulfill(store.db, order.id);
        assert.deepEqual(rest.fulfillments.at(-1)!.lines, [
          { lineId: 'li_1', quantity: 1 },
          { lineId: 'li_2', quantity: 1 },
        ]);
      });

      it('shipping more units than are left is refused and changes nothing', async () => {
        const order = await placed([['ESP-CLA-10', 2]]);
        await refusedChangingNothing(order, () => store.orders.fulfill(store.db, order.id, { lines: new Map([['li_1', 3]]) }), /li_1 .* has 2 units left to ship, not 3/);
        await store.orders.fulfill(store.db, order.id, { lines: new Map([['li_1', 1]]) });
        await refusedChangingNothing(order, () => store.orders.fulfill(store.db, order.id, { lines: new Map([['ESP-CLA-10', 2]]) }), /1 unit left to ship, not 2/);
      });

      it('a line the order does not have is refused and changes nothing', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        await refusedChangingNothing(order, () => store.orders.fulfill(store.db, order.id, { lines: new Map([['li_9', 1]]) }), /has no line "li_9"/);
        await refusedChangingNothing(order, () => store.orders.fulfill(store.db, order.id, { lines: new Map([['ESP-DEC-10', 1]]) }), /has no line "ESP-DEC-10"/);
      });

      it('an order shipped in full is refused: nothing is left', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        await store.orders.fulfill(store.db, order.id);
        await refusedChangingNothing(order, () => store.orders.fulfill(store.db, order.id), /nothing is left/);
      });

      it('a tracking URL that is not http or https (javascript:x) is refused and changes nothing', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        await refusedChangingNothing(order, () => store.orders.fulfill(store.db, order.id, { trackingUrl: 'javascript:x' }), /http or https/);
        await refusedChangingNothing(order, () => store.orders.fulfill(store.db, order.id, { trackingUrl: 'not a url' }), /not an absolute URL/);
      });

      it('a canceled order is refused: nothing can ship', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        await store.orders.cancel(store.db, order.id);
        await refusedChangingNothing(order, () => store.orders.fulfill(store.db, order.id), /canceled; nothing can ship/);
      });
    });

    describe('cancel', () => {
      it('puts back exactly the units the order took from stock', async () => {
        const [classico, decaf] = [await onHand('ESP-CLA-10'), await onHand('ESP-DEC-10')];
        const order = await placed([
          ['ESP-CLA-10', 2],
          ['ESP-DEC-10', 3],
        ]);
        assert.deepEqual([await onHand('ESP-CLA-10'), await onHand('ESP-DEC-10')], [classico - 2, decaf - 3]);
        const canceled = await store.orders.cancel(store.db, order.id, 'the buyer asked');
        assert.deepEqual([await onHand('ESP-CLA-10'), await onHand('ESP-DEC-10')], [classico, decaf]);
        assert.equal(canceled.status, 'canceled');
        assert.equal(canceled.cancelReason, 'the buyer asked');
        assert.ok(canceled.canceledAt instanceof Date);
        assert.deepEqual(
          canceled.lines.map((line) => [line.canceled, line.fulfilled]),
          [
            [2, 0],
            [3, 0],
          ],
        );
        assert.deepEqual(
          canceled.adjustments.map((a) => [a.type, a.amount, a.lines, a.reason]),
          [
            [
              'cancellation',
              0,
              [
                { lineId: 'li_1', quantity: -2 },
                { lineId: 'li_2', quantity: -3 },
              ],
              'the buyer asked',
            ],
          ],
        );
      });

      it('a reason or a tracking number with a terminal escape, a bidi override or an invisible character is refused and changes nothing', async () => {
        const order = await placed([['ESP-LUN-10', 1]]);
        await refusedChangingNothing(order, () => store.orders.cancel(store.db, order.id, 'paid\u001b[2J'), /the reason contains a control character/);
        await refusedChangingNothing(order, () => store.orders.cancel(store.db, order.id, '\u202edeksa reyub'), /the reason contains a character that reorders text/);
        await refusedChangingNothing(order, () => store.orders.cancel(store.db, order.id, 'a\u200bb'), /the reason contains an invisible formatting character/);
      });

      it('canceling twice: the second is refused and the stock is put back once', async () => {
        const stock = await onHand('ESP-LUN-10');
        const order = await placed([['ESP-LUN-10', 4]]);
        await store.orders.cancel(store.db, order.id);
        assert.equal(await onHand('ESP-LUN-10'), stock);
        await refusedChangingNothing(order, () => store.orders.cancel(store.db, order.id), /already canceled/);
        assert.equal(await onHand('ESP-LUN-10'), stock);
      });

      it('two cancels at once: one cancels, the other is refused, and the stock is put back once', async () => {
        for (let round = 0; round < 3; round += 1) {
          const stock = await onHand('ESP-LUN-10');
          const order = await placed([['ESP-LUN-10', 4]]);
          const outcomes = await Promise.allSettled([store.orders.cancel(store.db, order.id), store.orders.cancel(store.db, order.id)]);
          assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
          const rejection = outcomes.find((o) => o.status === 'rejected')!;
          assert.ok(rejection.reason instanceof OrderActionRefused, String(rejection.reason));
          assert.equal(await onHand('ESP-LUN-10'), stock, `round ${round}: the 4 units are back once`);
          assert.equal((await reread(order)).adjustments.length, 1);
        }
      });

      it('after a partial shipment only the rest is canceled and put back', async () => {
        const stock = await onHand('ESP-RIS-10');
        const order = await placed([['ESP-RIS-10', 3]]);
        await store.orders.fulfill(store.db, order.id, { lines: new Map([['li_1', 1]]) });
        const canceled = await store.orders.cancel(store.db, order.id);
        assert.equal(await onHand('ESP-RIS-10'), stock - 1, 'the shipped unit stays out of stock');
        assert.deepEqual(
          canceled.lines.map((line) => [line.quantity, line.fulfilled, line.canceled]),
          [[3, 1, 2]],
        );
        assert.deepEqual(canceled.adjustments.at(-1)!.lines, [{ lineId: 'li_1', quantity: -2 }]);
      });

      it('an order shipped in full is refused and changes nothing', async () => {
        const order = await placed([['ESP-RIS-10', 2]]);
        await store.orders.fulfill(store.db, order.id);
        await refusedChangingNothing(order, () => store.orders.cancel(store.db, order.id), /shipped in full/);
      });

      it("an unpaid order's payment is voided; a paid one keeps its capture", async () => {
        const unpaid = await placed([['ESP-RIS-10', 1]]);
        const canceled = await store.orders.cancel(store.db, unpaid.id);
        assert.equal(canceled.paymentState, 'voided');
        assert.equal((await reread(unpaid)).paymentState, 'voided');
        assert.deepEqual(await store.db.query('select state from payments where order_id = $1', [unpaid.id]), [{ state: 'voided' }]);

        const paid = await placed([['ESP-RIS-10', 1]]);
        await store.orders.capture(store.db, paid.id);
        const canceledPaid = await store.orders.cancel(store.db, paid.id);
        assert.deepEqual([canceledPaid.paymentState, canceledPaid.captured], ['captured', paid.total]);
        assert.deepEqual(await store.db.query('select state from payments where order_id = $1', [paid.id]), [{ state: 'captured' }]);
      });

      describe('a back-orderable variant sold beyond its stock', () => {
        const SKU = 'SLP-120';
        let previous: number;
        before(async () => {
          previous = await onHand(SKU);
          await store.db.transaction(async (tx) => {
            await tx.query(`update variants set inventory_policy = 'continue' where id = $1`, [variant(SKU)]);
            await tx.query('update catalog_version set version = version + 1');
          });
          await store.catalog.refresh(store.db);
        });
        after(async () => {
          await store.db.transaction(async (tx) => {
            await tx.query(`update variants set inventory_policy = 'deny' where id = $1`, [variant(SKU)]);
            await tx.query('update catalog_version set version = version + 1');
          });
          await store.catalog.refresh(store.db);
          await store.inventory.setOnHand(store.db, SKU, previous);
        });

        it('canceling puts back only the units taken from stock, not the backordered ones', async () => {
          await store.inventory.setOnHand(store.db, SKU, 2);
          const order = await placed([[SKU, 5]]);
          assert.equal(order.lines[0]!.backordered, 3);
          assert.equal((await reread(order)).lines[0]!.backordered, 3);
          assert.equal(await onHand(SKU), 0);
          const canceled = await store.orders.cancel(store.db, order.id);
          assert.equal(await onHand(SKU), 2);
          assert.equal(canceled.lines[0]!.canceled, 5);
        });

        it('after a shipment (in-stock units ship first), canceling puts back only the in-stock units left', async () => {
          await store.inventory.setOnHand(store.db, SKU, 2);
          const order = await placed([[SKU, 5]]);
          await store.orders.fulfill(store.db, order.id, { lines: new Map([[SKU, 1]]) });
          await store.orders.cancel(store.db, order.id);
          assert.equal(await onHand(SKU), 1, '2 taken, 1 shipped: 1 goes back; the 3 backordered never were in stock');
        });
      });
    });

    describe('refund', () => {
      it('is refused before the payment was captured, and changes nothing', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        await refusedChangingNothing(order, () => store.orders.refund(store.db, order.id, 100), /no captured payment/);
      });

      it('refunds part, then the rest: partially_refunded, then refunded; each refund is an adjustment', async () => {
        const order = await placed([['ESP-CLA-10', 2]]);
        await store.orders.capture(store.db, order.id);
        const part = await store.orders.refund(store.db, order.id, 500, 'one box arrived damaged');
        assert.deepEqual([part.refunded, part.captured, part.paymentState], [500, order.total, 'partially_refunded']);
        const rest = await store.orders.refund(store.db, order.id, order.total - 500);
        assert.deepEqual([rest.refunded, rest.paymentState], [order.total, 'refunded']);
        const stored = await reread(order);
        assert.deepEqual([stored.refunded, stored.paymentState], [order.total, 'refunded']);
        assert.deepEqual(
          stored.adjustments.map((a) => [a.type, a.amount, a.reason]),
          [
            ['refund', -500, 'one box arrived damaged'],
            ['refund', -(order.total - 500), null],
          ],
        );
        await refusedChangingNothing(order, () => store.orders.refund(store.db, order.id, 1), /more than order .* can give back/);
      });

      it('more than was captured is refused and changes nothing', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        await store.orders.capture(store.db, order.id);
        await refusedChangingNothing(order, () => store.orders.refund(store.db, order.id, order.total + 1), /more than order/);
        await store.orders.refund(store.db, order.id, 300);
        await refusedChangingNothing(order, () => store.orders.refund(store.db, order.id, order.total - 299), /more than order/);
        assert.equal((await reread(order)).refunded, 300);
      });

      it('two refunds at once that together exceed the capture: exactly one succeeds, refunded never exceeds captured', async () => {
        for (let round = 0; round < 5; round += 1) {
          const order = await placed([['ESP-DEC-10', 2]]);
          await store.orders.capture(store.db, order.id);
          // Each alone fits (60 % of the capture); both together would give back 120 %.
          const amount = Math.ceil(order.total * 0.6);
          const outcomes = await Promise.allSettled([store.orders.refund(store.db, order.id, amount), store.orders.refund(store.db, order.id, amount)]);
          assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
          const rejection = outcomes.find((o) => o.status === 'rejected')!;
          assert.ok(rejection.reason instanceof OrderActionRefused, String(rejection.reason));
          const stored = await reread(order);
          assert.equal(stored.refunded, amount, `round ${round}`);
          assert.ok(stored.refunded <= stored.captured);
          assert.equal(stored.paymentState, 'partially_refunded');
          const refunds = stored.adjustments.filter((a) => a.type === 'refund');
          assert.equal(refunds.length, 1, `round ${round}: one refund recorded`);
          assert.equal(-refunds.reduce((sum, a) => sum + a.amount, 0), stored.refunded);
          assert.equal((await outboxTopics(order)).filter((topic) => topic === 'order.refunded').length, 1, `round ${round}: one refund mail`);
        }
      });

      it('an amount that is not a positive whole number of cents is refused', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        await store.orders.capture(store.db, order.id);
        for (const amount of [0, -100, 1.5, Number.NaN]) {
          await refusedChangingNothing(order, () => store.orders.refund(store.db, order.id, amount), /positive amount/);
        }
      });
    });

    describe('the outbox', () => {
      it("each move writes its outbox rows: the buyer's mail for fulfilled, canceled and refunded; none for captured", async () => {
        const order = await placed([['ESP-CLA-10', 3]]);
        assert.deepEqual(await outboxTopics(order), ['order.placed']);
        await store.orders.capture(store.db, order.id);
        assert.deepEqual(await outboxTopics(order), ['order.placed'], 'a capture mails nobody');
        await store.orders.fulfill(store.db, order.id, { lines: new Map([['li_1', 1]]) });
        await store.orders.refund(store.db, order.id, 200);
        await store.orders.cancel(store.db, order.id);
        assert.deepEqual(await outboxTopics(order), ['order.placed', 'order.fulfilled', 'order.refunded', 'order.canceled']);
        const rows = await store.db.query<{ kind: string; payload: { to: string; subject: string } | string; sent_at: Date | null }>(
          'select kind, payload, sent_at from outbox where order_id = $1 order by id',
          [order.id],
        );
        const payloads = rows.map((row) => (typeof row.payload === 'string' ? (JSON.parse(row.payload) as { to: string; subject: string }) : row.payload));
        assert.deepEqual(
          rows.map((row) => [row.kind, row.sent_at]),
          rows.map(() => ['mail', null]),
        );
        assert.deepEqual(
          payloads.map((p) => p.to),
          rows.map(() => BUYER.email),
        );
        assert.match(payloads[1]!.subject, new RegExp(`part of order #${order.number} shipped`));
        assert.match(payloads[2]!.subject, new RegExp(`refund of \\$2\\.00 for order #${order.number}`));
        assert.match(payloads[3]!.subject, new RegExp(`order #${order.number} canceled`));
      });

      it('a refused move writes no outbox row', async () => {
        const order = await placed([['ESP-CLA-10', 1]]);
        const rows = await outboxTopics(order);
        await refused(() => store.orders.refund(store.db, order.id, 100), /no captured payment/);
        await refused(() => store.orders.fulfill(store.db, order.id, { lines: new Map([['li_2', 1]]) }), /no line/);
        await store.orders.cancel(store.db, order.id);
        const afterCancel = await outboxTopics(order);
        await refused(() => store.orders.cancel(store.db, order.id), /already canceled/);
        await refused(() => store.orders.fulfill(store.db, order.id), /canceled/);
        await refused(() => store.orders.capture(store.db, order.id), /canceled/);
        assert.deepEqual(afterCancel, [...rows, 'order.canceled']);
        assert.deepEqual(await outboxTopics(order), afterCancel);
      });

      it('the outbox rows are written in the move\'s transaction: a subscriber failing after them rolls back the move and its rows', async () => {
        const order = await placed([['ESP-CLA-10', 2]]);
        const seenInTransaction: string[][] = [];
        const failing: OrderEventSubscriber = async (tx, event) => {
          const rows = await tx.query<{ topic: string }>('select topic from outbox where order_id = $1 order by id', [event.order.id]);
          seenInTransaction.push(rows.map((row) => row.topic));
          throw new Error('the subscriber failed');
        };
        const actions = new OrderActions({ inventory: store.inventory, subscribers: [...orderEventSubscribers(store.config), failing] });
        const stock = await onHand('ESP-CLA-10');
        const before = await everything(order);
        await assert.rejects(actions.fulfill(store.db, order.id), /the subscriber failed/);
        await assert.rejects(actions.cancel(store.db, order.id), /the subscriber failed/);
        assert.deepEqual(seenInTransaction, [
          ['order.placed', 'order.fulfilled'],
          ['order.placed', 'order.canceled'],
        ]);
        assert.deepEqual(await everything(order), before);
        assert.equal(await onHand('ESP-CLA-10'), stock, 'the canceled units went back inside the rolled-back transaction only');
      });
    });
  });
}
