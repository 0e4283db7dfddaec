/**
 * The admin's orders over HTTP, on both backends, with a signed-in session: the list (each filter, the search by
 * number and email, the pages, each keeping the filters), an order's page (lines, totals, buyer and address, the
 * payment, how the buyer approved and the digest, one timeline), and each action from its form (capture with and
 * without an amount, a shipment of chosen units with tracking, cancel with a reason, refund): the same domain move
 * as the terminal's, audited as the person in its own transaction and on the timeline; each refusal is the page again
 * with the refusal beside its action (409, or 400 for what is not an amount) and nothing changed; a `staff` member is
 * not shown the refund form and is refused its POST (403, nothing changed), even with an owner's fields.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { storeCommands } from '../../src/cli/merchant-commands.js';
import { readOrder, type Order } from '../../src/orders/orders.js';
import type { Store } from '../../src/store.js';
import { adminClient, startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { placedAt, placeOrderBy, variantOf } from '../reports/placing.js';

after(dropTestDatabases);

/** The text of a page, tags dropped, entities read, spaces collapsed. */
function pageText(response: LightMyRequestResponse): string {
  const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
  return response.body
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39);/g, (entity) => entities[entity]!)
    .replace(/\s+/g, ' ');
}

/** The markup from `marker` (an id) to the end of its section. */
function section(body: string, marker: string): string {
  const at = body.indexOf(marker);
  assert.ok(at !== -1, `${marker} on the page`);
  const end = body.indexOf('</section>', at);
  return body.slice(at, end === -1 ? undefined : end);
}

