/**
 * Subscriptions through the domain, on both backends, with the store's clock driven by the test: an order with one
 * plan line and one one-time line makes one subscription; its renewal is produced and mailed at notice time, priced
 * at that day's price less the plan's saving, and becomes an order only by the buyer's approval (stock taken); skip,
 * cancel, reminder then skip; and `run` is idempotent, on two instances at once too.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { planUnitPrice } from '../../src/catalog/types.js';
import { readOrder, type Order } from '../../src/orders/orders.js';
import type { Store } from '../../src/store.js';
import { addInterval } from '../../src/subscriptions/subscriptions.js';
import { placeOrder } from '../helpers/orders.js';
import { backends, dropTestDatabases, startSecondInstance, startTestStore, type TestStore } from '../helpers/store.js';

const DAY = 24 * 3600 * 1000;
const BUYER = 'sub.buyer@example.com';

/** The store's clock, moved by the test. */
class TestClock {
  at = new Date('2027-01-10T12:00:00Z');
  readonly now = () => new Date(this.at.getTime());
  set(at: Date): void {
    this.at = new Date(at.getTime());
  }
}

function espresso(store: Store) {
  const product = store.catalog.snapshot.productByHandle('espresso-capsules')!;
  const plan = product.sellingPlanGroups[0]!.plans.find((p) => p.intervalCount === 1)!;
  return { product, variant: product.variants[0]!, other: product.variants[1]!, plan };
}

async function mailsTo(store: Store, email: string): Promise<{ subject: string; text: string }[]> {
  const rows = await store.db.query<{ payload: { to: string; subject: string; text: string } | string }>(`select payload from outbox where kind = 'mail' order by id`);
  return rows.map((r) => (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload)).filter((m) => m.to === email);
}

const renewalLink = (text: string) => /\/subscriptions\/renewals\/([A-Za-z0-9_-]{40,})/.exec(text)?.[1];

async function setPrice(store: Store, variantId: number, cents: number): Promise<void> {
  await store.db.query('update variants set price_cents = $2 where id = $1', [variantId, cents]);
  await store.db.query('update catalog_version set version = version + 1');
  await store.catalog.refresh(store.db);
}

async function onHand(store: Store, variantId: number): Promise<number> {
  const [row] = await store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variantId]);
  return row!.on_hand;
}

/** The buyer taps the renewal's link and approves what the approval page shows (link proof in tests' config). */
async function approveRenewal(store: Store, token: string): Promise<Order> {
  const entry = await store.subscriptions.openRenewal(store.db, token);
  assert.equal(entry.kind, 'approve', JSON.stringify(entry.kind === 'closed' ? entry.reason : entry.kind));
  if (entry.kind !== 'approve') throw new Error('unreachable');
  const state = await store.checkouts.approvalState(store.db, entry.approvalToken);
  assert.equal(state.kind, 'pending');
  if (state.kind !== 'pending') throw new Error('unreachable');
  const outcome = await store.checkouts.approve(store.db, entry.approvalToken, state.approval.formSecret, state.approval.digest, { kind: 'none' });
  assert.equal(outcome.kind, 'placed', outcome.kind === 'refused' ? outcome.reason : outcome.kind);
  if (outcome.kind !== 'placed') throw new Error('unreachable');
  return outcome.order;
}

after(dropTestDatabases);

