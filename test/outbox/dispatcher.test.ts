/**
 * Delivering the outbox (src/outbox/outbox-dispatcher.ts) from a store opened with `deliver: true`, on both
 * backends, to a real SMTP server on loopback (test/helpers/smtp.ts): an approved order's confirmation and the
 * merchant's notice arrive once each with the order's lines and total, and their rows are marked delivered; a
 * rolled-back approval sends nothing; a server that refuses for a while gets the message when it recovers, once,
 * with the attempts and the last error kept meanwhile; a message past its deadline is given up, listed with its
 * error, and delivered by `retryNow`; a claim whose lease ended is taken over; two instances on one PostgreSQL
 * deliver each message once. And the backoff (`retryDelaySeconds`): doubling, capped, with jitter.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { CheckoutService, type CheckoutInput } from '../../src/checkout/checkout-service.js';
import type { Config } from '../../src/config.js';
import type { OrderEventSubscriber } from '../../src/orders/order-events.js';
import type { Order } from '../../src/orders/orders.js';
import { readStoreFigures } from '../../src/store-figures.js';
import { listUndelivered, retryDelaySeconds, retryWhenDue } from '../../src/outbox/outbox-dispatcher.js';

/** The mail figures /metrics reports (storefront_outbox_messages), read as a scrape reads them. */
async function mailFigures(store: { db: Parameters<typeof readStoreFigures>[0] }): Promise<{ pending: number; delivered: number; failed: number }> {
  const { outbox } = await readStoreFigures(store.db, 10_000);
  return { pending: outbox['mail:pending']!, delivered: outbox['mail:delivered']!, failed: outbox['mail:failed']! };
}
import { addToOutbox } from '../../src/outbox/outbox.js';
import { openStore, orderEventSubscribers, type Store } from '../../src/store.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';

after(dropTestDatabases);

