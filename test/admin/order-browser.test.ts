/**
 * The admin's orders in a real headless Chromium (Debian's, through playwright-core), on both backends, signed in
 * (the session's cookie set in the browser's context), against the store listening on loopback (BASE_URL
 * http://localhost:PORT, so the forms' Origin is the store's): each action from the order's page (capture, a
 * shipment with tracking, cancel, refund) and a refusal shown beside its action with nothing changed; then every
 * action again with JavaScript off; axe-core finds no serious or critical violation on the list and an order's page
 * at 390 and 1280 px. One browser for the file.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { readOrder, type Order } from '../../src/orders/orders.js';
import { ADMIN_SESSION_COOKIE, startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { freePort, seriousViolations, oneChromiumForTheFile } from '../helpers/browser.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';
import { placeOrderBy, variantOf } from '../reports/placing.js';

let browser: Browser;
oneChromiumForTheFile((opened) => (browser = opened));

for (const backend of backends) {
  describe(`the admin's orders in Chromium (${backend.name})`, () => {
    let t: TestStore;
    let base: string;
    let owner: StaffSessionForTest;

    before(async () => {
      const port = await freePort();
      base = `http://localhost:${port}`;
      // The orders are placed by the approval link alone (the buyer's proof is another file's subject).
      const config = loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off', APPROVAL_PROOF: 'link' });
      t = await startTestStore(backend, { config });
      await t.app.listen({ host: '127.0.0.1', port });
      owner = await startStaffSession(t.store, { email: 'owner@store.test', role: 'owner' });
      for (const sku of ['ESP-LUN-10', 'SLP-60']) await t.store.inventory.setOnHand(t.store.db, sku, 100);
    });
    after(async () => {
      await t?.close();
    });

    const place = (email: string): Promise<Order> =>
      placeOrderBy(
        t.store,
        { by: 'agent', platform: 'chat.example' },
        [
          { variantId: variantOf(t.store, 'ESP-LUN-10'), quantity: 2 },
          { variantId: variantOf(t.store, 'SLP-60'), quantity: 1 },
        ],
        email,
      );
    const reread = async (order: Order) => (await readOrder(t.store.db, order.id))!;

    /** A browser context signed in as the owner: the admin's cookie, as the sign-in set it. */
    async function signedIn(javaScriptEnabled: boolean): Promise<BrowserContext> {
      const context = await browser.newContext({ javaScriptEnabled });
      // A __Host- cookie is set by host and path (Chromium refuses one given by URL on http://localhost).
      await context.addCookies([{ name: ADMIN_SESSION_COOKIE, value: owner.secret, domain: 'localhost', path: '/', secure: true, httpOnly: true, sameSite: 'Strict' }]);
      return context;
    }

    /** Submits a form by its button and waits for the page it answers with; the answer's status. */
    async function submit(page: Page, button: string): Promise<number> {
      const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: button, exact: true }).click()]);
      return response!.status();
    }

    /** Every action from an order's page, and refusals shown beside their action with nothing changed. */
    async function everyAction(javaScriptEnabled: boolean): Promise<void> {
      const context = await signedIn(javaScriptEnabled);
      const errors: string[] = [];
      try {
        const page = await context.newPage();
        page.on('console', (message) => {
          // The refused capture answers 409 on purpose; Chromium logs any 4xx page as a failed resource.
          if (message.type() === 'error' && !message.text().includes('status of 409')) errors.push(message.text());
        });
        const shipped = await place(`ship-${javaScriptEnabled ? 'js' : 'nojs'}@example.com`);
        const canceled = await place(`cancel-${javaScriptEnabled ? 'js' : 'nojs'}@example.com`);

        await page.goto(`${base}/admin/orders/${shipped.number}`);
        assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), `Order #${shipped.number}`);

        // A capture of more than is owed: refused beside the capture, the amount still in its field, nothing changed.
        const before = await reread(shipped);
        await page.locator('#capture-amount').fill('99999');
        assert.equal(await submit(page, 'Capture'), 409);
        const capture = page.locator('section[aria-labelledby="capture-heading"]');
        assert.match((await capture.getByRole('alert').textContent()) ?? '', /Not captured: A capture of \$99,999\.00 is more than order #\d+ has to capture/);
        assert.equal(await page.locator('#capture-amount').inputValue(), '99999');
        assert.deepEqual(await reread(shipped), before);

        // Capture all that is owed.
        await page.locator('#capture-amount').fill('');
        assert.equal(await submit(page, 'Capture'), 200);
        assert.equal(new URL(page.url()).search, '?done=captured');
        assert.match((await page.getByRole('status').textContent()) ?? '', /The payment was captured/);
        assert.equal((await reread(shipped)).paymentState, 'captured');

        // Ship the espresso only, with tracking.
        const [espresso, sleep] = shipped.lines;
        await page.locator(`#fulfil-${sleep!.id}`).fill('0');
        await page.getByLabel('Tracking number').fill('1Z999AA10123456784');
        await page.getByLabel('Tracking URL').fill('https://track.example/1Z999AA10123456784');
        await page.getByLabel('Carrier').fill('UPS');
        assert.equal(await submit(page, 'Record the shipment'), 200);
        assert.equal(new URL(page.url()).search, '?done=fulfilled');
        const afterShipment = await reread(shipped);
        assert.deepEqual(
          afterShipment.lines.map((line) => line.fulfilled),
          [espresso!.quantity, 0],
        );
        assert.equal(afterShipment.fulfillments[0]!.trackingNumber, '1Z999AA10123456784');
        assert.equal(await page.getByRole('link', { name: 'track the parcel' }).getAttribute('href'), 'https://track.example/1Z999AA10123456784');

        // Refund part (the owner's form).
        await page.locator('#refund-amount').fill('5.00');
        await page.locator('#refund-reason').fill('damaged');
        assert.equal(await submit(page, 'Refund'), 200);
        assert.equal(new URL(page.url()).search, '?done=refunded');
        assert.equal((await reread(shipped)).refunded, 500);
        assert.match((await page.locator('ol.timeline').textContent()) ?? '', /refunded \$5\.00 \(damaged\)\s*by owner@store\.test/);

        // Cancel the other order, with a reason.
        await page.goto(`${base}/admin/orders/${canceled.number}`);
        await page.locator('#cancel-reason').fill('buyer asked');
        assert.equal(await submit(page, 'Cancel the order'), 200);
        assert.equal(new URL(page.url()).search, '?done=canceled');
        assert.equal((await reread(canceled)).status, 'canceled');

        const actions = await t.store.db.query<{ action: string; actor: string }>('select action, actor from audit_log where order_id = any($1) order by id', [[shipped.id, canceled.id]]);
        assert.deepEqual(
          actions.map((row) => row.action),
          ['order.capture', 'order.fulfill', 'order.refund', 'order.cancel'],
        );
        assert.ok(actions.every((row) => row.actor === 'owner@store.test'));
        assert.deepEqual(errors, [], 'no console error (a resource refused by the CSP would log one)');
      } finally {
        await context.close();
      }
    }

    it('each action from the page, and a refusal beside its action with nothing changed (JavaScript on)', async () => {
      await everyAction(true);
    });

    it('every action again with JavaScript off', async () => {
      await everyAction(false);
    });

    it('axe: no serious or critical violation on the list and an order page, at 390 and 1280 px', async () => {
      const order = await place('axe@example.com');
      const context = await signedIn(true);
      try {
        const page = await context.newPage();
        for (const width of [390, 1280]) {
          await page.setViewportSize({ width, height: 900 });
          for (const path of ['/admin/orders', '/admin/orders?prepared=agent&q=nobody', `/admin/orders/${order.number}`]) {
            await page.goto(`${base}${path}`);
            assert.deepEqual(await seriousViolations(page), [], `${path} at ${width} px`);
            // The page itself never scrolls sideways; wide tables scroll inside their own box.
            const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
            assert.ok(overflow <= 0, `${path} at ${width} px scrolls sideways by ${overflow} px`);
          }
        }
        // A refusal shown on the page passes too.
        await page.goto(`${base}/admin/orders/${order.number}`);
        await page.locator('#capture-amount').fill('99999');
        assert.equal(await submit(page, 'Capture'), 409);
        assert.deepEqual(await seriousViolations(page), [], 'the page with a refusal');
      } finally {
        await context.close();
      }
    });
  });
}
