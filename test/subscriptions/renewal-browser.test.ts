/**
 * Issue 39, "Done when" 1: a subscription's renewal approved in a real headless Chromium (Debian's, through
 * playwright-core) with a virtual WebAuthn authenticator (CDP), against the store listening on localhost with its
 * default proof (APPROVAL_PROOF=passkey-or-code), delivering its outbox to a real SMTP server on loopback, its clock
 * driven by the test:
 *   - a first-time buyer's cart holds 2 × the espresso capsules on "Delivery every month" and a one-time line (the
 *     cart's JSON, as a theme's script adds them); the store's checkout page, then the approval page: they prove the
 *     email with the mailed code, and create a passkey on the order page. One subscription, of the plan line alone,
 *     its next delivery a month on;
 *   - the variant's price changes; at notice time (the next delivery less SUBSCRIPTION_NOTICE_DAYS) the schedule's
 *     run produces the renewal, and its mail reaches the SMTP server with the link /subscriptions/renewals/<token>;
 *   - the browser opens the link (303 to the approval page) and approves with the passkey alone (no code mailed): a
 *     second order of the plan line alone at that day's price less the plan's saving, the stock taken, the
 *     subscription moved to the following month.
 * WebAuthn refuses an IP address as RP ID, so BASE_URL is http://localhost:PORT. One browser for the file; on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { planUnitPrice } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import { readOrder } from '../../src/orders/orders.js';
import { addInterval } from '../../src/subscriptions/subscriptions.js';
import { freePort, oneChromiumForTheFile, pageWithPasskeys } from '../helpers/browser.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';

const DAY = 24 * 3600 * 1000;
const ORDER_PAGE = /\/orders\/(ord_[A-Za-z0-9_-]{22})$/;

let browser: Browser;
oneChromiumForTheFile((opened) => (browser = opened));

/** The store's clock: the system's, moved on by the test (a month in a few seconds). */
class MovedClock {
  private ahead = 0;
  readonly now = () => new Date(Date.now() + this.ahead);
  moveTo(at: Date): void {
    this.ahead = at.getTime() - Date.now();
  }
}

