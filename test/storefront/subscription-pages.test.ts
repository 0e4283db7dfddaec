/**
 * The buyer's subscription pages (issue [subscriptions], item 4) through app.inject on both backends, with the store's
 * clock driven by the test: a subscription made by an order with a plan line is listed on the page of its email's
 * link; each form does what it says and lands back on the page saying so (skip, pause, resume, the interval, a
 * quantity, the address, cancel), a refused one says why and changes nothing; another email's link, a form from
 * another site, an expired or unknown link change nothing; typed text stays inert. The email form mails a link (the
 * same answer either way), an order's page leads to its buyer's subscriptions, a renewal's link leads to its
 * approval page or says what sold out or what became of it; and no link reaches the request log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { planUnitPrice } from '../../src/catalog/types.js';
import type { Store } from '../../src/store.js';
import { contentSecurityPolicy } from '../../src/storefront/page-policy.js';
import { pageContext } from '../../src/storefront/pages/layout.js';
import { subscriptionsPage } from '../../src/storefront/pages/subscription-pages.js';
import type { Subscription } from '../../src/subscriptions/subscriptions.js';
import { addInterval } from '../../src/subscriptions/subscriptions.js';
import { placeOrder } from '../helpers/orders.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const DAY = 24 * 3600 * 1000;
const START = new Date('2027-01-10T12:00:00Z');

/** What a browser sends opening a page, and submitting one of the store's forms (its pages send no referrer). */
const NAVIGATE = { accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-site': 'none' };
const FORM_POST = { ...NAVIGATE, 'sec-fetch-site': 'same-origin', origin: 'null', 'content-type': 'application/x-www-form-urlencoded' };
const FOREIGN_POST = { ...FORM_POST, 'sec-fetch-site': 'cross-site', origin: 'https://elsewhere.example' };

/** The address form's fields as a buyer fills them. */
const NEW_ADDRESS = { first_name: 'Ana', last_name: 'Lima', street_address: '9 Harbor Rd', extended_address: '', city: 'Portland', state: 'OR', zip: '97201', phone: '' };

function espresso(store: Store) {
  const product = store.catalog.snapshot.productByHandle('espresso-capsules')!;
  const group = product.sellingPlanGroups[0]!;
  return { variant: product.variants[0]!, other: product.variants[1]!, monthly: group.plans.find((p) => p.intervalCount === 1)!, bimonthly: group.plans.find((p) => p.intervalCount === 2)! };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

for (const backend of backends) {
  describe(`the buyer's subscription pages (${backend.name})`, () => {
    let t: TestStore;
    let at = START;
    const log: string[] = [];

    before(async () => {
      t = await startTestStore(backend, { clock: () => new Date(at.getTime()), config: { logLevel: 'info' }, app: { logger: { write: (line: string) => log.push(line) } } });
    });
    after(() => t?.close());

    const get = (url: string) => t.app.inject({ method: 'GET', url, headers: NAVIGATE });
    const post = (url: string, form: Record<string, string | number> = {}, headers: Record<string, string> = FORM_POST) =>
      t.app.inject({ method: 'POST', url, headers, payload: new URLSearchParams(Object.entries(form).map(([k, v]) => [k, String(v)])).toString() });

    /** A buyer who bought espresso on the monthly plan (and decaf once; `alsoOnPlan`: a second espresso too): their subscription and its order. */
    async function subscriber(email: string, alsoOnPlan = false) {
      const { variant, other, monthly } = espresso(t.store);
      const decaf = t.store.catalog.snapshot.productByHandle('decaf-capsules')!.variants[0]!;
      const lines = [
        { variantId: variant.id, quantity: 2, sellingPlanId: monthly.id },
        ...(alsoOnPlan ? [{ variantId: other.id, quantity: 1, sellingPlanId: monthly.id }] : []),
        { variantId: decaf.id, quantity: 1 },
      ];
      const order = await placeOrder(t.store, lines, { email, firstName: 'Ana', lastName: 'Lima' });
      const [subscription] = await t.store.subscriptions.list(t.store.db, { email });
      assert.ok(subscription, 'the order made a subscription');
      const link = new URL(await t.store.subscriptions.manageUrl(t.store.db, email));
      return { order, subscription, page: link.pathname, secret: link.pathname.split('/').pop()! };
    }

    const current = async (id: number): Promise<Subscription> => (await t.store.subscriptions.get(t.store.db, id))!.subscription;
    const action = (page: string, id: number, name: string) => `${page}/${id}/${name}`;

    function assertPersonalPage(answer: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number): void {
      assert.equal(answer.statusCode, status, answer.body);
      assert.equal(answer.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(answer.headers['cache-control'], 'no-store');
      assert.equal(answer.headers['referrer-policy'], 'no-referrer');
      assert.equal(answer.headers['content-security-policy'], contentSecurityPolicy('http://store.test', [], 'none'));
      assert.equal(answer.body.match(/<h1[\s>]/g)?.length, 1, 'one h1');
      assert.doesNotMatch(answer.body, /<script/, 'no script');
    }

    /** A change posted from the page: 303 back to the page, which says what was done. */
    async function change(page: string, id: number, name: string, form: Record<string, string | number> = {}): Promise<string> {
      const answer = await post(action(page, id, name), form);
      assert.equal(answer.statusCode, 303, answer.body);
      const location = String(answer.headers.location);
      assert.equal(location, `${page}?done=${name}&subscription=${id}#subscription-${id}-section`);
      const shown = await get(location.split('#')[0]!);
      assertPersonalPage(shown, 200);
      return shown.body;
    }

    let ana: Awaited<ReturnType<typeof subscriber>>;
    let bob: Awaited<ReturnType<typeof subscriber>>;

    it("the link's page lists the email's subscription: lines, plan, state, next date and price, its order, and a form for each change", async () => {
      at = START;
      ana = await subscriber('ana@example.com');
      bob = await subscriber('bob@example.com');
      const { variant, monthly } = espresso(t.store);
      const answer = await get(ana.page);
      assertPersonalPage(answer, 200);
      const html = answer.body;
      assert.match(html, /<h1>Your subscriptions<\/h1>/);
      assert.match(html, /Subscriptions for <bdi>ana@example\.com<\/bdi>/);
      assert.match(html, new RegExp(`<h2 id="subscription-${ana.subscription.id}-title">2 × Espresso Capsules`));
      assert.match(html, /Active · Delivery every month, save 10%/);
      const next = addInterval(START, 'month', 1);
      assert.equal(ana.subscription.nextAt.toISOString(), next.toISOString());
      assert.match(html, new RegExp(`Next delivery: <time datetime="${next.toISOString()}">10 February 2027</time>`));
      const unit = planUnitPrice(variant.priceCents, monthly.discountPercent);
      assert.match(html, new RegExp(escapeRegExp(`$${((unit * 2) / 100).toFixed(2)} for the items`)));
      assert.match(html, new RegExp(`<a href="/orders/${ana.order.id}">Order #${ana.order.number}</a>`));
      for (const name of ['skip', 'pause', 'cancel', 'plan', 'quantity', 'address']) assert.match(html, new RegExp(`"${escapeRegExp(action(ana.page, ana.subscription.id, name))}"`), name);
      assert.doesNotMatch(html, /no longer offered/);
      assert.doesNotMatch(html, /bob@example\.com/, "another buyer's subscription is not on the page");
      assert.doesNotMatch(html, new RegExp(`subscription-${bob.subscription.id}-`));
    });

    it('a subscription whose plan the catalog no longer offers says it keeps its terms', async () => {
      const [details] = await t.store.subscriptions.ofBuyer(t.store.db, 'ana@example.com');
      assert.ok(details?.planOffered);
      const html = subscriptionsPage(pageContext(t.store.config), { secret: ana.secret, email: 'ana@example.com', subscriptions: [{ ...details, planOffered: false, planChoices: [] }], maxQuantity: 10 });
      assert.match(html, /This plan is no longer offered; your subscription keeps its terms\./);
      assert.doesNotMatch(html, /name="selling_plan"/, 'no other interval to choose');
    });

    it('skipping moves the next date an interval on; the page says so', async () => {
      const before = await current(ana.subscription.id);
      const page = await change(ana.page, ana.subscription.id, 'skip');
      const after = await current(ana.subscription.id);
      assert.equal(after.nextAt.toISOString(), addInterval(before.nextAt, 'month', 1).toISOString());
      assert.match(page, /<p class="notice" role="status">You skipped a delivery of 2 × Espresso Capsules[^<]*The next delivery is on 10 March 2027\. We emailed you a confirmation\.<\/p>/);
    });

    it('pause, then resume: the state changes each time, and the page offers what fits the state', async () => {
      let page = await change(ana.page, ana.subscription.id, 'pause');
      assert.equal((await current(ana.subscription.id)).state, 'paused');
      assert.match(page, /is paused: nothing is delivered until you resume it/);
      assert.match(page, />Paused · /);
      assert.match(page, />Resume</);
      assert.doesNotMatch(page, /Skip the next delivery/);
      page = await change(ana.page, ana.subscription.id, 'resume');
      assert.equal((await current(ana.subscription.id)).state, 'active');
      assert.match(page, /is active again/);
      assert.match(page, /Skip the next delivery/);
    });

    it('changing the interval: the subscription takes the other plan of its group', async () => {
      const { bimonthly } = espresso(t.store);
      const page = await change(ana.page, ana.subscription.id, 'plan', { selling_plan: bimonthly.id });
      assert.equal((await current(ana.subscription.id)).plan.sellingPlanId, bimonthly.id);
      assert.match(page, /now comes every 2 months/);
      assert.match(page, new RegExp(`<option value="${bimonthly.id}" selected>`));
    });

    it("changing a line's quantity; a quantity out of bounds is refused with its sentence and nothing changed", async () => {
      const { variant } = espresso(t.store);
      await change(ana.page, ana.subscription.id, 'quantity', { variant_id: variant.id, quantity: 3 });
      assert.equal((await current(ana.subscription.id)).lines[0]!.quantity, 3);
      const refused = await post(action(ana.page, ana.subscription.id, 'quantity'), { variant_id: variant.id, quantity: 0 });
      assertPersonalPage(refused, 409);
      assert.match(refused.body, /The quantity must be a whole number from 1 to \d+\. Nothing was changed\./);
      assert.equal((await current(ana.subscription.id)).lines[0]!.quantity, 3);
    });

    it('the address: a bad ZIP code is refused beside its field, with what was typed kept and nothing changed; a good one is kept; typed markup stays inert', async () => {
      const before = await current(ana.subscription.id);
      const refused = await post(action(ana.page, ana.subscription.id, 'address'), { ...NEW_ADDRESS, zip: '9720' });
      assertPersonalPage(refused, 422);
      const zipId = `subscription-${ana.subscription.id}-zip`;
      assert.match(refused.body, new RegExp(`<p class="field-error" id="${zipId}-error"><span class="visually-hidden">Error: </span>A ZIP code is 5 digits, or 5 digits, a hyphen and 4 more\\.</p>`));
      assert.match(refused.body, new RegExp(`<input id="${zipId}" name="zip"[^>]* value="9720"[^>]* aria-invalid="true" aria-describedby="${zipId}-error">`));
      assert.match(refused.body, /<details open>/);
      assert.match(refused.body, /value="9 Harbor Rd"/);
      assert.deepEqual((await current(ana.subscription.id)).shippingAddress, before.shippingAddress, 'nothing changed');

      const hostile = '<script>alert(1)</script> 9 Harbor Rd';
      const page = await change(ana.page, ana.subscription.id, 'address', { ...NEW_ADDRESS, street_address: hostile });
      const after = await current(ana.subscription.id);
      assert.equal(after.shippingAddress.streetAddress, hostile);
      assert.equal(after.shippingAddress.postalCode, '97201');
      assert.match(page, /now ships to the new address/);
      assert.match(page, /<bdi>&lt;script&gt;alert\(1\)&lt;\/script&gt; 9 Harbor Rd<\/bdi>/);
      assert.match(page, /value="&lt;script&gt;alert\(1\)&lt;\/script&gt; 9 Harbor Rd"/);
      assert.doesNotMatch(page, /<script>alert/);
    });

    it("another email's link cannot change this subscription (404), nor can a form from another site (403): nothing changes", async () => {
      const before = await current(ana.subscription.id);
      for (const name of ['skip', 'pause', 'cancel']) {
        const foreignLink = await post(action(bob.page, ana.subscription.id, name));
        assertPersonalPage(foreignLink, 404);
        const foreignSite = await post(action(ana.page, ana.subscription.id, name), {}, FOREIGN_POST);
        assertPersonalPage(foreignSite, 403);
        assert.match(foreignSite.body, /sent from another website/);
      }
      const unknownAction = await post(action(ana.page, ana.subscription.id, 'delete'));
      assert.equal(unknownAction.statusCode, 404);
      assert.deepEqual(await current(ana.subscription.id), before, 'nothing changed');
    });

    it('an unknown, malformed or expired link shows the expired page with the email form, and changes nothing', async () => {
      const unknown = `/subscriptions/manage/${'A'.repeat(43)}`;
      for (const page of [unknown, '/subscriptions/manage/short', `/subscriptions/manage/${'<b>'.repeat(20)}`]) {
        const answer = await get(page);
        assertPersonalPage(answer, 404);
        assert.match(answer.body, /<h1>This link has expired<\/h1>/);
        assert.match(answer.body, /<form method="post" action="\/subscriptions"/);
      }
      const before = await current(ana.subscription.id);
      at = new Date(START.getTime() + 31 * DAY);
      try {
        const expired = await get(ana.page);
        assertPersonalPage(expired, 404);
        assert.match(expired.body, /This link to your subscriptions no longer works/);
        assertPersonalPage(await post(action(ana.page, ana.subscription.id, 'cancel')), 404);
        assertPersonalPage(await post(action(unknown, ana.subscription.id, 'cancel')), 404);
      } finally {
        at = START;
      }
      assert.deepEqual(await current(ana.subscription.id), before, 'nothing changed');
    });

    it('canceling stops the subscription; its page then offers no change', async () => {
      const page = await change(ana.page, ana.subscription.id, 'cancel');
      assert.equal((await current(ana.subscription.id)).state, 'canceled');
      assert.match(page, /is canceled: no more deliveries/);
      assert.match(page, /No more deliveries: this subscription is canceled\./);
      assert.doesNotMatch(page, new RegExp(escapeRegExp(action(ana.page, ana.subscription.id, ''))));
      const again = await post(action(ana.page, ana.subscription.id, 'resume'));
      assertPersonalPage(again, 409);
      assert.equal((await current(ana.subscription.id)).state, 'canceled');
    });

    it('the email form mails a link when the address has subscriptions, and answers the same either way', async () => {
      const form = await get('/subscriptions');
      assertPersonalPage(form, 200);
      assert.match(form.body, /<input id="subscriptions-email" name="email" type="email"/);
      const mails = async () => (await t.store.db.query<{ n: number }>("select count(*)::int as n from outbox where kind = 'mail'"))[0]!.n;
      const answers: string[] = [];
      for (const [email, mailed] of [['bob@example.com', 1], ['nobody@example.com', 0]] as const) {
        const before = await mails();
        const answer = await post('/subscriptions', { email });
        assertPersonalPage(answer, 200);
        assert.match(answer.body, /If that address has subscriptions with us, a mail with a link to them is on its way/);
        assert.equal(await mails(), before + mailed, email);
        answers.push(answer.body.replace(email, 'EMAIL'));
      }
      assert.equal(answers[0], answers[1], 'the same page either way (but the address typed)');
      const bad = await post('/subscriptions', { email: 'not an email' });
      assertPersonalPage(bad, 422);
      assert.match(bad.body, /aria-invalid="true"/);
      assert.match(bad.body, /value="not an email"/);
      assertPersonalPage(await post('/subscriptions', { email: 'bob@example.com' }, FOREIGN_POST), 403);
    });

    it("the code of that mail, typed on the page, opens the buyer's subscriptions; a wrong one is refused, five end it", async () => {
      const codeOf = async (email: string) => {
        const [row] = await t.store.db.query<{ payload: { to: string; subject: string } | string }>(
          "select payload from outbox where kind = 'mail' and payload->>'to' = $1 order by id desc limit 1",
          [email],
        );
        const payload = typeof row!.payload === 'string' ? JSON.parse(row!.payload) : row!.payload;
        return /^(?:.*: )?(\d{6}) is your code/.exec(payload.subject)![1]!;
      };
      await post('/subscriptions', { email: 'bob@example.com' });
      const code = await codeOf('bob@example.com');
      const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
      const refused = await post('/subscriptions/code', { email: 'bob@example.com', code: wrong });
      assertPersonalPage(refused, 422);
      assert.match(refused.body, /That code is not right/);
      assertPersonalPage(await post('/subscriptions/code', { email: 'bob@example.com', code }, FOREIGN_POST), 403);
      const opened = await post('/subscriptions/code', { email: 'BOB@example.com', code });
      assert.equal(opened.statusCode, 303);
      const page = await get(String(opened.headers.location));
      assertPersonalPage(page, 200);
      assert.match(page.body, /Subscriptions for <bdi>bob@example\.com<\/bdi>/);
      assertPersonalPage(await post('/subscriptions/code', { email: 'bob@example.com', code }), 422);
      // Five wrong tries end a code: the right one is refused after them.
      await post('/subscriptions', { email: 'bob@example.com' });
      const next = await codeOf('bob@example.com');
      const other = String((Number(next) + 1) % 1_000_000).padStart(6, '0');
      for (let i = 0; i < 5; i++) await post('/subscriptions/code', { email: 'bob@example.com', code: other });
      assertPersonalPage(await post('/subscriptions/code', { email: 'bob@example.com', code: next }), 422);
    });

    it("an order's subscriptions link mails the order's buyer a link (the order's id is not the mailbox's proof); an order that started none is a 404", async () => {
      const page = await get(`/orders/${bob.order.id}/subscriptions`);
      assertPersonalPage(page, 200);
      assert.doesNotMatch(page.body, /\/subscriptions\/manage\//, 'no subscriptions link on the page');
      const mails = async () => (await t.store.db.query<{ n: number }>("select count(*)::int as n from outbox where kind = 'mail'"))[0]!.n;
      const before = await mails();
      assertPersonalPage(await post(`/orders/${bob.order.id}/subscriptions`, {}, FOREIGN_POST), 403);
      const answer = await post(`/orders/${bob.order.id}/subscriptions`);
      assertPersonalPage(answer, 200);
      assert.doesNotMatch(answer.body, /\/subscriptions\/manage\//, 'nor on the answer');
      assert.equal(await mails(), before + 1, "a link mailed to the order's buyer");

      const decaf = t.store.catalog.snapshot.productByHandle('decaf-capsules')!.variants[0]!;
      const oneOff = await placeOrder(t.store, [{ variantId: decaf.id, quantity: 1 }], { email: 'once@example.com' });
      assertPersonalPage(await post(`/orders/${oneOff.id}/subscriptions`), 404);
      assertPersonalPage(await get('/orders/ord_nope/subscriptions'), 404);
    });

    it("a renewal's link: sold out, it lists the lines and goes on without them to the approval page; skipped, it says so", async () => {
      const renewer = await subscriber('renew@example.com', true);
      assert.equal(renewer.subscription.lines.length, 2);
      const { variant } = espresso(t.store);
      at = new Date(renewer.subscription.nextAt.getTime() - 2 * DAY);
      // One of the delivery's two espressos sells out before the buyer opens the link.
      const { previous } = await t.store.inventory.setOnHand(t.store.db, variant.sku!, 0);
      try {
        assert.ok((await t.store.subscriptions.run(t.store.db)).produced >= 1);
        const [row] = await t.store.db.query<{ link_token: string }>("select link_token from subscription_renewals where subscription_id = $1 and state = 'pending'", [
          renewer.subscription.id,
        ]);
        const link = `/subscriptions/renewals/${row!.link_token}`;
        const soldOut = await get(link);
        assertPersonalPage(soldOut, 200);
        assert.match(soldOut.body, /<h1>Some items are sold out<\/h1>/);
        assert.match(soldOut.body, /One item of your delivery of <time[^>]*>10 February 2027<\/time> is sold out right now\./);
        assert.equal(soldOut.body.match(/<span class="field-error">Sold out<\/span>/g)?.length, 1, 'one line marked');
        assert.match(soldOut.body, new RegExp(`<form method="post" action="${escapeRegExp(link)}/without-sold-out"`));
        assertPersonalPage(await post(`${link}/without-sold-out`, {}, FOREIGN_POST), 403);

        const without = await post(`${link}/without-sold-out`);
        assert.equal(without.statusCode, 303, without.body);
        const approval = String(without.headers.location);
        assert.match(approval, /^\/checkout\/approve\/[A-Za-z0-9_-]{43}$/);
        const again = await get(link);
        assert.equal(again.statusCode, 303);
        assert.equal(again.headers.location, approval, 'the link leads to the same approval page now');
        const approvalPage = await get(approval);
        assert.equal(approvalPage.statusCode, 200);
        // What is left to approve: the espresso in stock, not the one sold out.
        const { other } = espresso(t.store);
        assert.match(approvalPage.body, new RegExp(`<span class="variant">${escapeRegExp(other.title)}</span>`));
        assert.doesNotMatch(approvalPage.body, new RegExp(`<span class="variant">${escapeRegExp(variant.title)}</span>`));

        await change(renewer.page, renewer.subscription.id, 'skip');
        const skipped = await get(link);
        assertPersonalPage(skipped, 200);
        assert.match(skipped.body, /<h1>This delivery was skipped<\/h1>/);
        assert.match(skipped.body, /<a href="\/subscriptions">Manage your subscriptions<\/a>/);
      } finally {
        await t.store.inventory.setOnHand(t.store.db, variant.sku!, previous);
        at = START;
      }
      assertPersonalPage(await get(`/subscriptions/renewals/${'B'.repeat(43)}`), 404);
      assertPersonalPage(await get('/subscriptions/renewals/x'), 404);
    });

    it('no link (a subscriptions secret, a renewal token, an order id) reaches the request log', async () => {
      const [renewal] = await t.store.db.query<{ link_token: string }>('select link_token from subscription_renewals limit 1');
      // Paths no route answers carry the links just the same: another method, a doubled slash, another case, a segment too many.
      for (const [method, url] of [
        ['PUT', ana.page],
        ['GET', `/${ana.page}`],
        ['GET', ana.page.replace('/subscriptions/', '/Subscriptions/')],
        ['DELETE', `${action(ana.page, ana.subscription.id, 'skip')}/more`],
        ['GET', `/subscriptions/renewals/${renewal!.link_token}/without-sold-out`],
        ['GET', `/orders/${ana.order.id}/subscriptions/more`],
      ] as const) {
        const answer = await t.app.inject({ method, url, headers: NAVIGATE });
        assert.ok(answer.statusCode < 500, `${method} ${url}: ${answer.statusCode}`);
      }
      const text = log.join('');
      assert.ok(text.includes('/subscriptions/manage/:secret'), 'the pages were logged by their route');
      for (const secret of [ana.secret, bob.secret, renewal!.link_token, ana.order.id, bob.order.id]) {
        assert.ok(!text.includes(secret), `${secret} is in the log`);
      }
      assert.doesNotMatch(text, /ana@example\.com/);
    });
  });
}
