/**
 * The order's payment through the provider port, on both backends, on orders placed through the real checkout:
 * the manual provider's instructions and due date kept on the order and its capture in parts; a provider that holds
 * the buyer's money (a recording provider implementing the port: the Stripe adapter comes later) captured at the
 * first shipment (CAPTURE_ON=fulfillment) or by command, released by a cancel, refunded never above what was
 * captured with two refunds racing, its refusals and silences, and its events applied once. The provider is called
 * outside any transaction: while it is slow, the order's row can be locked by another transaction.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OrderActionRefused, OrderActions } from '../../src/orders/order-actions.js';
import { readOrder, type Order } from '../../src/orders/orders.js';
import { manualProvider } from '../../src/payments/manual-provider.js';
import type {
  OperationOutcome,
  PaymentProvider,
  PaymentSessionRequest,
  PaymentStep,
  ProviderAuthorization,
  ProviderOperation,
  SessionOutcome,
} from '../../src/payments/payment-provider.js';
import { openStore, type Store } from '../../src/store.js';
import { placeOrder } from '../helpers/orders.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';

after(dropTestDatabases);

const DAY_MS = 24 * 60 * 60 * 1000;

interface Call extends ProviderOperation {
  kind: 'capture' | 'cancel' | 'refund';
}

/**
 * A provider that holds the buyer's money, as Stripe does: each order starts authorized for its total, with a
 * reference of its own. It records every call; `answer` decides what it says (by default: done), and may wait.
 */
class HoldingProvider implements PaymentProvider {
  readonly name = 'stripe' as const;
  readonly holdsFunds = true;
  calls: Call[] = [];
  answer: (call: Call) => Promise<OperationOutcome> = async () => ({ ok: true, providerReference: `re_${this.calls.length}` });
  private next = 0;
  /** Each hosted page begun, as the buyer pays it at once: what it was begun for. */
  private readonly sessions = new Map<string, PaymentSessionRequest>();
  async begin(request: PaymentSessionRequest): Promise<PaymentStep> {
    const sessionId = `cs_test_${this.sessions.size + 1}_${request.idempotencyKey.slice(0, 8)}`;
    this.sessions.set(sessionId, request);
    return { kind: 'redirect', url: `https://pay.example/${sessionId}`, sessionId, expiresAt: request.expiresAt };
  }
  async expire(sessionId: string): Promise<'expired'> {
    this.sessions.delete(sessionId);
    return 'expired';
  }
  async confirm(sessionId: string): Promise<SessionOutcome> {
    const paid = this.sessions.get(sessionId);
    if (!paid) return { kind: 'closed', reason: 'no such session' };
    this.next += 1;
    return {
      kind: 'authorized',
      checkoutId: paid.checkoutId,
      digest: paid.digest,
      reference: `pi_test_${Date.now()}_${this.next}`,
      amount: paid.total,
      currency: paid.currency,
      authorizedUntil: new Date(Date.now() + 7 * DAY_MS),
    };
  }
  start(order: { total: number; placedAt: Date }, authorization?: ProviderAuthorization) {
    return {
      provider: 'stripe' as const,
      state: 'authorized' as const,
      authorized: order.total,
      authorizedUntil: new Date(order.placedAt.getTime() + 7 * DAY_MS),
      dueAt: null,
      instructions: null,
      reference: authorization?.reference ?? `pi_test_${Date.now()}`,
    };
  }
  private record(kind: Call['kind']) {
    return (operation: ProviderOperation) => {
      const call = { kind, ...operation };
      this.calls.push(call);
      return this.answer(call);
    };
  }
  capture = this.record('capture');
  cancel = this.record('cancel');
  refund = this.record('refund');
  readEvent(): never {
    throw new Error('not used');
  }
}

const BUYER = { email: 'grace@example.com' };