for (const backend of backends) {
  describe(`a renewal approved with the passkey alone in Chromium (${backend.name})`, () => {
    let t: TestStore;
    let smtp: TestSmtpServer;
    let base: string;
    let context: BrowserContext | undefined;
    const clock = new MovedClock();

    before(async () => {
      smtp = await startSmtpServer();
      const port = await freePort();
      base = `http://localhost:${port}`;
      const config = loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off' });
      assert.equal(config.checkout.approvalProof, 'passkey-or-code', 'the default proof');
      assert.equal(config.subscriptionNoticeDays, 3, 'the default notice');
      t = await startTestStore(backend, { clock: clock.now, deliver: true, config: { ...config, mail: { ...config.mail, smtpUrl: smtp.url } } });
      await t.app.listen({ host: '127.0.0.1', port });
    });
    after(async () => {
      await context?.close();
      await t?.close();
      await smtp?.close();
    });

    const count = async (sql: string, params: unknown[] = []) => (await t.store.db.query<{ count: number }>(sql, params))[0]!.count;
    const onHand = async (variantId: number) =>
      (await t.store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variantId]))[0]!.on_hand;

    /** The first message to `email` after the first `from` the SMTP server took whose subject matches, once it arrives. */
    async function mailTo(email: string, subject: RegExp, from = 0): Promise<ReceivedMail> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const found = smtp.messages.slice(from).find((m) => m.envelope.to.includes(email) && subject.test(m.subject ?? ''));
        if (found) return found;
        const remaining = deadline - Date.now();
        if (remaining <= 0) assert.fail(`no mail to ${email} matching ${subject}: ${JSON.stringify(smtp.messages.map((m) => m.subject))}`);
        await smtp.waitFor(smtp.messages.length + 1, remaining).catch(() => {});
      }
    }

    it('bought on the plan with a one-time line (the code), a passkey made; at notice time the mailed link approves the renewal with the passkey alone, at that day\'s price less the saving', async () => {
      const email = 'subscriber@example.com';
      const product = t.store.catalog.snapshot.productByHandle('espresso-capsules')!;
      const monthly = product.sellingPlanGroups.flatMap((g) => g.plans).find((p) => p.name === 'Delivery every month')!;
      assert.ok(monthly, 'the demo\'s "Delivery every month"');
      const variant = product.variants[0]!;
      const oneTime = t.store.catalog.snapshot.productByHandle('decaf-capsules')!.variants[0]!;

      context = await browser.newContext();
      const { page, errors, cdp, authenticatorId } = await pageWithPasskeys(context);

      // The cart, as a theme's script fills it (the browser's own cookie jar keeps the cart), then the checkout page.
      const added = await page.request.post(`${base}/cart/add.js`, {
        data: { items: [{ id: variant.id, quantity: 2, selling_plan: monthly.id }, { id: oneTime.id, quantity: 1 }] },
      });
      assert.equal(added.status(), 200, await added.text());
      await page.goto(`${base}/checkout`);
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByLabel('First name', { exact: true }).fill('Ana');
      await page.getByLabel('Last name', { exact: true }).fill('Lima');
      await page.getByLabel('Street address', { exact: true }).fill('1 Market St');
      await page.getByLabel('City', { exact: true }).fill('San Francisco');
      await page.getByLabel('State', { exact: true }).selectOption('CA');
      await page.getByLabel('ZIP code', { exact: true }).fill('94103');
      await Promise.all([page.waitForURL(/\/checkout\/approve\/[A-Za-z0-9_-]{43}$/), page.getByRole('button', { name: 'Continue to approval' }).click()]);
      assert.match(await page.locator('main').innerText(), /Delivery every month/, 'the approval page says the line is on the plan');

      // A first-time buyer: the mailed code approves the order.
      let mailsBefore = smtp.messages.length;
      await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: /Email me a (new )?code/ }).click()]);
      const code = /^(\d{6}) /.exec((await mailTo(email, /^\d{6} /, mailsBefore)).subject ?? '')?.[1];
      assert.ok(code, 'a code mail');
      await page.getByLabel('Code from the email', { exact: true }).fill(code);
      await Promise.all([page.waitForURL(ORDER_PAGE), page.getByRole('button', { name: /Approve and place order/ }).click()]);
      const first = (await readOrder(t.store.db, ORDER_PAGE.exec(page.url())![1]!))!;
      assert.deepEqual(
        first.lines.map((line) => [line.variantId, line.quantity, line.unitPrice, line.sellingPlan?.name ?? null]).sort(([a], [b]) => Number(a) - Number(b)),
        [
          [variant.id, 2, planUnitPrice(variant.priceCents, monthly.discountPercent), 'Delivery every month'],
          [oneTime.id, 1, oneTime.priceCents, null],
        ].sort(([a], [b]) => Number(a) - Number(b)),
      );

      // The order page offers a passkey to the browser that just proved the email.
      await page.getByRole('button', { name: 'Create a passkey' }).click();
      await page.locator('#passkey-enroll-status', { hasText: 'Your passkey is created' }).waitFor({ timeout: 10_000 });
      assert.equal((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length, 1, 'the authenticator holds the passkey');

      // One subscription, of the plan line alone, its next delivery a month after the order.
      const [subscription, ...others] = await t.store.subscriptions.list(t.store.db, { email });
      assert.ok(subscription, 'a subscription');
      assert.equal(others.length, 0, 'one subscription');
      assert.equal(subscription.originOrderId, first.id);
      assert.deepEqual(subscription.lines.map((line) => [line.variantId, line.quantity]), [[variant.id, 2]]);
      assert.equal(subscription.plan.sellingPlanId, monthly.id);
      const monthAfter = addInterval(first.createdAt, 'month', 1).getTime();
      assert.ok(Math.abs(subscription.nextAt.getTime() - monthAfter) < 60_000, `next delivery a month on: ${subscription.nextAt.toISOString()}`);

      // The price changes between the orders; before the notice days nothing is produced, at notice time the renewal.
      const newPrice = variant.priceCents + 110;
      await t.store.db.query('update variants set price_cents = $2 where id = $1', [variant.id, newPrice]);
      await t.store.db.query('update catalog_version set version = version + 1');
      await t.store.catalog.refresh(t.store.db);
      // (Counted in the database: the store's own schedule, each minute, may run beside the test's.)
      const renewals = () => count('select count(*)::int as count from subscription_renewals where subscription_id = $1', [subscription.id]);
      clock.moveTo(new Date(subscription.nextAt.getTime() - 3 * DAY - 60_000));
      await t.store.subscriptions.run(t.store.db);
      assert.equal(await renewals(), 0, 'nothing before the notice days');
      clock.moveTo(new Date(subscription.nextAt.getTime() - 3 * DAY));
      mailsBefore = smtp.messages.length;
      await t.store.subscriptions.run(t.store.db);
      assert.equal(await renewals(), 1, 'the renewal, at notice time');
      const notice = await mailTo(email, /approve your delivery/, mailsBefore);
      assert.match(notice.text ?? '', new RegExp(`${(planUnitPrice(newPrice, monthly.discountPercent) * 2 / 100).toFixed(2)} for the items at today's price`));
      const link = new RegExp(`${base}/subscriptions/renewals/[A-Za-z0-9_-]{40,}`).exec(notice.text ?? '')?.[0];
      assert.ok(link, `the renewal link in the mail: ${notice.text}`);

      // The buyer opens it: the approval page of the renewal, which their passkey approves alone.
      const stockBefore = await onHand(variant.id);
      mailsBefore = smtp.messages.length;
      const opened = await page.goto(link);
      assert.equal(opened?.request().redirectedFrom()?.url(), link, 'the link redirects');
      assert.match(page.url(), /\/checkout\/approve\/[A-Za-z0-9_-]{43}$/, 'to the approval page');
      const button = page.locator('#passkey-button');
      await button.waitFor({ state: 'visible' });
      assert.match(await button.innerText(), /^Approve with your passkey \(\$/);
      await Promise.all([page.waitForURL(ORDER_PAGE, { timeout: 15_000 }), button.click()]);

      const renewed = (await readOrder(t.store.db, ORDER_PAGE.exec(page.url())![1]!))!;
      assert.notEqual(renewed.id, first.id, 'a second order');
      assert.equal(renewed.buyerEmail, email);
      assert.deepEqual(
        renewed.lines.map((line) => [line.variantId, line.quantity, line.unitPrice, line.sellingPlan?.sellingPlanId ?? null]),
        [[variant.id, 2, planUnitPrice(newPrice, monthly.discountPercent), monthly.id]],
        "the plan line alone, at that day's price less the plan's saving",
      );
      assert.equal(renewed.lines[0]!.sellingPlan?.fullUnitPrice, newPrice);
      assert.equal(await onHand(variant.id), stockBefore - 2, 'the stock taken');
      assert.equal(await count('select count(*)::int as count from approval_codes where checkout_id = $1', [renewed.checkoutId]), 0, 'no code was made for the renewal');
      assert.ok(!smtp.messages.slice(mailsBefore).some((m) => /^\d{6} /.test(m.subject ?? '')), 'no code mailed for it');
      const details = (await t.store.subscriptions.get(t.store.db, subscription.id))!;
      assert.equal(details.renewals.length, 1);
      assert.equal(details.renewals[0]!.state, 'approved');
      assert.equal(details.renewals[0]!.orderId, renewed.id);
      assert.equal(details.subscription.nextAt.toISOString(), addInterval(subscription.nextAt, 'month', 1).toISOString(), 'the next delivery a month on');
      assert.equal(await count('select count(*)::int as count from orders where buyer_email = $1', [email]), 2);
      assert.deepEqual(errors, [], 'no console error');
    });
  });
}
