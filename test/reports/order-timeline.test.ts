/**
 * An order's one timeline (src/reports/order-timeline.ts), on both backends, for an order placed through the real
 * checkout and then worked on from the terminal: its checkout's moves, the buyer's approval (how, when, the digest),
 * the order placed by which platform's agent, the shipment with its tracking, the refund, the mails about it
 * (delivered, waiting, given up with the error but not the address) and what people did (the audit log), oldest first.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TERMINAL_ACTOR } from '../../src/audit/audit-log.js';
import type { Order } from '../../src/orders/orders.js';
import { approvalOf, orderTimeline, type TimelineEntry } from '../../src/reports/order-timeline.js';
import { openStore, type Store } from '../../src/store.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';
import { placeOrderBy, variantOf } from './placing.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`an order's timeline (${backend.name})`, () => {
    let store: Store;
    let order: Order;
    let timeline: TimelineEntry[];
    before(async () => {
      const { db } = await backend.open({ migrated: true, demo: true });
      store = await openStore(testConfig(), { db, deliver: false });
      order = await placeOrderBy(store, { by: 'agent', platform: 'chat.example' }, [{ variantId: variantOf(store, 'ESP-CLA-10'), quantity: 2 }], 'ada@example.com');
      await store.orders.capture(store.db, order.id, undefined, TERMINAL_ACTOR);
      await store.orders.fulfill(store.db, order.id, { carrier: 'UPS', trackingNumber: '1Z999' }, TERMINAL_ACTOR);
      await store.orders.refund(store.db, order.id, 500, 'dented box', TERMINAL_ACTOR);
      const mails = await store.db.query<{ id: string }>(`select id from outbox where order_id = $1 order by id`, [order.id]);
      assert.ok(mails.length >= 2, 'mails about the order');
      await store.db.query('update outbox set sent_at = now() where id = $1', [mails[0]!.id]);
      await store.db.query(`update outbox set failed_at = now(), attempts = 5, last_error = 'mailbox ada@example.com is full' where id = $1`, [mails[1]!.id]);
      timeline = await orderTimeline(store.db, order.id);
    });
    after(() => store?.close());

    it('how the buyer approved: the proof, when, and the digest of what they approved', async () => {
      const [approval] = await store.db.query<{ digest: string }>(`select digest from checkout_approvals where checkout_id = $1 and used_at is not null`, [order.checkoutId]);
      const approved = await approvalOf(store.db, order.id);
      assert.equal(approved?.provenBy, 'link', 'this store asks no proof (APPROVAL_PROOF=link)');
      assert.equal(approved?.digest, approval!.digest);
      assert.ok(approved!.provenAt.getTime() <= Date.now());
      assert.equal(await approvalOf(store.db, 'ord_none'), undefined);
      const entry = timeline.find((e) => e.source === 'approval');
      assert.equal(entry?.what, 'Approved by the buyer by the approval link alone (no proof asked)');
      assert.equal(entry?.detail, `digest ${approval!.digest}`);
    });

    it("the checkout's moves, who made them, then the order placed by the platform's agent", () => {
      const moves = timeline.filter((e) => e.source === 'checkout');
      assert.equal(moves[0]!.what, 'Checkout created (ready to complete)');
      assert.equal(moves[0]!.by, 'agent');
      assert.ok(moves.some((e) => e.what === "Checkout ready to complete → waiting for the buyer's approval"));
      assert.ok(moves.some((e) => e.what === 'Checkout being completed → completed' && e.by === 'system'));
      const placed = timeline.find((e) => e.source === 'order');
      assert.equal(placed?.what, `Order #${order.number} placed, prepared by an agent of chat.example`);
    });

    it('the shipment with its tracking, the refund with its reason, and each person\'s action from the audit log', () => {
      assert.deepEqual(
        timeline.filter((e) => e.source === 'fulfilment').map((e) => [e.what, e.detail]),
        [['Shipped 2 units', 'UPS 1Z999']],
      );
      assert.deepEqual(
        timeline.filter((e) => e.source === 'adjustment').map((e) => [e.what, e.detail]),
        [['Refunded $5.00', 'dented box']],
      );
      const staff = timeline.filter((e) => e.source === 'staff');
      assert.deepEqual(
        staff.map((e) => [e.by, e.detail]),
        [
          ['terminal', 'order.capture'],
          ['terminal', 'order.fulfill'],
          ['terminal', 'order.refund'],
        ],
      );
      assert.match(staff[2]!.what, /refunded \$5\.00/);
    });

    it('the messages about it: delivered, waiting, given up with the error and without the address', () => {
      const deliveries = timeline.filter((e) => e.source === 'delivery');
      assert.equal(deliveries[0]!.delivery, 'delivered');
      assert.match(deliveries[0]!.what, /^Mail order\.\S+: delivered$/);
      assert.equal(deliveries[1]!.delivery, 'failed');
      assert.equal(deliveries[1]!.attempts, 5);
      assert.equal(deliveries[1]!.detail, 'mailbox …@example.com is full');
      assert.ok(deliveries.slice(2).every((e) => e.delivery === 'pending'));
      assert.doesNotMatch(JSON.stringify(timeline), /ada@example\.com/);
    });

    it('oldest first; an unknown order has none', async () => {
      for (let i = 1; i < timeline.length; i++) assert.ok(timeline[i - 1]!.at.getTime() <= timeline[i]!.at.getTime());
      assert.deepEqual(await orderTimeline(store.db, 'ord_none'), []);
    });
  });
}
