/**
 * The admin's Subscriptions over HTTP, on both backends: the list (the upcoming deliveries first, filtered by state
 * and buyer, 50 a page), a subscription's page (lines, plan terms, address, the next delivery priced now, renewals
 * with their orders, what happened), the cancel form (as a staff member: staff run subscriptions as they run orders),
 * audited as that person with the buyer mailed, refused without the CSRF token or from another origin; what buyers
 * and the catalog wrote shown inert; and the dashboard's count of active subscriptions and renewals approved.
 * Subscriptions are made as buyers make them: orders with lines bought on a plan; a renewal is produced by the
 * schedule's run and approved by its buyer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatMoney, planUnitPrice } from '../../src/catalog/types.js';
import type { Order } from '../../src/orders/orders.js';
import type { Store } from '../../src/store.js';
import { adminClient, startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { placeOrder } from '../helpers/orders.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { around, pageText } from '../helpers/page-text.js';

after(dropTestDatabases);

const DAY_MS = 24 * 3600 * 1000;

/** The subscriptions a list page links to, in its order (the upcoming deliveries' table left out). */
function listedIds(body: string): number[] {
  const table = around(body, 'id="subscriptions-caption"', '</table>');
  return [...table.matchAll(/href="\/admin\/subscriptions\/(\d+)"/g)].map((match) => Number(match[1]));
}

/** The buyer opens the renewal's link and approves what the approval page shows (link proof in tests' config). */
async function approveRenewal(store: Store, token: string): Promise<Order> {
  const entry = await store.subscriptions.openRenewal(store.db, token);
  assert.equal(entry.kind, 'approve');
  if (entry.kind !== 'approve') throw new Error('unreachable');
  const state = await store.checkouts.approvalState(store.db, entry.approvalToken);
  if (state.kind !== 'pending') throw new Error(`the approval is ${state.kind}`);
  const outcome = await store.checkouts.approve(store.db, entry.approvalToken, state.approval.formSecret, state.approval.digest, { kind: 'none' });
  if (outcome.kind !== 'placed') throw new Error(`not placed: ${outcome.kind}`);
  return outcome.order;
}

