/**
 * What happens to a buyer's approval link as the checkout moves on, on both backends: asked again, the old link
 * says a newer one was issued; a line selling out while waiting sends the checkout back to incomplete and closes
 * the link; a stale link cannot decline (cancel) the newer version; a used link is recorded as used, not void;
 * a cart whose checkout expired gets a new checkout; a selling plan changed after the link voids it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readApproval } from '../../src/checkout/checkout-store.js';
import { CheckoutService } from '../../src/checkout/checkout-service.js';
import { openStore, type Store } from '../../src/store.js';
import { backends, dropTestDatabases, testConfig } from '../helpers/store.js';

after(dropTestDatabases);

const ADDRESS = { firstName: 'Ada', lastName: 'Lovelace', streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94105', country: 'US' };

for (const backend of backends) {
  describe(`approval links (${backend.name})`, () => {
    let store: Store;
    before(async () => {
      const { db } = await backend.open({ migrated: true });
      store = await openStore(testConfig(), { db });
    });
    after(() => store.close());

    const variant = (sku: string) => store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!;
    const escalated = async (sku = 'ESP-RIS-10', quantity = 1, checkouts = store.checkouts) => {
      const created = await checkouts.create(
        store.db,
        { lines: [{ variantId: variant(sku).id, quantity }], buyer: { email: 'ada@example.com' }, destination: ADDRESS, shippingOption: 'standard' },
        'agent',
        'agent',
      );
      const asked = await checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
      assert.equal(asked.view.record.status, 'requires_escalation');
      return { id: created.view.record.id, approval: asked.approval! };
    };

    it('asked again while waiting for the buyer: the old link says a newer link was issued', async () => {
      const first = await escalated();
      const second = await store.checkouts.requestCompletion(store.db, first.id, 'agent');
      assert.notEqual(second.approval!.token, first.approval.token);
      const old = await store.checkouts.approvalState(store.db, first.approval.token);
      assert.equal(old.kind, 'closed');
      if (old.kind === 'closed') assert.match(old.reason, /newer approval link/);
    });

    it('a line selling out while waiting for the buyer sends the checkout back to incomplete and closes the link', async () => {
      await store.inventory.setOnHand(store.db, 'ESP-DEC-10', 5);
      const { id, approval } = await escalated('ESP-DEC-10', 2);
      await store.inventory.setOnHand(store.db, 'ESP-DEC-10', 0);
      const answer = await store.checkouts.get(store.db, id);
      assert.equal(answer!.view.record.status, 'incomplete');
      assert.equal(answer!.approval, undefined);
      assert.ok(answer!.view.messages.some((m) => m.code === 'out_of_stock'));
      assert.equal((await store.checkouts.approvalState(store.db, approval.token)).kind, 'closed');
      await store.inventory.setOnHand(store.db, 'ESP-DEC-10', 100);
    });

    it('a stale link cannot decline the newer version of the checkout', async () => {
      const first = await escalated();
      await store.checkouts.requestCompletion(store.db, first.id, 'agent');
      const declined = await store.checkouts.decline(store.db, first.approval.token, first.approval.formSecret);
      assert.equal(declined.kind, 'refused');
      assert.equal((await store.checkouts.get(store.db, first.id))!.view.record.status, 'requires_escalation');
    });

    it('the link that placed the order is recorded as used, not void', async () => {
      const { approval } = await escalated();
      const placed = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
      assert.equal(placed.kind, 'placed');
      const stored = await readApproval(store.db, approval.token);
      assert.ok(stored!.usedAt);
      assert.equal(stored!.voidedAt, null);
    });

    it('a cart whose checkout expired gets a new open checkout', async () => {
      let now = new Date();
      const checkouts = new CheckoutService({
        catalog: store.catalog,
        buyerProof: store.buyerProof,
        inventory: store.inventory,
        carts: store.carts,
        config: { ...store.config.checkout, ttlSeconds: 60 },
        maxLineQuantity: store.config.cartMaxLineQuantity,
        payments: store.payments,
        now: () => now,
      });
      const cart = await store.carts.addItems(store.db, undefined, [{ variantId: variant('ESP-RIS-10').id, quantity: 1 }]);
      const first = await checkouts.create(store.db, { lines: [], cartToken: cart.token }, 'agent', 'agent');
      now = new Date(now.getTime() + 61_000);
      const second = await checkouts.create(store.db, { lines: [], cartToken: cart.token }, 'agent', 'agent');
      assert.notEqual(second.view.record.id, first.view.record.id);
      assert.equal(second.view.record.status, 'incomplete');
      assert.equal((await checkouts.get(store.db, first.view.record.id))!.view.record.status, 'canceled');
    });

    it('a selling plan changed after the link was issued voids it', async () => {
      const product = store.catalog.snapshot.products.find((p) => p.sellingPlanGroups.some((g) => g.plans.length >= 2));
      if (!product) throw new Error('the demo catalog has no product with two selling plans');
      const [planA, planB] = product.sellingPlanGroups.flatMap((g) => g.plans);
      const variantId = product.variants[0]!.id;
      const input = (plan: number) => ({
        lines: [{ variantId, quantity: 1, sellingPlanId: plan }],
        buyer: { email: 'ada@example.com' },
        destination: ADDRESS,
        shippingOption: 'standard',
      });
      const created = await store.checkouts.create(store.db, input(planA!.id), 'agent', 'agent');
      const asked = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
      const approval = asked.approval!;
      await store.checkouts.update(store.db, created.view.record.id, input(planB!.id), 'agent');
      const outcome = await store.checkouts.approve(store.db, approval.token, approval.formSecret, approval.digest, { kind: 'none' });
      assert.equal(outcome.kind, 'refused');
    });
  });
}