const BUYER = { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' };
const MERCHANT = 'owner@store.test';
const ADDRESS = { streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' };

/** Generous: the machines running these tests are loaded. Nothing below asserts how long anything took. */
const WAIT_MS = 30_000;
/** How long to keep listening after the last expected message, to see that no second copy comes. */
const GRACE_MS = 1_000;

/** Polls `check` until it answers something other than undefined or false; fails naming `what` after WAIT_MS. */
async function until<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}`);
    await sleep(25);
  }
}

interface OutboxRecord {
  [column: string]: unknown;
  id: number;
  topic: string;
  event_id: string;
  recipient: string;
  attempts: number;
  sent_at: Date | null;
  failed_at: Date | null;
  last_error: string | null;
}

const deliveryConfig = (smtp: TestSmtpServer): Config =>
  testConfig({
    mail: { ...testConfig().mail, smtpUrl: smtp.url, merchantEmail: MERCHANT },
    outbox: { ...testConfig().outbox, retryBaseSeconds: 0.2, leaseSeconds: 5 },
  });

/** The messages the server took for these outbox events (their Message-ID is made from the event id). */
const messagesOf = (smtp: TestSmtpServer, eventIds: readonly string[]): ReceivedMail[] =>
  smtp.messages.filter((mail) => eventIds.some((eventId) => mail.messageId?.startsWith(`<${eventId}@`)));

const recipients = (mail: ReceivedMail) => mail.envelope.to;

/** The text a reader sees in an HTML part: tags dropped, entities read, spaces collapsed. */
function htmlText(mailHtml: string | false | undefined): string {
  assert.equal(typeof mailHtml, 'string', 'an HTML part');
  const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
  return (mailHtml as string)
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => entities[entity]!)
    .replace(/\s+/g, ' ');
}

for (const backend of backends) {
  describe(`delivering the outbox (${backend.name})`, () => {
    let smtp: TestSmtpServer;
    let store: Store;
    let database: string | undefined;
    let config: Config;

    before(async () => {
      smtp = await startSmtpServer();
      config = deliveryConfig(smtp);
      const opened = await backend.open({ migrated: true });
      database = opened.database;
      store = await openStore(config, { db: opened.db, deliver: true, onBackgroundError: () => {} });
      assert.ok(store.outbox, 'the store delivers');
    });
    after(async () => {
      await store?.close();
      await smtp?.close();
    });
    // Each test starts with the server taking messages and nothing left to deliver.
    beforeEach(async () => {
      smtp.accept();
      await until('the outbox to be delivered', async () => (await pendingRows()) === 0);
    });
    afterEach(() => smtp.accept());

    const pendingRows = async () =>
      (await store.db.query<{ n: number }>(`select count(*)::int as n from outbox where sent_at is null and failed_at is null and kind in ('mail', 'webhook')`))[0]!.n;

    const outboxCount = async () => (await store.db.query<{ n: number }>('select count(*)::int as n from outbox'))[0]!.n;

    const rowsOf = (order: Order) =>
      store.db.query<OutboxRecord>(
        `select id::int as id, topic, event_id, payload->>'to' as recipient, attempts, sent_at, failed_at, last_error
           from outbox where order_id = $1 order by id`,
        [order.id],
      );

    const rowById = async (id: number) =>
      (
        await store.db.query<OutboxRecord>(
          `select id::int as id, topic, event_id, payload->>'to' as recipient, attempts, sent_at, failed_at, last_error from outbox where id = $1`,
          [id],
        )
      )[0]!;

    const variant = (sku: string): number => {
      const found = store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
      if (!found) throw new Error(`no variant ${sku}`);
      return found.id;
    };

    /** A checkout an agent asked to complete, waiting for the buyer's approval. */
    async function awaitingBuyer(wanted: [sku: string, quantity: number][], checkouts: CheckoutService = store.checkouts) {
      const input: CheckoutInput = {
        lines: wanted.map(([sku, quantity]) => ({ variantId: variant(sku), quantity })),
        buyer: BUYER,
        destination: ADDRESS,
        shippingOption: 'standard',
      };
      const created = await checkouts.create(store.db, input, 'agent', 'agent');
      const asked = await checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
      assert.ok(asked.approval, `an approval link (status ${asked.view.record.status})`);
      return { id: created.view.record.id, approval: asked.approval };
    }

    async function placed(wanted: [sku: string, quantity: number][], on: Store = store): Promise<Order> {
      const { approval } = await awaitingBuyer(wanted);
      const outcome = await on.checkouts.approve(on.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
      assert.equal(outcome.kind, 'placed', outcome.kind === 'refused' ? outcome.reason : '');
      return outcome.order;
    }

    /** Waits until every row of the order was delivered; answers them. */
    const delivered = (order: Order, count: number) =>
      until(`${count} delivered messages of order #${order.number}`, async () => {
        const rows = await rowsOf(order);
        return rows.length === count && rows.every((row) => row.sent_at !== null) && rows;
      });

    it("an approval mails the buyer's confirmation and the merchant's notice, once each, with the lines and total; the rows are marked delivered and counted", async () => {
      const mailBefore = await mailFigures(store);
      const order = await placed([
        ['ESP-CLA-10', 2],
        ['ESP-DEC-10', 1],
      ]);
      assert.equal(order.total, 2490);
      const rows = await delivered(order, 2);
      assert.deepEqual(
        rows.map((row) => [row.topic, row.recipient]),
        [
          ['order.placed', BUYER.email],
          ['order.placed', MERCHANT],
        ],
      );
      await sleep(GRACE_MS);
      const received = messagesOf(
        smtp,
        rows.map((row) => row.event_id),
      );
      assert.equal(received.length, 2, 'each message arrives once');
      const [confirmation, notice] = rows.map((row) => received.find((mail) => mail.messageId?.startsWith(`<${row.event_id}@`))!);

      assert.deepEqual(recipients(confirmation!), [BUYER.email]);
      assert.match(confirmation!.subject!, new RegExp(`order #${order.number} confirmed$`));
      assert.deepEqual(recipients(notice!), [MERCHANT]);
      assert.match(notice!.subject!, new RegExp(`new order #${order.number}, \\$24\\.90$`));
      const [classico, decaf] = order.lines;
      for (const mail of [confirmation!, notice!]) {
        const text = mail.text ?? '';
        assert.ok(text.includes(`- ${classico!.title}\n  2 × $6.50 = $13.00`), text);
        assert.ok(text.includes(`- ${decaf!.title}\n  1 × $6.90 = $6.90`), text);
        assert.ok(text.includes('Subtotal: $19.90'), text);
        assert.ok(text.includes('Shipping: $5.00'), text);
        assert.ok(text.includes('Total: $24.90'), text);
        const shown = htmlText(mail.html);
        assert.ok(shown.includes(`${classico!.title} 2 $6.50 $13.00`), shown);
        assert.ok(shown.includes(`${decaf!.title} 1 $6.90 $6.90`), shown);
        assert.match(shown, /Total \$24\.90/);
        assert.equal(mail.headers.get('auto-submitted'), 'auto-generated');
      }

      assert.deepEqual(
        rows.map((row) => [row.attempts, row.failed_at, row.last_error]),
        [
          [1, null, null],
          [1, null, null],
        ],
      );
      const mailAfter = await mailFigures(store);
      assert.equal(mailAfter.delivered, mailBefore.delivered + 2);
      assert.equal(mailAfter.pending, 0);
      assert.equal(mailAfter.failed, mailBefore.failed);
    });

    it('nothing is sent for an approval rolled back after its outbox rows were written', async () => {
      let rowsInTransaction = -1;
      const failing: OrderEventSubscriber = async (tx, event) => {
        rowsInTransaction = (await tx.query<{ n: number }>('select count(*)::int as n from outbox where order_id = $1', [event.order.id]))[0]!.n;
        throw new Error('a subscriber failed after the mail was written');
      };
      const checkouts = new CheckoutService({
        catalog: store.catalog,
        buyerProof: store.buyerProof,
        inventory: store.inventory,
        carts: store.carts,
        config: store.config.checkout,
        maxLineQuantity: store.config.cartMaxLineQuantity,
        payments: store.payments,
        orderEvents: [...orderEventSubscribers(store.config), failing],
      });
      const { id, approval } = await awaitingBuyer([['ESP-LUN-10', 1]], checkouts);
      const [rows, received] = [await outboxCount(), smtp.messages.length];
      await assert.rejects(checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' }), /a subscriber failed/);
      assert.equal(rowsInTransaction, 2, "the buyer's and the merchant's mail were written inside the approval's transaction");
      store.outbox!.wake();
      await sleep(GRACE_MS);
      assert.equal(await outboxCount(), rows, 'no row survived the rollback');
      assert.equal(smtp.messages.length, received, 'no message was sent');
      assert.deepEqual(await store.db.query('select id from orders where checkout_id = $1', [id]), []);
    });

    it('nothing is sent for an approval refused for stock (sold out after the link was issued)', async () => {
      const SKU = 'ESP-RIS-10';
      const { id, approval } = await awaitingBuyer([[SKU, 1]]);
      const { previous } = await store.inventory.setOnHand(store.db, SKU, 0);
      try {
        const [rows, received] = [await outboxCount(), smtp.messages.length];
        const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'refused');
        store.outbox!.wake();
        await sleep(GRACE_MS);
        assert.equal(await outboxCount(), rows);
        assert.equal(smtp.messages.length, received);
        assert.deepEqual(await store.db.query('select id from orders where checkout_id = $1', [id]), []);
      } finally {
        await store.inventory.setOnHand(store.db, SKU, previous);
      }
    });

    it('a server that refuses three times (451) gets the message on the fourth attempt, once', async () => {
      const order = await placed([['ESP-CLA-10', 1]]);
      await delivered(order, 2);
      const refusalsBefore = smtp.refusals;
      smtp.refuse(451, { times: 3 });
      await store.orders.fulfill(store.db, order.id, { carrier: 'UPS' });
      const [, , shipment] = await delivered(order, 3);
      assert.equal(shipment!.topic, 'order.fulfilled');
      assert.equal(smtp.refusals - refusalsBefore, 3);
      assert.equal(shipment!.attempts, 4, 'three refused attempts and the one that delivered');
      assert.equal(shipment!.last_error, null, 'a delivered message keeps no error');
      await sleep(GRACE_MS);
      const received = messagesOf(smtp, [shipment!.event_id]);
      assert.equal(received.length, 1, 'delivered once');
      assert.match(received[0]!.subject!, new RegExp(`order #${order.number} shipped`));
      assert.deepEqual(recipients(received[0]!), [BUYER.email]);
    });

    it('while the server refuses, the message waits with its attempts and last error; past its deadline it is given up, listed as failed, and retryNow delivers it', async () => {
      const order = await placed([['ESP-CLA-10', 1]]);
      await delivered(order, 2);
      smtp.refuse(451, { message: 'Mailbox busy, try again later' });
      await store.orders.cancel(store.db, order.id, 'out of stock at the warehouse');
      const waiting = await until('the refused message to record its error', async () => {
        const row = (await rowsOf(order)).find((r) => r.topic === 'order.canceled');
        return row && row.attempts >= 2 && row.last_error !== null && row;
      });
      assert.equal(waiting.sent_at, null);
      assert.equal(waiting.failed_at, null);
      assert.match(waiting.last_error!, /451.*Mailbox busy/);
      const pending = (await listUndelivered(store.db)).find((listing) => listing.id === waiting.id);
      assert.ok(pending);
      assert.deepEqual([pending.state, pending.kind, pending.topic, pending.orderNumber], ['pending', 'mail', 'order.canceled', order.number]);
      assert.match(pending.lastError!, /Mailbox busy/);
      assert.ok(pending.nextAttemptAt);

      // Its deadline passes while the server still refuses: the next attempt fails and it is given up.
      await store.db.query(`update outbox set deadline_at = now() - interval '1 second', next_attempt_at = now() where id = $1`, [waiting.id]);
      const givenUp = await until('the message to be given up', async () => {
        const row = await rowById(waiting.id);
        return row.failed_at !== null && row;
      });
      assert.equal(givenUp.sent_at, null);
      assert.match(givenUp.last_error!, /Mailbox busy/);
      const failed = (await listUndelivered(store.db)).find((listing) => listing.id === waiting.id);
      assert.ok(failed);
      assert.deepEqual([failed.state, failed.nextAttemptAt], ['failed', null]);
      assert.match(failed.lastError!, /451.*Mailbox busy/);
      assert.ok((await mailFigures(store)).failed >= 1);
      // Given up means not tried again.
      const { attempts } = givenUp;
      const refusals = smtp.refusals;
      store.outbox!.wake();
      await sleep(GRACE_MS);
      assert.equal((await rowById(waiting.id)).attempts, attempts);
      assert.equal(smtp.refusals, refusals);
      assert.equal(messagesOf(smtp, [waiting.event_id]).length, 0);

      smtp.accept();
      assert.deepEqual(await store.outbox!.retryNow(waiting.id), { delivered: true });
      const sent = await rowById(waiting.id);
      assert.notEqual(sent.sent_at, null);
      assert.deepEqual([sent.failed_at, sent.last_error, sent.attempts], [null, null, attempts + 1]);
      assert.equal((await listUndelivered(store.db)).find((listing) => listing.id === waiting.id), undefined);
      const received = messagesOf(smtp, [waiting.event_id]);
      assert.equal(received.length, 1);
      assert.match(received[0]!.subject!, new RegExp(`order #${order.number} canceled`));
      assert.deepEqual(await store.outbox!.retryNow(waiting.id), { refused: `message ${waiting.id} was already delivered` });
      assert.equal(await store.outbox!.retryNow(2_000_000_000), undefined);
      await sleep(GRACE_MS);
      assert.equal(messagesOf(smtp, [waiting.event_id]).length, 1, 'still once');
    });

    it('a claim whose lease has ended (its instance died mid-send) is taken over and delivered', async () => {
      // A message an instance claimed (attempt 1) and never finished: held until its lease ends.
      const eventId = await store.db.transaction(async (tx) => {
        const added = await addToOutbox(
          tx,
          { kind: 'mail', topic: 'test.lease', message: { to: 'ada@example.com', subject: 'Storefront: a message left mid-send', text: 'Left mid-send.\n', html: '<p>Left mid-send.</p>' } },
          3600,
        );
        await tx.query(`update outbox set claimed_until = now() + interval '1 hour', attempts = 1 where event_id = $1`, [added]);
        return added;
      });
      const id = (await store.db.query<{ id: number }>('select id::int as id from outbox where event_id = $1', [eventId]))[0]!.id;
      store.outbox!.wake();
      await sleep(GRACE_MS);
      assert.equal((await rowById(id)).sent_at, null, 'not taken while its lease runs');
      assert.equal((await rowById(id)).attempts, 1);
      assert.equal(messagesOf(smtp, [eventId]).length, 0);
      assert.deepEqual(await store.outbox!.retryNow(id), { refused: `message ${id} is being delivered right now` });

      await store.db.query(`update outbox set claimed_until = now() - interval '1 second' where id = $1`, [id]);
      const sent = await until('the message to be taken over and delivered', async () => {
        const row = await rowById(id);
        return row.sent_at !== null && row;
      });
      assert.equal(sent.attempts, 2);
      await sleep(GRACE_MS);
      const received = messagesOf(smtp, [eventId]);
      assert.equal(received.length, 1);
      assert.equal(received[0]!.subject, 'Storefront: a message left mid-send');
      assert.deepEqual(recipients(received[0]!), ['ada@example.com']);
    });

    it('retryWhenDue (the command run on the database itself) makes a given-up message due, and the running store delivers it once', async () => {
      const order = await placed([['ESP-DEC-10', 1]]);
      await delivered(order, 2);
      smtp.refuse(451, { message: 'Mailbox busy, try again later' });
      await store.orders.cancel(store.db, order.id, 'changed my mind');
      const waiting = await until('the refused message to record its error', async () => {
        const row = (await rowsOf(order)).find((r) => r.topic === 'order.canceled');
        return row && row.attempts >= 1 && row.last_error !== null && row;
      });
      await store.db.query(`update outbox set deadline_at = now() - interval '1 second', next_attempt_at = now() where id = $1`, [waiting.id]);
      await until('the message to be given up', async () => (await rowById(waiting.id)).failed_at !== null);
      smtp.accept();
      assert.deepEqual(await retryWhenDue(store.db, waiting.id, 30_000), { delivered: true });
      await sleep(GRACE_MS);
      assert.equal(messagesOf(smtp, [waiting.event_id]).length, 1);
      assert.deepEqual(await retryWhenDue(store.db, waiting.id, 1000), { refused: `message ${waiting.id} was already delivered` });
      assert.equal(await retryWhenDue(store.db, 2_000_000_000, 1000), undefined);
    });

    it('retryNow on a message this store has no sender for (a row of an older version) is refused and leaves it given up, as it was', async () => {
      const id = (
        await store.db.query<{ id: number }>(
          `insert into outbox (kind, topic, payload, deadline_at, failed_at, last_error)
           values ('legacy', 'order.placed', '{}', now() - interval '1 day', now() - interval '1 day', 'written before this version of the store delivered messages')
           returning id::int as id`,
        )
      )[0]!.id;
      try {
        const before = (await listUndelivered(store.db)).find((listing) => listing.id === id);
        assert.equal(before?.state, 'failed');
        assert.deepEqual(await store.outbox!.retryNow(id), { refused: 'this store cannot deliver legacy messages' });
        assert.deepEqual(
          (await listUndelivered(store.db)).find((listing) => listing.id === id),
          before,
          'a refused retry changes nothing: still given up, same attempts and deadline',
        );
      } finally {
        await store.db.query('delete from outbox where id = $1', [id]);
      }
    });

    if (backend.name === 'postgres') {
      describe('two instances on one PostgreSQL database', () => {
        let second: Store | undefined;
        after(() => second?.close());

        it('deliver each message once', async () => {
          const { db } = await backend.open({ database });
          second = await openStore(config, { db, deliver: true, seedDemo: false, onBackgroundError: () => {} });
          assert.ok(second.outbox);
          // Ten orders, placed at once through both instances: twenty messages, and both dispatchers wake for each.
          const orders = await Promise.all(Array.from({ length: 10 }, (_, n) => placed([['ESP-LUN-10', 1]], n % 2 === 0 ? store : second!)));
          const rows = await until('the twenty messages to be delivered', async () => {
            const all = (await Promise.all(orders.map((order) => rowsOf(order)))).flat();
            return all.length === 20 && all.every((row) => row.sent_at !== null) && all;
          });
          await sleep(GRACE_MS);
          const received = messagesOf(
            smtp,
            rows.map((row) => row.event_id),
          );
          assert.equal(received.length, 20, 'exactly twenty messages');
          assert.equal(new Set(received.map((mail) => mail.messageId)).size, 20, 'every Message-ID distinct');
          assert.deepEqual(
            received.map((mail) => recipients(mail)[0]).sort(),
            [...Array<string>(10).fill(BUYER.email), ...Array<string>(10).fill(MERCHANT)].sort(),
          );
          assert.ok(
            rows.every((row) => row.attempts === 1),
            'no message was claimed twice',
          );
        });
      });
    }
  });
}

