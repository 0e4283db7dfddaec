/**
 * A shopper walks the store in a real headless Chromium, as a person does, from the home page to the order page:
 * home -> the header's search -> "All products" -> a product -> its variant and a quantity -> "Add to cart" -> the
 * cart (the quantity changed there) -> "Check out" -> email, US address and shipping method -> "Continue to
 * approval" -> the approval page (the store's default proof: "Email me a code", the code read from the mail a
 * loopback SMTP server received) -> "Approve and place order" -> the order page. Once with JavaScript on and once
 * off, on both backends.
 *
 * On every page type: one h1 saying where the shopper is, the store's name in the title and its contact in the
 * footer, no console error (a script or style the page's CSP refuses logs one), no sideways scrolling at 390 px, and
 * screenshots at 390 and 1280 px wide saved to test-output/screenshots/{backend}/{js|nojs}/{nn-page}-{width}.png for
 * review (on the first backend the run has; a failed walk's on either). With JavaScript on, axe-core finds no serious or critical violation.
 * At the end the database holds the order with the walked line, placed from a checkout prepared by a browser, the
 * variant's stock went down by the quantity ordered, and the cart page is empty again (the order closed the cart).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { seriousViolations, oneChromiumForTheFile } from '../helpers/browser.js';
import { backends } from '../helpers/store.js';
import {
  BUYER,
  MERCHANT,
  approveWithCode,
  askForMailedCode,
  cartLineCount,
  cartQuantityOf,
  chooseVariant,
  clickAndLoad,
  dollars,
  fillCheckoutForm,
  onHand,
  openWindow,
  placedOrder,
  saveScreenshots,
  scrollsSideways,
  startListeningShop,
  variantBySku,
  whereItStopped,
  type ListeningShop,
} from '../helpers/walk.js';

let browser: Browser;
oneChromiumForTheFile((opened) => (browser = opened));

/** The product walked to, and the variant each walk orders (different ones, so each walk's stock is its own). */
const PRODUCT = 'Espresso Capsules';
const VARIANT_SKU = { js: 'ESP-CLA-10', nojs: 'ESP-LUN-10' } as const;

