/**
 * Issue 39, build item 6: the product page shows the price of the chosen selling plan and its saving, with and without
 * JavaScript. The demo's espresso capsules cost $6.50 once, $5.85 on "Delivery every month" (10% off).
 *   - the page as served (no browser): each plan's label says its price and saving for the selected variant, and a
 *     link that chose a plan (?selling_plan=) shows the plan's price with the one-time price struck and the saving;
 *   - in Chromium with the script: choosing the plan shows $5.85 and the saving; another variant (50 capsules) shows
 *     its plan price and the labels follow it; one-time shows the one-time price again; axe finds nothing serious at
 *     390 and 1280 px and nothing logs to the console (a script refused by the page's CSP would);
 *   - with JavaScript off: each plan's label shows its price, and the form posted with the plan chosen makes a cart
 *     line on the plan at $5.85.
 * One browser for the file; on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { freePort, seriousViolations, oneChromiumForTheFile } from '../helpers/browser.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';

let browser: Browser;
oneChromiumForTheFile((opened) => (browser = opened));

const PAGE = '/products/espresso-capsules';

/** The text of the element with `id` in served HTML (its tags dropped). */
function textOf(html: string, id: string): string | undefined {
  const match = new RegExp(`<(\\w+)[^>]* id="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html);
  return match?.[2]!.replace(/<[^>]+>/g, '');
}

for (const backend of backends) {
  describe(`the product page shows the selling plan's price (${backend.name})`, () => {
    let t: TestStore;
    let base: string;
    before(async () => {
      const port = await freePort();
      base = `http://localhost:${port}`;
      t = await startTestStore(backend, { config: loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off' }) });
      await t.app.listen({ host: '127.0.0.1', port });
    });
    after(() => t?.close());

    const product = () => t.store.catalog.snapshot.productByHandle('espresso-capsules')!;
    const planId = (name: string) => product().sellingPlanGroups.flatMap((g) => g.plans).find((p) => p.name === name)!.id;
    const variantIdOf = (sku: string) => product().variants.find((v) => v.sku === sku)!.id;
    const MONTHLY = 'Delivery every month';
    const TWO_MONTHLY = 'Delivery every 2 months';

    const served = async (url: string) => {
      const answer = await t.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      assert.equal(answer.statusCode, 200, answer.body);
      return answer.body;
    };

    it('as served: each plan says its price and saving; a link that chose a plan shows its price, the one-time price struck', async () => {
      const html = await served(PAGE);
      assert.equal(textOf(html, 'price-amount'), '$6.50', 'one-time first');
      assert.match(html, /<p class="plan-saving" id="plan-saving" hidden><\/p>/);
      assert.match(html, new RegExp(`value="${planId(MONTHLY)}"> <span>Delivery every month — <span class="plan-offer" id="plan-offer-${planId(MONTHLY)}">\\$5\\.85, save \\$0\\.65 \\(10%\\)</span>`));
      assert.equal(textOf(html, `plan-offer-${planId(TWO_MONTHLY)}`), '$5.85, save $0.65 (10%)');
      assert.equal(textOf(html, 'plans-variant'), 'Ristretto / 10 capsules', 'the prices say which variant they are for');

      const chosen = await served(`${PAGE}?variant=${variantIdOf('ESP-RIS-50')}&selling_plan=${planId(MONTHLY)}`);
      assert.match(chosen, new RegExp(`name="selling_plan" value="${planId(MONTHLY)}" checked>`));
      assert.equal(textOf(chosen, 'price-amount'), '$26.10');
      assert.equal(textOf(chosen, 'price-was-amount'), '$29.00', 'the one-time price, struck');
      assert.equal(textOf(chosen, 'plan-saving'), 'Delivery every month: save $2.90 (10%)');
      assert.equal(textOf(chosen, `plan-offer-${planId(MONTHLY)}`), '$26.10, save $2.90 (10%)');
      assert.equal(textOf(chosen, 'plans-variant'), 'Ristretto / 50 capsules');
    });

    /** A browser window of `width` px that records console messages and page errors (a CSP violation is one). */
    async function openWindow(width: number, javaScriptEnabled = true): Promise<{ context: BrowserContext; page: Page; console: string[] }> {
      const context = await browser.newContext({ viewport: { width, height: 900 }, javaScriptEnabled });
      const page = await context.newPage();
      const console: string[] = [];
      page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
      page.on('pageerror', (error) => console.push(`pageerror: ${error.message}`));
      return { context, page, console };
    }

    /** What the page shows now: the price, the struck price (when shown), the saving (when shown). */
    const shown = async (page: Page) => ({
      price: await page.locator('#price-amount').innerText(),
      was: (await page.locator('#price-was').isVisible()) ? await page.locator('#price-was-amount').innerText() : '',
      saving: (await page.locator('#plan-saving').isVisible()) ? await page.locator('#plan-saving').innerText() : '',
    });

    it('with the script, the price follows the variant and the purchase option chosen', async () => {
      const { context, page, console } = await openWindow(1280);
      try {
        assert.equal((await page.goto(`${base}${PAGE}`))?.status(), 200);
        assert.deepEqual(await shown(page), { price: '$6.50', was: '', saving: '' });

        await page.getByRole('radio', { name: /Delivery every month —/ }).check();
        assert.deepEqual(await shown(page), { price: '$5.85', was: '$6.50', saving: 'Delivery every month: save $0.65 (10%)' });
        assert.equal(new URL(page.url()).searchParams.get('selling_plan'), String(planId(MONTHLY)), 'the link keeps the choice');
        assert.deepEqual(await seriousViolations(page), [], 'axe at 1280 px, the plan chosen');

        await page.getByLabel('Pack size').selectOption('50 capsules');
        assert.deepEqual(await shown(page), { price: '$26.10', was: '$29.00', saving: 'Delivery every month: save $2.90 (10%)' });
        assert.equal(await page.locator(`#plan-offer-${planId(TWO_MONTHLY)}`).innerText(), '$26.10, save $2.90 (10%)', 'the labels follow the variant');
        assert.equal(await page.locator('#plans-variant').innerText(), 'Ristretto / 50 capsules');

        await page.getByRole('radio', { name: /Delivery every 2 months —/ }).check();
        assert.deepEqual(await shown(page), { price: '$26.10', was: '$29.00', saving: 'Delivery every 2 months: save $2.90 (10%)' });

        await page.getByRole('radio', { name: 'One-time purchase' }).check();
        assert.deepEqual(await shown(page), { price: '$29.00', was: '$32.50', saving: '' }, 'the one-time price, with its compare-at price');
        assert.equal(new URL(page.url()).searchParams.get('selling_plan'), null);

        await page.getByLabel('Pack size').selectOption('10 capsules');
        assert.deepEqual(await shown(page), { price: '$6.50', was: '', saving: '' });

        await page.getByRole('radio', { name: /Delivery every month —/ }).check();
        await page.setViewportSize({ width: 390, height: 844 });
        assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'no horizontal scroll at 390 px');
        assert.deepEqual(await seriousViolations(page), [], 'axe at 390 px');
        assert.deepEqual(console, [], 'no console message: no CSP violation, no error');
      } finally {
        await context.close();
      }
    });

    it('without JavaScript each plan shows its price, and the form posted on the plan makes a cart line on it at $5.85', async () => {
      const { context, page } = await openWindow(390, false);
      try {
        assert.equal((await page.goto(`${base}${PAGE}`))?.status(), 200);
        const label = async (name: string) => (await page.locator(`label.choice:has(input[value="${planId(name)}"])`).innerText()).replace(/\s+/g, ' ').trim();
        assert.match(await label(MONTHLY), /^Delivery every month — \$5\.85, save \$0\.65 \(10%\)/);
        assert.match(await label(TWO_MONTHLY), /^Delivery every 2 months — \$5\.85, save \$0\.65 \(10%\)/);
        assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'no horizontal scroll at 390 px');

        await page.getByRole('radio', { name: /Delivery every month —/ }).check();
        await Promise.all([page.waitForURL(`${base}/cart`), page.getByRole('button', { name: 'Add to cart' }).click()]);
        const cart = await (await context.request.get(`${base}/cart.js`)).json();
        assert.equal(cart.items.length, 1);
        const [line] = cart.items;
        assert.equal(line.variant_id, variantIdOf('ESP-RIS-10'));
        assert.equal(line.price, 585);
        assert.equal(line.selling_plan_allocation?.selling_plan.id, planId(MONTHLY));
        assert.equal(line.selling_plan_allocation?.price, 585);
        assert.equal(line.selling_plan_allocation?.compare_at_price, 650);
      } finally {
        await context.close();
      }
    });
  });
}
