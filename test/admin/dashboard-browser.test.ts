/**
 * The dashboard in a real headless Chromium, on both backends, signed in as the owner: the figures a person reads
 * (through the tables' accessible names, as a screen reader would) equal what the test placed — two agent orders
 * from two platforms, one browser order, one refund — and following a figure's link lists exactly those orders.
 * The dashboard runs no script, so JavaScript is off: what shows is what the server drew.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { formatMoney } from '../../src/catalog/types.js';
import { loadConfig } from '../../src/config.js';
import type { Order } from '../../src/orders/orders.js';
import { ADMIN_SESSION_COOKIE, startStaffSession } from '../helpers/admin-session.js';
import { freePort, seriousViolations, oneChromiumForTheFile } from '../helpers/browser.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';
import { placeOrderBy, variantOf } from '../reports/placing.js';

let browser: Browser;
oneChromiumForTheFile((opened) => (browser = opened));

/** The table whose caption has this id. */
const tableOf = (page: Page, captionId: string) => page.locator(`table:has(caption#${captionId})`);

/** The row of a table whose header cell says `header`. */
const rowOf = (page: Page, captionId: string, header: string) =>
  tableOf(page, captionId).locator('tbody tr').filter({ has: page.locator('th', { hasText: new RegExp(`^${header}$`) }) }).first();

/** The cells of a table's row named by its header cell, as the page shows them. */
async function row(page: Page, captionId: string, header: string): Promise<string[]> {
  return (await rowOf(page, captionId, header).locator('td').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
}

for (const backend of backends) {
  describe(`the dashboard in Chromium (${backend.name})`, () => {
    let t: TestStore;
    let base: string;
    let page: Page;
    let placed: { chat: Order; assistant: Order; browser: Order };

    before(async () => {
      const port = await freePort();
      base = `http://localhost:${port}`;
      t = await startTestStore(backend, { config: loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off', APPROVAL_PROOF: 'link' }) });
      await t.app.listen({ host: '127.0.0.1', port });
      const { store } = t;
      placed = {
        chat: await placeOrderBy(store, { by: 'agent', platform: 'chat.example' }, [{ variantId: variantOf(store, 'ESP-CLA-10'), quantity: 2 }], 'ada@example.com'),
        assistant: await placeOrderBy(store, { by: 'agent', platform: 'assistant.example' }, [{ variantId: variantOf(store, 'ESP-DEC-10'), quantity: 1 }], 'bo@example.com'),
        browser: await placeOrderBy(store, { by: 'browser' }, [{ variantId: variantOf(store, 'SLP-120'), quantity: 1 }], 'cy@example.com'),
      };
      await store.orders.capture(store.db, String(placed.chat.number));
      await store.orders.refund(store.db, String(placed.chat.number), 750, 'dented box');
      const owner = await startStaffSession(store, { role: 'owner' });
      const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
      await context.addCookies([{ name: ADMIN_SESSION_COOKIE, value: owner.secret, domain: 'localhost', path: '/', secure: true, httpOnly: true, sameSite: 'Strict' }]);
      page = await context.newPage();
    });
    after(async () => {
      await page?.context().close();
      await t?.close();
    });

    it("today's sales, orders, average order and refunds are what was placed", async () => {
      const response = await page.goto(`${base}/admin`);
      assert.equal(response?.status(), 200);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Dashboard');
      const { chat, assistant, browser: inBrowser } = placed;
      const sales = chat.total + assistant.total + inBrowser.total;
      const caption = 'period-today';
      // The caption names the table for a screen reader.
      assert.equal(await page.getByRole('table', { name: /^Today/ }).count(), 1);
      assert.equal((await row(page, caption, 'Sales'))[0], formatMoney(sales));
      assert.equal((await row(page, caption, 'Orders'))[0], '3');
      assert.equal((await row(page, caption, 'Average order'))[0], formatMoney(Math.round(sales / 3)));
      assert.equal((await row(page, caption, 'Refunds'))[0], formatMoney(750));
    });

    it('orders by who prepared them: each agent platform and the browser, with their counts', async () => {
      const caption = 'orders-by-day-caption';
      const table = tableOf(page, caption);
      const heads = (await table.locator('thead th').allInnerTexts()).map((text) => text.trim());
      assert.deepEqual(heads, ['Day', 'Browser', 'Agent: assistant.example', 'Agent: chat.example', 'All']);
      assert.deepEqual(await row(page, caption, '30 days'), ['1', '1', '1', '3']);
      // The chart beside it is an image named by the same figures.
      const chart = page.getByRole('img', { name: /Orders per day, last 30 days: 3 orders, 2 prepared by agents, 1 in a browser/ });
      assert.equal(await chart.count(), 1);
    });

    it("a figure's link lists exactly those orders; a platform's, only its own", async () => {
      await Promise.all([page.waitForNavigation(), tableOf(page, 'period-today').getByRole('link', { name: '3', exact: true }).first().click()]);
      assert.match(new URL(page.url()).pathname, /^\/admin\/orders$/);
      assert.match(await page.locator('main').innerText(), /3 orders match/);
      for (const order of Object.values(placed)) assert.equal(await page.getByRole('link', { name: `#${order.number}` }).count(), 1, `#${order.number} listed`);
      await page.goto(`${base}/admin`);
      await Promise.all([page.waitForNavigation(), rowOf(page, 'orders-by-day-caption', '30 days').locator('a').nth(2).click()]);
      assert.equal(new URL(page.url()).searchParams.get('platform'), 'chat.example');
      assert.match(await page.locator('main').innerText(), /1 order match/);
      assert.equal(await page.getByRole('link', { name: `#${placed.chat.number}` }).count(), 1);
    });

    it('reads without a serious or critical accessibility violation at 390 and 1280 px', async () => {
      // axe runs as a script in the page: a context with JavaScript on, the same session.
      const context = await browser.newContext();
      await context.addCookies(await page.context().cookies());
      try {
        const checked = await context.newPage();
        for (const width of [390, 1280]) {
          await checked.setViewportSize({ width, height: 900 });
          await checked.goto(`${base}/admin`);
          assert.deepEqual(await seriousViolations(checked), [], `${width} px`);
        }
      } finally {
        await context.close();
      }
    });
  });
}
