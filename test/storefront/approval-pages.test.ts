/**
 * The buyer's HTML pages (issue #10, item 4; issue [pages], item 4): the approval page a checkout sends the buyer to
 * (a summary first, the seller, the time left, a decline that asks to confirm), the order page, a checkout's page and
 * the policy pages, through the real app on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { contentSecurityPolicy } from '../../src/storefront/page-policy.js';
import { readOrder } from '../../src/orders/orders.js';
import { formatDay } from '../../src/payments/payment-words.js';
import { clockTime, timeLeft } from '../../src/storefront/pages/approval-page.js';
import { momentsIn } from '../../src/markup/moments.js';
import { backends, dropTestDatabases, startTestStore, testConfig, type TestStore } from '../helpers/store.js';
import { ANA_AT_MARKET_ST } from '../helpers/orders.js';

after(dropTestDatabases);

const STORE_NAME = 'Fizz & Sons <Drinks>';
const ESCAPED_STORE_NAME = 'Fizz &amp; Sons &lt;Drinks&gt;';
const DESTINATION = ANA_AT_MARKET_ST;
/** The merchant's PAYMENT_INSTRUCTIONS (escaped on the pages) and PAYMENT_DUE_DAYS. */
const INSTRUCTIONS = 'Bank transfer to Fizz & Sons, IBAN DE89 3704 0044 0532 0130 00';
const ESCAPED_INSTRUCTIONS = 'Bank transfer to Fizz &amp; Sons, IBAN DE89 3704 0044 0532 0130 00';
const DUE_DAYS = 5;
const DAY_MS = 24 * 3600 * 1000;
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\$]/g, '\\$&');

interface LineSpec {
  sku: string;
  quantity: number;
  sellingPlanId?: number;
  properties?: Record<string, string>;
}

function variantIdOf(t: TestStore, sku: string): number {
  const variant = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  if (!variant) throw new Error(`no published variant ${sku}`);
  return variant.id;
}

/**
 * A checkout an agent filled and asked to complete: it waits for the buyer, with an approval link. With `channel`
 * 'browser', a checkout recorded as the buyer's own (the pages' words follow the channel; the agent's request to
 * complete stands in for the buyer's here).
 */
async function awaitingApproval(t: TestStore, lines: LineSpec[] = [{ sku: 'HYD-LEMONLIME-30', quantity: 2 }, { sku: 'ESP-DEC-10', quantity: 1 }], channel: 'agent' | 'browser' = 'agent') {
  const { checkouts, db } = t.store;
  const created = await checkouts.create(
    db,
    {
      lines: lines.map((line) => ({ variantId: variantIdOf(t, line.sku), quantity: line.quantity, sellingPlanId: line.sellingPlanId, properties: line.properties })),
      buyer: { email: 'ana@example.com' },
      destination: DESTINATION,
      shippingOption: 'standard',
    },
    channel,
    'agent',
  );
  const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
  assert.equal(asked.view.record.status, 'requires_escalation');
  return { id: created.view.record.id, token: asked.approval!.token, lines };
}

interface Page {
  status: number;
  headers: Record<string, unknown>;
  html: string;
}

/** What a browser keeps from the approval page: its cookie, and the form's hidden fields. */
interface OpenedApproval extends Page {
  cookie: string;
  formToken: string;
  digest: string;
}

async function get(app: FastifyInstance, url: string): Promise<Page> {
  const response = await app.inject({ method: 'GET', url });
  return { status: response.statusCode, headers: response.headers, html: response.body };
}

async function openApproval(app: FastifyInstance, token: string): Promise<OpenedApproval> {
  const page = await get(app, `/checkout/approve/${token}`);
  assert.equal(page.status, 200, page.html);
  const setCookie = ([] as string[]).concat((page.headers['set-cookie'] as string | string[] | undefined) ?? []).find((c) => c.startsWith('approval_form='));
  assert.ok(setCookie, 'the approval page sets the form cookie');
  const field = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page.html)?.[1];
  return { ...page, cookie: setCookie.split(';')[0]!, formToken: field('form_token')!, digest: field('digest')! };
}

async function submit(
  app: FastifyInstance,
  token: string,
  form: { action: string; form_token?: string; digest?: string },
  options: { cookie?: string; origin?: string; fetchSite?: string } = {},
): Promise<Page & { location: string | undefined }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (options.cookie) headers.cookie = options.cookie;
  if (options.origin) headers.origin = options.origin;
  if (options.fetchSite) headers['sec-fetch-site'] = options.fetchSite;
  const payload = new URLSearchParams(Object.entries(form).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString();
  const response = await app.inject({ method: 'POST', url: `/checkout/approve/${token}`, headers, payload });
  return { status: response.statusCode, headers: response.headers, html: response.body, location: response.headers.location };
}

/** The form as the opened page would post it, from the store's own origin, as a browser does. */
const approveAs = (app: FastifyInstance, token: string, opened: OpenedApproval, action = 'approve') =>
  submit(app, token, { action, form_token: opened.formToken, digest: opened.digest }, { cookie: opened.cookie, origin: 'http://store.test', fetchSite: 'same-origin' });

/** Declining as the buyer does: the decline button, which asks to confirm (a page), then that page's confirm button. */
async function declineAs(app: FastifyInstance, token: string, opened: OpenedApproval) {
  const asked = await approveAs(app, token, opened, 'decline');
  assert.equal(asked.status, 200, asked.html);
  assert.match(asked.html, /<h1>Decline this order\?<\/h1>/);
  return approveAs(app, token, opened, 'decline_confirmed');
}

/** The `<img>` of a product's thumbnail, as the lines table shows it beside the product's name (alt empty). */
const rowThumbnail = (handle: string) => `<img class="thumb" src="/assets/demo/${handle}.svg" alt="" width="48" height="48">`;

async function orderCount(t: TestStore): Promise<number> {
  const [row] = await t.store.db.query<{ count: number }>('select count(*)::int as count from orders');
  return row!.count;
}

