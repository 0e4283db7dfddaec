/**
 * The payment's news told, on both backends, on orders placed through the real checkout with a provider that holds
 * the buyer's money: each provider event (driven through OrderActions.applyProviderEvent, as the webhook route does)
 * and each sweep writes its mails to the outbox once, to the right people, with the right words: a dispute (the
 * merchant: order, amount, reason, what to do), a failed payment and a hold released at the provider (the buyer and
 * the merchant), a refund made in the provider's dashboard (the buyer), a hold lapsing within a day (the merchant,
 * once however often the sweep runs) and one that lapsed (failed: the buyer and the merchant). The agent platform's
 * webhook gets the order with its new payment state, and nothing for a warning that changes nothing on the order.
 *
 * The orders are placed by the buyer's approval with the manual provider and then held on the card as a hosted
 * provider's approval leaves them (the approval through a payment page is test/payments' subject, not this one's); the
 * moves and events run through OrderActions with that provider and the store's own subscribers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OrderActions } from '../../src/orders/order-actions.js';
import type { Order } from '../../src/orders/orders.js';
import type { MailMessage } from '../../src/outbox/outbox.js';
import type { PaymentProvider } from '../../src/payments/payment-provider.js';
import { openStore, orderEventSubscribers, type Store } from '../../src/store.js';
import { placeOrder } from '../helpers/orders.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';

after(dropTestDatabases);

const HOUR_MS = 60 * 60 * 1000;
const MERCHANT = 'merchant@shop.example';
const BUYER = 'lin@example.com';
const PLATFORM = 'https://platform.example/webhooks/orders';
/** How the merchant's mails name the CLI where the store runs: a checkout's `npm run storefront --`, else the binary. */
const CLI = '(?:npm run storefront --|storefront)';

/** A provider that holds the buyer's money (as Stripe does) and agrees to every move. */
function cardHolds(): PaymentProvider {
  const done = async () => ({ ok: true as const, providerReference: null });
  const unused = async (): Promise<never> => {
    throw new Error('the approval is not what these tests drive');
  };
  return {
    name: 'stripe',
    holdsFunds: true,
    begin: unused,
    confirm: unused,
    expire: unused,
    start: () => {
      throw new Error('the orders are held on the card after they are placed');
    },
    capture: done,
    cancel: done,
    refund: done,
    readEvent: () => {
      throw new Error('events are applied as the port gives them');
    },
  };
}