/** The order numbers a list page links to, in its order. */
function listed(response: LightMyRequestResponse): number[] {
  return [...response.body.matchAll(/<a href="\/admin\/orders\/(\d+)">#\d+<\/a>/g)].map((match) => Number(match[1]));
}

for (const backend of backends) {
  describe(`the admin's orders over HTTP (${backend.name})`, () => {
    let t: TestStore;
    let store: Store;
    let owner: StaffSessionForTest;
    let staff: StaffSessionForTest;
    let admin: ReturnType<typeof adminClient>;
    /** Ada's order (an agent of chat.example), Grace's (an agent of agent.example), Linus's (a browser, in January). */
    let ada: Order;
    let grace: Order;
    let linus: Order;

    const place = (prepared: Parameters<typeof placeOrderBy>[1], email: string, lines: [string, number][]) =>
      placeOrderBy(
        store,
        prepared,
        lines.map(([sku, quantity]) => ({ variantId: variantOf(store, sku), quantity })),
        email,
      );
    const reread = async (order: Order) => (await readOrder(store.db, order.id))!;
    const auditRows = (order: Order) =>
      store.db.query<{ action: string; actor: string; staff_id: string | null; summary: string }>('select action, actor, staff_id, summary from audit_log where order_id = $1 order by id', [order.id]);
    /** Everything an action may change: the order (lines, history, money), its payment operations, outbox and audit rows, stock. */
    const everything = async (order: Order) => ({
      order: await reread(order),
      operations: await store.db.query('select kind, amount, state from payment_operations where order_id = $1 order by requested_at', [order.id]),
      outbox: await store.db.query('select id, topic from outbox where order_id = $1 order by id', [order.id]),
      audit: await auditRows(order),
      stock: await store.db.query('select variant_id, on_hand from inventory_levels order by variant_id'),
    });

    before(async () => {
      t = await startTestStore(backend);
      store = t.store;
      admin = adminClient(t);
      owner = await startStaffSession(store, { email: 'owner@store.test', role: 'owner' });
      staff = await startStaffSession(store, { email: 'clerk@store.test', role: 'staff' });
      for (const sku of ['ESP-LUN-10', 'SLP-60', 'ESP-RIS-10']) await store.inventory.setOnHand(store.db, sku, 500);
      linus = await place({ by: 'browser' }, 'linus@example.com', [['ESP-RIS-10', 1]]);
      await placedAt(store, linus, new Date('2026-01-15T12:00:00Z'));
      ada = await place({ by: 'agent', platform: 'chat.example' }, 'ada@example.com', [
        ['ESP-LUN-10', 2],
        ['SLP-60', 1],
      ]);
      grace = await place({ by: 'agent', platform: 'agent.example' }, 'Grace.Hopper@example.com', [['SLP-60', 3]]);
    });
    after(() => t.close());

    it('the list shows every order newest first, with who prepared it, its states and total', async () => {
      const response = await admin.get('/admin/orders', staff);
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.deepEqual(listed(response), [grace.number, ada.number, linus.number]);
      const text = pageText(response);
      assert.match(text, /3 orders/);
      assert.match(text, new RegExp(`#${ada.number} .*ada@example\\.com An agent of chat\\.example Placed Payment pending Not shipped \\$`));
      assert.match(text, new RegExp(`#${linus.number} 15 January 2026, 12:00 UTC linus@example\\.com A browser`));
    });

    it('each filter and the search narrow the list, and the form shows what was asked', async () => {
      const cases: [string, number[]][] = [
        ['prepared=browser', [linus.number]],
        ['prepared=agent', [grace.number, ada.number]],
        ['platform=chat.example', [ada.number]],
        ['status=placed', [grace.number, ada.number, linus.number]],
        ['status=canceled', []],
        ['payment=pending', [grace.number, ada.number, linus.number]],
        ['payment=captured', []],
        ['fulfilment=unfulfilled', [grace.number, ada.number, linus.number]],
        ['fulfilment=fulfilled', []],
        ['from=2026-01-15&to=2026-01-15', [linus.number]],
        ['from=2026-01-16', [grace.number, ada.number]],
        [`q=${ada.number}`, [ada.number]],
        [`q=%23${grace.number}`, [grace.number]],
        ['q=grace.hopper%40EXAMPLE.com', [grace.number]],
        ['q=lin', [linus.number]],
        ['q=nobody%40example.com', []],
        ['prepared=agent&q=linus', []],
      ];
      for (const [query, numbers] of cases) {
        const response = await admin.get(`/admin/orders?${query}`, owner);
        assert.equal(response.statusCode, 200, query);
        assert.deepEqual(listed(response), numbers, query);
        if (numbers.length === 0) assert.match(pageText(response), /No order matches these filters/, query);
      }
      const form = (await admin.get('/admin/orders?prepared=agent&platform=chat.example&from=2026-01-01&q=ada', owner)).body;
      assert.match(form, /<option value="agent" selected>/);
      assert.match(form, /name="platform" value="chat\.example"/);
      assert.match(form, /name="from" type="date" value="2026-01-01"/);
      assert.match(form, /name="q" type="search" value="ada"/);
    });

    it("an order's page: lines, totals, buyer and address, the payment, the approval's digest, the timeline", async () => {
      const response = await admin.get(`/admin/orders/${ada.number}`, staff);
      assert.equal(response.statusCode, 200);
      const text = pageText(response);
      assert.match(text, new RegExp(`Order #${ada.number}`));
      assert.match(text, /prepared by An agent of chat\.example/);
      for (const line of ada.lines) assert.ok(text.includes(line.title), line.title);
      assert.match(text, /Subtotal \$[\d,.]+ Shipping \(Standard[^)]*\) \$[\d,.]+ Tax \$[\d,.]+ Total \$[\d,.]+/);
      assert.match(text, /ada@example\.com/);
      assert.match(text, /Ships to Sam Reed 1 Main St Springfield ?, IL 62701 US/);
      assert.match(text, /Provider Manual .* State Payment pending .* Captured \$0\.00 Refunded \$0\.00 Due by \d+ \w+ \d{4}, \d\d:\d\d UTC/);
      const [approval] = await store.db.query<{ digest: string }>('select digest from checkout_approvals where checkout_id = $1 and used_at is not null', [ada.checkoutId]);
      assert.ok(text.includes(approval!.digest), 'the digest the buyer approved');
      assert.match(text, /The buyer approved it by the approval link alone/);
      assert.match(text, /Timeline .*Checkout created .*Approved by the buyer .*Order #\d+ placed, prepared by an agent of chat\.example/);
      // Text people typed is shown inside <bdi>, isolated from the text around it.
      assert.match(response.body, /<bdi>ada@example\.com<\/bdi>/);
      // Staff see capture, ship and cancel; never the refund form.
      assert.match(response.body, new RegExp(`action="/admin/orders/${ada.number}/capture"`));
      assert.match(response.body, new RegExp(`action="/admin/orders/${ada.number}/fulfil"`));
      assert.match(response.body, new RegExp(`action="/admin/orders/${ada.number}/cancel"`));
      assert.doesNotMatch(response.body, /\/refund"/);

      assert.equal((await admin.get('/admin/orders/999999', owner)).statusCode, 404);
      assert.equal((await admin.get('/admin/orders/abc', owner)).statusCode, 404);
      assert.equal((await admin.get(`/admin/orders/${ada.number}`, { ...owner, cookie: 'x=y' })).statusCode, 401);
    });

    it('a capture refused (more than is owed; not an amount) is shown beside the capture, nothing changed', async () => {
      const before = await everything(ada);
      const tooMuch = await admin.post(`/admin/orders/${ada.number}/capture`, staff, { amount: '99999.00' });
      assert.equal(tooMuch.statusCode, 409);
      assert.match(pageText(tooMuch), /Capture the payment Not captured: A capture of \$99,999\.00 is more than order #\d+ has to capture: \$[\d.]+\./);
      assert.match(section(tooMuch.body, 'id="capture-heading"'), /role="alert"/);
      assert.match(tooMuch.body, /name="amount" type="text" value="99999\.00"/);
      const notAnAmount = await admin.post(`/admin/orders/${ada.number}/capture`, staff, { amount: '12.345' });
      assert.equal(notAnAmount.statusCode, 400);
      assert.match(pageText(notAnAmount), /Not captured: The amount must be dollars and cents, such as 12\.50\./);
      assert.deepEqual(await everything(ada), before);
    });

    it('a capture of part, then the rest: each audited as the person, on the timeline', async () => {
      const part = await admin.post(`/admin/orders/${ada.number}/capture`, staff, { amount: '10.00' });
      assert.equal(part.statusCode, 303);
      assert.equal(part.headers.location, `/admin/orders/${ada.number}?done=captured`);
      assert.equal((await reread(ada)).captured, 1000);
      const rest = await admin.post(`/admin/orders/${ada.number}/capture`, staff, { amount: '' });
      assert.equal(rest.statusCode, 303);
      const paid = await reread(ada);
      assert.equal(paid.captured, paid.total);
      assert.equal(paid.paymentState, 'captured');
      const audit = await auditRows(ada);
      assert.deepEqual(
        audit.map((row) => [row.action, row.actor, row.summary]),
        [
          ['order.capture', 'clerk@store.test', 'captured $10.00'],
          ['order.capture', 'clerk@store.test', `captured $${((paid.total - 1000) / 100).toFixed(2)}`],
        ],
      );
      assert.ok(audit.every((row) => row.staff_id !== null));
      const page = await admin.get(`/admin/orders/${ada.number}?done=captured`, staff);
      const text = pageText(page);
      assert.match(text, /The payment was captured\./);
      assert.match(text, /captured \$10\.00 by clerk@store\.test order\.capture/);
      assert.match(text, /State Paid/);
    });

    it('a shipment of chosen units with tracking; more units than are left is refused beside it, nothing changed', async () => {
      const [espresso, sleep] = ada.lines;
      const before = await everything(ada);
      const tooMany = await admin.post(`/admin/orders/${ada.number}/fulfil`, staff, { [`qty_${espresso!.id}`]: '3', [`qty_${sleep!.id}`]: '0', tracking_number: '1Z999' });
      assert.equal(tooMany.statusCode, 409);
      assert.match(pageText(tooMany), /Ship Not shipped: Line \S+ \(.*\) has 2 units left to ship, not 3\./);
      assert.match(tooMany.body, /name="tracking_number" type="text" value="1Z999"/);
      const badUrl = await admin.post(`/admin/orders/${ada.number}/fulfil`, staff, { [`qty_${espresso!.id}`]: '1', tracking_url: 'javascript:alert(1)' });
      assert.equal(badUrl.statusCode, 409);
      assert.match(pageText(badUrl), /Not shipped: The tracking URL must be an http or https URL\./);
      const none = await admin.post(`/admin/orders/${ada.number}/fulfil`, staff, { [`qty_${espresso!.id}`]: '0', [`qty_${sleep!.id}`]: '0' });
      assert.equal(none.statusCode, 400);
      assert.match(pageText(none), /Not shipped: Choose at least one unit to ship\./);
      assert.deepEqual(await everything(ada), before);

      const shipped = await admin.post(`/admin/orders/${ada.number}/fulfil`, staff, {
        [`qty_${espresso!.id}`]: '2',
        [`qty_${sleep!.id}`]: '0',
        tracking_number: '1Z999AA10123456784',
        tracking_url: 'https://track.example/1Z999AA10123456784',
        carrier: 'UPS',
      });
      assert.equal(shipped.statusCode, 303);
      assert.equal(shipped.headers.location, `/admin/orders/${ada.number}?done=fulfilled`);
      const after = await reread(ada);
      assert.deepEqual(
        after.lines.map((line) => line.fulfilled),
        [2, 0],
      );
      assert.equal(after.fulfillments[0]!.trackingNumber, '1Z999AA10123456784');
      assert.equal(after.fulfillments[0]!.carrier, 'UPS');
      const [entry] = (await auditRows(ada)).filter((row) => row.action === 'order.fulfill');
      assert.equal(entry!.summary, `shipped 2 × ${espresso!.title} (via UPS, tracking 1Z999AA10123456784)`);
      const text = pageText(await admin.get(`/admin/orders/${ada.number}`, staff));
      assert.match(text, /Shipped 2 units UPS 1Z999AA10123456784/);
      assert.match(text, /Partly shipped/);
      assert.match(text, /track the parcel/);
    });

    it('cancel with a reason cancels what has not shipped, audited; cancelling again is refused beside it, nothing changed', async () => {
      const canceled = await admin.post(`/admin/orders/${grace.number}/cancel`, staff, { reason: 'buyer asked' });
      assert.equal(canceled.statusCode, 303);
      const after = await reread(grace);
      assert.equal(after.status, 'canceled');
      assert.equal(after.cancelReason, 'buyer asked');
      assert.equal(after.paymentState, 'voided');
      const [entry] = await auditRows(grace);
      assert.equal(entry!.action, 'order.cancel');
      assert.match(entry!.summary, /^canceled the order: 3 × .+ \(buyer asked\)$/);

      const before = await everything(grace);
      const again = await admin.post(`/admin/orders/${grace.number}/cancel`, staff, { reason: 'twice' });
      assert.equal(again.statusCode, 409);
      assert.match(pageText(again), /Cancel .*Not canceled: Order #\d+ is already canceled\./);
      assert.deepEqual(await everything(grace), before);
      const page = await admin.get(`/admin/orders/${grace.number}`, staff);
      assert.match(pageText(page), /Canceled .* canceled \d+ \w+ \d{4}, \d\d:\d\d UTC \( ?buyer asked ?\)/);
      assert.doesNotMatch(page.body, /\/(capture|fulfil|cancel)"/, 'a canceled order offers no capture, shipment or cancel');
      // The list finds it by its state.
      assert.deepEqual(listed(await admin.get('/admin/orders?status=canceled', staff)), [grace.number]);
    });

    it("a refund is the owner's: staff are not shown it and are refused its POST (403), nothing changed", async () => {
      const before = await everything(ada);
      const refused = await admin.post(`/admin/orders/${ada.number}/refund`, staff, { amount: '5.00', reason: 'damaged' });
      assert.equal(refused.statusCode, 403);
      assert.deepEqual(await everything(ada), before);
      const ownersPage = await admin.get(`/admin/orders/${ada.number}`, owner);
      assert.match(ownersPage.body, new RegExp(`action="/admin/orders/${ada.number}/refund"`));
    });

    it('a refund by the owner (more than was captured refused beside it, nothing changed), audited and on the timeline', async () => {
      const before = await everything(ada);
      const tooMuch = await admin.post(`/admin/orders/${ada.number}/refund`, owner, { amount: '9999', reason: 'all' });
      assert.equal(tooMuch.statusCode, 409);
      assert.match(pageText(tooMuch), /Refund .*Not refunded: A refund of \$9,999\.00 is more than order #\d+ can give back/);
      const empty = await admin.post(`/admin/orders/${ada.number}/refund`, owner, { amount: '', reason: 'none' });
      assert.equal(empty.statusCode, 400);
      assert.match(pageText(empty), /Not refunded: Enter an amount, such as 12\.50\./);
      assert.deepEqual(await everything(ada), before);

      const refunded = await admin.post(`/admin/orders/${ada.number}/refund`, owner, { amount: '5.00', reason: 'damaged' });
      assert.equal(refunded.statusCode, 303);
      assert.equal(refunded.headers.location, `/admin/orders/${ada.number}?done=refunded`);
      const after = await reread(ada);
      assert.equal(after.refunded, 500);
      assert.equal(after.paymentState, 'partially_refunded');
      const entry = (await auditRows(ada)).find((row) => row.action === 'order.refund');
      assert.deepEqual([entry!.actor, entry!.summary], ['owner@store.test', 'refunded $5.00 (damaged)']);
      const text = pageText(await admin.get(`/admin/orders/${ada.number}?done=refunded`, owner));
      assert.match(text, /The refund was recorded/);
      assert.match(text, /Refunded \$5\.00 damaged/);
      assert.match(text, /refunded \$5\.00 \(damaged\) by owner@store\.test order\.refund/);
      assert.match(text, /Mail \S+: (waiting|delivered)/);
    });

    it('an action without the CSRF token, or from another origin, is refused (403) and changes nothing', async () => {
      const before = await everything(linus);
      const noToken = await t.app.inject({
        method: 'POST',
        url: `/admin/orders/${linus.number}/cancel`,
        headers: { cookie: owner.cookie, origin: new URL(store.config.baseUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'reason=x',
      });
      assert.equal(noToken.statusCode, 403);
      const crossSite = await t.app.inject({
        method: 'POST',
        url: `/admin/orders/${linus.number}/cancel`,
        headers: { cookie: owner.cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: owner.csrf, reason: 'x' }).toString(),
      });
      assert.equal(crossSite.statusCode, 403);
      assert.deepEqual(await everything(linus), before);
    });

    it("the terminal's moves (storefront orders …) are audited as the terminal and shown on the order's timeline", async () => {
      const commands = storeCommands(store);
      await commands.capture(String(linus.number), 100);
      await assert.rejects(() => commands.capture(String(linus.number), 999_999), /more than order #\d+ has to capture/);
      const rows = await auditRows(linus);
      assert.deepEqual(
        rows.map((row) => [row.action, row.actor, row.staff_id, row.summary]),
        [['order.capture', 'terminal', null, 'captured $1.00']],
        'one entry: the refused capture wrote none',
      );
      assert.match(pageText(await admin.get(`/admin/orders/${linus.number}`, staff)), /captured \$1\.00 by terminal order\.capture/);
    });

    it('pages of 50, newest first; the links to the pages keep the filters', async () => {
      for (let i = 0; i < 50; i += 1) await place({ by: 'browser' }, `bulk-${i}@example.com`, [['ESP-RIS-10', 1]]);
      const first = await admin.get('/admin/orders?prepared=browser', staff);
      const firstPage = listed(first);
      assert.equal(firstPage.length, 50);
      assert.match(pageText(first), /51 orders match .*Orders 1–50 of 51, newest first .*Page 1 of 2/);
      assert.match(first.body, /<a href="\/admin\/orders\?prepared=browser&amp;page=2" rel="next">Next page<\/a>/);
      assert.doesNotMatch(first.body, /rel="prev"/);
      const second = await admin.get('/admin/orders?prepared=browser&page=2', staff);
      assert.deepEqual(listed(second), [linus.number]);
      assert.match(pageText(second), /Orders 51–51 of 51, newest first .*Page 2 of 2/);
      assert.match(second.body, /<a href="\/admin\/orders\?prepared=browser" rel="prev">Previous page<\/a>/);
      assert.doesNotMatch(second.body, /rel="next"/);
      assert.deepEqual(listed(await admin.get('/admin/orders?q=bulk-4', staff)).length, 11, 'bulk-4 and bulk-40 to bulk-49');
    });
  });
}