function assertPageHeaders(page: Page): void {
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.equal(page.headers['referrer-policy'], 'no-referrer');
  assert.equal(page.headers['x-frame-options'], 'DENY');
  const csp = String(page.headers['content-security-policy']);
  assert.equal(csp, contentSecurityPolicy('http://store.test', [], 'none'));
  assert.match(csp, /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]{43}='; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/);
  assert.doesNotMatch(csp, /unsafe-inline/);
}

/** Every page: English, one h1, no script, nothing loaded from anywhere else, and its style the one the CSP hashes. */
function assertAccessibleShell(html: string): void {
  assert.match(html, /^<!doctype html><html lang="en">/);
  assert.equal(html.match(/<h1[\s>]/g)?.length, 1, 'exactly one h1');
  assert.doesNotMatch(html, /<script|\son[a-z]+=|javascript:/i);
  assert.doesNotMatch(html, /\s(src|href)="(https?:)?\/\/(?!store\.test\/)/, 'no third-party assets or links');
  assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
}

/** The checkout's status as the service reads it, and whether it holds an order. */
async function checkoutStatus(t: TestStore, id: string) {
  const answer = await t.store.checkouts.get(t.store.db, id);
  return { status: answer!.view.record.status, orderId: answer!.view.record.orderId };
}

for (const backend of backends) {
  describe(`the buyer's approval and order pages (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      const base = testConfig();
      t = await startTestStore(backend, {
        config: {
          storeName: STORE_NAME,
          checkout: { ...base.checkout, taxRatesBps: { CA: 725 } },
          payment: { ...base.payment, provider: 'manual', instructions: INSTRUCTIONS, instructionsSet: true, dueDays: DUE_DAYS },
        },
      });
    });
    after(async () => {
      await t.close();
    });

    it('the pending approval page shows the store, every line, the address, the option, the totals, the policies, how and by when to pay, and two buttons', async () => {
      const { token } = await awaitingApproval(t);
      const openedAt = Date.now();
      const page = await openApproval(t.app, token);
      // The day the payment would be due if approved now (the page and this test may straddle midnight UTC).
      const dueDays = [openedAt, Date.now()].map((at) => escapeRegExp(formatDay(new Date(at + DUE_DAYS * DAY_MS))));
      assertPageHeaders(page);
      assertAccessibleShell(page.html);
      const { html } = page;
      assert.ok(html.includes(ESCAPED_STORE_NAME), 'the store name, escaped');
      assert.ok(!html.includes(STORE_NAME), 'never the raw store name');
      assert.match(html, /<h1>Approve your order<\/h1>/);
      // Lines: title, variant, quantity, unit price, line total; a product without options shows no variant.
      assert.ok(
        html.includes(`<th scope="row">${rowThumbnail('hydration-drink-stick')}Hydration Drink Stick<span class="variant">Lemon-Lime / 30 sticks</span></th><td class="n">2</td><td class="n">$39.99</td><td class="n">$79.98</td>`),
      );
      assert.ok(html.includes(`<th scope="row">${rowThumbnail('decaf-capsules')}Decaf Espresso Capsules</th><td class="n">1</td><td class="n">$6.90</td><td class="n">$6.90</td>`));
      for (const header of ['Item', 'Quantity', 'Price', 'Total']) assert.match(html, new RegExp(`<th scope="col"[^>]*>${header}</th>`));
      assert.match(html, /<address><bdi>Ana<\/bdi> <bdi>Lima<\/bdi><br><bdi>1 Market St<\/bdi><br><bdi>San Francisco<\/bdi>, CA 94103<br>United States<\/address>/);
      assert.match(html, /ana@example\.com/);
      // 86.88 in items is over the free-shipping threshold; CA tax 7.25% of 86.88 = 6.30.
      assert.match(html, /Free standard shipping \(5 to 8 business days\): \$0\.00/);
      assert.match(html, /<dt>Items<\/dt><dd>\$86\.88<\/dd>/);
      assert.match(html, /<dt>Sales tax<\/dt><dd>\$6\.30<\/dd>/);
      assert.match(html, /<dd class="grand">\$93\.18<\/dd>/);
      // The policies are linked once, at the foot of the page; the page points there.
      for (const slug of ['terms-of-service', 'privacy-policy', 'refund-policy', 'shipping-policy']) {
        assert.equal(html.split(`href="http://store.test/policies/${slug}"`).length - 1, 1, `links the ${slug} once`);
      }
      assert.match(html, /policies: they are linked at the foot of this page/);
      // Before approving: the amount due, the due date, the merchant's instructions, and that the order number is the
      // reference; never a promise that approving charges, never "collects payment" without how and by when.
      assert.match(
        html,
        new RegExp(
          `<p class="summary-pay">Nothing is charged now\\. Once you approve, pay \\$93\\.18 by (?:${dueDays.join('|')}) using: ${escapeRegExp(ESCAPED_INSTRUCTIONS)}\\. Quote the order number you get as the payment reference\\.</p>`,
        ),
      );
      assert.equal(html.split('class="summary-pay"').length - 1, 1, 'said once');
      assert.doesNotMatch(html, /(?<!Nothing )is charged|charged until|will be charged|collects payment/);
      const buttons = [...html.matchAll(/<button type="submit" name="action" value="(\w+)"[^>]*>([^<]+)<\/button>/g)].map((m) => [m[1], m[2]]);
      assert.deepEqual(buttons, [
        ['approve', 'Approve and place order ($93.18)'],
        ['decline', 'Decline this order'],
      ]);
      assert.match(html, new RegExp(`<form method="post" action="/checkout/approve/${token}">`));
      // A summary first: the seller, who asked, the total, the items with their pictures, where it ships; then the
      // approve action; then the time left and the decline button; then the details.
      assert.ok(html.includes(`<p class="seller">Sold by <strong>${ESCAPED_STORE_NAME}</strong> · <a href="mailto:orders@store.test">orders@store.test</a></p>`));
      assert.match(html, /<p class="lead">Your agent asked to place this order\./);
      assert.match(html, /<p class="summary-total">Total <strong>\$93\.18<\/strong><\/p>/);
      assert.ok(
        html.includes(
          '<p class="summary-items"><span>3 items</span><img class="thumb" src="/assets/demo/hydration-drink-stick.svg" alt="Hydration Drink Stick" width="48" height="48">' +
            '<img class="thumb" src="/assets/demo/decaf-capsules.svg" alt="Decaf Espresso Capsules" width="48" height="48"></p>',
        ),
      );
      assert.match(html, /<p class="summary-ship">Ship to <bdi>Ana<\/bdi> <bdi>Lima<\/bdi>, <bdi>1 Market St<\/bdi>, <bdi>San Francisco<\/bdi>, CA 94103 · Free standard shipping<\/p>/);
      // The clock time alone, or with the date when the link outlasts today (in the store's zone, UTC by default).
      assert.match(html, /This link works for 1[45] more minutes \(until (?:\d{1,2} [A-Z][a-z]+ \d{4}, )?\d\d:\d\d UTC\)\./);
      const order = ['class="seller"', 'class="summary-total"', 'class="summary-ship"', 'value="approve"', 'class="expiry"', 'value="decline"', 'id="details-title"', '<table>'];
      const positions = order.map((marker) => html.indexOf(marker));
      assert.deepEqual([...positions].sort((a, b) => a - b), positions, `in this order: ${order.join(', ')}`);
      assert.ok(!positions.includes(-1));
      assert.match(html, /<link rel="canonical" href="http:\/\/store\.test\/checkout\/approve\/[A-Za-z0-9_-]{43}">/);
      // The cookie holds the form's token, for this link only.
      const setCookie = String(([] as string[]).concat(page.headers['set-cookie'] as string[])[0]);
      assert.match(setCookie, new RegExp(`^approval_form=${page.formToken}; Max-Age=\\d+; Path=/checkout/approve/${token}; HttpOnly; SameSite=Strict$`));
      assert.doesNotMatch(setCookie, /Secure/, 'plain http BASE_URL: not Secure');
    });

    it('approving places exactly one order: 303 to the order page, which shows it; stock goes down; the checkout is completed with the order', async () => {
      const { id, token, lines } = await awaitingApproval(t);
      const ids = lines.map((line) => variantIdOf(t, line.sku));
      const stockBefore = ids.map((variantId) => t.store.inventory.onHand(variantId));
      const ordersBefore = await orderCount(t);
      const opened = await openApproval(t.app, token);

      const approved = await approveAs(t.app, token, opened);
      assert.equal(approved.status, 303, approved.html);
      assert.match(approved.location ?? '', /^\/orders\/ord_[A-Za-z0-9_-]{22}$/);
      assertPageHeaders({ ...approved, headers: { ...approved.headers, 'content-type': 'text/html; charset=utf-8' } });
      assert.match(String(approved.headers['set-cookie']), /^approval_form=; Max-Age=0; Path=\/checkout\/approve\//, 'the form cookie is cleared');
      assert.equal(await orderCount(t), ordersBefore + 1);
      assert.deepEqual(
        ids.map((variantId) => t.store.inventory.onHand(variantId)),
        stockBefore.map((units, index) => units - lines[index]!.quantity),
      );
      const checkout = await checkoutStatus(t, id);
      assert.equal(checkout.status, 'completed');
      assert.equal(`/orders/${checkout.orderId}`, approved.location);

      const orderPage = await get(t.app, approved.location!);
      assert.equal(orderPage.status, 200);
      assertPageHeaders(orderPage);
      assertAccessibleShell(orderPage.html);
      const order = await t.store.db.query<{ number: string }>('select number::text from orders where id = $1', [checkout.orderId]);
      assert.match(orderPage.html, new RegExp(`<h1>Thank you, your order #${order[0]!.number} is placed</h1>`));
      assert.match(orderPage.html, /<p class="notice">Mail about this order goes to <bdi>ana@example\.com<\/bdi>\. We mail you when it ships\.<\/p>/);
      assert.match(orderPage.html, /<p class="delivery">Expect the delivery within 5 to 8 business days \(Free standard shipping\)\.<\/p>/);
      assert.match(orderPage.html, /Questions\? Write to <a href="mailto:orders@store\.test">orders@store\.test<\/a> and quote #\d+\./);
      assert.match(orderPage.html, /<time datetime="\d{4}-\d\d-\d\dT[^"]+">\d{1,2} [A-Z][a-z]+ \d{4}, \d\d:\d\d UTC<\/time>/);
      assert.ok(orderPage.html.includes(`${rowThumbnail('hydration-drink-stick')}Hydration Drink Stick<span class="variant">Lemon-Lime / 30 sticks</span></th><td class="n">2</td>`));
      assert.match(orderPage.html, /Decaf Espresso Capsules<\/th><td class="n">1<\/td>/);
      assert.match(orderPage.html, /<address><bdi>Ana<\/bdi> <bdi>Lima<\/bdi><br><bdi>1 Market St<\/bdi><br><bdi>San Francisco<\/bdi>, CA 94103<br>United States<\/address>/);
      assert.match(orderPage.html, /Free standard shipping: \$0\.00/);
      assert.match(orderPage.html, /<dd class="grand">\$93\.18<\/dd>/);
      // The payment: the amount, the due date (PAYMENT_DUE_DAYS after the order), the instructions, the number as the reference.
      const placed = (await readOrder(t.store.db, checkout.orderId!))!;
      assert.equal(placed.payment.dueAt!.getTime(), placed.createdAt.getTime() + DUE_DAYS * DAY_MS);
      const pay = `Pay $93.18 by ${formatDay(placed.payment.dueAt!)} using: ${ESCAPED_INSTRUCTIONS}. Quote order #${placed.number} as the payment reference.`;
      assert.ok(orderPage.html.includes(`<p class="payment"><strong>Payment pending:</strong> ${pay}</p>`), orderPage.html);
      assert.doesNotMatch(orderPage.html, /is charged|charged until|will be charged|collects payment/);
      assert.ok(orderPage.html.includes('<p><a href="/">Continue shopping</a></p>'));
      assert.ok(orderPage.html.includes(ESCAPED_STORE_NAME));

      // The used link now shows the order it placed.
      const again = await get(t.app, `/checkout/approve/${token}`);
      assert.equal(again.status, 200);
      assert.match(again.html, new RegExp(`<h1>Order #${order[0]!.number} is placed</h1>`));
      assert.ok(again.html.includes(`href="${approved.location}"`));
      assert.ok(again.html.includes(`<p>Payment pending: ${pay}</p>`), again.html);
    });

    it("a line's subscription plan and properties are shown as the buyer approves them, escaped, and kept on the order page", async () => {
      const plan = t.store.catalog.snapshot.productByHandle('hydration-drink-stick')!.sellingPlanGroups[0]!.plans[0]!;
      const { token } = await awaitingApproval(t, [
        { sku: 'HYD-LEMONLIME-30', quantity: 1, sellingPlanId: plan.id, properties: { 'Gift note': '<b>Happy</b> & "you"' } },
      ]);
      const opened = await openApproval(t.app, token);
      // The plan in full: its name, interval and discount, and what the line saves ($39.99 less 10%: $4.00).
      const planWords = `${plan.name} (every month, save 10%) — you save $4.00`;
      assert.ok(opened.html.includes(`<span class="detail">${planWords}</span>`));
      assert.equal(opened.html.split(`<span class="detail">${plan.name}</span>`).length, 1, 'the bare name is not said again');
      assert.ok(opened.html.includes('<span class="detail"><bdi>Gift note</bdi>: <bdi>&lt;b&gt;Happy&lt;/b&gt; &amp; &quot;you&quot;</bdi></span>'));
      assert.ok(!opened.html.includes('<b>Happy</b>'));
      const approved = await approveAs(t.app, token, opened);
      assert.equal(approved.status, 303);
      const orderPage = await get(t.app, approved.location!);
      assert.ok(orderPage.html.includes('<span class="detail"><bdi>Gift note</bdi>: <bdi>&lt;b&gt;Happy&lt;/b&gt; &amp; &quot;you&quot;</bdi></span>'));
      assert.ok(orderPage.html.includes(`<span class="detail">${planWords}</span>`), 'the order page keeps the plan as approved');
    });

    it('posting the same form twice places no second order: the second answer is the same order', async () => {
      const { id, token, lines } = await awaitingApproval(t, [{ sku: 'HYD-LEMONLIME-30', quantity: 1 }]);
      const variantId = variantIdOf(t, lines[0]!.sku);
      const opened = await openApproval(t.app, token);
      const first = await approveAs(t.app, token, opened);
      assert.equal(first.status, 303);
      const ordersAfterFirst = await orderCount(t);
      const stockAfterFirst = t.store.inventory.onHand(variantId);

      const second = await approveAs(t.app, token, opened);
      assert.equal(second.status, 303);
      assert.equal(second.location, first.location);
      assert.equal(await orderCount(t), ordersAfterFirst);
      assert.equal(t.store.inventory.onHand(variantId), stockAfterFirst);
      const [row] = await t.store.db.query<{ count: number }>('select count(*)::int as count from orders where checkout_id = $1', [id]);
      assert.equal(row!.count, 1);
    });

    it('two approvals of one page at once place one order, and both answers lead to it', async () => {
      const { id, token } = await awaitingApproval(t, [{ sku: 'HYD-LEMONLIME-30', quantity: 1 }]);
      const opened = await openApproval(t.app, token);
      const answers = await Promise.all([approveAs(t.app, token, opened), approveAs(t.app, token, opened), approveAs(t.app, token, opened)]);
      for (const answer of answers) assert.equal(answer.status, 303, answer.html);
      assert.equal(new Set(answers.map((answer) => answer.location)).size, 1);
      const [row] = await t.store.db.query<{ count: number }>('select count(*)::int as count from orders where checkout_id = $1', [id]);
      assert.equal(row!.count, 1);
    });

    it('a failure on our side is a page that says nothing was ordered, and keeps nothing', async () => {
      const { id, token } = await awaitingApproval(t, [{ sku: 'HYD-LEMONLIME-30', quantity: 1 }]);
      const opened = await openApproval(t.app, token);
      const ordersBefore = await orderCount(t);
      const approve = mock.method(t.store.approvals, 'approve', async () => {
        throw new Error('the database went away');
      });
      const read = mock.method(t.store.checkouts, 'get', async () => {
        throw new Error('the database went away');
      });
      try {
        const failed = await approveAs(t.app, token, opened);
        assert.equal(failed.status, 500);
        assertPageHeaders(failed);
        assert.match(failed.html, /<h1>Your order was not placed<\/h1>/);
        assert.match(failed.html, /nothing was ordered or charged/);
        assert.doesNotMatch(failed.html, /database/);
        const page = await t.app.inject({ method: 'GET', url: `/checkouts/${id}` });
        assert.equal(page.statusCode, 500);
        assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
        assert.match(page.body, /Something went wrong on our side/);
        assert.doesNotMatch(page.body, /database/);
      } finally {
        approve.mock.restore();
        read.mock.restore();
      }
      assert.equal(await orderCount(t), ordersBefore);
      assert.equal((await approveAs(t.app, token, opened)).status, 303, 'the page still approves once the store is back');
    });

    it('a post without the cookie, with a wrong form token, from a foreign origin or from another site is refused and changes nothing', async () => {
      const { id, token, lines } = await awaitingApproval(t, [{ sku: 'HYD-LEMONLIME-30', quantity: 1 }]);
      const variantId = variantIdOf(t, lines[0]!.sku);
      const opened = await openApproval(t.app, token);
      const ordersBefore = await orderCount(t);
      const stockBefore = t.store.inventory.onHand(variantId);
      const form = { action: 'approve', form_token: opened.formToken, digest: opened.digest };
      const attempts = {
        'no cookie': await submit(t.app, token, form, { origin: 'http://store.test' }),
        'a wrong form token': await submit(t.app, token, { ...form, form_token: 'x'.repeat(opened.formToken.length) }, { cookie: opened.cookie }),
        'a cookie that is not the form token': await submit(t.app, token, form, { cookie: 'approval_form=somethingelse' }),
        'a foreign Origin': await submit(t.app, token, form, { cookie: opened.cookie, origin: 'https://evil.example' }),
        'the right host on another scheme': await submit(t.app, token, form, { cookie: opened.cookie, origin: 'https://store.test' }),
        'a cross-site fetch': await submit(t.app, token, form, { cookie: opened.cookie, origin: 'null', fetchSite: 'cross-site' }),
        'a same-site page of another origin': await submit(t.app, token, form, { cookie: opened.cookie, fetchSite: 'same-site' }),
        'a decline without the cookie': await submit(t.app, token, { ...form, action: 'decline' }, {}),
      };
      for (const [what, answer] of Object.entries(attempts)) {
        assert.equal(answer.status, 403, `${what}: ${answer.html}`);
        assertPageHeaders(answer);
        assert.match(answer.html, /Nothing was ordered or charged\./, what);
      }
      const missingAction = await submit(t.app, token, { action: 'buy', form_token: opened.formToken }, { cookie: opened.cookie });
      assert.equal(missingAction.status, 400);
      assert.equal(await orderCount(t), ordersBefore);
      assert.equal(t.store.inventory.onHand(variantId), stockBefore);
      assert.equal((await checkoutStatus(t, id)).status, 'requires_escalation');
      // The page still works: the buyer can approve from it.
      assert.equal((await approveAs(t.app, token, opened)).status, 303);
    });

    it('a checkout changed after the page was shown voids the link: approving is refused (409) and the page lists what changed', async () => {
      const { id, token } = await awaitingApproval(t);
      const opened = await openApproval(t.app, token);
      const ordersBefore = await orderCount(t);
      await t.store.checkouts.update(
        t.store.db,
        id,
        {
          lines: [{ variantId: variantIdOf(t, 'HYD-LEMONLIME-30'), quantity: 3 }],
          buyer: { email: 'ana@example.com' },
          destination: DESTINATION,
          shippingOption: 'express',
        },
        'agent',
      );
      const refused = await approveAs(t.app, token, opened);
      assert.equal(refused.status, 409, refused.html);
      assertPageHeaders(refused);
      assertAccessibleShell(refused.html);
      assert.match(refused.html, /<h1>Your order was not placed<\/h1>/);
      assert.match(refused.html, /<h2>What changed<\/h2>/);
      assert.match(refused.html, /<li>The quantity of Hydration Drink Stick - Lemon-Lime \/ 30 sticks changed from 2 to 3\.<\/li>/);
      assert.match(refused.html, /<li>Decaf Espresso Capsules was removed\.<\/li>/);
      assert.match(refused.html, /<li>Shipping changed from Free standard shipping \(\$0\.00\) to Express shipping \(\$15\.00\)\.<\/li>/);
      assert.match(refused.html, /Nothing was ordered or charged\./);
      assert.doesNotMatch(refused.html, /<form/, 'no button on a void link');
      assert.equal(await orderCount(t), ordersBefore);
      assert.notEqual((await checkoutStatus(t, id)).status, 'completed');

      // Opening the old link again says the same, with no form.
      const reopened = await get(t.app, `/checkout/approve/${token}`);
      assert.equal(reopened.status, 409);
      assert.match(reopened.html, /<h1>This approval link no longer works<\/h1>/);
      assert.match(reopened.html, /changed from 2 to 3/);
      assert.doesNotMatch(reopened.html, /<form/);
    });

    it('a tampered digest (not what the page showed) is refused and changes nothing', async () => {
      const { id, token } = await awaitingApproval(t, [{ sku: 'HYD-LEMONLIME-30', quantity: 1 }]);
      const opened = await openApproval(t.app, token);
      const ordersBefore = await orderCount(t);
      const refused = await submit(t.app, token, { action: 'approve', form_token: opened.formToken, digest: 'A'.repeat(43) }, { cookie: opened.cookie });
      assert.equal(refused.status, 409);
      assert.match(refused.html, /changed after this page was shown/);
      assert.equal(await orderCount(t), ordersBefore);
      assert.equal((await checkoutStatus(t, id)).status, 'requires_escalation');
    });

    it('stock that ran out after the page was shown: the approval is refused in words, nothing is taken or ordered', async () => {
      const { id, token } = await awaitingApproval(t, [{ sku: 'SLP-120', quantity: 2 }]);
      const opened = await openApproval(t.app, token);
      const ordersBefore = await orderCount(t);
      await t.store.inventory.setOnHand(t.store.db, 'SLP-120', 1);
      const refused = await approveAs(t.app, token, opened);
      assert.equal(refused.status, 409, refused.html);
      assert.match(refused.html, /Only 1 of Magnesium Sleep Capsules - 120 capsules left/);
      assert.match(refused.html, /Nothing was ordered or charged\./);
      assert.equal(await orderCount(t), ordersBefore);
      assert.equal(t.store.inventory.onHand(variantIdOf(t, 'SLP-120')), 1);
      assert.notEqual((await checkoutStatus(t, id)).status, 'completed');
    });

    it('declining asks to confirm first: the decline button alone changes nothing, and the page confirms with the form token', async () => {
      const { id, token } = await awaitingApproval(t, [{ sku: 'HYD-LEMONLIME-30', quantity: 1 }]);
      const opened = await openApproval(t.app, token);
      const asked = await approveAs(t.app, token, opened, 'decline');
      assert.equal(asked.status, 200, asked.html);
      assertPageHeaders(asked);
      assertAccessibleShell(asked.html);
      assert.match(asked.html, /<h1>Decline this order\?<\/h1>/);
      assert.match(asked.html, /Declining cancels this checkout: nothing is ordered or charged, and this approval link stops working\./);
      assert.match(asked.html, /<p class="summary-total">Total <strong>\$\d+\.\d\d<\/strong><\/p>/);
      const buttons = [...asked.html.matchAll(/<button type="submit" name="action" value="(\w+)"[^>]*>([^<]+)<\/button>/g)].map((m) => [m[1], m[2]]);
      assert.deepEqual(buttons, [['decline_confirmed', 'Yes, decline and cancel checkout']]);
      assert.ok(asked.html.includes(`<input type="hidden" name="form_token" value="${opened.formToken}">`));
      assert.ok(asked.html.includes(`<p><a href="/checkout/approve/${token}">No, go back to the order</a></p>`));
      assert.equal((await checkoutStatus(t, id)).status, 'requires_escalation', 'nothing is canceled before the confirmation');
      // The confirmation is the same form: without the cookie, or from another site, it is refused.
      const confirm = { action: 'decline_confirmed', form_token: opened.formToken, digest: opened.digest };
      assert.equal((await submit(t.app, token, confirm, {})).status, 403);
      assert.equal((await submit(t.app, token, confirm, { cookie: opened.cookie, origin: 'https://evil.example' })).status, 403);
      assert.equal((await checkoutStatus(t, id)).status, 'requires_escalation');
      // Going back: the approval page still approves.
      assert.equal((await approveAs(t.app, token, await openApproval(t.app, token))).status, 303);
    });

    it('declining cancels the checkout, places nothing, and the link then says it no longer works', async () => {
      const { id, token } = await awaitingApproval(t, [{ sku: 'HYD-LEMONLIME-30', quantity: 1 }]);
      const opened = await openApproval(t.app, token);
      const ordersBefore = await orderCount(t);
      const declined = await declineAs(t.app, token, opened);
      assert.equal(declined.status, 200, declined.html);
      assertPageHeaders(declined);
      assert.match(declined.html, /<h1>You declined this order<\/h1>/);
      assert.match(declined.html, /The checkout is canceled\. Nothing was ordered or charged\./);
      assert.match(declined.html, /Your agent can start a new checkout/);
      assert.equal((await checkoutStatus(t, id)).status, 'canceled');
      assert.equal(await orderCount(t), ordersBefore);
      const after = await get(t.app, `/checkout/approve/${token}`);
      assert.equal(after.status, 409);
      assert.doesNotMatch(after.html, /<form/);
      assert.match(after.html, /ask your agent for a new approval link/);
      // Asking to decline again: the link no longer works, and says so.
      const again = await approveAs(t.app, token, opened, 'decline');
      assert.equal(again.status, 409);
      assert.doesNotMatch(again.html, /<form/);
      // Approving from the page kept open is refused.
      const late = await approveAs(t.app, token, opened);
      assert.equal(late.status, 409);
      assert.equal(await orderCount(t), ordersBefore);
    });

    it('an unknown or malformed approval link is a 404 page, and a malformed one never reaches the checkout service', async () => {
      const unknown = await get(t.app, `/checkout/approve/${'A'.repeat(43)}`);
      assert.equal(unknown.status, 404);
      assertPageHeaders(unknown);
      assertAccessibleShell(unknown.html);
      assert.match(unknown.html, /<h1>Page not found<\/h1>/);
      assert.match(unknown.html, /This approval link is not valid\./);

      const approvalState = mock.method(t.store.approvals, 'approvalState');
      try {
        for (const token of ['short', 'A'.repeat(44), `${'A'.repeat(42)}%3C`, `${'A'.repeat(42)}.`, 'B'.repeat(300)]) {
          const page = await get(t.app, `/checkout/approve/${token}`);
          assert.equal(page.status, 404, token);
          assert.equal(page.headers['content-type'], 'text/html; charset=utf-8', token);
          const posted = await submit(t.app, token, { action: 'approve', form_token: 'x' });
          assert.equal(posted.status, 404, token);
        }
        assert.equal(approvalState.mock.callCount(), 0);
      } finally {
        approvalState.mock.restore();
      }
      // A POST to an unknown link, however well formed, is 404 too.
      const posted = await submit(t.app, 'A'.repeat(43), { action: 'approve', form_token: 'abc', digest: 'x' }, { cookie: 'approval_form=abc' });
      assert.equal(posted.status, 404);
    });

    it('an order page answers only to its unguessable id: an order number or an unknown id is a 404 page', async () => {
      const { token } = await awaitingApproval(t, [{ sku: 'HYD-LEMONLIME-30', quantity: 1 }]);
      const opened = await openApproval(t.app, token);
      assert.equal((await approveAs(t.app, token, opened)).status, 303);
      const [row] = await t.store.db.query<{ number: string }>('select number::text from orders order by number limit 1');
      for (const url of [`/orders/${row!.number}`, `/orders/%23${row!.number}`, `/orders/ord_${'A'.repeat(22)}`, '/orders/ord_short']) {
        const page = await get(t.app, url);
        assert.equal(page.status, 404, url);
        assertPageHeaders(page);
        assert.match(page.html, /No order has this link\./);
      }
    });

    it("a checkout's page shows its lines, totals and what is missing, says the agent has not asked to place it yet, and has no button", async () => {
      const { checkouts, db } = t.store;
      const created = await checkouts.create(
        db,
        { lines: [{ variantId: variantIdOf(t, 'ESP-DEC-10'), quantity: 2 }], buyer: { email: 'ana@example.com' }, destination: DESTINATION },
        'agent',
        'agent',
      );
      const page = await get(t.app, `/checkouts/${created.view.record.id}`);
      assert.equal(page.status, 200);
      assertPageHeaders(page);
      assertAccessibleShell(page.html);
      assert.match(page.html, /has not asked to place this order yet/);
      assert.match(page.html, /<h2>Still needed<\/h2>/);
      assert.match(page.html, /<li>A shipping choice is needed: Standard shipping \(\$5\.00\) or Express shipping \(\$\d+\.\d\d\)\.<\/li>/);
      // Sentences for the buyer: no JSONPath, no protocol member names, no option ids.
      assert.doesNotMatch(page.html, /\$\.|line_items|selected_option|fulfillment\.|postal_code|address_/);
      assert.match(page.html, /Decaf Espresso Capsules<\/th><td class="n">2<\/td><td class="n">\$6\.90<\/td><td class="n">\$13\.80<\/td>/);
      assert.match(page.html, /<dt>Shipping<\/dt><dd>not chosen yet<\/dd>/);
      assert.doesNotMatch(page.html, /<form|<button/);

      const waiting = await awaitingApproval(t, [{ sku: 'ESP-DEC-10', quantity: 1 }]);
      const waitingPage = await get(t.app, `/checkouts/${waiting.id}`);
      assert.equal(waitingPage.status, 200);
      assert.match(waitingPage.html, /Open the approval link your agent gave you/);
      assert.doesNotMatch(waitingPage.html, /<form|<button/);
      assert.ok(!waitingPage.html.includes(waiting.token), 'the checkout page does not reveal the approval link');

      for (const url of [`/checkouts/chk_${'A'.repeat(22)}`, '/checkouts/nope', '/checkouts/chk_%3Cb%3E']) {
        const missing = await get(t.app, url);
        assert.equal(missing.status, 404, url);
        assert.equal(missing.headers['content-type'], 'text/html; charset=utf-8');
      }
    });

    it("a browser checkout's pages speak to the buyer who checked out: they asked, and a link that no longer works sends them to the cart", async () => {
      const { id, token } = await awaitingApproval(t, [{ sku: 'ESP-DEC-10', quantity: 1 }], 'browser');
      const opened = await openApproval(t.app, token);
      assert.match(opened.html, /<p class="lead">You asked to place this order\. Review it, then approve or decline\.<\/p>/);
      assert.doesNotMatch(opened.html, /agent/i);
      const checkoutPage = await get(t.app, `/checkouts/${id}`);
      assert.match(checkoutPage.html, /You asked to place this order\./);
      assert.match(checkoutPage.html, /<a href="\/cart">Return to your cart<\/a>/);
      assert.doesNotMatch(checkoutPage.html, /agent/i);

      await t.store.db.query('update checkout_approvals set expires_at = $1 where token = $2', [new Date(Date.now() - 60_000).toISOString(), token]);
      const expired = await get(t.app, `/checkout/approve/${token}`);
      assert.equal(expired.status, 409);
      assert.match(expired.html, /<p class="problem">This approval link has expired\.<\/p>/);
      assert.match(expired.html, /Nothing was ordered or charged\. If you still want these items, <a href="\/cart">return to your cart<\/a> and check out again\./);
      assert.doesNotMatch(expired.html, /agent/i);

      const other = await awaitingApproval(t, [{ sku: 'ESP-DEC-10', quantity: 1 }], 'browser');
      const declined = await declineAs(t.app, other.token, await openApproval(t.app, other.token));
      assert.equal(declined.status, 200);
      assert.match(declined.html, /<a href="\/cart">return to your cart<\/a>/);
      assert.doesNotMatch(declined.html, /agent/i);
    });

    it('the policy pages render what the store does; an unknown policy is the JSON 404 of the rest of the store', async () => {
      const pages: Record<string, Page> = {};
      for (const slug of ['terms-of-service', 'privacy-policy', 'refund-policy', 'shipping-policy']) {
        pages[slug] = await get(t.app, `/policies/${slug}`);
        assert.equal(pages[slug].status, 200, slug);
        assertPageHeaders(pages[slug]);
        assertAccessibleShell(pages[slug].html);
      }
      assert.match(pages['terms-of-service']!.html, /<h1>Terms of service<\/h1>/);
      assert.match(pages['terms-of-service']!.html, /placed\s+only when you approve it/);
      assert.match(pages['privacy-policy']!.html, /email address, your name[\s\S]*shipping address/);
      assert.match(pages['privacy-policy']!.html, /No card or bank details are asked for or stored/);
      assert.match(pages['refund-policy']!.html, /<h1>Refund policy<\/h1>/);
      // How and by when a buyer pays, with the merchant's instructions; never "collects payment" alone.
      const terms = `Nothing is charged when you approve. You pay within ${DUE_DAYS} days of the order using: ${ESCAPED_INSTRUCTIONS}. Quote your order number (such as #1001) as the payment reference`;
      assert.ok(pages['terms-of-service']!.html.includes(`<li>Payment: ${terms}`), pages['terms-of-service']!.html);
      assert.ok(pages['refund-policy']!.html.includes(`<p class="payment">${terms}`), pages['refund-policy']!.html);
      assert.match(pages['refund-policy']!.html, /A refund is paid back to you by the store/);
      for (const [slug, page] of Object.entries(pages)) assert.doesNotMatch(page.html, /collects payment/, slug);
      const shipping = pages['shipping-policy']!.html;
      assert.match(shipping, /Standard shipping<\/th><td>5 to 8 business days<\/td><td class="n">\$5\.00<\/td>/);
      assert.match(shipping, /Standard shipping is free for orders of \$50\.00 or more in items\./);
      assert.match(shipping, /Express shipping<\/th><td>2 business days<\/td><td class="n">\$15\.00/);
      assert.match(shipping, /CA 7\.25%/);

      for (const slug of ['returns', 'constructor', '__proto__', 'terms_of_service']) {
        const unknown = await get(t.app, `/policies/${slug}`);
        assert.equal(unknown.status, 404, slug);
        assert.match(String(unknown.headers['content-type']), /^application\/json/);
        assert.equal(JSON.parse(unknown.html).message, 'Not found');
      }
    });

    it("the app's JSON 405 answers still stand beside the pages", async () => {
      const response = await t.app.inject({ method: 'PUT', url: `/checkout/approve/${'A'.repeat(43)}` });
      assert.equal(response.statusCode, 405);
      assert.match(String(response.headers.allow), /GET/);
      assert.match(String(response.headers.allow), /POST/);
      assert.equal(JSON.parse(response.body).status, 405);
    });
  });

  describe(`an approval link past its time (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(async () => {
      await t.close();
    });

    it('an expired link refuses to approve (409), in words, and places nothing', async () => {
      const { id, token } = await awaitingApproval(t, [{ sku: 'HYD-LEMONLIME-30', quantity: 1 }]);
      const opened = await openApproval(t.app, token);
      // The link's time runs out while the page is open: set in the database rather than waited for, so that a
      // slow machine can neither expire the link before the page is shown nor leave it unexpired here. (The app
      // compares with its own clock, hence a time from this process.)
      const expired = await t.store.db.query<{ token: string }>('update checkout_approvals set expires_at = $1 where token = $2 returning token', [
        new Date(Date.now() - 60_000).toISOString(),
        token,
      ]);
      assert.equal(expired.length, 1, 'the approval was found and expired');
      const refused = await approveAs(t.app, token, opened);
      assert.equal(refused.status, 409, refused.html);
      assertPageHeaders(refused);
      assert.match(refused.html, /expired/i);
      assert.match(refused.html, /Nothing was ordered or charged\./);
      assert.equal(await orderCount(t), 0);
      assert.notEqual((await checkoutStatus(t, id)).status, 'completed');
      const reopened = await get(t.app, `/checkout/approve/${token}`);
      assert.equal(reopened.status, 409);
      assert.doesNotMatch(reopened.html, /<form/);
    });
  });
}

describe('the merchant’s log when an order is placed (pglite)', () => {
  const lines: string[] = [];
  let t: TestStore;
  before(async () => {
    t = await startTestStore(backends[0]!, { config: { logLevel: 'info' }, app: { logger: { write: (line: string) => lines.push(line) } } });
  });
  after(() => t.close());

  it('one info line per order placed: number, total, channel; nothing personal, and none when the page is approved again', async () => {
    const { token } = await awaitingApproval(t);
    const opened = await openApproval(t.app, token);
    const approved = await approveAs(t.app, token, opened);
    assert.equal(approved.status, 303, approved.html);
    await approveAs(t.app, token, opened);
    const placed = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'order placed');
    assert.equal(placed.length, 1, lines.join(''));
    const [order] = await t.store.db.query<{ number: number; total: number }>('select number, total from orders order by number desc limit 1');
    assert.equal(placed[0]!.level, 30);
    assert.deepEqual([placed[0]!.order_number, placed[0]!.total, placed[0]!.currency, placed[0]!.channel], [Number(order!.number), order!.total, 'USD', 'agent']);
    const text = JSON.stringify(placed[0]);
    for (const secret of ['ana@example.com', 'Market St', 'Lima', token]) assert.ok(!text.includes(secret), `no ${secret} in the line`);
  });
});

describe('a catalog whose pictures are on an image host (pglite)', () => {
  let t: TestStore;
  before(async () => {
    t = await startTestStore(backends[0]!);
    // The decaf capsules' picture moves to a CDN (https), the sleep capsules' to a plain-http address no page loads.
    const { db } = t.store;
    await db.query("update product_images set src = 'https://cdn.example/decaf.svg' where product_id = (select id from products where handle = 'decaf-capsules')");
    await db.query("update product_images set src = 'http://insecure.example/sleep.svg' where product_id = (select id from products where handle = 'sleep-capsules')");
    await db.query('update catalog_version set version = version + 1');
    await t.store.catalog.refresh(db);
  });
  after(() => t.close());

  it("the approval and order pages show it, and their img-src names the host (never a plain-http one)", async () => {
    const { token } = await awaitingApproval(t, [{ sku: 'ESP-DEC-10', quantity: 1 }, { sku: 'SLP-120', quantity: 1 }]);
    const opened = await openApproval(t.app, token);
    const csp = String(opened.headers['content-security-policy']);
    assert.match(csp, /; img-src 'self' data: https:\/\/cdn\.example; /);
    assert.doesNotMatch(csp, /insecure/);
    assert.ok(opened.html.includes('<img class="thumb" src="https://cdn.example/decaf.svg" alt="Decaf Espresso Capsules" width="48" height="48">'));
    assert.doesNotMatch(opened.html, /insecure\.example/, 'a plain-http picture is not shown');
    const approved = await approveAs(t.app, token, opened);
    const orderPage = await get(t.app, approved.location!);
    assert.equal(orderPage.headers['content-security-policy'], csp);
    assert.ok(orderPage.html.includes('<img class="thumb" src="https://cdn.example/decaf.svg" alt="" width="48" height="48">Decaf Espresso Capsules'));
  });
});

describe('the time left on an approval link', () => {
  it("says the clock time on the same day (in the store's zone), and the date too when the link outlasts the day", () => {
    const now = new Date('2026-11-25T23:50:00Z');
    const utc = momentsIn('UTC');
    assert.equal(clockTime(new Date('2026-11-25T23:59:00Z'), now, utc), '23:59 UTC');
    assert.equal(clockTime(new Date('2026-11-26T00:05:00Z'), now, utc), '26 November 2026, 00:05 UTC');
    assert.equal(timeLeft(new Date('2026-11-26T00:05:00Z'), now), '15 more minutes');
  });

  it("STORE_TIMEZONE=Europe/Berlin: the shifted clock time with the zone, and the day is Berlin's", () => {
    const berlin = momentsIn('Europe/Berlin');
    // 23:50 UTC is 00:50 the next day in Berlin: a link until 00:05 UTC (01:05 CET) ends on that same Berlin day.
    const now = new Date('2026-11-25T23:50:00Z');
    assert.equal(clockTime(new Date('2026-11-26T00:05:00Z'), now, berlin), '01:05 CET');
    assert.equal(clockTime(new Date('2026-11-25T22:55:00Z'), new Date('2026-11-25T22:50:00Z'), berlin), '23:55 CET');
    assert.equal(clockTime(new Date('2026-11-25T23:05:00Z'), new Date('2026-11-25T22:50:00Z'), berlin), '26 November 2026, 00:05 CET');
    assert.equal(clockTime(new Date('2026-07-01T10:00:00Z'), new Date('2026-07-01T09:50:00Z'), berlin), '12:00 CEST');
  });
});
