/**
 * The approval page in a real browser (Debian's Chromium through playwright-core) against the store listening on
 * 127.0.0.1: the buyer opens the link, the page renders under its own Content-Security-Policy with no violation,
 * fits a 320 px screen, shows the total and the approve button on a phone's first screen (390 × 844), and Approve
 * places the order and lands on the order page. Declining asks to confirm. A form posted from another origin is
 * refused. Chromium missing is a failure that says so, never a skipped test.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { freePort, launchChromium } from '../helpers/browser.js';

after(dropTestDatabases);


const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's violations on the page (the test injects it; the page itself runs no script), as "impact rule: targets". */
async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}


/** A page of another origin holding a copy of the approval form (as if its token had leaked), posting to the store. */
async function foreignFormServer(form: () => { action: string; formToken: string; digest: string }, headExtra: string): Promise<{ server: Server; url: string }> {
  const server = createServer((_request, response) => {
    const { action, formToken, digest } = form();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8">${headExtra}<title>Win a prize</title></head><body>` +
        `<form method="post" action="${action}"><input type="hidden" name="form_token" value="${formToken}">` +
        `<input type="hidden" name="digest" value="${digest}"><button name="action" value="approve">Claim</button></form></body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

for (const backend of backends) {
  describe(`the approval page in Chromium (${backend.name})`, () => {
    let t: TestStore;
    let browser: Browser;
    let base: string;
    /** The headers of every POST to an approval link, as the store received them. */
    const posts: { origin: string | undefined; fetchSite: string | undefined }[] = [];

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await startTestStore(backend, {
        config: { ...loadConfig({ BASE_URL: base, DATA_DIR: 'unused', APPROVAL_PROOF: 'link' }), storeName: 'Fizz & Sons' },
        app: {
          extend: (app) =>
            app.addHook('onRequest', (request, _reply, done) => {
              if (request.method === 'POST' && request.url.startsWith('/checkout/approve/')) {
                posts.push({ origin: request.headers.origin, fetchSite: request.headers['sec-fetch-site'] });
              }
              done();
            }),
        },
      });
      await t.app.listen({ host: '127.0.0.1', port });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    const variantIdOf = (sku: string) => t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;

    async function awaitingApproval(quantity: number) {
      const { checkouts, db } = t.store;
      const created = await checkouts.create(
        db,
        {
          lines: [{ variantId: variantIdOf('HYD-LEMONLIME-30'), quantity }],
          buyer: { email: 'ana@example.com' },
          destination: { firstName: 'Ana', streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94103', country: 'US' },
          shippingOption: 'standard',
        },
        'agent',
        'agent',
      );
      const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
      return { id: created.view.record.id, token: asked.approval!.token };
    }

    /** A fresh browser window 320 px wide that records every console message (CSP violations are reported there). */
    async function openWindow(): Promise<{ context: BrowserContext; page: Page; console: string[] }> {
      const context = await browser.newContext({ viewport: { width: 320, height: 700 } });
      const page = await context.newPage();
      const console: string[] = [];
      page.on('console', (message) => console.push(`${message.type()}: ${message.text()}`));
      page.on('pageerror', (error) => console.push(`pageerror: ${error.message}`));
      return { context, page, console };
    }

    const orderCount = async () => (await t.store.db.query<{ count: number }>('select count(*)::int as count from orders'))[0]!.count;

    it('the buyer opens the link, the page renders under its CSP at 320 px, and Approve shows the placed order', async () => {
      const { id, token } = await awaitingApproval(2);
      const stockBefore = t.store.inventory.onHand(variantIdOf('HYD-LEMONLIME-30'));
      const { context, page, console } = await openWindow();
      try {
        const response = await page.goto(`${base}/checkout/approve/${token}`);
        assert.equal(response?.status(), 200);
        assert.equal(await page.locator('h1').textContent(), 'Approve your order');
        assert.equal(await page.locator('html').getAttribute('lang'), 'en');
        assert.match((await page.locator('header.site').textContent()) ?? '', /Fizz & Sons/);
        // The inline sheet applied: its hash in the CSP matches the bytes served.
        const approve = page.getByRole('button', { name: /Approve and place order/ });
        assert.equal(await approve.evaluate((element) => getComputedStyle(element).backgroundColor), 'rgb(20, 83, 45)');
        assert.equal(await page.getByRole('button', { name: /Decline/ }).count(), 1);
        assert.equal(await page.getByRole('link', { name: 'Terms of service' }).first().getAttribute('href'), `${base}/policies/terms-of-service`);
        // Fits a 320 px screen without scrolling sideways.
        assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 320, 'no horizontal scroll at 320 px');
        assert.deepEqual(await accessibilityViolations(page), [], 'axe finds nothing on the approval page');
        // On a phone's first screen (390 × 844), before any scrolling: the total and the approve button, above the details.
        await page.setViewportSize({ width: 390, height: 844 });
        const onFirstScreen = async (what: string, locator: ReturnType<Page['locator']>) => {
          const box = await locator.boundingBox();
          assert.ok(box && box.y >= 0 && box.y + box.height <= 844, `${what} on the first screen: ${JSON.stringify(box)}`);
        };
        await onFirstScreen('the total', page.locator('.summary-total strong'));
        await onFirstScreen('the seller', page.locator('.seller'));
        await onFirstScreen('the approve button', approve);
        const details = await page.locator('#details-title').boundingBox();
        assert.ok(details && details.y > (await approve.boundingBox())!.y, 'the details follow the approve button');
        assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390, 'no horizontal scroll at 390 px');

        await Promise.all([page.waitForURL(/\/orders\/ord_[A-Za-z0-9_-]{22}$/), approve.click()]);
        assert.match((await page.locator('h1').textContent()) ?? '', /^Thank you, your order #\d+ is placed$/);
        assert.match((await page.locator('main').textContent()) ?? '', /Payment pending: /);
        await page.setViewportSize({ width: 320, height: 700 });
        assert.equal(await page.locator('table tbody tr').count(), 1);
        assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 320, 'no horizontal scroll at 320 px');
        assert.deepEqual(await accessibilityViolations(page), [], 'axe finds nothing on the order page');

        const checkout = await t.store.checkouts.get(t.store.db, id);
        assert.equal(checkout!.view.record.status, 'completed');
        assert.equal(page.url(), `${base}/orders/${checkout!.view.record.orderId}`);
        assert.equal(t.store.inventory.onHand(variantIdOf('HYD-LEMONLIME-30')), stockBefore - 2);
        // What the browser sent: its own origin (or `null`, as pages with Referrer-Policy: no-referrer post), same-origin.
        const post = posts.at(-1)!;
        assert.ok(post.origin === base || post.origin === 'null', `Origin ${post.origin}`);
        assert.equal(post.fetchSite, 'same-origin');
        assert.deepEqual(console, [], 'no console messages: no CSP violation, no error');
      } finally {
        await context.close();
      }
    });

    it('Decline asks to confirm, then cancels the checkout in the browser, and reloading the link shows it no longer works', async () => {
      const { id, token } = await awaitingApproval(1);
      const ordersBefore = await orderCount();
      const { context, page, console } = await openWindow();
      try {
        await page.goto(`${base}/checkout/approve/${token}`);
        await page.getByRole('button', { name: 'Decline this order' }).click();
        await page.locator('h1', { hasText: 'Decline this order?' }).waitFor();
        assert.equal((await t.store.checkouts.get(t.store.db, id))!.view.record.status, 'requires_escalation', 'not canceled before the confirmation');
        assert.deepEqual(await accessibilityViolations(page), [], 'axe finds nothing on the confirmation page');
        // "No": back to the order, which can still be approved or declined.
        await page.getByRole('link', { name: 'No, go back to the order' }).click();
        await page.locator('h1', { hasText: 'Approve your order' }).waitFor();
        await page.getByRole('button', { name: 'Decline this order' }).click();
        await page.getByRole('button', { name: 'Yes, decline and cancel checkout' }).click();
        await page.locator('h1', { hasText: 'You declined this order' }).waitFor();
        assert.equal((await t.store.checkouts.get(t.store.db, id))!.view.record.status, 'canceled');
        assert.equal(await orderCount(), ordersBefore);
        const reopened = await page.goto(`${base}/checkout/approve/${token}`);
        assert.equal(reopened?.status(), 409);
        assert.equal(await page.locator('h1').textContent(), 'This approval link no longer works');
        assert.equal(await page.getByRole('button').count(), 0);
        assert.deepEqual(await accessibilityViolations(page), [], 'axe finds nothing on the closed link page');
        assert.deepEqual(
          console.filter((line) => !line.includes('409')),
          [],
          'no console messages but the 409 of the closed link',
        );
      } finally {
        await context.close();
      }
    });

    it("the checkout's page and the four policy pages fit 320 px, with no console message and nothing axe finds", async () => {
      const { id } = await awaitingApproval(1);
      const { context, page, console } = await openWindow();
      try {
        for (const path of [`/checkouts/${id}`, '/policies/terms-of-service', '/policies/privacy-policy', '/policies/refund-policy', '/policies/shipping-policy']) {
          const response = await page.goto(`${base}${path}`);
          assert.equal(response?.status(), 200, path);
          assert.equal(await page.locator('h1').count(), 1, path);
          assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 320, `${path}: no horizontal scroll at 320 px`);
          assert.deepEqual(await accessibilityViolations(page), [], `${path}: axe finds nothing`);
        }
        assert.deepEqual(console, []);
      } finally {
        await context.close();
      }
    });

    it('a copy of the form posted from a page of another origin is refused and places nothing', async () => {
      const { id, token } = await awaitingApproval(1);
      const { context, page } = await openWindow();
      const foreign: Server[] = [];
      try {
        // The buyer's browser holds the approval cookie, and the other page somehow has the form's token.
        await page.goto(`${base}/checkout/approve/${token}`);
        const formToken = (await page.locator('input[name="form_token"]').first().getAttribute('value'))!;
        const digest = (await page.locator('input[name="digest"]').first().getAttribute('value'))!;
        const form = () => ({ action: `${base}/checkout/approve/${token}`, formToken, digest });
        const ordersBefore = await orderCount();
        // Once with the other origin in the Origin header, once hiding it (`Origin: null`, as a no-referrer page sends).
        for (const headExtra of ['', '<meta name="referrer" content="no-referrer">']) {
          const { server, url } = await foreignFormServer(form, headExtra);
          foreign.push(server);
          await page.goto(url);
          const [response] = await Promise.all([page.waitForResponse((r) => r.url().includes('/checkout/approve/') && r.request().method() === 'POST'), page.getByRole('button', { name: 'Claim' }).click()]);
          assert.equal(response.status(), 403, `refused (${headExtra || 'Origin sent'})`);
          await page.locator('h1', { hasText: 'Nothing was done' }).waitFor();
        }
        assert.equal(await orderCount(), ordersBefore);
        assert.equal((await t.store.checkouts.get(t.store.db, id))!.view.record.status, 'requires_escalation');
      } finally {
        await context.close();
        for (const server of foreign) await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });
}