for (const backend of backends) {
  describe(`the payment's news, mailed and sent (${backend.name})`, () => {
    let store: Store;
    /** The moves and events of orders held on a card, announced to the store's own subscribers (CAPTURE_ON=fulfillment). */
    let orders: OrderActions;
    let placedCount = 0;
    before(async () => {
      const { db } = await backend.open({ migrated: true });
      const config = testConfig();
      config.mail = { ...config.mail, merchantEmail: MERCHANT };
      store = await openStore(config, { db });
      orders = new OrderActions({ inventory: store.inventory, subscribers: orderEventSubscribers(config), provider: cardHolds(), captureOn: 'fulfillment' });
    });
    after(() => store.close());

    const variant = (sku: string) => store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;
    /** An order placed through the checkout, held on the card, whose agent's platform takes order webhooks. */
    const placed = async (): Promise<{ order: Order; reference: string }> => {
      const order = await placeOrder(store, [{ variantId: variant('ESP-CLA-10'), quantity: 2 }], { email: BUYER });
      const reference = `pi_news_${process.pid}_${(placedCount += 1)}`;
      // As a hosted provider's approval places it: its total held for seven days, under the provider's reference.
      await store.db.query(
        `update orders set webhook_url = $2, payment_provider = 'stripe', payment_state = 'authorized', payment_authorized = total,
                payment_authorized_until = now() + interval '7 days', payment_due_at = null, payment_instructions = null, payment_reference = $3
          where id = $1`,
        [order.id, PLATFORM, reference],
      );
      await store.db.query(`update payments set state = 'authorized' where order_id = $1`, [order.id]);
      return { order, reference };
    };
    const mails = async (order: Order, topic: string) =>
      (await store.db.query<{ payload: MailMessage }>(`select payload from outbox where order_id = $1 and kind = 'mail' and topic = $2 order by id`, [order.id, topic])).map(
        (row) => row.payload,
      );
    const webhooks = async (order: Order, topic: string) =>
      (await store.db.query<{ payload: { body: string } }>(`select payload from outbox where order_id = $1 and kind = 'webhook' and topic = $2`, [order.id, topic])).map(
        (row) => JSON.parse(row.payload.body) as { messages?: { code: string }[] },
      );
    const to = (all: MailMessage[], address: string) => all.filter((mail) => mail.to === address);
    const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

    it('a dispute: the merchant is mailed once the order, amount, reason and what to do; the platform gets the order disputed', async () => {
      const { order, reference } = await placed();
      await orders.fulfill(store.db, order.id); // CAPTURE_ON=fulfillment: captured at the first shipment
      const dispute = { id: `evt_dispute_${order.id}`, type: 'disputed' as const, reference, amount: order.total, reason: 'product_not_received' };
      assert.equal(await orders.applyProviderEvent(store.db, dispute), 'applied');
      assert.equal(await orders.applyProviderEvent(store.db, dispute), 'duplicate');
      const sent = await mails(order, 'order.disputed');
      assert.equal(sent.length, 1, 'one mail, to the merchant alone');
      const [mail] = to(sent, MERCHANT);
      assert.ok(mail, 'the merchant is mailed');
      assert.equal(mail.subject, `Storefront: payment disputed on order #${order.number}, ${dollars(order.total)}`);
      assert.match(mail.text, new RegExp(`opened a dispute about \\${dollars(order.total)} paid for order #${order.number}`));
      assert.match(mail.text, /Reason the bank gives: product not received\./);
      assert.match(mail.text, /answer the dispute in your Stripe dashboard before the deadline it shows/);
      // The command as this store is run (a checkout: `npm run storefront -- …`; the tests' compiled copy: the binary), and the admin's page.
      assert.match(mail.text, new RegExp(`^${CLI} orders show ${order.number}\nOr in the admin: http://store\\.test/admin/orders/${order.number}$`, 'm'));
      assert.doesNotMatch(mail.text + mail.html, new RegExp(reference), 'no provider reference in a mail');
      assert.match(mail.html, new RegExp(`<code>${CLI} orders show ${order.number}</code>`));
      const [sentOrder, ...more] = await webhooks(order, 'order.disputed');
      assert.equal(more.length, 0);
      assert.ok(sentOrder?.messages?.some((message) => message.code === 'payment_disputed'), 'the order as UCP shows it, disputed');
    });

    it('a failed payment: the buyer and the merchant are mailed once each, with the reason', async () => {
      const { order, reference } = await placed();
      const failed = { id: `evt_failed_${order.id}`, type: 'payment_failed' as const, reference, reason: 'Your card was declined.' };
      assert.equal(await orders.applyProviderEvent(store.db, failed), 'applied');
      assert.equal(await orders.applyProviderEvent(store.db, failed), 'duplicate');
      const sent = await mails(order, 'order.payment_failed');
      assert.equal(sent.length, 2);
      const [buyer] = to(sent, BUYER);
      assert.equal(buyer!.subject, `Storefront: payment for order #${order.number} did not go through`);
      assert.match(buyer!.text, new RegExp(`We could not take the payment for your order #${order.number}\\.\\nReason: Your card was declined\\.`));
      assert.match(buyer!.text, /^Payment failed: Your card payment did not go through, so you were not charged\.$/m);
      assert.match(buyer!.text, /The order does not ship unpaid\./);
      const [merchant] = to(sent, MERCHANT);
      assert.equal(merchant!.subject, `Storefront: payment failed for order #${order.number}`);
      assert.match(merchant!.text, new RegExp(`The payment of \\${dollars(order.total)} for order #${order.number} failed: Your card was declined\\. Nothing was charged\\.`));
      assert.match(merchant!.text, new RegExp(`^${CLI} orders cancel ${order.number} --reason "payment not received"$`, 'm'));
      assert.equal((await webhooks(order, 'order.payment_failed')).length, 1);
    });

    it('a hold released at the provider: the buyer and the merchant are told once; the store’s own cancel is a cancellation, not this', async () => {
      const { order, reference } = await placed();
      const canceled = { id: `evt_canceled_${order.id}`, type: 'payment_canceled' as const, reference };
      assert.equal(await orders.applyProviderEvent(store.db, canceled), 'applied');
      assert.equal(await orders.applyProviderEvent(store.db, { ...canceled, id: `${canceled.id}_again` }), 'applied');
      const sent = await mails(order, 'order.payment_voided');
      assert.deepEqual(sent.map((mail) => mail.to).sort(), [BUYER, MERCHANT].sort(), 'a second event about a released hold tells no one again');
      assert.match(to(sent, BUYER)[0]!.text, new RegExp(`The hold on your card for order #${order.number} was released\\.`));
      assert.match(to(sent, MERCHANT)[0]!.text, /was released at the payment provider \(canceled in your Stripe dashboard, or by the provider\)/);

      const other = await placed();
      await orders.cancel(store.db, other.order.id, 'buyer asked');
      await orders.applyProviderEvent(store.db, { id: `evt_canceled_${other.order.id}`, type: 'payment_canceled', reference: other.reference });
      assert.equal((await mails(other.order, 'order.payment_voided')).length, 0, 'the release the store asked for was the cancellation’s news');
      assert.equal((await mails(other.order, 'order.canceled')).length, 1);
    });

    it('a refund made in the provider’s dashboard mails the buyer once, with the amount', async () => {
      const { order, reference } = await placed();
      await orders.fulfill(store.db, order.id);
      const refund = { id: `evt_refund_${order.id}`, type: 'refunded' as const, reference, refundedTotal: 500 };
      assert.equal(await orders.applyProviderEvent(store.db, refund), 'applied');
      assert.equal(await orders.applyProviderEvent(store.db, refund), 'duplicate');
      const sent = await mails(order, 'order.refunded');
      assert.deepEqual(sent.map((mail) => mail.to), [BUYER]);
      assert.match(sent[0]!.text, new RegExp(`We refunded \\$5\\.00 for your order #${order.number}\\.`));
    });

    it('a hold lapsing within a day: the sweep warns the merchant once, however often it runs; a hold with days left is not warned', async () => {
      const soon = await placed();
      const later = await placed();
      const lapses = new Date(Date.now() + 5 * HOUR_MS);
      await store.db.query('update orders set payment_authorized_until = $2 where id = $1', [soon.order.id, lapses]);
      assert.ok((await orders.warnExpiringAuthorizations(store.db)) >= 1);
      assert.equal(await orders.warnExpiringAuthorizations(store.db), 0, 'the second sweep warns no one');
      // Another instance's sweep (its own OrderActions on the same database) warns no one either.
      assert.equal(await new OrderActions({ inventory: store.inventory, subscribers: [] }).warnExpiringAuthorizations(store.db), 0);
      const sent = await mails(soon.order, 'order.payment_expiring');
      assert.deepEqual(sent.map((mail) => mail.to), [MERCHANT]);
      const [warning] = sent;
      assert.equal(warning!.subject, `Storefront: capture order #${soon.order.number} before its payment lapses`);
      const day = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeZone: 'UTC' }).format(lapses);
      assert.match(warning!.text, new RegExp(`The hold of \\${dollars(soon.order.total)} on the buyer's card for order #${soon.order.number} lapses on ${day}, \\d\\d:\\d\\d UTC`));
      assert.match(warning!.text, new RegExp(`^${CLI} orders capture ${soon.order.number}$`, 'm'));
      assert.match(warning!.text, /or ship it: CAPTURE_ON=fulfillment captures at the first shipment/);
      assert.equal((await webhooks(soon.order, 'order.payment_expiring')).length, 0, 'the platform is told nothing: the order did not change');
      assert.equal((await mails(later.order, 'order.payment_expiring')).length, 0);
      const [row] = await store.db.query<{ payment_expiry_warned_at: Date | null }>('select payment_expiry_warned_at from orders where id = $1', [soon.order.id]);
      assert.ok(row!.payment_expiry_warned_at, 'the order keeps when its merchant was warned');
    });

    it('a hold that lapsed uncaptured: the payment fails and the buyer and merchant are told once', async () => {
      const { order } = await placed();
      await store.db.query(`update orders set payment_authorized_until = now() - interval '1 minute' where id = $1`, [order.id]);
      assert.ok((await orders.expireLapsedAuthorizations(store.db)) >= 1);
      await orders.expireLapsedAuthorizations(store.db);
      const sent = await mails(order, 'order.payment_failed');
      assert.deepEqual(sent.map((mail) => mail.to).sort(), [BUYER, MERCHANT].sort());
      assert.match(to(sent, MERCHANT)[0]!.text, /failed: the hold on the card lapsed before it was captured\./);
      assert.equal((await mails(order, 'order.payment_expiring')).length, 0, 'a lapsed hold is not warned of afterwards');
    });
  });
}