for (const backend of backends) {
  describe(`a shopper walks the store in Chromium, home to order page (${backend.name})`, () => {
    let shop: ListeningShop;

    before(async () => {
      shop = await startListeningShop(backend);
    });
    after(async () => {
      await shop?.close();
    });

    async function walk(javaScriptEnabled: boolean): Promise<void> {
      const mode = javaScriptEnabled ? 'js' : 'nojs';
      const folder = `${backend.name}/${mode}`;
      const email = `walker-${mode}@example.com`;
      const variant = variantBySku(shop.t, VARIANT_SKU[mode]);
      const stockBefore = await onHand(shop.t, variant.id);
      const { context, page, errors } = await openWindow(browser, { javaScriptEnabled });

      /** What every page type is held to; `name` is its screenshot's name. */
      async function looked(name: string, h1: string | RegExp): Promise<void> {
        const headings = await page.getByRole('heading', { level: 1 }).allInnerTexts();
        assert.equal(headings.length, 1, `${name}: one h1 (${JSON.stringify(headings)})`);
        if (typeof h1 === 'string') assert.equal(headings[0]!.trim(), h1, `${name}: the h1`);
        else assert.match(headings[0]!, h1, `${name}: the h1`);
        assert.match(await page.title(), /Fizz & Sons/, `${name}: the store's name in the title`);
        assert.ok((await page.locator('footer').innerText()).includes(MERCHANT.STORE_CONTACT_EMAIL), `${name}: the merchant's contact`);
        // axe-core once per page type and backend: in the walk with JavaScript on.
        if (javaScriptEnabled) assert.deepEqual(await seriousViolations(page), [], `${name}: axe finds no serious or critical violation`);
        // For review, once: the pages are the same whichever database is behind them.
        if (backend === backends[0]) await saveScreenshots(page, folder, name);
        await page.setViewportSize({ width: 390, height: 800 });
        assert.equal(await scrollsSideways(page), false, `${name}: no sideways scrolling at 390 px`);
        await page.setViewportSize({ width: 1280, height: 800 });
      }

      try {
        const home = await page.goto(`${shop.base}/`);
        assert.equal(home?.status(), 200);
        assert.ok((await page.locator('main').innerText()).includes(MERCHANT.STORE_DESCRIPTION), 'the home page says what the store is');
        await looked('01-home', MERCHANT.STORE_NAME);

        // The header's search box, then the header's way to every product.
        await page.getByLabel('Search the store', { exact: true }).fill('espresso');
        await clickAndLoad(page, () => page.getByRole('button', { name: 'Search', exact: true }).click());
        assert.equal(page.url(), `${shop.base}/search?q=espresso`);
        assert.equal(await page.getByRole('main').getByRole('link', { name: PRODUCT, exact: true }).count(), 1, 'the search finds the product');
        await looked('02-search', 'Search results for “espresso”');

        await clickAndLoad(page, () => page.getByRole('navigation', { name: 'Shop' }).getByRole('link', { name: 'All products', exact: true }).click());
        assert.equal(new URL(page.url()).pathname, '/collections/all');
        await looked('03-collection', 'All products');

        await clickAndLoad(page, () => page.getByRole('main').getByRole('link', { name: PRODUCT, exact: true }).first().click());
        assert.equal(new URL(page.url()).pathname, `/products/${variant.handle}`);
        await looked('04-product', PRODUCT);

        await chooseVariant(page, variant);
        await page.getByLabel('Quantity', { exact: true }).fill('2');
        await page.getByRole('radio', { name: 'One-time purchase' }).check();
        await Promise.all([page.waitForURL(`${shop.base}/cart`), page.getByRole('button', { name: 'Add to cart' }).click()]);
        const quantity = cartQuantityOf(page, variant);
        assert.equal(await cartLineCount(page), 1, 'one line in the cart');
        assert.equal(await quantity.inputValue(), '2', 'the quantity added');

        // The shopper changes their mind: 3, not 2.
        await quantity.fill('3');
        await clickAndLoad(page, () => page.getByRole('button', { name: 'Update' }).click());
        assert.equal(await cartQuantityOf(page, variant).inputValue(), '3', 'the quantity changed on the cart page');
        await looked('05-cart', 'Your cart');

        await clickAndLoad(page, () => page.getByRole('button', { name: 'Check out' }).click());
        assert.equal(new URL(page.url()).pathname, '/checkout');
        // The shop's script, allowed by the page's policy, reads the cart and counts its items in the header.
        if (javaScriptEnabled) await page.getByRole('link', { name: 'Cart, 3 items', exact: true }).waitFor();
        await looked('06-checkout', 'Checkout');

        await fillCheckoutForm(page, { email, ...BUYER });
        await Promise.all([page.waitForURL(/\/checkout\/approve\/[^/]+$/), page.getByRole('button', { name: 'Continue to approval' }).click()]);
        const approval = await page.locator('main').innerText();
        assert.ok(approval.includes(PRODUCT), 'the approval page shows the line');
        assert.match(approval, /nothing is charged|not charged/i, 'the approval page says nothing is charged now');
        await looked('07-approval', 'Approve your order');

        const code = await askForMailedCode(page, shop.smtp, email);
        await looked('08-approval-code', 'Approve your order');

        const orderId = await approveWithCode(page, code);
        const order = await placedOrder(shop.t, orderId);
        await looked('09-order', new RegExp(`#${order.number}\\b`));
        const orderText = await page.locator('main').innerText();
        assert.ok(orderText.includes(PRODUCT), 'the order page shows the line');
        assert.ok(approval.includes(dollars(order.total)) && orderText.includes(dollars(order.total)), `the total approved is the total ordered: ${dollars(order.total)}`);

        // The order closed the cart: the cart page is empty again.
        await page.goto(`${shop.base}/cart`);
        assert.ok((await page.locator('main').innerText()).includes('Your cart is empty.'), 'the cart is empty after the order');

        assert.deepEqual(order.lines, [{ variantId: variant.id, quantity: 3, sellingPlanId: null }], 'the order holds the walked line');
        assert.equal(order.buyerEmail, email);
        assert.equal(order.checkoutChannel, 'browser', 'the checkout was prepared by a browser');
        assert.equal(order.channel, 'browser', 'the order was placed through the browser channel');
        assert.equal(await onHand(shop.t, variant.id), stockBefore - 3, 'the stock went down by the quantity ordered');
        assert.deepEqual(errors, [], 'no console error on any page (no script or style refused by the CSP)');
      } catch (error) {
        await saveScreenshots(page, folder, 'failed').catch(() => {});
        throw new Error(`${(error as Error).message}\n  (${await whereItStopped(page)})`, { cause: error });
      } finally {
        await context.close();
      }
    }

    it('with JavaScript on: every page type passes axe-core and fits 390 px; the order is placed, prepared by a browser, and the stock taken', async () => {
      await walk(true);
    });

    it('with JavaScript off: the same walk places the order with forms and links alone, every page fitting 390 px', async () => {
      await walk(false);
    });
  });
}
