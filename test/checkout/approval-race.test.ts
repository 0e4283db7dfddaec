/**
 * Twenty buyers approve at once, each a checkout for one unit of a variant with five units left: exactly five
 * orders are placed, stock ends at 0 (never below), and the fifteen others are refused in words a buyer
 * understands, with nothing kept (no order, no payment, no outbox row for them). On both backends.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { ApprovalRecord } from '../../src/checkout/checkout-store.js';
import { backends, dropTestDatabases, startTestStore } from '../helpers/store.js';

after(dropTestDatabases);

const ADDRESS = { firstName: 'Sam', lastName: 'Reed', streetAddress: '1 Main St', locality: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' };

for (const backend of backends) {
  describe(`approvals racing for the last units (${backend.name})`, () => {
    it('20 concurrent approvals for the last 5 units place exactly 5 orders and leave stock at 0', async () => {
      const t = await startTestStore(backend, { config: { rateLimit: false } });
      try {
        const { store } = t;
        const count = async (table: string) => (await store.db.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;
        const variant = store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === 'ESP-RIS-10')!;
        await store.inventory.setOnHand(store.db, 'ESP-RIS-10', 20);

        // Twenty checkouts, each asking for one unit, each escalated to its buyer while stock still suffices.
        const approvals: ApprovalRecord[] = [];
        for (let i = 0; i < 20; i++) {
          const created = await store.checkouts.create(
            store.db,
            { lines: [{ variantId: variant.id, quantity: 1 }], buyer: { email: `buyer${i}@example.com` }, destination: ADDRESS, shippingOption: 'standard' },
            'agent',
            'agent',
          );
          const asked = await store.checkouts.requestCompletion(store.db, created.view.record.id, 'agent');
          assert.equal(asked.view.record.status, 'requires_escalation');
          approvals.push(asked.approval!);
        }
        // Then only five units are left, and everyone approves at once.
        await store.inventory.setOnHand(store.db, 'ESP-RIS-10', 5);
        const before = { orders: await count('orders'), payments: await count('payments'), outbox: await count('outbox') };

        const outcomes = await Promise.all(approvals.map((a) => store.checkouts.approve(store.db, a.token, a.formSecret, a.digest, { kind: 'none' })));

        const placed = outcomes.filter((o) => o.kind === 'placed');
        const refused = outcomes.filter((o) => o.kind === 'refused');
        assert.equal(placed.length, 5, JSON.stringify(outcomes.map((o) => o.kind)));
        assert.equal(refused.length, 15);
        for (const outcome of refused) {
          if (outcome.kind !== 'refused') continue;
          assert.match(outcome.reason, /sold out|changed|no longer/i, outcome.reason);
          assert.doesNotMatch(outcome.reason, /sql|error:|stack|constraint/i);
        }
        await store.inventory.refresh(store.db);
        assert.equal(store.inventory.onHand(variant.id), 0);
        const [level] = await store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variant.id]);
        assert.equal(level!.on_hand, 0);
        assert.equal(await count('orders'), before.orders + 5);
        assert.equal(await count('payments'), before.payments + 5);
        assert.equal(await count('outbox'), before.outbox + 5);

        // Each placed order's checkout is completed; each refused one is open again, not completed.
        for (const [index, outcome] of outcomes.entries()) {
          const answer = await store.checkouts.get(store.db, approvals[index]!.checkoutId);
          assert.equal(answer!.view.record.status === 'completed', outcome.kind === 'placed');
        }
      } finally {
        await t.close();
      }
    });
  });
}