for (const backend of backends) {
  describe(`subscriptions and their renewals (${backend.name})`, () => {
    let t: TestStore;
    let clock: TestClock;

    before(async () => {
      clock = new TestClock();
      t = await startTestStore(backend, { clock: clock.now });
    });
    after(() => t?.close());
    beforeEach(() => clock.set(new Date('2027-01-10T12:00:00Z')));

    async function subscribe(email: string, quantity = 2) {
      const { variant, plan } = espresso(t.store);
      const oneTime = t.store.catalog.snapshot.productByHandle('decaf-capsules')!.variants[0]!;
      const order = await placeOrder(
        t.store,
        [
          { variantId: variant.id, quantity, sellingPlanId: plan.id },
          { variantId: oneTime.id, quantity: 1 },
        ],
        { email, firstName: 'Sub', lastName: 'Buyer' },
      );
      const [subscription] = await t.store.subscriptions.list(t.store.db, { email });
      assert.ok(subscription, 'a subscription');
      return { order, subscription, variant, plan };
    }

    it('an order with a plan line and a one-time line makes one subscription of the plan line, its next date an interval later', async () => {
      const { order, subscription, variant, plan } = await subscribe(BUYER);
      assert.equal((await t.store.subscriptions.list(t.store.db, { email: BUYER })).length, 1);
      assert.deepEqual(
        subscription.lines.map((l) => [l.variantId, l.quantity]),
        [[variant.id, 2]],
      );
      assert.equal(subscription.plan.sellingPlanId, plan.id);
      assert.equal(subscription.plan.discountPercent, plan.discountPercent);
      assert.equal(subscription.state, 'active');
      assert.equal(subscription.nextAt.toISOString(), addInterval(clock.at, 'month', 1).toISOString());
      assert.equal(subscription.originOrderId, order.id);
      const line = order.lines.find((l) => l.variantId === variant.id)!;
      assert.equal(line.unitPrice, planUnitPrice(variant.priceCents, plan.discountPercent));
      assert.equal(line.sellingPlan?.name, plan.name);
      assert.ok((await mailsTo(t.store, BUYER)).some((m) => /subscription is set up/.test(m.text) && /\/subscriptions\/manage\//.test(m.text)), 'the buyer is told, with the link to manage it');
    });

    it("at notice time the renewal is mailed; the buyer's approval places a second order at that day's price less the saving, stock taken", async () => {
      const email = 'renews@example.com';
      const { subscription, variant, plan } = await subscribe(email);
      // Before the notice days: nothing.
      clock.set(new Date(subscription.nextAt.getTime() - 4 * DAY));
      assert.equal((await t.store.subscriptions.run(t.store.db)).produced, 0);
      // The price changes between the orders: the renewal is priced at the new one.
      await setPrice(t.store, variant.id, variant.priceCents + 100);
      clock.set(new Date(subscription.nextAt.getTime() - 3 * DAY + 60_000));
      const report = await t.store.subscriptions.run(t.store.db);
      assert.ok(report.produced >= 1, JSON.stringify(report));
      assert.equal((await t.store.subscriptions.run(t.store.db)).produced, 0, 'run again: nothing more');
      const notice = (await mailsTo(t.store, email)).find((m) => /approve your delivery/.test(m.subject));
      assert.ok(notice, 'the renewal mail');
      const token = renewalLink(notice.text);
      assert.ok(token, 'with its link');
      const stockBefore = await onHand(t.store, variant.id);
      const renewed = await approveRenewal(t.store, token);
      const line = renewed.lines[0]!;
      assert.equal(line.unitPrice, planUnitPrice(variant.priceCents + 100, plan.discountPercent), "that day's price less the saving");
      assert.equal(line.quantity, 2);
      assert.equal(line.sellingPlan?.sellingPlanId, plan.id);
      assert.equal(renewed.lines.length, 1, 'only the subscription line');
      assert.equal(await onHand(t.store, variant.id), stockBefore - 2, 'stock taken');
      const details = await t.store.subscriptions.get(t.store.db, subscription.id);
      assert.equal(details!.subscription.nextAt.toISOString(), addInterval(subscription.nextAt, 'month', 1).toISOString(), 'next date an interval on');
      assert.equal(details!.renewals[0]!.state, 'approved');
      assert.ok(details!.orders.some((o) => o.id === renewed.id));
      assert.equal((await t.store.subscriptions.list(t.store.db, { email })).length, 1, 'a renewal makes no new subscription');
      // The link now says it was approved; approving twice places nothing more.
      const again = await t.store.subscriptions.openRenewal(t.store.db, token);
      assert.equal(again.kind, 'approved');
      await setPrice(t.store, variant.id, variant.priceCents);
    });

    it('skip moves the next date and no renewal is produced for the skipped delivery', async () => {
      const email = 'skips@example.com';
      const { subscription } = await subscribe(email);
      const skipped = await t.store.subscriptions.skipNext(t.store.db, subscription.id, { actor: 'buyer', email });
      assert.equal(skipped.nextAt.toISOString(), addInterval(subscription.nextAt, 'month', 1).toISOString());
      clock.set(new Date(subscription.nextAt.getTime() + DAY));
      await t.store.subscriptions.run(t.store.db);
      const [row] = await t.store.db.query<{ n: string }>('select count(*) as n from subscription_renewals where subscription_id = $1', [subscription.id]);
      assert.equal(Number(row!.n), 0, 'nothing for the skipped date');
      assert.ok((await mailsTo(t.store, email)).some((m) => /You skipped the delivery/.test(m.text)), 'the skip is confirmed by mail');
    });

    it('skipping while the renewal waits for approval voids its link', async () => {
      const email = 'skips-pending@example.com';
      const { subscription } = await subscribe(email);
      clock.set(new Date(subscription.nextAt.getTime() - 2 * DAY));
      await t.store.subscriptions.run(t.store.db);
      const token = renewalLink((await mailsTo(t.store, email)).find((m) => /approve your delivery/.test(m.subject))!.text)!;
      await t.store.subscriptions.skipNext(t.store.db, subscription.id, { actor: 'buyer', email });
      const entry = await t.store.subscriptions.openRenewal(t.store.db, token);
      assert.equal(entry.kind, 'closed');
      const [row] = await t.store.db.query<{ n: string }>("select count(*) as n from orders where buyer_email = $1", [email]);
      assert.equal(Number(row!.n), 1, 'only the first order');
    });

    it('cancel stops every renewal', async () => {
      const email = 'cancels@example.com';
      const { subscription } = await subscribe(email);
      await t.store.subscriptions.cancel(t.store.db, subscription.id, { actor: 'buyer', email });
      for (const months of [1, 2, 3]) {
        clock.set(addInterval(subscription.nextAt, 'month', months - 1));
        await t.store.subscriptions.run(t.store.db);
      }
      const [row] = await t.store.db.query<{ n: string }>('select count(*) as n from subscription_renewals where subscription_id = $1', [subscription.id]);
      assert.equal(Number(row!.n), 0);
      await assert.rejects(t.store.subscriptions.skipNext(t.store.db, subscription.id, { actor: 'buyer', email }), /active/);
      await assert.rejects(t.store.subscriptions.pause(t.store.db, subscription.id, { actor: 'buyer', email: 'someone.else@example.com' }), /no such subscription/);
    });

    it('an unapproved renewal is reminded once, then skipped with a mail; the subscription stays active', async () => {
      const email = 'forgets@example.com';
      const { subscription } = await subscribe(email);
      clock.set(new Date(subscription.nextAt.getTime() - 3 * DAY));
      assert.equal((await t.store.subscriptions.run(t.store.db)).produced, 1);
      clock.set(new Date(subscription.nextAt.getTime() + 60_000));
      assert.ok((await t.store.subscriptions.run(t.store.db)).reminded >= 1);
      clock.set(new Date(subscription.nextAt.getTime() + DAY));
      await t.store.subscriptions.run(t.store.db);
      const mails = await mailsTo(t.store, email);
      assert.equal(mails.filter((m) => /reminder/.test(m.subject)).length, 1, 'reminded once');
      clock.set(new Date(subscription.nextAt.getTime() + 10 * DAY));
      await t.store.subscriptions.run(t.store.db);
      const details = (await t.store.subscriptions.get(t.store.db, subscription.id))!;
      assert.equal(details.renewals[0]!.state, 'skipped');
      assert.equal(details.subscription.state, 'active');
      assert.equal(details.subscription.nextAt.toISOString(), addInterval(subscription.nextAt, 'month', 1).toISOString());
      assert.ok((await mailsTo(t.store, email)).some((m) => /was skipped/.test(m.subject)), 'the skip is mailed');
      const [orders] = await t.store.db.query<{ n: string }>('select count(*) as n from orders where buyer_email = $1', [email]);
      assert.equal(Number(orders!.n), 1, 'no order without the buyer');
    });

    it("an agent's checkout with a plan line makes no subscription until the buyer approves it", async () => {
      const email = 'agent-only@example.com';
      const { variant, plan } = espresso(t.store);
      const created = await t.store.checkouts.create(
        t.store.db,
        { lines: [{ variantId: variant.id, quantity: 1, sellingPlanId: plan.id }], buyer: { email }, destination: { firstName: 'A', lastName: 'B', streetAddress: '1 Main St', locality: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' }, shippingOption: 'standard' },
        'agent',
        'agent',
      );
      const asked = await t.store.checkouts.requestCompletion(t.store.db, created.view.record.id, 'agent');
      assert.equal(asked.view.record.status, 'requires_escalation');
      assert.equal((await t.store.subscriptions.list(t.store.db, { email })).length, 0, 'asking to complete makes none');
      await t.store.checkouts.approve(t.store.db, asked.approval!.token, asked.approval!.formSecret, asked.approval!.digest, { kind: 'none' });
      assert.equal((await t.store.subscriptions.list(t.store.db, { email })).length, 1, "the buyer's approval makes it");
    });

    it('a renewal with a sold-out line shows it as such and can be approved without it', async () => {
      const email = 'sold-out@example.com';
      const { variant, other, plan } = espresso(t.store);
      await placeOrder(
        t.store,
        [
          { variantId: variant.id, quantity: 1, sellingPlanId: plan.id },
          { variantId: other.id, quantity: 1, sellingPlanId: plan.id },
        ],
        { email },
      );
      const [subscription] = await t.store.subscriptions.list(t.store.db, { email });
      assert.equal(subscription!.lines.length, 2, 'one subscription of both lines on the plan');
      const [{ on_hand: kept }] = await t.store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [other.id]) as [{ on_hand: number }];
      await t.store.db.query('update inventory_levels set on_hand = 0 where variant_id = $1', [other.id]);
      await t.store.inventory.refresh(t.store.db);
      try {
        clock.set(new Date(subscription!.nextAt.getTime() - 2 * DAY));
        await t.store.subscriptions.run(t.store.db);
        const token = renewalLink((await mailsTo(t.store, email)).find((m) => /approve your delivery/.test(m.subject))!.text)!;
        const entry = await t.store.subscriptions.openRenewal(t.store.db, token);
        assert.equal(entry.kind, 'sold_out');
        if (entry.kind !== 'sold_out') throw new Error('unreachable');
        assert.deepEqual(entry.soldOut, [t.store.catalog.snapshot.variantById(other.id)!.product.title + ' - ' + other.title]);
        assert.equal(entry.canApproveWithout, true);
        const without = await t.store.subscriptions.approveWithoutSoldOut(t.store.db, token);
        assert.equal(without.kind, 'approve');
        const order = await approveRenewal(t.store, token);
        assert.deepEqual(order.lines.map((l) => l.variantId), [variant.id], 'the delivery without what sold out');
      } finally {
        await t.store.db.query('update inventory_levels set on_hand = $2 where variant_id = $1', [other.id, kept]);
        await t.store.inventory.refresh(t.store.db);
      }
    });

    it('a subscription whose plan the catalog drops keeps its terms and says so', async () => {
      const email = 'plan-gone@example.com';
      const { subscription, variant, plan } = await subscribe(email, 1);
      const [group] = await t.store.db.query<{ group_id: string }>('select group_id from selling_plans where id = $1', [plan.id]);
      await t.store.db.query('delete from selling_plans where id = $1', [plan.id]);
      await t.store.db.query('update catalog_version set version = version + 1');
      await t.store.catalog.refresh(t.store.db);
      try {
        const details = (await t.store.subscriptions.get(t.store.db, subscription.id))!;
        assert.equal(details.planOffered, false);
        assert.equal(details.next.lines[0]!.unitPrice, planUnitPrice(variant.priceCents, plan.discountPercent), 'still at its saving');
        clock.set(new Date(subscription.nextAt.getTime() - 2 * DAY));
        await t.store.subscriptions.run(t.store.db);
        const token = renewalLink((await mailsTo(t.store, email)).find((m) => /approve your delivery/.test(m.subject))!.text)!;
        const order = await approveRenewal(t.store, token);
        assert.equal(order.lines[0]!.unitPrice, planUnitPrice(variant.priceCents, plan.discountPercent));
        assert.equal(order.lines[0]!.sellingPlan?.name, plan.name);
      } finally {
        await t.store.db.query(
          'insert into selling_plans (id, group_id, position, name, description, discount_percent, interval_unit, interval_count) values ($1, $2, $3, $4, $5, $6, $7, $8)',
          [plan.id, group!.group_id, 0, plan.name, plan.description, plan.discountPercent, plan.intervalUnit, plan.intervalCount],
        );
        await t.store.db.query('update catalog_version set version = version + 1');
        await t.store.catalog.refresh(t.store.db);
      }
    });

    it('a subscription whose renewal cannot be produced holds up no other, and is reported', async () => {
      const { subscription: broken } = await subscribe('broken@example.com', 1);
      const { subscription: fine } = await subscribe('fine@example.com', 1);
      // A row no code of the store writes: lines that are not a list.
      await t.store.db.query(`update subscriptions set lines = '{}'::jsonb where id = $1`, [broken.id]);
      try {
        clock.set(new Date(fine.nextAt.getTime() - DAY));
        const report = await t.store.subscriptions.run(t.store.db);
        assert.ok(report.failed >= 1, JSON.stringify(report));
        const [row] = await t.store.db.query<{ n: string }>('select count(*) as n from subscription_renewals where subscription_id = $1', [fine.id]);
        assert.equal(Number(row!.n), 1, 'the other one renewed');
      } finally {
        await t.store.db.query(`update subscriptions set state = 'canceled' where id = $1`, [broken.id]);
      }
    });

    it("a renewal a change is withdrawing is left to the change by the schedule: skipped once, not twice", async () => {
      const email = 'withdrawn@example.com';
      const { subscription } = await subscribe(email, 1);
      clock.set(new Date(subscription.nextAt.getTime() - 2 * DAY));
      await t.store.subscriptions.run(t.store.db);
      const [renewal] = (await t.store.subscriptions.get(t.store.db, subscription.id))!.renewals;
      // The change's first step (its checkout canceled), then the schedule runs before the change's second step.
      await t.store.checkouts.cancel(t.store.db, renewal!.checkoutId, 'buyer', "the subscription's delivery was skipped");
      await t.store.subscriptions.run(t.store.db);
      assert.equal((await t.store.subscriptions.get(t.store.db, subscription.id))!.renewals[0]!.state, 'pending', 'not the schedule’s to skip');
      const skipped = await t.store.subscriptions.skipNext(t.store.db, subscription.id, { actor: 'buyer', email: email.toUpperCase() });
      assert.equal(skipped.nextAt.toISOString(), addInterval(subscription.nextAt, 'month', 1).toISOString(), 'one delivery skipped');
      assert.equal((await mailsTo(t.store, email)).filter((m) => /was skipped/.test(m.subject)).length, 0, 'no "not approved in time" mail');
    });

    it('pausing and resuming at once keeps the delivery: its renewal is mailed again', async () => {
      const email = 'pauses@example.com';
      const { subscription } = await subscribe(email, 1);
      clock.set(new Date(subscription.nextAt.getTime() - 2 * DAY));
      await t.store.subscriptions.run(t.store.db);
      await t.store.subscriptions.pause(t.store.db, subscription.id, { actor: 'buyer', email });
      const resumed = await t.store.subscriptions.resume(t.store.db, subscription.id, { actor: 'buyer', email });
      assert.equal(resumed.nextAt.toISOString(), subscription.nextAt.toISOString(), 'the same delivery date');
      await t.store.subscriptions.run(t.store.db);
      const renewals = (await t.store.subscriptions.get(t.store.db, subscription.id))!.renewals;
      assert.deepEqual(renewals.map((r) => r.state), ['pending', 'replaced']);
      assert.equal((await mailsTo(t.store, email)).filter((m) => /approve your delivery/.test(m.subject)).length, 2);
    });

    it('a catch-up run as of a past date gives the buyer their days to approve from now', async () => {
      const email = 'catch-up@example.com';
      const { subscription } = await subscribe(email, 1);
      clock.set(new Date(subscription.nextAt.getTime() + 2 * DAY));
      await t.store.subscriptions.run(t.store.db, new Date(subscription.nextAt.getTime() - DAY));
      const [renewal] = (await t.store.subscriptions.get(t.store.db, subscription.id))!.renewals;
      assert.equal(renewal!.dueAt.toISOString(), subscription.nextAt.toISOString());
      assert.ok(renewal!.skipAt.getTime() > clock.at.getTime(), 'not skipped the moment it is mailed');
      await t.store.subscriptions.run(t.store.db);
      assert.equal((await t.store.subscriptions.get(t.store.db, subscription.id))!.renewals[0]!.state, 'pending');
    });

    it('a reason over 200 characters is refused, not cut; nothing changes', async () => {
      const email = 'long-reason@example.com';
      const { subscription } = await subscribe(email, 1);
      await assert.rejects(t.store.subscriptions.cancel(t.store.db, subscription.id, { actor: 'buyer', email }, 'x'.repeat(201)), /at most 200 characters/);
      assert.equal((await t.store.subscriptions.get(t.store.db, subscription.id))!.subscription.state, 'active');
    });

    it('two instances running the schedule at once produce each renewal once', async () => {
      const emails = Array.from({ length: 6 }, (_, i) => `twice-${i}@example.com`);
      const subscriptions = [];
      for (const email of emails) subscriptions.push((await subscribe(email, 1)).subscription);
      const second = await startSecondInstance(backend, t);
      try {
        const latest = Math.max(...subscriptions.map((s) => s.nextAt.getTime()));
        clock.set(new Date(latest - 2 * DAY));
        const asOf = clock.now();
        await Promise.all([t.store.subscriptions.run(t.store.db, asOf), second.store.subscriptions.run(second.store.db, asOf), t.store.subscriptions.run(t.store.db, asOf)]);
        const rows = await t.store.db.query<{ subscription_id: string; n: string }>(
          'select subscription_id, count(*) as n from subscription_renewals where subscription_id = any($1::bigint[]) group by subscription_id',
          [subscriptions.map((s) => s.id)],
        );
        assert.equal(rows.length, subscriptions.length, 'every subscription renewed');
        assert.ok(rows.every((r) => Number(r.n) === 1), 'each once');
        for (const email of emails) assert.equal((await mailsTo(t.store, email)).filter((m) => /approve your delivery/.test(m.subject)).length, 1, 'one mail each');
      } finally {
        await second.close();
      }
    });

    it('a renewal priced now: the order keeps the first price, the next delivery shows the new one', async () => {
      const email = 'prices@example.com';
      const { subscription, variant, plan, order } = await subscribe(email, 1);
      await setPrice(t.store, variant.id, variant.priceCents + 250);
      const details = (await t.store.subscriptions.get(t.store.db, subscription.id))!;
      assert.equal(details.next.lines[0]!.unitPrice, planUnitPrice(variant.priceCents + 250, plan.discountPercent));
      const first = (await readOrder(t.store.db, order.id))!;
      assert.equal(first.lines.find((l) => l.variantId === variant.id)!.unitPrice, planUnitPrice(variant.priceCents, plan.discountPercent));
      await setPrice(t.store, variant.id, variant.priceCents);
    });
  });
}

describe('the calendar of deliveries', () => {
  it('a subscription started on the 31st comes back to the 31st after a short month', async () => {
    const { followingDate } = await import('../../src/subscriptions/subscriptions.js');
    const plan = { intervalUnit: 'month' as const, intervalCount: 1 } as Parameters<typeof followingDate>[0]['plan'];
    const subscription = { plan, createdAt: new Date('2027-01-31T10:00:00Z') };
    const feb = followingDate(subscription, subscription.createdAt);
    assert.equal(feb.toISOString(), '2027-02-28T10:00:00.000Z');
    assert.equal(followingDate(subscription, feb).toISOString(), '2027-03-31T10:00:00.000Z');
    const weekly = { plan: { ...plan, intervalUnit: 'week' as const, intervalCount: 2 }, createdAt: new Date('2027-01-31T10:00:00Z') };
    assert.equal(followingDate(weekly, weekly.createdAt).toISOString(), '2027-02-14T10:00:00.000Z');
  });

  it("dates follow the store's wall clock: an evening order west of UTC keeps its day, and its hour across a clock change", async () => {
    const { followingDate } = await import('../../src/subscriptions/subscriptions.js');
    const plan = { intervalUnit: 'month' as const, intervalCount: 1 } as Parameters<typeof followingDate>[0]['plan'];
    // 8 pm on 30 January in Los Angeles is already the 31st in UTC: the next delivery is 28 February there, at 8 pm.
    const evening = { plan, createdAt: new Date('2027-01-31T04:00:00Z') };
    assert.equal(followingDate(evening, evening.createdAt, 'America/Los_Angeles').toISOString(), '2027-03-01T04:00:00.000Z');
    assert.equal(followingDate(evening, evening.createdAt, 'UTC').toISOString(), '2027-02-28T04:00:00.000Z');
    // 9 am in Berlin on 10 March (CET, UTC+1) → 9 am on 10 April (CEST, UTC+2).
    const spring = { plan, createdAt: new Date('2027-03-10T08:00:00Z') };
    assert.equal(followingDate(spring, spring.createdAt, 'Europe/Berlin').toISOString(), '2027-04-10T07:00:00.000Z');
  });
});