for (const backend of backends) {
  describe(`the admin's subscriptions (${backend.name})`, () => {
    let t: TestStore;
    let owner: StaffSessionForTest;
    let clerk: StaffSessionForTest;
    let admin: ReturnType<typeof adminClient>;
    let annOrder: Order;
    let renewal: Order;
    let annId: number;
    let bobId: number;

    before(async () => {
      t = await startTestStore(backend);
      const { store } = t;
      owner = await startStaffSession(store, { email: 'owner@example.com', role: 'owner' });
      clerk = await startStaffSession(store, { email: 'clerk@example.com', role: 'staff' });
      admin = adminClient(t);
      const product = store.catalog.snapshot.productByHandle('hydration-drink-stick')!;
      const [monthly, bimonthly] = product.sellingPlanGroups[0]!.plans;
      const variant = product.variants[0]!;
      const oneTime = store.catalog.snapshot.productByHandle('energy-drink-stick')!.variants[0]!;
      annOrder = await placeOrder(
        store,
        [
          { variantId: variant.id, quantity: 2, sellingPlanId: monthly!.id },
          { variantId: oneTime.id, quantity: 1 },
        ],
        { email: 'ann@example.com', firstName: 'Ann', lastName: 'Lee' },
      );
      await placeOrder(store, [{ variantId: variant.id, quantity: 1, sellingPlanId: bimonthly!.id }], { email: 'bob@example.com' });
      [annId, bobId] = (await store.subscriptions.list(store.db, {})).map((s) => s.id).reverse() as [number, number];
      // The schedule runs 29 days on: Ann's monthly delivery is within its notice days; her approval places the renewal.
      const report = await store.subscriptions.run(store.db, new Date(Date.now() + 29 * DAY_MS));
      assert.equal(report.produced, 1);
      const [row] = await store.db.query<{ link_token: string }>('select link_token from subscription_renewals where subscription_id = $1', [annId]);
      renewal = await approveRenewal(store, row!.link_token);
    });
    after(() => t?.close());

    it('the dashboard counts active subscriptions and the renewals approved, linking to the list', async () => {
      const response = await admin.get('/admin', owner);
      assert.equal(response.statusCode, 200);
      const panel = around(response.body, 'id="subscriptions-heading"', '</section>');
      assert.match(panel, /<a href="\/admin\/subscriptions\?state=active"><span class="figure">2<\/span> active<\/a>/);
      assert.match(panel, /<a href="\/admin\/subscriptions\?state=paused">0 paused<\/a>/);
      const text = pageText(panel);
      assert.match(text, /Renewals approved by their buyers Today 1 Last 7 days 1 Last 30 days 1/);
      const list = await admin.get('/admin/subscriptions?state=active', owner);
      assert.equal(listedIds(list.body).length, 2, 'the list it links to holds as many');
    });

    it('the list: the upcoming deliveries first, then every subscription newest first; filtered by state and by buyer', async () => {
      const response = await admin.get('/admin/subscriptions', owner);
      assert.equal(response.statusCode, 200);
      assert.match(response.body, /<a href="\/admin\/subscriptions" aria-current="page">Subscriptions<\/a>/, 'a section of the navigation');
      const upcoming = around(response.body, 'id="upcoming-heading"', '</section>');
      assert.ok(response.body.indexOf('id="upcoming-heading"') < response.body.indexOf('id="subscriptions-caption"'), 'the upcoming deliveries come first');
      for (const id of [annId, bobId]) assert.match(upcoming, new RegExp(`href="/admin/subscriptions/${id}"`));
      assert.match(pageText(upcoming), /Not mailed yet/);
      assert.deepEqual(listedIds(response.body), [bobId, annId]);
      const text = pageText(response.body);
      assert.match(text, /Subscription \d+ Active ann@example\.com 2 × Hydration Drink Stick - Lemon-Lime \/ 10 sticks Delivery every month \(every month, save 10%\)/);

      const byEmail = await admin.get('/admin/subscriptions?email=bob%40example.com', owner);
      assert.deepEqual(listedIds(byEmail.body), [bobId]);
      assert.match(byEmail.body, /<input id="filter-email" name="email" type="search" value="bob@example.com"/);
      const none = await admin.get('/admin/subscriptions?state=paused', owner);
      assert.equal(none.statusCode, 200);
      assert.match(pageText(none.body), /No subscription matches these filters\./);
      assert.match(none.body, /<option value="paused" selected>Paused<\/option>/);
      const unknownState = await admin.get('/admin/subscriptions?state=%3Cgone%3E&before=x', owner);
      assert.equal(unknownState.statusCode, 200, 'a filter that is none is left out');
      assert.deepEqual(listedIds(unknownState.body), [bobId, annId]);
    });

    it("a subscription's page: lines, plan terms, address, the next delivery priced now, renewals with their orders, what happened", async () => {
      const response = await admin.get(`/admin/subscriptions/${annId}`, owner);
      assert.equal(response.statusCode, 200);
      const text = pageText(response.body);
      const line = annOrder.lines[0]!;
      const unit = planUnitPrice(line.sellingPlan!.fullUnitPrice, 10);
      assert.match(text, new RegExp(`Subscription ${annId} Active`));
      assert.match(text, /Buyer ann@example\.com \(Ann Lee\)/);
      assert.match(text, /Plan Delivery every month \(every month, save 10%\), of Subscribe & save Still offered by the catalog\./);
      assert.match(text, /Ships to Sam Reed 1 Main St Springfield, IL 62701 United States/);
      assert.match(text, new RegExp(`Started .+, order #${annOrder.number}`));
      assert.match(
        text,
        new RegExp(`${line.title.replace(/[/]/g, '\\/')} 2 ${formatMoney(unit).replace('$', '\\$')} ${formatMoney(line.sellingPlan!.fullUnitPrice).replace('$', '\\$')} ${formatMoney(unit * 2).replace('$', '\\$')} In stock`),
      );
      const renewals = around(response.body, 'id="renewals-caption"', '</table>');
      assert.match(pageText(renewals), /Approved/);
      assert.match(renewals, new RegExp(`<a href="/admin/orders/${renewal.number}">#${renewal.number}</a>`));
      assert.match(response.body, new RegExp(`<a href="/admin/orders/${annOrder.number}">#${annOrder.number}</a>`), 'its first order too');
      assert.match(text, /What happened, newest first renewal approved · The buyer · .+ created · The buyer/);
      // The cancel form, with the session's CSRF token.
      const form = around(response.body, `aria-label="Cancel subscription ${annId}"`, '</form>');
      assert.match(form, new RegExp(`name="_csrf" value="${owner.csrf}"`));
      assert.match(response.body, new RegExp(`action="/admin/subscriptions/${annId}/cancel"`));

      for (const path of ['/admin/subscriptions/999999', '/admin/subscriptions/abc', '/admin/subscriptions/0']) {
        const missing = await admin.get(path, owner);
        assert.equal(missing.statusCode, 404, path);
        assert.match(pageText(missing.body), /No such subscription/);
      }
    });

    it('cancel without the CSRF token, or from another origin, is refused (403) and changes nothing', async () => {
      const noToken = await t.app.inject({
        method: 'POST',
        url: `/admin/subscriptions/${bobId}/cancel`,
        headers: { cookie: owner.cookie, origin: new URL(t.store.config.baseUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'reason=x',
      });
      assert.equal(noToken.statusCode, 403);
      const crossSite = await t.app.inject({
        method: 'POST',
        url: `/admin/subscriptions/${bobId}/cancel`,
        headers: { cookie: owner.cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: owner.csrf, reason: 'x' }).toString(),
      });
      assert.equal(crossSite.statusCode, 403);
      const signedOut = await t.app.inject({ method: 'POST', url: `/admin/subscriptions/${bobId}/cancel`, headers: { origin: new URL(t.store.config.baseUrl).origin }, payload: {} });
      assert.equal(signedOut.statusCode, 401);
      assert.equal((await t.store.subscriptions.get(t.store.db, bobId))!.subscription.state, 'active');
      assert.equal((await t.store.db.query("select 1 from audit_log where action like 'subscription.%'")).length, 0);
    });

    it('a staff member cancels from the page: audited as them, the buyer mailed, the page says so; again is refused beside the form', async () => {
      const mailsBefore = (await t.store.db.query("select 1 from outbox where topic = 'subscription'")).length;
      const tooLong = await admin.post(`/admin/subscriptions/${bobId}/cancel`, clerk, { reason: 'x'.repeat(201) });
      assert.equal(tooLong.statusCode, 400);
      assert.match(pageText(tooLong.body), /Not canceled: the reason is at most 200 characters\./);
      assert.equal((await t.store.subscriptions.get(t.store.db, bobId))!.subscription.state, 'active');

      const response = await admin.post(`/admin/subscriptions/${bobId}/cancel`, clerk, { reason: 'asked by phone' });
      assert.equal(response.statusCode, 303);
      assert.equal(response.headers.location, `/admin/subscriptions/${bobId}?done=canceled`);
      const details = (await t.store.subscriptions.get(t.store.db, bobId))!;
      assert.equal(details.subscription.state, 'canceled');
      assert.equal(details.subscription.cancelReason, 'asked by phone');
      const audit = await t.store.db.query<{ actor: string; staff_id: string | null; action: string }>("select actor, staff_id, action from audit_log where action like 'subscription.%'");
      assert.equal(audit.length, 1);
      assert.equal(audit[0]!.actor, 'clerk@example.com');
      assert.ok(audit[0]!.staff_id, 'the staff member, by id');
      assert.equal(audit[0]!.action, 'subscription.canceled');
      assert.ok((await t.store.db.query("select 1 from outbox where topic = 'subscription'")).length > mailsBefore, 'the buyer is mailed');

      const page = await admin.get(response.headers.location, clerk);
      const text = pageText(page.body);
      assert.match(text, /The subscription was canceled: no renewal will be produced, and the buyer is mailed\./);
      assert.match(text, /State Canceled .+: asked by phone/);
      assert.doesNotMatch(page.body, /Cancel the subscription/, 'no cancel form on a canceled subscription');

      const again = await admin.post(`/admin/subscriptions/${bobId}/cancel`, owner, { reason: 'twice' });
      assert.equal(again.statusCode, 409);
      assert.match(pageText(again.body), /Not canceled: This subscription is already canceled\./);
      assert.equal((await t.store.db.query("select 1 from audit_log where action like 'subscription.%'")).length, 1, 'nothing more audited');
      const unknown = await admin.post('/admin/subscriptions/999999/cancel', owner, {});
      assert.equal(unknown.statusCode, 404);
    });

    it('what buyers and the catalog wrote is shown as text, never markup', async () => {
      await t.store.db.query(
        `update subscriptions set lines = jsonb_set(lines, '{0,title}', to_jsonb($2::text)),
                shipping_address = jsonb_set(shipping_address, '{streetAddress}', to_jsonb($3::text)),
                cancel_reason = $4
          where id = $1`,
        [bobId, '<img src=x onerror=alert(1)>', '<script>alert(2)</script>', 'Reason \u202e<b>bold</b>'],
      );
      await t.store.db.query('insert into subscription_events (subscription_id, at, actor, kind, detail) values ($1, now(), $2, $3, $4)', [bobId, 'buyer', 'note', '"><svg onload=alert(3)>']);
      for (const path of ['/admin/subscriptions', `/admin/subscriptions/${bobId}`]) {
        const response = await admin.get(path, owner);
        assert.equal(response.statusCode, 200);
        assert.doesNotMatch(response.body, /<img src=x|<script>alert|<svg onload|<b>bold/, path);
        assert.ok(!response.body.includes('\u202e'), `${path}: the direction control is dropped`);
        assert.match(response.body, /&lt;img src=x onerror=alert\(1\)&gt;/, path);
      }
      const page = await admin.get(`/admin/subscriptions/${bobId}`, owner);
      assert.match(page.body, /&lt;script&gt;alert\(2\)&lt;\/script&gt;/);
      assert.match(page.body, /&quot;&gt;&lt;svg onload=alert\(3\)&gt;/);
    });

    it('the list pages 50 at a time, newest first, the next page older', async () => {
      // 55 more subscriptions, copies of Ann's.
      await t.store.db.query(
        `insert into subscriptions (state, buyer_email, buyer, shipping_address, shipping_option, plan, lines, next_at, origin_order_id, created_at, updated_at)
         select state, 'many' || n || '@example.com', buyer, shipping_address, shipping_option, plan, lines, next_at, origin_order_id, created_at, updated_at
           from subscriptions, generate_series(1, 55) as n where id = $1`,
        [annId],
      );
      const first = await admin.get('/admin/subscriptions', owner);
      const firstIds = listedIds(first.body);
      assert.equal(firstIds.length, 50);
      assert.deepEqual(firstIds, [...firstIds].sort((a, b) => b - a), 'newest first');
      const next = /<a href="(\/admin\/subscriptions\?before=\d+)" rel="next">Next page \(older\)<\/a>/.exec(first.body);
      assert.ok(next, 'a link to the next page');
      const second = await admin.get(next[1]!, owner);
      const secondIds = listedIds(second.body);
      assert.equal(secondIds.length, 57 - 50);
      assert.ok(Math.max(...secondIds) < Math.min(...firstIds));
      assert.deepEqual(secondIds.slice(-2), [bobId, annId]);
      assert.doesNotMatch(second.body, /rel="next"/);
      assert.match(second.body, /<a href="\/admin\/subscriptions">First page<\/a>/);
      const filtered = await admin.get('/admin/subscriptions?state=active', owner);
      const nextActive = /<a href="([^"]+)" rel="next">/.exec(filtered.body);
      assert.equal(nextActive?.[1]?.replace(/&amp;/g, '&').replace(/before=\d+/, 'before=N'), '/admin/subscriptions?state=active&before=N', 'the next page keeps the filters');
    });
  });
}