describe('the wait before the next attempt (retryDelaySeconds)', () => {
  const most = () => 1;
  const least = () => 0;

  it('doubles from the base with each attempt', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((attempt) => retryDelaySeconds(attempt, 10, 3600, most)),
      [10, 20, 40, 80, 160],
    );
    assert.equal(retryDelaySeconds(0, 10, 3600, most), 10, 'no attempt yet: the base');
  });

  it('never waits longer than the cap, however many attempts', () => {
    assert.equal(retryDelaySeconds(9, 10, 3600, most), 2560);
    assert.equal(retryDelaySeconds(10, 10, 3600, most), 3600);
    assert.equal(retryDelaySeconds(1_000, 10, 3600, most), 3600);
    assert.equal(retryDelaySeconds(Number.MAX_SAFE_INTEGER, 10, 3600, most), 3600);
  });

  it('waits between half and all of it (jitter)', () => {
    assert.equal(retryDelaySeconds(3, 10, 3600, least), 20);
    assert.equal(retryDelaySeconds(3, 10, 3600, () => 0.5), 30);
    assert.equal(retryDelaySeconds(20, 10, 3600, least), 1800);
    const waits = Array.from({ length: 1000 }, () => retryDelaySeconds(4, 10, 3600));
    assert.ok(
      waits.every((wait) => wait >= 40 && wait <= 80),
      'every wait within [40, 80]',
    );
    assert.ok(new Set(waits).size > 100, 'the waits spread');
    assert.ok(
      waits.some((wait) => wait < 50) && waits.some((wait) => wait > 70),
      'across the range',
    );
  });
});