for (const backend of backends) {
  describe(`the order's payment (${backend.name})`, () => {
    describe('the manual provider', () => {
      let store: Store;
      before(async () => {
        const { db } = await backend.open({ migrated: true });
        const config = testConfig();
        config.payment = { ...config.payment, instructions: 'Wire to IBAN DE00 1234,\nquoting the order number.', instructionsSet: true, dueDays: 3 };
        store = await openStore(config, { db, paymentProvider: manualProvider({ instructions: config.payment.instructions, dueDays: 3 }) });
      });
      after(() => store.close());
      const variant = (sku: string) => store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;

      it('the order keeps the instructions as they were and a due date PAYMENT_DUE_DAYS after it was placed', async () => {
        const order = await placeOrder(store, [{ variantId: variant('ESP-CLA-10'), quantity: 1 }], BUYER);
        const stored = (await readOrder(store.db, order.id))!;
        assert.deepEqual(stored.payment, {
          provider: 'manual',
          state: 'pending',
          amount: order.total,
          authorized: 0,
          authorizedUntil: null,
          dueAt: stored.payment.dueAt,
          instructions: 'Wire to IBAN DE00 1234,\nquoting the order number.',
          captured: 0,
          refunded: 0,
          disputed: false,
        });
        assert.equal(stored.payment.dueAt!.getTime() - stored.createdAt.getTime(), 3 * DAY_MS);
        assert.deepEqual(order.payment, stored.payment);
      });

      it('captures in parts (the money arriving in two transfers), then refuses a third', async () => {
        const order = await placeOrder(store, [{ variantId: variant('ESP-CLA-10'), quantity: 2 }], BUYER);
        const first = await store.orders.capture(store.db, order.id, 1000);
        assert.deepEqual([first.captured, first.paymentState], [1000, 'captured']);
        await assert.rejects(store.orders.capture(store.db, order.id, order.total), (error: unknown) => {
          assert.ok(error instanceof OrderActionRefused);
          assert.equal(error.code, 'capture_exceeds');
          return true;
        });
        const rest = await store.orders.capture(store.db, order.id);
        assert.equal(rest.captured, order.total);
        await assert.rejects(store.orders.capture(store.db, order.id), (error: unknown) => error instanceof OrderActionRefused && error.code === 'already_captured');
        const operations = await store.db.query<{ kind: string; amount: number; state: string }>(
          'select kind, amount, state from payment_operations where order_id = $1 order by requested_at, id',
          [order.id],
        );
        assert.deepEqual(
          operations.map((o) => [o.kind, o.amount, o.state]),
          [
            ['capture', 1000, 'succeeded'],
            ['capture', order.total - 1000, 'succeeded'],
          ],
        );
      });

      it('CAPTURE_ON does not apply: a shipment captures nothing', async () => {
        const order = await placeOrder(store, [{ variantId: variant('ESP-CLA-10'), quantity: 1 }], BUYER);
        const shipped = await store.orders.fulfill(store.db, order.id);
        assert.deepEqual([shipped.paymentState, shipped.captured], ['pending', 0]);
      });
    });

    describe('a provider holding the buyer’s money', () => {
      let store: Store;
      /** The same store's moves with CAPTURE_ON=manual: capturing only by command. */
      let byCommand: OrderActions;
      const provider = new HoldingProvider();
      before(async () => {
        const { db } = await backend.open({ migrated: true });
        store = await openStore(testConfig(), { db, paymentProvider: provider });
        byCommand = new OrderActions({ inventory: store.inventory, subscribers: [], provider, captureOn: 'manual' });
      });
      after(() => store.close());
      const variant = (sku: string) => store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;
      const placed = (quantity = 2): Promise<Order> => placeOrder(store, [{ variantId: variant('ESP-CLA-10'), quantity }, { variantId: variant('ESP-DEC-10'), quantity: 1 }], BUYER);
      const callsFor = async (order: Order) => {
        const [row] = await store.db.query<{ payment_reference: string }>('select payment_reference from orders where id = $1', [order.id]);
        return provider.calls.filter((call) => call.reference === row!.payment_reference);
      };
      const reserved = async (order: Order) =>
        (await store.db.query<{ capturing: number; refunding: number }>('select capturing, refunding from orders where id = $1', [order.id]))[0]!;

      it('is placed authorized for its total, until the hold lapses', async () => {
        const order = await placed();
        assert.equal(order.paymentState, 'authorized');
        assert.equal(order.payment.authorized, order.total);
        assert.ok(order.payment.authorizedUntil! > order.createdAt);
      });

      it('CAPTURE_ON=fulfillment: the first shipment, of one line, captures everything; the second captures nothing', async () => {
        const order = await placed();
        const first = await store.orders.fulfill(store.db, order.id, { lines: new Map([[order.lines[0]!.id, 1]]) });
        assert.deepEqual([first.paymentState, first.captured], ['captured', order.total]);
        const second = await store.orders.fulfill(store.db, order.id);
        assert.deepEqual([second.paymentState, second.captured], ['captured', order.total]);
        const calls = await callsFor(order);
        assert.deepEqual(
          calls.map((c) => [c.kind, c.amount]),
          [['capture', order.total]],
        );
        assert.match(calls[0]!.idempotencyKey, /^storefront_capture_pop_/);
        assert.deepEqual(await reserved(order), { capturing: 0, refunding: 0 });
      });

      it('CAPTURE_ON=manual: shipping captures nothing; the command captures once', async () => {
        const order = await placed();
        const shipped = await byCommand.fulfill(store.db, order.id, { lines: new Map([[order.lines[0]!.id, 1]]) });
        assert.deepEqual([shipped.paymentState, shipped.captured], ['authorized', 0]);
        const captured = await byCommand.capture(store.db, order.id);
        assert.equal(captured.captured, order.total);
        await assert.rejects(byCommand.capture(store.db, order.id), (error: unknown) => error instanceof OrderActionRefused && error.code === 'already_captured');
      });

      it('a cancel before anything shipped releases the hold: the payment is voided', async () => {
        const order = await placed();
        const canceled = await store.orders.cancel(store.db, order.id, 'buyer asked');
        assert.deepEqual([canceled.status, canceled.paymentState, canceled.captured], ['canceled', 'voided', 0]);
        assert.deepEqual(
          (await callsFor(order)).map((c) => c.kind),
          ['cancel'],
        );
      });

      it('a cancel after a captured partial shipment refunds what did not ship', async () => {
        const order = await placed(2);
        await store.orders.fulfill(store.db, order.id, { lines: new Map([[order.lines[0]!.id, 1]]) });
        const canceled = await store.orders.cancel(store.db, order.id);
        const shippedUnit = order.lines[0]!.unitPrice;
        const kept = shippedUnit + order.shipping + Math.floor((order.tax * shippedUnit) / order.subtotal);
        assert.equal(canceled.refunded, order.total - kept);
        assert.equal(canceled.paymentState, 'partially_refunded');
        assert.deepEqual(
          (await callsFor(order)).map((c) => [c.kind, c.amount]),
          [
            ['capture', order.total],
            ['refund', order.total - kept],
          ],
        );
      });

      it('two refunds racing while the provider is slow: one is refused at once, refunded never exceeds captured', async () => {
        const order = await placed();
        await store.orders.fulfill(store.db, order.id);
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let reached!: () => void;
        const slowReached = new Promise<void>((resolve) => (reached = resolve));
        provider.answer = async (call) => {
          reached();
          await gate;
          return { ok: true, providerReference: `re_${call.idempotencyKey}` };
        };
        try {
          const amount = order.total - 100;
          const first = store.orders.refund(store.db, order.id, amount);
          await slowReached;
          // The provider is being asked outside any transaction: the order's row can be locked meanwhile.
          const locked = await store.db.transaction((tx) => readOrder(tx, order.id, { lock: true }));
          assert.equal(locked!.refunded, 0);
          assert.deepEqual(await reserved(order), { capturing: 0, refunding: amount });
          await assert.rejects(store.orders.refund(store.db, order.id, amount), (error: unknown) => {
            assert.ok(error instanceof OrderActionRefused);
            assert.equal(error.code, 'refund_exceeds');
            assert.deepEqual(error.refusal.params, { number: order.number, amount, left: 100, captured: order.total });
            return true;
          });
          release();
          const done = await first;
          assert.deepEqual([done.refunded, done.paymentState], [amount, 'partially_refunded']);
          assert.deepEqual(await reserved(order), { capturing: 0, refunding: 0 });
        } finally {
          provider.answer = async () => ({ ok: true, providerReference: null });
        }
      });

      it('a refusal by the provider releases the reservation and is the merchant’s error; a hold gone fails the payment', async () => {
        const order = await placed();
        provider.answer = async () => ({ ok: false, reason: 'This PaymentIntent could not be captured because it has a status of canceled.', holdGone: true });
        try {
          await assert.rejects(byCommand.capture(store.db, order.id), (error: unknown) => {
            assert.ok(error instanceof OrderActionRefused);
            assert.equal(error.code, 'provider_refused');
            assert.match(error.message, /refused the capture of order #\d+: This PaymentIntent could not be captured/);
            return true;
          });
        } finally {
          provider.answer = async () => ({ ok: true, providerReference: null });
        }
        const after = (await readOrder(store.db, order.id))!;
        assert.deepEqual([after.paymentState, after.captured], ['failed', 0]);
        assert.deepEqual(await reserved(order), { capturing: 0, refunding: 0 });
        const [operation] = await store.db.query<{ state: string; failure: string }>('select state, failure from payment_operations where order_id = $1', [order.id]);
        assert.equal(operation!.state, 'failed');
      });

      it('a provider that does not answer: the reservation is kept, then settled once by asking again with the same key', async () => {
        const order = await placed();
        provider.answer = async () => {
          throw new Error('connect ECONNREFUSED');
        };
        try {
          await assert.rejects(byCommand.refund(store.db, order.id, 1), (error: unknown) => error instanceof OrderActionRefused && error.code === 'not_captured');
          await assert.rejects(byCommand.capture(store.db, order.id), (error: unknown) => error instanceof OrderActionRefused && error.code === 'provider_unavailable');
        } finally {
          provider.answer = async () => ({ ok: true, providerReference: 'ch_1' });
        }
        assert.deepEqual(await reserved(order), { capturing: order.total, refunding: 0 });
        // While it is unsettled, a second capture is refused: the first may have happened.
        await assert.rejects(byCommand.capture(store.db, order.id), (error: unknown) => error instanceof OrderActionRefused && error.code === 'already_captured');
        assert.ok((await byCommand.settleUnsettled(store.db, 0)) >= 1);
        const after = (await readOrder(store.db, order.id))!;
        assert.deepEqual([after.paymentState, after.captured], ['captured', order.total]);
        const keys = (await callsFor(order)).map((c) => c.idempotencyKey);
        assert.equal(keys.length, 2);
        assert.equal(keys[0], keys[1], 'asked again with the same idempotency key');
        assert.equal(await byCommand.settleUnsettled(store.db, 0), 0);
      });

      it('provider events are applied once: a dashboard refund, a dispute; a hold canceled at the provider voids', async () => {
        const order = await placed();
        await store.orders.fulfill(store.db, order.id);
        const [row] = await store.db.query<{ payment_reference: string }>('select payment_reference from orders where id = $1', [order.id]);
        const reference = row!.payment_reference;
        const refund = { id: `evt_refund_${order.id}`, type: 'refunded' as const, reference, refundedTotal: 500 };
        assert.equal(await store.orders.applyProviderEvent(store.db, refund), 'applied');
        assert.equal(await store.orders.applyProviderEvent(store.db, refund), 'duplicate');
        let now = (await readOrder(store.db, order.id))!;
        assert.deepEqual([now.refunded, now.paymentState], [500, 'partially_refunded']);
        assert.deepEqual(
          now.adjustments.filter((a) => a.type === 'refund').map((a) => [a.amount, a.reason]),
          [[-500, 'refunded at the payment provider']],
        );
        const topics = await store.db.query<{ topic: string }>(`select topic from outbox where order_id = $1 and topic = 'order.refunded'`, [order.id]);
        assert.equal(topics.length, 1, 'the buyer is told of the refund once');

        assert.equal(await store.orders.applyProviderEvent(store.db, { id: `evt_dispute_${order.id}`, type: 'disputed', reference, amount: order.total, reason: 'fraudulent' }), 'applied');
        now = (await readOrder(store.db, order.id))!;
        assert.deepEqual([now.paymentState, now.payment.disputed], ['disputed', true]);

        const other = await placed();
        const [otherRow] = await store.db.query<{ payment_reference: string }>('select payment_reference from orders where id = $1', [other.id]);
        assert.equal(await store.orders.applyProviderEvent(store.db, { id: `evt_cancel_${other.id}`, type: 'payment_canceled', reference: otherRow!.payment_reference }), 'applied');
        assert.equal((await readOrder(store.db, other.id))!.paymentState, 'voided');

        assert.equal(await store.orders.applyProviderEvent(store.db, { id: 'evt_unknown_payment', type: 'payment_failed', reference: 'pi_nobody', reason: 'x' }), 'ignored');
        assert.equal(await store.orders.applyProviderEvent(store.db, { id: 'evt_session', type: 'session_completed', sessionId: 'cs_1', checkoutId: null }), 'not_for_orders');
      });

      it('the provider’s news of the store’s own release, arriving before its answer, is the cancellation’s: nobody is told the hold was released at the provider', async () => {
        const order = await placed();
        const [row] = await store.db.query<{ payment_reference: string }>('select payment_reference from orders where id = $1', [order.id]);
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let reached!: () => void;
        const asked = new Promise<void>((resolve) => (reached = resolve));
        provider.answer = async () => {
          reached();
          await gate;
          return { ok: true, providerReference: null };
        };
        try {
          const canceling = store.orders.cancel(store.db, order.id, 'the buyer asked');
          await asked;
          // The provider released the hold and sent its event before its answer reached the store.
          assert.equal(await store.orders.applyProviderEvent(store.db, { id: `evt_own_release_${order.id}`, type: 'payment_canceled', reference: row!.payment_reference }), 'applied');
          release();
          assert.equal((await canceling).paymentState, 'voided');
        } finally {
          provider.answer = async () => ({ ok: true, providerReference: null });
        }
        const topics = (await store.db.query<{ topic: string }>(`select topic from outbox where order_id = $1 and kind = 'mail'`, [order.id])).map((r) => r.topic);
        assert.ok(topics.includes('order.canceled'), topics.join());
        assert.ok(!topics.includes('order.payment_voided'), topics.join());
      });

      it('a cancel while a capture waits for the provider’s answer is refused until it is settled', async () => {
        const order = await placed();
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let reached!: () => void;
        const asked = new Promise<void>((resolve) => (reached = resolve));
        provider.answer = async (call) => {
          reached();
          await gate;
          return { ok: true, providerReference: `ch_${call.idempotencyKey}` };
        };
        try {
          const capturing = byCommand.capture(store.db, order.id);
          await asked;
          await assert.rejects(store.orders.cancel(store.db, order.id), (error: unknown) => error instanceof OrderActionRefused && error.code === 'payment_under_way');
          release();
          assert.equal((await capturing).paymentState, 'captured');
        } finally {
          provider.answer = async () => ({ ok: true, providerReference: null });
        }
        assert.equal((await readOrder(store.db, order.id))!.status, 'placed', 'the refused cancel changed nothing');
      });

      it('an authorization that lapsed uncaptured fails the payment (the sweep)', async () => {
        const order = await placed();
        await store.db.query(`update orders set payment_authorized_until = now() - interval '1 minute' where id = $1`, [order.id]);
        assert.ok((await store.orders.expireLapsedAuthorizations(store.db)) >= 1);
        assert.equal((await readOrder(store.db, order.id))!.paymentState, 'failed');
      });
    });
  });
}
