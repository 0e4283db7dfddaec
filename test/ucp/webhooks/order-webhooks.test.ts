/**
 * Order events for the platform that asked for them: one outbox row per event, in the event's transaction,
 * holding the full UCP order (the order event webhook's body is the order entity) and the event's time.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../../src/db/database.js';
import { migrate } from '../../../src/db/migrate.js';
import type { OrderEvent } from '../../../src/orders/order-events.js';
import type { Order, OrderPayment } from '../../../src/orders/orders.js';
import { PAYMENT_STATES, type PaymentState } from '../../../src/payments/payment-handlers.js';
import { paymentLine } from '../../../src/payments/payment-words.js';
import { ucpOrder } from '../../../src/ucp/checkout/ucp-checkout.js';
import type { WebhookMessage } from '../../../src/outbox/outbox.js';
import { orderWebhookSubscriber } from '../../../src/ucp/webhooks/order-webhooks.js';
import { orderFixture, orderLine } from '../../helpers/orders.js';
import { backends, dropTestDatabases } from '../../helpers/store.js';
import { OfficialSchema, OfficialSchemas, UCP_RELEASES, officialSchemaErrors, officialSchemaErrorsFor } from '../official-schemas.js';

after(dropTestDatabases);

const WEBHOOK = 'https://platform.example.com/webhooks/ucp/orders';
const DAY = 24 * 3600;

const order = (overrides: Partial<Order> = {}): Order =>
  orderFixture({ id: `ord_${Math.random().toString(36).slice(2)}`, webhookUrl: WEBHOOK, lines: [orderLine({ variantId: 11 })], ...overrides });

interface OutboxRow {
  kind: string;
  topic: string;
  event_id: string;
  order_id: string;
  payload: WebhookMessage;
  deadline_in: number;
}

const rowsFor = (db: Database, orderId: string) =>
  db.query<OutboxRow & Record<string, unknown>>(
    `select kind, topic, event_id, order_id, payload, extract(epoch from deadline_at - now())::float8 as deadline_in
       from outbox where order_id = $1 order by id`,
    [orderId],
  );

for (const backend of backends) {
  describe(`${backend.name}: order events for the platform's webhook`, () => {
    const subscriber = orderWebhookSubscriber({ baseUrl: 'https://shop.example', deadlineSeconds: DAY });
    const withDatabase = async (run: (db: Database) => Promise<void>) => {
      const { db } = await backend.open({ migrated: true });
      try {
        await migrate(db);
        await run(db);
      } finally {
        await db.close();
      }
    };

    it('a placed order with a webhook URL is one outbox row: the UCP order as the body, the order time, a 24 h deadline', () =>
      withDatabase(async (db) => {
        const placed = order();
        await db.transaction((tx) => subscriber(tx, { type: 'placed', order: placed }));
        const rows = await rowsFor(db, placed.id);
        assert.equal(rows.length, 1);
        const [row] = rows;
        assert.equal(row!.kind, 'webhook');
        assert.equal(row!.topic, 'order.placed');
        assert.match(row!.event_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        assert.equal(row!.payload.url, WEBHOOK);
        assert.equal(row!.payload.timestamp, Date.parse('2026-04-08T12:00:00Z') / 1000);
        assert.ok(Math.abs(row!.deadline_in - DAY) < 600, `deadline in ${row!.deadline_in} s`);
        const body = JSON.parse(row!.payload.body);
        assert.deepEqual(officialSchemaErrors(OfficialSchema.order, body), []);
        assert.equal(body.id, placed.id);
        assert.equal(body.checkout_id, 'chk_1');
        assert.equal(body.permalink_url.startsWith('https://shop.example/'), true);
        assert.equal(body.event_id, undefined, 'the event id travels in Webhook-Id, not in the order');
      }));

    it('every change is an event of its own, timed by what it announces', () =>
      withDatabase(async (db) => {
        const shippedAt = new Date('2026-04-09T08:30:00Z');
        const refundedAt = new Date('2026-04-10T10:00:00Z');
        const fulfillment = { id: 'ful_1', type: 'shipped' as const, lines: [{ lineId: 'line_1', quantity: 2 }], trackingNumber: '1Z', trackingUrl: null, carrier: 'UPS', occurredAt: shippedAt };
        const refund = { id: 'adj_1', type: 'refund' as const, amount: -1250, lines: [{ lineId: 'line_1', quantity: 1 }], reason: null, occurredAt: refundedAt };
        const placed = order();
        const events: OrderEvent[] = [
          { type: 'placed', order: placed },
          { type: 'fulfilled', order: { ...placed, fulfillments: [fulfillment] }, fulfillment },
          { type: 'refunded', order: { ...placed, fulfillments: [fulfillment], adjustments: [refund] }, adjustment: refund },
        ];
        for (const event of events) await db.transaction((tx) => subscriber(tx, event));
        const rows = await rowsFor(db, placed.id);
        assert.deepEqual(rows.map((row) => row.topic), ['order.placed', 'order.fulfilled', 'order.refunded']);
        assert.deepEqual(rows.map((row) => row.payload.timestamp), [placed.createdAt, shippedAt, refundedAt].map((date) => date.getTime() / 1000));
        assert.equal(new Set(rows.map((row) => row.event_id)).size, 3, 'one id per event');
      }));

    it('no webhook URL, no row; a rolled-back change leaves none either', () =>
      withDatabase(async (db) => {
        const silent = order({ webhookUrl: null });
        await db.transaction((tx) => subscriber(tx, { type: 'placed', order: silent }));
        assert.equal((await rowsFor(db, silent.id)).length, 0);
        const rolledBack = order();
        await assert.rejects(
          db.transaction(async (tx) => {
            await subscriber(tx, { type: 'placed', order: rolledBack });
            throw new Error('the approval failed');
          }),
          /approval failed/,
        );
        assert.equal((await rowsFor(db, rolledBack.id)).length, 0);
      }));

    it('the order’s payment says when a card hold is charged, as CAPTURE_ON says', () =>
      withDatabase(async (db) => {
        const charging = orderWebhookSubscriber({ baseUrl: 'https://shop.example', deadlineSeconds: DAY, captureOn: 'fulfillment' });
        const placed = order();
        await db.transaction((tx) => charging(tx, { type: 'placed', order: placed }));
        const [row] = await rowsFor(db, placed.id);
        const body = JSON.parse(row!.payload.body);
        assert.deepEqual(body.messages, [
          { type: 'info', code: 'payment_authorized', content: 'Payment authorized: $30.00 is held on your card until 15 April 2026; you are charged when the order ships.' },
        ]);
      }));
  });
}

describe('the order’s payment on the commerce door', () => {
  const payment = (state: PaymentState, provider: 'manual' | 'stripe'): OrderPayment => ({
    provider,
    state,
    amount: 3000,
    authorized: provider === 'stripe' ? 3000 : 0,
    authorizedUntil: provider === 'stripe' ? new Date('2026-04-15T12:00:00Z') : null,
    dueAt: provider === 'manual' ? new Date('2026-04-15T12:00:00Z') : null,
    instructions: provider === 'manual' ? 'Bank transfer to Ridge & Co\nIBAN: DE89 3704 0044 0532 0130 00' : null,
    captured: ['pending', 'authorized', 'voided', 'failed'].includes(state) ? 0 : 3000,
    refunded: state === 'refunded' ? 3000 : state === 'partially_refunded' ? 500 : 0,
    disputed: state === 'disputed',
  });

  it('every state, of either provider, is one info message payment_<state> in the words of the pages and mails, and the order validates in both releases', () => {
    for (const release of UCP_RELEASES) {
      for (const state of PAYMENT_STATES) {
        for (const provider of ['manual', 'stripe'] as const) {
          const placed = order({ paymentState: state, payment: payment(state, provider) });
          const body = ucpOrder(placed, { release, baseUrl: 'https://shop.example', versions: new Map(), captureOn: 'fulfillment' });
          assert.deepEqual(officialSchemaErrorsFor(release, OfficialSchemas[release].order, body), [], `${release} ${provider} ${state}`);
          assert.deepEqual(body.messages, [
            { type: 'info', code: `payment_${state}`, content: paymentLine(placed.payment, { orderNumber: 1001, currency: 'USD', captureOn: 'fulfillment' }) },
          ]);
          assert.doesNotMatch(JSON.stringify(body), /collects payment/);
        }
      }
    }
  });

  it('a manual payment pending says the amount, the due date, the instructions on one line and the order number as the reference', () => {
    const body = ucpOrder(order({ paymentState: 'pending', payment: payment('pending', 'manual') }), { release: '2026-08-25', baseUrl: 'https://shop.example', versions: new Map() });
    assert.deepEqual(body.messages, [
      {
        type: 'info',
        code: 'payment_pending',
        content: 'Payment pending: Pay $30.00 by 15 April 2026 using: Bank transfer to Ridge & Co IBAN: DE89 3704 0044 0532 0130 00. Quote order #1001 as the payment reference.',
      },
    ]);
  });

});
