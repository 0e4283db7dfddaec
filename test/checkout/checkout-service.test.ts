/**
 * The checkout service on both backends (src/checkout/checkout-service.ts): creating from lines or a cart,
 * full-replacement updates, messages naming the field at fault (in the domain's names), an agent's request to complete
 * (it escalates to the buyer and never orders), the recorded transitions, cancel and expiry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { approvalSummary, checkoutDigest, type CheckoutMessage } from '../../src/checkout/checkout.js';
import { CheckoutNotFound, CheckoutRefused, CheckoutService, type CheckoutInput, type LineInput } from '../../src/checkout/checkout-service.js';
import { CheckoutFieldRefused } from '../../src/checkout/fields.js';
import type { CheckoutConfig } from '../../src/config.js';
import { openStore, type Store } from '../../src/store.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';

after(dropTestDatabases);

const BUYER = { email: 'ada@example.com', firstName: 'Ada' };
const ADDRESS = { firstName: 'Ada', lastName: 'Lovelace', streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' };
const EMAIL = ['buyer', 'email'];
const DESTINATION = ['destination'];
const OPTION = ['shippingOption'];

const complete = (lines: LineInput[]): CheckoutInput => ({ lines, buyer: BUYER, destination: ADDRESS, shippingOption: 'standard' });
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const errorFields = (messages: CheckoutMessage[]) => messages.filter((m) => m.type === 'error').map((m) => m.field);

for (const backend of backends) {
  describe(`checkout service (${backend.name})`, () => {
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

    /** A service on this store with its own settings, clock or payment handler. */
    const service = (options: { config?: Partial<CheckoutConfig>; now?: () => Date } = {}) =>
      new CheckoutService({
        catalog: store.catalog,
        buyerProof: store.buyerProof,
        inventory: store.inventory,
        carts: store.carts,
        config: { ...store.config.checkout, ...options.config },
        maxLineQuantity: store.config.cartMaxLineQuantity,
        payments: store.payments,
        now: options.now,
      });

    const count = async (table: string, where = 'true', params: unknown[] = []) =>
      (await store.db.query<{ n: number }>(`select count(*)::int as n from ${table} where ${where}`, params))[0]!.n;
    const onHandInDatabase = async (variantId: number) =>
      (await store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variantId]))[0]!.on_hand;

    /** Sets a variant's price as an import would: the row, the catalog version, and this instance's snapshot. */
    async function setPrice(variantId: number, cents: number): Promise<void> {
      await store.db.transaction(async (tx) => {
        await tx.query('update variants set price_cents = $2 where id = $1', [variantId, cents]);
        await tx.query('update catalog_version set version = version + 1');
      });
      await store.catalog.refresh(store.db);
    }

    describe('creating and updating', () => {
      it('a checkout from lines alone is incomplete, with one message per missing field, naming it', async () => {
        const answer = await store.checkouts.create(store.db, { lines: [{ variantId: variant('ESP-DEC-10'), quantity: 1 }] }, 'agent', 'agent');
        assert.equal(answer.view.record.status, 'incomplete');
        assert.deepEqual(errorFields(answer.view.messages), [EMAIL, DESTINATION, OPTION]);
        for (const message of answer.view.messages) {
          assert.equal(message.code, 'missing');
          assert.equal(message.severity, 'recoverable');
          assert.ok(message.content.length > 10);
        }
        assert.equal(answer.view.blockers.length, 3);
        assert.equal(answer.approval, undefined);
        const stored = await store.checkouts.get(store.db, answer.view.record.id);
        assert.equal(stored!.view.record.status, 'incomplete');
        assert.match(answer.view.record.id, /^chk_[A-Za-z0-9_-]{22}$/);
      });

      it('an email the mailer cannot send to is refused and nothing is stored (the one email rule)', async () => {
        const before = (await store.db.query<{ n: number }>('select count(*)::int as n from checkouts'))[0]!.n;
        await assert.rejects(
          store.checkouts.create(store.db, { lines: [{ variantId: variant('ESP-DEC-10'), quantity: 1 }], buyer: { email: 'not-an-email' } }, 'agent', 'agent'),
          (error: unknown) => error instanceof CheckoutFieldRefused && error.field.join('.') === 'buyer.email' && error.fault.fault === 'not_a_mailbox',
        );
        assert.equal((await store.db.query<{ n: number }>('select count(*)::int as n from checkouts'))[0]!.n, before);
      });

      it('an address with problems gives one message per field of the destination; a bad option is named too', async () => {
        const answer = await store.checkouts.create(
          store.db,
          { lines: [{ variantId: variant('ESP-DEC-10'), quantity: 1 }], destination: { streetAddress: '1 Market St', region: 'ZZ', country: 'US' }, shippingOption: 'overnight' },
          'agent',
          'agent',
        );
        assert.equal(answer.view.record.status, 'incomplete');
        assert.deepEqual(
          answer.view.messages.map((m) => [m.field, m.code, m.params]),
          [
            [EMAIL, 'missing', undefined],
            [['destination', 'firstName'], 'missing', undefined],
            [['destination', 'locality'], 'missing', undefined],
            [['destination', 'region'], 'invalid', { region: 'ZZ' }],
            [['destination', 'postalCode'], 'missing', undefined],
            [OPTION, 'invalid', { option: 'overnight' }],
          ],
        );
        assert.equal(answer.view.totals.tax, undefined, 'no tax without a valid address');
      });

      it('with an email, a US address and a shipping option it is ready_for_complete, priced in integer cents with the state\'s tax', async () => {
        const taxed = service({ config: { taxRatesBps: { CA: 725 }, standardShippingCents: 500, freeShippingOverCents: 5000 } });
        const answer = await taxed.create(store.db, complete([{ variantId: variant('ESP-DEC-10'), quantity: 2 }]), 'agent', 'agent');
        assert.equal(answer.view.record.status, 'ready_for_complete');
        assert.deepEqual(answer.view.messages, []);
        assert.deepEqual(answer.view.blockers, []);
        // 2 x $6.90 = $13.80; 7.25% of it is 100.05 cents -> 100; standard shipping $5.00 is not taxed.
        assert.deepEqual(answer.view.totals, { subtotal: 1380, shipping: 500, tax: 100, total: 1980 });
        assert.equal(answer.view.lines[0]!.unitPrice, 690);
        assert.equal(answer.view.lines[0]!.line.id, 'li_1');
      });

      it('from the free-shipping threshold standard shipping costs nothing', async () => {
        const answer = await service({ config: { freeShippingOverCents: 5000, standardShippingCents: 500 } }).create(
          store.db,
          complete([{ variantId: variant('ESP-RIS-50'), quantity: 2 }]),
          'agent',
          'agent',
        );
        assert.equal(answer.view.totals.subtotal, 5800);
        assert.equal(answer.view.totals.shipping, 0);
        assert.equal(answer.view.selectedOption!.title, 'Free standard shipping');
      });

      it('an incomplete checkout becomes ready_for_complete once the missing fields are given', async () => {
        const lines = [{ variantId: variant('ESP-DEC-10'), quantity: 1 }];
        const created = await store.checkouts.create(store.db, { lines }, 'agent', 'agent');
        const updated = await store.checkouts.update(store.db, created.view.record.id, complete(lines), 'agent');
        assert.equal(updated.view.record.status, 'ready_for_complete');
        assert.deepEqual(updated.view.messages, []);
      });

      it('an update replaces everything: fields left out are cleared and the checkout goes back to incomplete', async () => {
        const created = await store.checkouts.create(store.db, complete([{ variantId: variant('ESP-DEC-10'), quantity: 1 }]), 'agent', 'agent');
        assert.equal(created.view.record.status, 'ready_for_complete');
        const id = created.view.record.id;
        const updated = await store.checkouts.update(store.db, id, { lines: [{ variantId: variant('ESP-LUN-10'), quantity: 3 }] }, 'agent');
        const record = updated.view.record;
        assert.equal(record.status, 'incomplete');
        assert.deepEqual(record.buyer, {});
        assert.equal(record.destination, null);
        assert.equal(record.shippingOption, null);
        assert.deepEqual(record.lines.map((l) => [l.id, l.variantId, l.quantity]), [['li_1', variant('ESP-LUN-10'), 3]]);
        assert.deepEqual(errorFields(updated.view.messages), [EMAIL, DESTINATION, OPTION]);
        const reread = (await store.checkouts.get(store.db, id))!.view.record;
        assert.deepEqual([reread.buyer, reread.destination, reread.shippingOption, reread.lines.length], [{}, null, null, 1]);
      });

      it('a checkout from a cart takes its lines, and creating again for that cart answers the same open checkout', async () => {
        const cart = await store.carts.addItems(store.db, undefined, [
          { variantId: variant('ESP-CLA-10'), quantity: 2 },
          { variantId: variant('SLP-120'), quantity: 1 },
        ]);
        const first = await store.checkouts.create(store.db, { lines: [], cartToken: cart.token }, 'agent', 'agent');
        assert.equal(first.view.record.cartToken, cart.token);
        assert.deepEqual(
          first.view.record.lines.map((l) => [l.variantId, l.quantity]),
          cart.cart.lines.map((priced) => [priced.line.variantId, priced.line.quantity]),
          'the lines in the cart\'s order',
        );
        assert.deepEqual(first.view.record.lines.map((l) => [l.variantId, l.quantity]).sort(), [
          [variant('ESP-CLA-10'), 2],
          [variant('SLP-120'), 1],
        ].sort());
        const second = await store.checkouts.create(store.db, { lines: [], cartToken: cart.token, buyer: BUYER }, 'agent', 'agent');
        assert.equal(second.view.record.id, first.view.record.id);
        assert.deepEqual(second.view.record.buyer, {}, 'the open checkout is answered as it is');
        assert.equal(await count('checkouts', 'cart_token = $1', [cart.token]), 1);
        const transitions = await store.checkouts.transitions(store.db, first.view.record.id);
        assert.deepEqual(transitions.map((t) => [t.from, t.to, t.actor, t.reason]), [[null, 'incomplete', 'agent', 'created from a cart']]);
      });

      it('two creates racing for one cart answer one checkout', async () => {
        const cart = await store.carts.addItems(store.db, undefined, [{ variantId: variant('ESP-CLA-10'), quantity: 1 }]);
        const [a, b] = await Promise.all([
          store.checkouts.create(store.db, { lines: [], cartToken: cart.token }, 'agent', 'agent'),
          store.checkouts.create(store.db, { lines: [], cartToken: cart.token }, 'agent', 'agent'),
        ]);
        assert.equal(a.view.record.id, b.view.record.id);
        assert.equal(await count('checkouts', 'cart_token = $1', [cart.token]), 1);
      });

      it('a canceled cart checkout does not stop a new checkout for that cart', async () => {
        const cart = await store.carts.addItems(store.db, undefined, [{ variantId: variant('ESP-CLA-10'), quantity: 1 }]);
        const first = await store.checkouts.create(store.db, { lines: [], cartToken: cart.token }, 'agent', 'agent');
        await store.checkouts.cancel(store.db, first.view.record.id, 'agent');
        const second = await store.checkouts.create(store.db, { lines: [], cartToken: cart.token }, 'agent', 'agent');
        assert.notEqual(second.view.record.id, first.view.record.id);
        assert.equal(second.view.record.status, 'incomplete');
      });

      it('a cart token that names no cart is CheckoutNotFound and stores nothing', async () => {
        const before = await count('checkouts');
        await assert.rejects(store.checkouts.create(store.db, { lines: [], cartToken: 'no-such-cart' }, 'agent', 'agent'), CheckoutNotFound);
        assert.equal(await count('checkouts'), before);
      });

      it('an unknown variant is refused naming its line and nothing is stored', async () => {
        const before = [await count('checkouts'), await count('checkout_transitions')];
        await assert.rejects(
          store.checkouts.create(store.db, complete([{ variantId: variant('ESP-DEC-10'), quantity: 1 }, { variantId: 987_654_321, quantity: 1 }]), 'agent', 'agent'),
          (error: unknown) => error instanceof CheckoutRefused && error.reason.code === 'not_found' && same(error.field, ['lines', 1, 'variant']) && error.reason.params?.variantId === 987_654_321 && /987654321/.test(error.message),
        );
        assert.deepEqual([await count('checkouts'), await count('checkout_transitions')], before);
      });

      it('a quantity out of range is refused naming its quantity and nothing is stored', async () => {
        const before = await count('checkouts');
        for (const quantity of [0, -1, 1.5, store.config.cartMaxLineQuantity + 1]) {
          await assert.rejects(
            store.checkouts.create(store.db, { lines: [{ variantId: variant('ESP-DEC-10'), quantity }] }, 'agent', 'agent'),
            (error: unknown) => error instanceof CheckoutRefused && error.reason.code === 'quantity_limit' && same(error.field, ['lines', 0, 'quantity']),
            `${quantity}`,
          );
        }
        assert.equal(await count('checkouts'), before);
      });

      it('an update naming an unknown variant is refused and leaves the checkout as it was', async () => {
        const created = await store.checkouts.create(store.db, complete([{ variantId: variant('ESP-DEC-10'), quantity: 1 }]), 'agent', 'agent');
        const id = created.view.record.id;
        await assert.rejects(store.checkouts.update(store.db, id, { lines: [{ variantId: 987_654_321, quantity: 1 }] }, 'agent'), CheckoutRefused);
        const after = (await store.checkouts.get(store.db, id))!.view.record;
        assert.equal(after.version, created.view.record.version);
        assert.equal(after.status, 'ready_for_complete');
        assert.deepEqual(after.buyer, BUYER);
      });

      it('an unknown checkout id is undefined on read and CheckoutNotFound on update, completion and cancel', async () => {
        assert.equal(await store.checkouts.get(store.db, 'chk_nope'), undefined);
        await assert.rejects(store.checkouts.update(store.db, 'chk_nope', { lines: [{ variantId: variant('ESP-DEC-10'), quantity: 1 }] }, 'agent'), CheckoutNotFound);
        await assert.rejects(store.checkouts.requestCompletion(store.db, 'chk_nope', 'agent'), CheckoutNotFound);
        await assert.rejects(store.checkouts.cancel(store.db, 'chk_nope', 'agent'), CheckoutNotFound);
      });
    });

    describe('stock and price messages', () => {
      it('a sold-out line gives an out_of_stock message naming its line and keeps the checkout incomplete', async () => {
        const soldOut = variant('ESP-CLA-50');
        const previous = store.inventory.onHand(soldOut);
        await store.inventory.setOnHand(store.db, 'ESP-CLA-50', 0);
        try {
          const answer = await store.checkouts.create(
            store.db,
            complete([{ variantId: variant('ESP-DEC-10'), quantity: 1 }, { variantId: soldOut, quantity: 1 }]),
            'agent',
            'agent',
          );
          assert.equal(answer.view.record.status, 'incomplete');
          assert.deepEqual(answer.view.messages.map((m) => [m.code, m.field]), [['out_of_stock', ['lines', 1]]]);
          assert.match(answer.view.messages[0]!.content, /sold out/);
        } finally {
          await store.inventory.setOnHand(store.db, 'ESP-CLA-50', previous);
        }
      });

      it('two lines of one variant wanting more than is left together give insufficient_stock', async () => {
        const scarce = variant('ESP-LUN-50');
        const previous = store.inventory.onHand(scarce);
        await store.inventory.setOnHand(store.db, 'ESP-LUN-50', 3);
        try {
          const lines = [
            { variantId: scarce, quantity: 2 },
            { variantId: scarce, quantity: 2, properties: { engraving: 'A' } },
          ];
          const answer = await store.checkouts.create(store.db, complete(lines), 'agent', 'agent');
          assert.equal(answer.view.record.status, 'incomplete');
          assert.deepEqual(answer.view.messages.map((m) => [m.code, m.field, m.params?.available]), [
            ['insufficient_stock', ['lines', 0], 3],
            ['insufficient_stock', ['lines', 1], 3],
          ]);
          assert.match(answer.view.messages[0]!.content, /Only 3/);
          const fewer = await store.checkouts.update(store.db, answer.view.record.id, complete([lines[0]!, { ...lines[1]!, quantity: 1 }]), 'agent');
          assert.equal(fewer.view.record.status, 'ready_for_complete');
        } finally {
          await store.inventory.setOnHand(store.db, 'ESP-LUN-50', previous);
        }
      });

      it('a price change since the line was set is a warning naming both prices; the checkout is priced at the new price and stays ready', async () => {
        const changing = variant('ESP-RIS-10');
        const created = await store.checkouts.create(store.db, complete([{ variantId: changing, quantity: 2 }]), 'agent', 'agent');
        assert.equal(created.view.totals.subtotal, 1300);
        await setPrice(changing, 700);
        try {
          const answer = (await store.checkouts.get(store.db, created.view.record.id))!;
          assert.equal(answer.view.record.status, 'ready_for_complete');
          assert.deepEqual(answer.view.messages.map((m) => [m.type, m.code, m.field, m.params?.from, m.params?.to]), [['warning', 'price_changed', ['lines', 0], 650, 700]]);
          assert.match(answer.view.messages[0]!.content, /\$6\.50 to \$7\.00/);
          assert.equal(answer.view.totals.subtotal, 1400);
          // Setting the lines again quotes the new price: the warning goes.
          const requoted = await store.checkouts.update(store.db, created.view.record.id, complete([{ variantId: changing, quantity: 2 }]), 'agent');
          assert.deepEqual(requoted.view.messages, []);
        } finally {
          await setPrice(changing, 650);
        }
      });
    });

    describe("an agent's request to complete", () => {
      it('escalates to the buyer: requires_escalation with a 256-bit approval link and buyer_approval_required; no order, no stock taken', async () => {
        const decaf = variant('ESP-DEC-10');
        const created = await store.checkouts.create(store.db, complete([{ variantId: decaf, quantity: 2 }]), 'agent', 'agent');
        const before = { orders: await count('orders'), payments: await count('payments'), outbox: await count('outbox'), stock: await onHandInDatabase(decaf), inMemory: store.inventory.onHand(decaf) };
        const answer = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
        assert.equal(answer.view.record.status, 'requires_escalation');
        assert.equal(answer.view.record.orderId, null);
        assert.equal(answer.escalation?.code, 'buyer_approval_required');
        assert.ok(answer.escalation.content.length > 10);
        assert.ok(answer.approval);
        assert.match(answer.approval.token, /^[A-Za-z0-9_-]{43,}$/, 'at least 256 bits of base64url');
        assert.equal(answer.approval.checkoutId, created.view.record.id);
        assert.equal(answer.approval.digest, checkoutDigest(approvalSummary(answer.view)));
        assert.ok(answer.approval.formSecret.length >= 32);
        assert.ok(answer.approval.expiresAt.getTime() > Date.now());
        assert.deepEqual(
          { orders: await count('orders'), payments: await count('payments'), outbox: await count('outbox'), stock: await onHandInDatabase(decaf), inMemory: store.inventory.onHand(decaf) },
          before,
        );
        const reread = (await store.checkouts.get(store.db, created.view.record.id))!;
        assert.equal(reread.view.record.status, 'requires_escalation');
        assert.equal(reread.approval?.token, answer.approval.token, 'the pending link is shown again on read');
      });

      it('asked by an agent on an incomplete checkout: it stays incomplete, its messages say what is missing, and no approval is issued', async () => {
        const created = await store.checkouts.create(store.db, { lines: [{ variantId: variant('ESP-DEC-10'), quantity: 1 }], buyer: BUYER }, 'agent', 'agent');
        const answer = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
        assert.equal(answer.view.record.status, 'incomplete');
        assert.equal(answer.approval, undefined);
        assert.notEqual(answer.escalation?.code, 'buyer_approval_required');
        assert.deepEqual(errorFields(answer.view.messages), [DESTINATION, OPTION]);
        assert.equal(await count('checkout_approvals', 'checkout_id = $1', [created.view.record.id]), 0);
        assert.equal(await count('orders', 'checkout_id = $1', [created.view.record.id]), 0);
      });

      it('asked again while waiting for the buyer: a new link, and the old one is void', async () => {
        const created = await store.checkouts.create(store.db, complete([{ variantId: variant('ESP-DEC-10'), quantity: 1 }]), 'agent', 'agent');
        const first = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
        const second = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
        assert.equal(second.view.record.status, 'requires_escalation');
        assert.notEqual(second.approval!.token, first.approval!.token);
        assert.equal(await count('checkout_approvals', 'checkout_id = $1 and voided_at is null', [created.view.record.id]), 1);
        const old = await store.checkouts.approvalState(store.db, first.approval!.token);
        assert.equal(old.kind, 'closed');
      });

      it('every transition is recorded with its actor and reason', async () => {
        const lines = [{ variantId: variant('ESP-DEC-10'), quantity: 1 }];
        const created = await store.checkouts.create(store.db, { lines }, 'agent', 'agent');
        const id = created.view.record.id;
        await store.checkouts.update(store.db, id, complete(lines), 'agent');
        await store.checkouts.update(store.db, id, complete(lines), 'agent'); // no change of status: nothing recorded
        await store.checkouts.requestCompletion(store.db, id, 'agent');
        await store.checkouts.update(store.db, id, { ...complete(lines), shippingOption: 'express' }, 'agent');
        await store.checkouts.cancel(store.db, id, 'merchant', 'the buyer phoned to cancel');
        const transitions = await store.checkouts.transitions(store.db, id);
        assert.deepEqual(
          transitions.map((t) => [t.from, t.to, t.actor]),
          [
            [null, 'incomplete', 'agent'],
            ['incomplete', 'ready_for_complete', 'agent'],
            ['ready_for_complete', 'requires_escalation', 'agent'],
            ['requires_escalation', 'ready_for_complete', 'agent'],
            ['ready_for_complete', 'canceled', 'merchant'],
          ],
        );
        assert.equal(transitions[0]!.reason, 'created');
        assert.match(transitions[2]!.reason!, /approve/);
        assert.match(transitions[3]!.reason!, /changed after this approval link was issued/);
        assert.equal(transitions[4]!.reason, 'the buyer phoned to cancel');
        for (const transition of transitions) {
          assert.ok(transition.reason && transition.reason.length > 0);
          assert.ok(transition.at instanceof Date && !Number.isNaN(transition.at.getTime()));
        }
      });
    });

    describe('cancel', () => {
      async function inStatus(status: 'incomplete' | 'ready_for_complete' | 'requires_escalation'): Promise<string> {
        const lines = [{ variantId: variant('ESP-DEC-10'), quantity: 1 }];
        const created = await store.checkouts.create(store.db, status === 'incomplete' ? { lines } : complete(lines), 'agent', 'agent');
        if (status === 'requires_escalation') await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
        assert.equal((await store.checkouts.get(store.db, created.view.record.id))!.view.record.status, status);
        return created.view.record.id;
      }

      for (const status of ['incomplete', 'ready_for_complete', 'requires_escalation'] as const) {
        it(`a ${status} checkout can be canceled; the move is recorded and the checkout no longer changes`, async () => {
          const id = await inStatus(status);
          const answer = await store.checkouts.cancel(store.db, id, 'agent', 'the buyer changed their mind');
          assert.equal(answer.view.record.status, 'canceled');
          assert.equal(answer.approval, undefined);
          assert.equal(await count('checkout_approvals', 'checkout_id = $1 and voided_at is null', [id]), 0, 'no approval link stays usable');
          const last = (await store.checkouts.transitions(store.db, id)).at(-1)!;
          assert.deepEqual([last.from, last.to, last.actor, last.reason], [status, 'canceled', 'agent', 'the buyer changed their mind']);
          // Canceling again answers it as it is; changing it is refused.
          assert.equal((await store.checkouts.cancel(store.db, id, 'agent')).view.record.status, 'canceled');
          assert.equal((await store.checkouts.transitions(store.db, id)).filter((t) => t.to === 'canceled').length, 1);
          await assert.rejects(
            store.checkouts.update(store.db, id, complete([{ variantId: variant('ESP-DEC-10'), quantity: 1 }]), 'agent'),
            (error: unknown) => error instanceof CheckoutRefused && error.reason.code === 'checkout_closed',
          );
          const asked = await store.checkouts.requestCompletion(store.db, id, 'agent');
          assert.equal(asked.view.record.status, 'canceled');
          assert.equal(asked.approval, undefined);
        });
      }

      it('a completed checkout cannot be canceled', async () => {
        const id = await inStatus('requires_escalation');
        const { approval } = (await store.checkouts.get(store.db, id))!;
        const outcome = await store.checkouts.approve(store.db, approval!.token, approval!.formSecret, approval!.digest, { kind: 'none' });
        assert.equal(outcome.kind, 'placed');
        await assert.rejects(
          store.checkouts.cancel(store.db, id, 'merchant'),
          (error: unknown) => error instanceof CheckoutRefused && error.reason.code === 'checkout_closed' && /completed/.test(error.message),
        );
        const after = (await store.checkouts.get(store.db, id))!.view.record;
        assert.equal(after.status, 'completed');
        assert.ok(after.orderId);
      });
    });

    describe('expiry', () => {
      const TTL = 60;
      /** A service whose clock the test moves. */
      function clocked() {
        const start = Date.now();
        let now = start;
        const checkouts = service({ config: { ttlSeconds: TTL }, now: () => new Date(now) });
        return { checkouts, start, advance: (seconds: number) => (now += seconds * 1000) };
      }

      it('a checkout past its lifetime is canceled when read, by the system, with the reason expired', async () => {
        const { checkouts, start, advance } = clocked();
        const created = await checkouts.create(store.db, complete([{ variantId: variant('ESP-DEC-10'), quantity: 1 }]), 'agent', 'agent');
        assert.equal(created.view.record.expiresAt.getTime(), start + TTL * 1000);
        advance(TTL - 1);
        assert.equal((await checkouts.get(store.db, created.view.record.id))!.view.record.status, 'ready_for_complete');
        advance(2);
        const read = (await checkouts.get(store.db, created.view.record.id))!;
        assert.equal(read.view.record.status, 'canceled');
        assert.equal(read.view.expired, true);
        const last = (await checkouts.transitions(store.db, created.view.record.id)).at(-1)!;
        assert.deepEqual([last.from, last.to, last.actor, last.reason], ['ready_for_complete', 'canceled', 'system', 'expired']);
      });

      it('an expired checkout refuses an update with checkout_closed, and an agent asking to complete gets it canceled, with no approval', async () => {
        const { checkouts, advance } = clocked();
        const lines = [{ variantId: variant('ESP-DEC-10'), quantity: 1 }];
        const a = await checkouts.create(store.db, complete(lines), 'agent', 'agent');
        const b = await checkouts.create(store.db, complete(lines), 'agent', 'agent');
        advance(TTL + 1);
        await assert.rejects(
          checkouts.update(store.db, a.view.record.id, complete(lines), 'agent'),
          (error: unknown) => error instanceof CheckoutRefused && error.reason.code === 'checkout_closed',
        );
        assert.equal((await store.checkouts.get(store.db, a.view.record.id))!.view.record.status, 'canceled');
        const asked = await checkouts.requestCompletion(store.db, b.view.record.id, 'agent');
        assert.equal(asked.view.record.status, 'canceled');
        assert.equal(asked.approval, undefined);
        assert.equal(await count('checkout_approvals', 'checkout_id = $1', [b.view.record.id]), 0);
      });

      it('the sweep (expireDue) cancels open checkouts past their lifetime, voids their approval links, and leaves the rest', async () => {
        const { checkouts, advance } = clocked();
        const lines = [{ variantId: variant('ESP-DEC-10'), quantity: 1 }];
        const waiting = await checkouts.create(store.db, complete(lines), 'agent', 'agent');
        const escalated = await checkouts.requestCompletion(store.db, waiting.view.record.id, 'agent');
        const incomplete = await checkouts.create(store.db, { lines }, 'agent', 'agent');
        advance(TTL / 2);
        const young = await checkouts.create(store.db, { lines }, 'agent', 'agent');
        advance(TTL / 2 + 1);
        const swept = await checkouts.expireDue(store.db);
        assert.ok(swept >= 2, `${swept}`);
        const status = async (id: string) => (await store.db.query<{ status: string }>('select status from checkouts where id = $1', [id]))[0]!.status;
        assert.equal(await status(waiting.view.record.id), 'canceled');
        assert.equal(await status(incomplete.view.record.id), 'canceled');
        assert.equal(await status(young.view.record.id), 'incomplete');
        const approval = (await store.db.query<{ voided_at: Date | null }>('select voided_at from checkout_approvals where token = $1', [escalated.approval!.token]))[0]!;
        assert.ok(approval.voided_at, 'the link is void');
        assert.equal(await checkouts.expireDue(store.db), 0, 'nothing left to sweep');
      });
    });
  });
}
