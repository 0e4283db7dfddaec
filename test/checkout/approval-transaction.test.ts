/**
 * The buyer's approval on both backends (CheckoutService.approve and decline): ONE transaction takes the stock,
 * places the order with its lines copied, records the payment, completes the checkout and writes the outbox
 * row; any failure in it keeps nothing. A link is single-use, bound to what the buyer was shown, and expires.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CheckoutService, type CheckoutInput, type LineInput } from '../../src/checkout/checkout-service.js';
import type { CheckoutConfig } from '../../src/config.js';
import type { Queryable } from '../../src/db/database.js';
import { readOrder } from '../../src/orders/orders.js';
import { PaymentDeclined, type PaymentHandler } from '../../src/payments/payment-handlers.js';
import { openStore, type Store } from '../../src/store.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';

after(dropTestDatabases);

const BUYER = { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' };
const ADDRESS = { streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' };
const complete = (lines: LineInput[]): CheckoutInput => ({ lines, buyer: BUYER, destination: ADDRESS, shippingOption: 'standard' });

const onHandIn = async (db: Queryable, variantId: number) =>
  (await db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variantId]))[0]!.on_hand;

for (const backend of backends) {
  describe(`the buyer's approval (${backend.name})`, () => {
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

    const service = (options: { config?: Partial<CheckoutConfig>; now?: () => Date; payments?: PaymentHandler } = {}) =>
      new CheckoutService({
        catalog: store.catalog,
        buyerProof: store.buyerProof,
        inventory: store.inventory,
        carts: store.carts,
        config: { ...store.config.checkout, ...options.config },
        maxLineQuantity: store.config.cartMaxLineQuantity,
        payments: options.payments ?? store.payments,
        now: options.now,
      });

    const count = async (table: string, where = 'true', params: unknown[] = []) =>
      (await store.db.query<{ n: number }>(`select count(*)::int as n from ${table} where ${where}`, params))[0]!.n;

    async function setPrice(variantId: number, cents: number): Promise<void> {
      await store.db.transaction(async (tx) => {
        await tx.query('update variants set price_cents = $2 where id = $1', [variantId, cents]);
        await tx.query('update catalog_version set version = version + 1');
      });
      await store.catalog.refresh(store.db);
    }

    /** A checkout an agent asked to complete: waiting for the buyer, with its approval link. */
    async function awaitingBuyer(lines: LineInput[], checkouts: CheckoutService = store.checkouts) {
      const created = await checkouts.create(store.db, complete(lines), 'agent', 'agent');
      const asked = await checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
      assert.equal(asked.view.record.status, 'requires_escalation');
      assert.ok(asked.approval);
      return { id: created.view.record.id, approval: asked.approval, view: asked.view };
    }

    /** Everything an approval may change: stock, orders, payments, the outbox, the checkout and its approvals. */
    async function everything(checkoutId: string, variantIds: number[]) {
      return {
        stock: await Promise.all(variantIds.map((id) => onHandIn(store.db, id))),
        inMemory: variantIds.map((id) => store.inventory.onHand(id)),
        orders: await count('orders'),
        orderLines: await count('order_lines'),
        payments: await count('payments'),
        outbox: await count('outbox'),
        checkout: await store.db.query('select status, version, order_id from checkouts where id = $1', [checkoutId]),
        approvals: await store.db.query('select token, used_at, voided_at from checkout_approvals where checkout_id = $1 order by token', [checkoutId]),
        transitions: await count('checkout_transitions', 'checkout_id = $1', [checkoutId]),
      };
    }

    describe('approving places the order in one transaction', () => {
      it('places one order whose lines copy title, SKU and unit price; a later catalog price change leaves the order as it was', async () => {
        const [classico, decaf] = [variant('ESP-CLA-10'), variant('ESP-DEC-10')];
        const { id, approval, view } = await awaitingBuyer([
          { variantId: classico, quantity: 2 },
          { variantId: decaf, quantity: 1 },
        ]);
        const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'placed');
        const order = outcome.order;
        assert.match(order.id, /^ord_[A-Za-z0-9_-]{22}$/);
        assert.equal(order.checkoutId, id);
        assert.equal(order.status, 'placed');
        assert.equal(order.buyerEmail, BUYER.email);
        assert.deepEqual(
          order.lines.map((l) => [l.id, l.position, l.variantId, l.title, l.sku, l.quantity, l.unitPrice, l.lineTotal]),
          [
            ['li_1', 0, classico, view.lines[0]!.title, 'ESP-CLA-10', 2, 650, 1300],
            ['li_2', 1, decaf, view.lines[1]!.title, 'ESP-DEC-10', 1, 690, 690],
          ],
        );
        assert.equal(order.lines[0]!.productTitle, 'Espresso Capsules');
        assert.deepEqual([order.subtotal, order.shipping, order.tax, order.total], [1990, 500, 0, 2490]);
        assert.deepEqual([order.subtotal, order.shipping, order.tax, order.total], [view.totals.subtotal, view.totals.shipping, view.totals.tax, view.totals.total]);
        assert.equal(await count('orders', 'checkout_id = $1', [id]), 1);

        const stored = await readOrder(store.db, order.id);
        assert.deepEqual(stored!.lines, order.lines);
        await setPrice(classico, 999);
        try {
          assert.equal((await store.checkouts.get(store.db, id))!.view.record.status, 'completed');
          const reread = await readOrder(store.db, order.id);
          assert.deepEqual(reread, stored, 'the order keeps what the buyer approved');
          assert.equal((await readOrder(store.db, `#${order.number}`))!.id, order.id);
        } finally {
          await setPrice(classico, 650);
        }
      });

      it('takes the summed demand of two lines of one variant out of stock, in the database and in memory', async () => {
        const decaf = variant('ESP-DEC-10');
        const before = await onHandIn(store.db, decaf);
        const { approval } = await awaitingBuyer([
          { variantId: decaf, quantity: 2 },
          { variantId: decaf, quantity: 3, properties: { note: 'gift' } },
        ]);
        const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'placed');
        assert.equal(await onHandIn(store.db, decaf), before - 5);
        assert.equal(store.inventory.onHand(decaf), before - 5);
      });

      it('completes the checkout with its order id; the buyer and then the store made the moves', async () => {
        const { id, approval } = await awaitingBuyer([{ variantId: variant('ESP-LUN-10'), quantity: 1 }]);
        const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'placed');
        const answer = (await store.checkouts.get(store.db, id))!;
        assert.equal(answer.view.record.status, 'completed');
        assert.equal(answer.view.record.orderId, outcome.order.id);
        assert.equal(answer.approval, undefined);
        const moves = (await store.checkouts.transitions(store.db, id)).slice(-2);
        assert.deepEqual(
          moves.map((t) => [t.from, t.to, t.actor]),
          [
            ['requires_escalation', 'complete_in_progress', 'buyer'],
            ['complete_in_progress', 'completed', 'system'],
          ],
        );
        assert.match(moves[1]!.reason!, new RegExp(`#${outcome.order.number}`));
        const state = await store.checkouts.approvalState(store.db, approval.token);
        assert.equal(state.kind, 'completed');
        assert.equal(state.kind === 'completed' && state.order.id, outcome.order.id);
      });

      it("writes the buyer's confirmation to the outbox in the order's transaction, undelivered", async () => {
        const { approval } = await awaitingBuyer([{ variantId: variant('ESP-LUN-10'), quantity: 1 }]);
        const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'placed');
        assert.equal(outcome.kind === 'placed' && outcome.placedNow, true);
        const rows = await store.db.query<{ kind: string; topic: string; payload: { to: string; subject: string } | string; sent_at: Date | null }>(
          'select kind, topic, payload, sent_at from outbox where order_id = $1',
          [outcome.order.id],
        );
        assert.equal(rows.length, 1);
        assert.equal(rows[0]!.kind, 'mail');
        assert.equal(rows[0]!.topic, 'order.placed');
        const payload = typeof rows[0]!.payload === 'string' ? JSON.parse(rows[0]!.payload) : rows[0]!.payload;
        assert.equal(payload.to, BUYER.email);
        assert.match(payload.subject, new RegExp(`#${outcome.order.number}`));
        assert.equal(rows[0]!.sent_at, null);
      });

      it('records the payment as pending: manual capture charges nothing now', async () => {
        const { approval } = await awaitingBuyer([{ variantId: variant('ESP-LUN-10'), quantity: 2 }]);
        const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'placed');
        const payments = await store.db.query<{ state: string; amount: number; currency: string; handler: string }>(
          'select state, amount, currency, handler from payments where order_id = $1',
          [outcome.order.id],
        );
        assert.deepEqual(payments, [{ state: 'pending', amount: outcome.order.total, currency: 'USD', handler: `${store.payments.name}:manual_capture` }]);
        assert.equal(outcome.order.paymentState, 'pending');
        const reread = (await readOrder(store.db, outcome.order.id))!;
        assert.equal(reread.paymentState, 'pending');
        assert.equal(reread.paymentHandler, store.payments.name);
        assert.match(reread.paymentSummary, /pending/i);
      });
    });

    describe('a failure inside the transaction keeps nothing', () => {
      /** A handler that checks the stock was already taken in its transaction, then fails as told. */
      function failingHandler(variantId: number, error: () => Error, seen: number[]): PaymentHandler {
        return {
          ...store.payments,
          async authorize(tx) {
            seen.push(await onHandIn(tx, variantId));
            throw error();
          },
        };
      }

      it('a declined payment, after the stock was taken, rolls back stock, order, payment, outbox and checkout; the buyer can approve again', async () => {
        const classico = variant('ESP-CLA-10');
        const seen: number[] = [];
        const declining = service({ payments: failingHandler(classico, () => new PaymentDeclined('The card was declined.'), seen) });
        const { id, approval } = await awaitingBuyer([{ variantId: classico, quantity: 3 }], declining);
        const before = await everything(id, [classico]);
        const outcome = await declining.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'refused');
        assert.match(outcome.kind === 'refused' ? outcome.reason : '', /The card was declined\. Nothing was ordered or charged\./);
        assert.deepEqual(seen, [before.stock[0]! - 3], 'the handler ran after the stock was taken');
        assert.deepEqual(await everything(id, [classico]), before);
        assert.equal((await store.checkouts.approvalState(store.db, approval.token)).kind, 'pending');
        const retried = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(retried.kind, 'placed');
        assert.equal(await onHandIn(store.db, classico), before.stock[0]! - 3);
      });

      it('a payment handler that throws any other error rolls everything back, and the error reaches the caller', async () => {
        const classico = variant('ESP-CLA-10');
        const seen: number[] = [];
        const broken = service({ payments: failingHandler(classico, () => new Error('gateway unreachable'), seen) });
        const { id, approval } = await awaitingBuyer(
          [
            { variantId: classico, quantity: 1 },
            { variantId: variant('ESP-DEC-10'), quantity: 2 },
          ],
          broken,
        );
        const before = await everything(id, [classico, variant('ESP-DEC-10')]);
        await assert.rejects(broken.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' }), /gateway unreachable/);
        assert.equal(seen.length, 1);
        assert.equal(seen[0], before.stock[0]! - 1);
        assert.deepEqual(await everything(id, [classico, variant('ESP-DEC-10')]), before);
        assert.equal((await store.checkouts.get(store.db, id))!.view.record.status, 'requires_escalation');
      });
    });

    describe('a link is used once, by the right form, for what was shown', () => {
      it('approving twice gives one order', async () => {
        const lungo = variant('ESP-LUN-10');
        const { id, approval } = await awaitingBuyer([{ variantId: lungo, quantity: 1 }]);
        const stock = await onHandIn(store.db, lungo);
        const first = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        const second = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(first.kind, 'placed');
        assert.equal(second.kind, 'placed');
        assert.equal(first.kind === 'placed' && second.kind === 'placed' && first.order.id === second.order.id, true);
        assert.equal(await count('orders', 'checkout_id = $1', [id]), 1);
        assert.equal(await onHandIn(store.db, lungo), stock - 1);
      });

      it('approving twice at once gives one order and takes the stock once', async () => {
        const lungo = variant('ESP-LUN-10');
        const { id, approval } = await awaitingBuyer([{ variantId: lungo, quantity: 2 }]);
        const stock = await onHandIn(store.db, lungo);
        const outcomes = await Promise.all([1, 2, 3].map(() => store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' })));
        assert.deepEqual(outcomes.map((o) => o.kind), ['placed', 'placed', 'placed']);
        assert.equal(new Set(outcomes.map((o) => (o.kind === 'placed' ? o.order.id : ''))).size, 1);
        assert.equal(await count('orders', 'checkout_id = $1', [id]), 1);
        assert.equal(await count('outbox', 'order_id = $1', [outcomes[0]!.kind === 'placed' ? outcomes[0]!.order.id : '']), 1);
        assert.equal(outcomes.filter((o) => o.kind === 'placed' && o.placedNow).length, 1);
        assert.equal(await onHandIn(store.db, lungo), stock - 2);
      });

      it('an approval that reads the link unused, then the order placed by another approval, answers placed', async () => {
        const lungo = variant('ESP-LUN-10');
        const { id, approval } = await awaitingBuyer([{ variantId: lungo, quantity: 1 }]);
        const approveOn = (db: typeof store.db) => store.checkouts.approve(db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        // The other approval commits right after this one's first read of the link (on PostgreSQL, another connection
        // can at that moment): this one then reads the link unused and the checkout completed.
        let other: Awaited<ReturnType<typeof approveOn>> | undefined;
        const racing = new Proxy(store.db, {
          get(target, name) {
            if (name !== 'query') return Reflect.get(target, name, target) as unknown;
            return async (sql: string, params?: unknown[]) => {
              const rows = await target.query(sql, params);
              if (other === undefined && /from checkout_approvals where token/.test(sql)) other = await approveOn(store.db);
              return rows;
            };
          },
        });
        const outcome = await approveOn(racing);
        assert.equal(other?.kind, 'placed');
        assert.equal(outcome.kind, 'placed');
        assert.equal(outcome.kind === 'placed' && other?.kind === 'placed' && outcome.order.id === other.order.id && !outcome.placedNow, true);
        assert.equal(await count('orders', 'checkout_id = $1', [id]), 1);
      });

      it('two checkouts racing for the last unit: exactly one order, stock 0, the other refused in words and back to incomplete', async () => {
        const decaf = variant('ESP-DEC-10');
        const previous = await onHandIn(store.db, decaf);
        await store.inventory.setOnHand(store.db, 'ESP-DEC-10', 1);
        try {
          const a = await awaitingBuyer([{ variantId: decaf, quantity: 1 }]);
          const b = await awaitingBuyer([{ variantId: decaf, quantity: 1 }]);
          const outcomes = await Promise.all([a, b].map(({ approval }) => store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' })));
          assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['placed', 'refused']);
          assert.equal(await count('orders', 'checkout_id = any($1::text[])', [[a.id, b.id]]), 1);
          assert.equal(await onHandIn(store.db, decaf), 0);
          const loser = outcomes[0]!.kind === 'refused' ? a : b;
          const refused = outcomes.find((o) => o.kind === 'refused')!;
          assert.match(refused.kind === 'refused' ? refused.reason : '', /sold out/);
          const answer = (await store.checkouts.get(store.db, loser.id))!;
          assert.equal(answer.view.record.status, 'incomplete');
          assert.equal(answer.view.record.orderId, null);
          assert.deepEqual(answer.view.messages.map((m) => m.code), ['out_of_stock']);
          // The agent is told why the buyer's approval placed nothing (get_checkout's first message), and the history keeps it.
          assert.equal(answer.notice?.code, 'sold_out_at_approval');
          assert.equal((await store.checkouts.transitions(store.db, loser.id)).at(-1)!.code, 'sold_out_at_approval');
          assert.equal(await count('payments p join orders o on o.id = p.order_id', 'o.checkout_id = $1', [loser.id]), 0);
        } finally {
          await store.inventory.setOnHand(store.db, 'ESP-DEC-10', previous);
        }
      });

      it('a wrong form secret is refused and changes nothing', async () => {
        const classico = variant('ESP-CLA-10');
        const { id, approval } = await awaitingBuyer([{ variantId: classico, quantity: 1 }]);
        const before = await everything(id, [classico]);
        for (const secret of ['', 'wrong', `${approval.formSecret}x`, approval.formSecret.slice(1), approval.token]) {
          const outcome = await store.checkouts.approve(store.db, approval.token, secret, approval.digest, { kind: 'none' });
          assert.equal(outcome.kind, 'refused', secret);
          assert.match(outcome.kind === 'refused' ? outcome.reason : '', /Reload the page/);
        }
        assert.deepEqual(await everything(id, [classico]), before);
        assert.equal((await store.checkouts.approvalState(store.db, approval.token)).kind, 'pending');
      });

      it('a digest other than the one shown is refused and changes nothing', async () => {
        const classico = variant('ESP-CLA-10');
        const { id, approval } = await awaitingBuyer([{ variantId: classico, quantity: 1 }]);
        const before = await everything(id, [classico]);
        for (const digest of ['', 'x', `${approval.digest.slice(0, -1)}A`]) {
          const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, digest, { kind: 'none' });
          assert.equal(outcome.kind, 'refused', digest);
          assert.match(outcome.kind === 'refused' ? outcome.reason : '', /changed/);
        }
        assert.deepEqual(await everything(id, [classico]), before);
      });

      it('an unknown link is refused and changes nothing', async () => {
        const orders = await count('orders');
        const outcome = await store.checkouts.approve(store.db, 'A'.repeat(43), 'secret', 'digest', { kind: 'none' });
        assert.deepEqual(outcome, { kind: 'refused', reason: 'This approval link is not valid.', changes: [] });
        assert.equal((await store.checkouts.approvalState(store.db, 'A'.repeat(43))).kind, 'unknown');
        assert.equal(await count('orders'), orders);
      });

      it('an update after the link was issued voids it; approving then is refused and says what changed', async () => {
        const lungo = variant('ESP-LUN-10');
        const { id, approval } = await awaitingBuyer([{ variantId: lungo, quantity: 1 }]);
        const updated = await store.checkouts.update(store.db, id, complete([{ variantId: lungo, quantity: 2 }]), 'agent');
        assert.equal(updated.view.record.status, 'ready_for_complete');
        assert.equal(updated.approval, undefined);
        const orders = await count('orders');
        const stock = await onHandIn(store.db, lungo);
        const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'refused');
        const changes = outcome.kind === 'refused' ? outcome.changes : [];
        assert.ok(changes.some((c) => /^The quantity of Espresso Capsules.* changed from 1 to 2\.$/.test(c)), changes.join(' | '));
        assert.ok(changes.some((c) => /total changed from \$11\.50 to \$18\.00/.test(c)), changes.join(' | '));
        assert.equal(await count('orders'), orders);
        assert.equal(await onHandIn(store.db, lungo), stock);
        assert.equal((await store.checkouts.get(store.db, id))!.view.record.status, 'ready_for_complete');
      });

      it('a change to one of two lines of one variant is named in the refusal', async () => {
        const decaf = variant('ESP-DEC-10');
        const lines = [
          { variantId: decaf, quantity: 2 },
          { variantId: decaf, quantity: 3, properties: { note: 'gift' } },
        ];
        const { id, approval } = await awaitingBuyer(lines);
        await store.checkouts.update(store.db, id, complete([{ ...lines[0]!, quantity: 4 }, lines[1]!]), 'agent');
        const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'refused');
        const changes = outcome.kind === 'refused' ? outcome.changes : [];
        assert.ok(changes.some((c) => /quantity of .* changed from 2 to 4/.test(c)), changes.join(' | '));
      });

      it('a price change while waiting for the buyer voids the link, and the refusal names the new price', async () => {
        const ristretto = variant('ESP-RIS-10');
        const { id, approval } = await awaitingBuyer([{ variantId: ristretto, quantity: 1 }]);
        await setPrice(ristretto, 725);
        try {
          const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
          assert.equal(outcome.kind, 'refused');
          const changes = outcome.kind === 'refused' ? outcome.changes : [];
          assert.ok(changes.some((c) => /price of .* changed from \$6\.50 to \$7\.25/.test(c)), changes.join(' | '));
          assert.equal(await count('orders', 'checkout_id = $1', [id]), 0);
          assert.equal((await store.checkouts.get(store.db, id))!.view.record.status, 'ready_for_complete');
        } finally {
          await setPrice(ristretto, 650);
        }
      });

      it('an expired link is refused, places nothing, and the checkout goes back to ready_for_complete', async () => {
        let now = Date.now();
        const clocked = service({ config: { approvalTtlSeconds: 30 }, now: () => new Date(now) });
        const lungo = variant('ESP-LUN-10');
        const { id, approval } = await awaitingBuyer([{ variantId: lungo, quantity: 1 }], clocked);
        assert.equal(approval.expiresAt.getTime(), now + 30_000);
        const stock = await onHandIn(store.db, lungo);
        now += 31_000;
        const outcome = await clocked.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'refused');
        assert.match(outcome.kind === 'refused' ? outcome.reason : '', /expired/);
        assert.equal(await count('orders', 'checkout_id = $1', [id]), 0);
        assert.equal(await onHandIn(store.db, lungo), stock);
        assert.equal((await clocked.get(store.db, id))!.view.record.status, 'ready_for_complete');
        // The agent can ask again: a new link works.
        const again = await clocked.requestCompletion(store.db, id, 'agent');
        const placed = await clocked.approve(store.db, again.approval!.token, again.approval!.formSecret, again.approval!.digest, { kind: 'none' });
        assert.equal(placed.kind, 'placed');
      });
    });

    describe('declining', () => {
      it('declining cancels the checkout, by the buyer, and the link can no longer place an order', async () => {
        const { id, approval } = await awaitingBuyer([{ variantId: variant('ESP-CLA-10'), quantity: 1 }]);
        const orders = await count('orders');
        assert.deepEqual(await store.checkouts.decline(store.db, approval.token, approval.formSecret), { kind: 'declined' });
        const answer = (await store.checkouts.get(store.db, id))!;
        assert.equal(answer.view.record.status, 'canceled');
        const last = (await store.checkouts.transitions(store.db, id)).at(-1)!;
        assert.deepEqual([last.from, last.to, last.actor], ['requires_escalation', 'canceled', 'buyer']);
        assert.match(last.reason!, /declined/);
        const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'refused');
        assert.equal(await count('orders'), orders);
      });

      it('a decline with a wrong form secret is refused and the checkout keeps waiting for the buyer', async () => {
        const { id, approval } = await awaitingBuyer([{ variantId: variant('ESP-CLA-10'), quantity: 1 }]);
        const outcome = await store.checkouts.decline(store.db, approval.token, 'wrong');
        assert.equal(outcome.kind, 'refused');
        assert.equal((await store.checkouts.get(store.db, id))!.view.record.status, 'requires_escalation');
      });

      it('a decline after the order was placed is refused and the order stands', async () => {
        const { id, approval } = await awaitingBuyer([{ variantId: variant('ESP-CLA-10'), quantity: 1 }]);
        const placed = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
        assert.equal(placed.kind, 'placed');
        const outcome = await store.checkouts.decline(store.db, approval.token, approval.formSecret);
        assert.equal(outcome.kind, 'refused');
        assert.equal((await store.checkouts.get(store.db, id))!.view.record.status, 'completed');
      });
    });
  });
}
