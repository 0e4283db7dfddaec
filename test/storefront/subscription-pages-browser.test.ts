/**
 * The buyer's subscriptions page and a renewal's sold-out page in Chromium (issue [subscriptions], item 4), on both
 * backends: with JavaScript off, at 390 and 1280 px, the page fits the screen and its forms work (skip lands back on
 * the page saying so; a bad ZIP code is refused beside its field); axe finds no serious or critical violation on the
 * subscriptions page (as shown and after a refused change), the sold-out page and the page asking for an email.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import type { Store } from '../../src/store.js';
import { freePort, seriousViolations, oneChromiumForTheFile } from '../helpers/browser.js';
import { placeOrder } from '../helpers/orders.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';

const DAY = 24 * 3600 * 1000;
const START = new Date('2027-01-10T12:00:00Z');
const WIDTHS = [390, 1280];

let browser: Browser;
oneChromiumForTheFile((opened) => (browser = opened));

/** A subscription of two espressos on the monthly plan (and decaf once): its id and its buyer's email. */
async function subscribe(store: Store, email: string): Promise<number> {
  const product = store.catalog.snapshot.productByHandle('espresso-capsules')!;
  const monthly = product.sellingPlanGroups[0]!.plans.find((plan) => plan.intervalCount === 1)!;
  const decaf = store.catalog.snapshot.productByHandle('decaf-capsules')!.variants[0]!;
  await placeOrder(
    store,
    [
      { variantId: product.variants[0]!.id, quantity: 2, sellingPlanId: monthly.id },
      { variantId: product.variants[1]!.id, quantity: 1, sellingPlanId: monthly.id },
      { variantId: decaf.id, quantity: 1 },
    ],
    { email, firstName: 'Ana', lastName: 'Lima' },
  );
  const [subscription] = await store.subscriptions.list(store.db, { email });
  assert.ok(subscription, 'the order made a subscription');
  return subscription.id;
}

async function fitsTheScreen(page: Page, width: number): Promise<void> {
  assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= width, `no horizontal scroll at ${width} px`);
}

for (const backend of backends) {
  describe(`the subscription pages in Chromium (${backend.name})`, () => {
    let t: TestStore;
    let base: string;
    let at = START;

    before(async () => {
      const port = await freePort();
      base = `http://localhost:${port}`;
      t = await startTestStore(backend, { clock: () => new Date(at.getTime()), config: loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off', APPROVAL_PROOF: 'link' }) });
      await t.app.listen({ host: '127.0.0.1', port });
    });
    after(() => t?.close());

    it('with JavaScript off, at 390 and 1280 px, the subscriptions page fits, skip lands back saying so, and a bad ZIP code is refused beside its field', async () => {
      const { store } = t;
      for (const width of WIDTHS) {
        const email = `nojs-${width}@example.com`;
        const id = await subscribe(store, email);
        const nextAt = (await store.subscriptions.get(store.db, id))!.subscription.nextAt;
        const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width, height: 900 } });
        try {
          const page = await context.newPage();
          const response = await page.goto(await store.subscriptions.manageUrl(store.db, email));
          assert.equal(response?.status(), 200);
          assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Your subscriptions');
          await fitsTheScreen(page, width);

          await Promise.all([page.waitForURL(/\?done=skip/), page.getByRole('button', { name: 'Skip the next delivery' }).click()]);
          assert.match((await page.getByRole('status').textContent()) ?? '', /You skipped a delivery of 2 × Espresso Capsules/);
          assert.ok((await store.subscriptions.get(store.db, id))!.subscription.nextAt.getTime() > nextAt.getTime(), 'the next date moved');
          await fitsTheScreen(page, width);

          await page.getByText('Change the shipping address').click();
          const zip = page.getByLabel('ZIP code');
          await zip.fill('1234');
          await Promise.all([page.waitForURL(/\/address$/), page.getByRole('button', { name: 'Save the address' }).click()]);
          assert.equal(await page.getByLabel('ZIP code').getAttribute('aria-invalid'), 'true');
          assert.match((await page.locator('.field-error').textContent()) ?? '', /A ZIP code is 5 digits/);
          assert.equal((await store.subscriptions.get(store.db, id))!.subscription.shippingAddress.postalCode, '62701', 'nothing changed');
          await fitsTheScreen(page, width);
        } finally {
          await context.close();
        }
      }
    });

    it('axe finds no serious or critical violation at 390 and 1280 px: the subscriptions page, after a refused change, a sold-out renewal, the email form', async () => {
      const { store } = t;
      const email = 'axe@example.com';
      const id = await subscribe(store, email);
      const manage = await store.subscriptions.manageUrl(store.db, email);
      // One espresso of the delivery sells out before the renewal is produced.
      const sku = store.catalog.snapshot.productByHandle('espresso-capsules')!.variants[0]!.sku!;
      at = new Date((await store.subscriptions.get(store.db, id))!.subscription.nextAt.getTime() - 2 * DAY);
      const { previous } = await store.inventory.setOnHand(store.db, sku, 0);
      // axe runs as a script in the page: a context with JavaScript on (the pages themselves run none).
      const context = await browser.newContext();
      try {
        await store.subscriptions.run(store.db);
        const [row] = await store.db.query<{ link_token: string }>("select link_token from subscription_renewals where subscription_id = $1 and state = 'pending'", [id]);
        const page = await context.newPage();
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 900 });
          await page.goto(manage);
          assert.deepEqual(await seriousViolations(page), [], `the subscriptions page at ${width} px`);
          await page.getByText('Change the shipping address').click();
          await page.getByLabel('ZIP code').fill('1234');
          await Promise.all([page.waitForURL(/\/address$/), page.getByRole('button', { name: 'Save the address' }).click()]);
          assert.deepEqual(await seriousViolations(page), [], `the subscriptions page with a refused address at ${width} px`);

          const soldOut = await page.goto(`${base}/subscriptions/renewals/${row!.link_token}`);
          assert.equal(soldOut?.status(), 200);
          assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Some items are sold out');
          await fitsTheScreen(page, width);
          assert.deepEqual(await seriousViolations(page), [], `the sold-out page at ${width} px`);

          await page.goto(`${base}/subscriptions`);
          assert.deepEqual(await seriousViolations(page), [], `the email form at ${width} px`);
          // Sent: the page that takes the mailed code, then refusing a wrong one.
          await page.fill('#subscriptions-email', email);
          await page.click('button[type=submit]');
          await page.waitForSelector('#code-code');
          await fitsTheScreen(page, width);
          assert.deepEqual(await seriousViolations(page), [], `the code form at ${width} px`);
          await page.fill('#code-code', '000000');
          await page.click('form[action="/subscriptions/code"] button[type=submit]');
          await page.waitForSelector('#code-code-error');
          assert.deepEqual(await seriousViolations(page), [], `the code form with a refused code at ${width} px`);
        }
      } finally {
        await context.close();
        await store.inventory.setOnHand(store.db, sku, previous);
        at = START;
      }
    });
  });
}
