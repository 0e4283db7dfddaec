/**
 * The approval with PAYMENT_PROVIDER=stripe in a real browser (Debian's Chromium through playwright-core), against
 * the Stripe stand-in (test/helpers/stripe-stand-in.ts, its hosted payment page on an origin of its own), on both
 * backends. An agent checks out over MCP (the MCP SDK's own client) and gets the approval link; the buyer opens it,
 * proves it is them with the code the store mails (to a loopback SMTP server), follows "Continue to payment" to the
 * stand-in's page and presses Pay or Cancel there, which sends the browser back to the store:
 *
 * - Pay: the order page, the payment authorized; get_checkout answers complete_in_progress while the buyer is on
 *   the payment page and completed with the order afterwards; the webhook that follows places nothing more.
 * - Cancel: the approval page again, nothing placed; it still works (no second proof), and paying after places it.
 * - The stock sold out while the buyer was on the payment page: after Pay the buyer reads why, the hold is canceled
 *   at the stand-in, no order exists.
 * - The browser never comes back after Pay: the webhook places the order, once.
 * - The browser's return and the webhook racing (the event delivered as the browser's request leaves): one order.
 *
 * On every page of the store these walks show, no Content-Security-Policy violation (the console's reports and the
 * page's securitypolicyviolation events both; the first test shows that the listener catches one).
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { readOrder } from '../../src/orders/orders.js';
import { launchChromium } from '../helpers/browser.js';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { startStripeStandIn, type StandInWebhookEndpoint, type StripeStandIn } from '../helpers/stripe-stand-in.js';
import { askForMailedCode, clickAndLoad, startListeningShop, variantBySku, whereItStopped, type ListeningShop } from '../helpers/walk.js';
import { serveAgentProfiles, type AgentProfileServer } from '../ucp/agent-profile-server.js';
import { agentMeta } from '../ucp/mcp-harness.js';
import { officialSchemaErrors, resultSchemaFor } from '../ucp/official-schemas.js';

// One browser and one agent-profile server for the file; a store, a stand-in and an agent per backend; a window per test.
let browser: Browser | undefined;
let profiles: AgentProfileServer | undefined;
before(async () => void ([browser, profiles] = await Promise.all([launchChromium(), serveAgentProfiles(['2026-04-08'])])));
after(() => Promise.all([browser?.close(), profiles?.close(), dropTestDatabases()]));

const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const FULFILLMENT = { methods: [{ type: 'shipping', destinations: [ADDRESS], groups: [{ selected_option_id: 'standard' }] }] };

/** A browser window recording every Content-Security-Policy violation on the store's pages, by the console and by the page's event. */
interface BuyerWindow {
  context: BrowserContext;
  page: Page;
  violations: string[];
  /** Resolves once a violation naming `text` was recorded by both the console and the page's event. */
  reported(text: string): Promise<void>;
}

for (const backend of backends) {
  describe(`the buyer pays on the Stripe stand-in's page in Chromium (${backend.name})`, () => {
    let shop: ListeningShop;
    let standIn: StripeStandIn;
    let endpoint: StandInWebhookEndpoint;
    let client: Client;

    before(async () => {
      standIn = await startStripeStandIn();
      const webhookSecret = `whsec_${randomBytes(24).toString('base64url')}`;
      const { payment } = loadConfig({
        BASE_URL: 'http://127.0.0.1',
        DATA_DIR: 'unused',
        PAYMENT_PROVIDER: 'stripe',
        STRIPE_SECRET_KEY: standIn.secretKey,
        STRIPE_WEBHOOK_SECRET: webhookSecret,
        STRIPE_API_URL: standIn.apiUrl,
      });
      shop = await startListeningShop(backend, { allowInsecureProfiles: true, payment });
      // The events wait until a test delivers them (a delivery racing the browser's return would make each walk two).
      endpoint = standIn.webhookEndpoint({ url: `${shop.base}/payments/stripe/webhook`, secret: webhookSecret, hold: true });
      client = new Client({ name: 'storefront-stripe-browser-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${shop.base}/api/ucp/mcp`)));
    });
    after(async () => {
      await client?.close();
      await shop?.close();
      await standIn?.close();
    });
    beforeEach(async () => {
      // What an earlier test left held is delivered (and so forgotten) before the next one begins.
      await standIn.deliverHeld(endpoint);
      standIn.holdRedirects(false);
    });

    /** A tool call as the agent makes it (its profile named), its answer checked against the official schema. */
    async function call(name: string, args: Record<string, unknown>): Promise<any> {
      const meta = { ...(args.meta as Record<string, unknown> | undefined), ...agentMeta(profiles!.profileUrl('2026-04-08')) };
      const result = (await client.callTool({ name, arguments: { ...args, meta } })) as { structuredContent: any };
      const structured = result.structuredContent;
      assert.deepEqual(officialSchemaErrors(resultSchemaFor(name, structured), structured), [], `${name}: ${JSON.stringify(structured).slice(0, 600)}`);
      return structured;
    }

    /** With 20 units of `sku` in stock, the agent checks out `quantity` of it for `email` over MCP and is given the approval link. */
    async function agentCheckout(sku: string, quantity: number, email: string): Promise<{ id: string; continueUrl: string; total: number }> {
      await setStock(sku, 20);
      const created = await call('create_checkout', {
        checkout: { line_items: [{ item: { id: String(variantBySku(shop.t, sku).id) }, quantity }], buyer: { email }, fulfillment: FULFILLMENT },
      });
      assert.equal(created.status, 'ready_for_complete', JSON.stringify(created.messages));
      const asked = await call('complete_checkout', { id: created.id, meta: { 'idempotency-key': randomUUID() } });
      assert.equal(asked.status, 'requires_escalation');
      assert.equal(asked.order, undefined);
      return { id: created.id, continueUrl: asked.continue_url, total: asked.totals.find((x: { type: string }) => x.type === 'total').amount };
    }

    const setStock = (sku: string, units: number) => shop.t.store.inventory.setOnHand(shop.t.store.db, sku, units);
    const ordersOf = async (checkoutId: string) =>
      (await shop.t.store.db.query<{ id: string }>('select id from orders where checkout_id = $1', [checkoutId])).map((row) => row.id);
    const onStore = (url: string) => url.startsWith(`${shop.base}/`);

    async function openWindow(): Promise<BuyerWindow> {
      const context = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
      const violations: string[] = [];
      const waiting: (() => void)[] = [];
      const record = (line: string) => {
        violations.push(line);
        for (const check of waiting.splice(0)) check();
      };
      const reported = (text: string) =>
        new Promise<void>((resolve) => {
          const check = () => {
            const seen = violations.filter((line) => line.includes(text));
            if (seen.some((line) => line.includes(': console ')) && seen.some((line) => line.includes(': securitypolicyviolation '))) resolve();
            else waiting.push(check);
          };
          check();
        });
      await context.exposeBinding('reportCspViolation', ({ frame }, directive: string, blocked: string) => {
        if (onStore(frame.url())) record(`${frame.url()}: securitypolicyviolation ${directive} ${blocked}`);
      });
      await context.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (event) => {
          void (globalThis as unknown as { reportCspViolation(directive: string, blocked: string): Promise<void> }).reportCspViolation(event.violatedDirective, event.blockedURI);
        });
      });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      page.on('console', (message) => {
        if (onStore(page.url()) && /Content.Security.Policy/i.test(message.text())) record(`${page.url()}: console ${message.text()}`);
      });
      page.on('pageerror', (error) => record(`${page.url()}: pageerror ${error.message}`));
      return { context, page, violations, reported };
    }

    /** A walk in a window of its own: where it stopped when it fails; no CSP violation on the store's pages when it ends. */
    async function inWindow(walk: (opened: BuyerWindow) => Promise<void>): Promise<void> {
      const opened = await openWindow();
      try {
        await walk(opened);
        assert.deepEqual(opened.violations, [], 'no CSP violation on the store’s pages');
      } catch (error) {
        throw new Error(`${(error as Error).message}\n  (${await whereItStopped(opened.page)})`, { cause: error });
      } finally {
        await opened.context.close();
      }
    }

    /** The buyer opens the agent's link, asks for the code, types it and approves: the page then links to the payment page. */
    async function proveWithCode(page: Page, continueUrl: string, email: string): Promise<string> {
      assert.equal((await page.goto(continueUrl))?.status(), 200);
      const code = await askForMailedCode(page, shop.smtp, email);
      await page.getByLabel('Code from the email').fill(code);
      await clickAndLoad(page, () => page.getByRole('button', { name: /^Approve and place order/ }).click());
      assert.equal(page.url(), continueUrl, 'the proof leads back to the approval page');
      assert.equal((await page.getByRole('heading', { name: 'Pay for your order' }).count()), 1);
      const link = page.getByRole('link', { name: /^Continue to payment/ });
      const href = (await link.getAttribute('href'))!;
      assert.ok(href.startsWith(`${standIn.checkoutOrigin}/`), `the link leads to the payment page: ${href}`);
      return href;
    }

    /** "Continue to payment" (the link) to the stand-in's page, which shows the amount and Pay. */
    async function toPaymentPage(page: Page, total: number): Promise<string> {
      await clickAndLoad(page, () => page.getByRole('link', { name: /^Continue to payment/ }).click());
      assert.ok(page.url().startsWith(`${standIn.checkoutOrigin}/c/pay/`), page.url());
      assert.equal(await page.locator('#amount').textContent(), `$${(total / 100).toFixed(2)}`);
      return page.url().split('/').pop()!;
    }

    const paymentIntentOf = (sessionId: string) => standIn.paymentIntent(String(standIn.session(sessionId).payment_intent));

    it('proof, payment page, Pay, back: the order page with the payment authorized; get_checkout complete_in_progress, then completed', () => inWindow(async ({ page, violations, reported }) => {
      const email = 'pay-back@example.com';
      const { id, continueUrl, total } = await agentCheckout('HYD-LEMONLIME-30', 2, email);
      await page.goto(continueUrl);
      // The listeners catch a violation on the store's page (an image from an origin its policy does not name).
      await page.evaluate(() => {
        const image = document.createElement('img');
        image.src = 'http://192.0.2.1/probe.png';
        document.body.append(image);
      });
      await reported('192.0.2.1');
      violations.length = 0;

      await proveWithCode(page, continueUrl, email);
      const sessionId = await toPaymentPage(page, total);
      const inProgress = await call('get_checkout', { id });
      assert.equal(inProgress.status, 'complete_in_progress', 'while the buyer is on the payment page');
      assert.equal(inProgress.order, undefined);
      assert.deepEqual(await ordersOf(id), []);

      await Promise.all([page.waitForURL(/\/orders\/ord_[A-Za-z0-9_-]{22}$/), page.getByRole('button', { name: 'Pay' }).click()]);
      assert.ok(onStore(page.url()), 'back on the store');
      const orderId = page.url().split('/').pop()!;
      assert.deepEqual(await ordersOf(id), [orderId]);
      const main = ((await page.getByRole('main').innerText()) ?? '').replace(/\s+/g, ' ');
      assert.match(main, new RegExp(`\\$${(total / 100).toFixed(2).replace('.', '\\.')} is held on your card`), main);
      const order = (await readOrder(shop.t.store.db, orderId))!;
      assert.equal(order.paymentState, 'authorized');
      assert.equal(order.payment.authorized, total);
      assert.equal(paymentIntentOf(sessionId).status, 'requires_capture');

      const completed = await call('get_checkout', { id });
      assert.equal(completed.status, 'completed');
      assert.equal(completed.order.id, orderId);
      assert.equal(completed.order.permalink_url, `${shop.base}/orders/${orderId}`);
      // Stripe's event after the return: acknowledged, nothing more placed.
      const deliveries = await standIn.deliverHeld(endpoint);
      const event = deliveries.find((d) => d.type === 'checkout.session.completed');
      assert.equal(event?.status, 200, JSON.stringify(deliveries));
      assert.deepEqual(await ordersOf(id), [orderId]);
    }));

    it('Cancel on the payment page: back on the approval page, nothing placed; it still works, and paying after places the order', () => inWindow(async ({ page }) => {
      const email = 'cancel-then-pay@example.com';
      const { id, continueUrl, total } = await agentCheckout('ESP-RIS-10', 1, email);
      await proveWithCode(page, continueUrl, email);
      const sessionId = await toPaymentPage(page, total);
      await clickAndLoad(page, () => page.getByRole('button', { name: 'Cancel' }).click());
      assert.equal(page.url(), continueUrl, 'back on the approval page');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Approve your order');
      assert.deepEqual(await ordersOf(id), []);
      assert.equal((await call('get_checkout', { id })).status, 'requires_escalation', 'the checkout waits for the buyer again');
      assert.equal(standIn.session(sessionId).status, 'open');

      // The page still works, without a second proof: its button opens the same payment page again.
      assert.equal(await page.getByLabel('Code from the email').count(), 0, 'no code asked again');
      await clickAndLoad(page, () => page.getByRole('button', { name: /^Continue to payment/ }).click());
      assert.equal(await toPaymentPage(page, total), sessionId, 'the same payment page');
      assert.equal((await call('get_checkout', { id })).status, 'complete_in_progress');
      await Promise.all([page.waitForURL(/\/orders\/ord_[A-Za-z0-9_-]{22}$/), page.getByRole('button', { name: 'Pay' }).click()]);
      const orderId = page.url().split('/').pop()!;
      assert.deepEqual(await ordersOf(id), [orderId]);
      assert.equal((await readOrder(shop.t.store.db, orderId))!.paymentState, 'authorized');
      assert.equal(standIn.sessions().filter((session) => session.metadata?.checkout_id === id).length, 1, 'one payment page for the approval');
    }));

    it('the stock sells out while the buyer is on the payment page: after Pay the buyer reads why, the hold is canceled, no order', () => inWindow(async ({ page }) => {
      const sku = 'ESP-CLA-10';
      const email = 'sold-out@example.com';
      const { id, continueUrl, total } = await agentCheckout(sku, 2, email);
      await proveWithCode(page, continueUrl, email);
      const sessionId = await toPaymentPage(page, total);
      await setStock(sku, 1);
      const [back] = await Promise.all([
        page.waitForResponse((response) => onStore(response.url()) && new URL(response.url()).pathname.endsWith('/paid')),
        page.getByRole('button', { name: 'Pay' }).click(),
      ]);
      await page.waitForLoadState('load');
      assert.equal(back.status(), 409);
      assert.ok(onStore(page.url()), 'back on the store');
      const text = ((await page.getByRole('main').innerText()) ?? '').replace(/\s+/g, ' ');
      assert.match(text, /sold out|only \d+ of .* left/i, text);
      assert.match(text, /hold on your card was released/i, text);
      assert.equal(paymentIntentOf(sessionId).status, 'canceled', 'the hold is canceled at the payment provider');
      assert.deepEqual(await ordersOf(id), []);
      assert.notEqual((await call('get_checkout', { id })).status, 'completed');
      // Stripe's event of that session places nothing either.
      const deliveries = await standIn.deliverHeld(endpoint);
      assert.ok(deliveries.every((d) => d.status === 200), JSON.stringify(deliveries));
      assert.deepEqual(await ordersOf(id), []);
    }));

    it('the browser never comes back after Pay: the webhook places the order once', () => inWindow(async ({ page }) => {
      const email = 'never-back@example.com';
      const { id, continueUrl, total } = await agentCheckout('HYD-MIXEDBERRY-10', 1, email);
      await proveWithCode(page, continueUrl, email);
      const sessionId = await toPaymentPage(page, total);
      standIn.holdRedirects();
      await clickAndLoad(page, () => page.getByRole('button', { name: 'Pay' }).click());
      assert.ok(page.url().startsWith(standIn.checkoutOrigin), 'the browser stays on the payment page');
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Payment complete');
      assert.equal(paymentIntentOf(sessionId).status, 'requires_capture');
      assert.deepEqual(await ordersOf(id), []);
      assert.equal((await call('get_checkout', { id })).status, 'complete_in_progress');

      const deliveries = await standIn.deliverHeld(endpoint);
      const completed = deliveries.find((d) => d.type === 'checkout.session.completed');
      assert.equal(completed?.status, 200, JSON.stringify(deliveries));
      const [orderId] = await ordersOf(id);
      assert.ok(orderId, 'the webhook placed the order');
      assert.equal((await readOrder(shop.t.store.db, orderId))!.paymentState, 'authorized');
      // Delivered again: applied once.
      assert.equal((await standIn.deliver(completed!.eventId, { endpoint })).status, 200);
      assert.deepEqual(await ordersOf(id), [orderId]);
      const checkout = await call('get_checkout', { id });
      assert.equal(checkout.status, 'completed');
      assert.equal(checkout.order.id, orderId);
      // The buyer opens the approval link later: the order, placed.
      assert.equal((await page.goto(continueUrl))?.status(), 200);
      assert.match((await page.getByRole('heading', { level: 1 }).textContent()) ?? '', /^Order #\d+ is placed$/);
    }));

    it('the browser’s return and Stripe’s webhook racing: one order, and the buyer lands on it', () => inWindow(async ({ page }) => {
      const email = 'race@example.com';
      const { id, continueUrl, total } = await agentCheckout('HYD-LEMONLIME-30', 1, email);
      await proveWithCode(page, continueUrl, email);
      await toPaymentPage(page, total);
      // Stripe's event is delivered as the payment page's answer (its redirect back to the store) reaches the
      // browser: the browser's return and the webhook reach the store at once.
      let deliveries: Promise<Awaited<ReturnType<StripeStandIn['deliverHeld']>>> | undefined;
      await page.route(
        (url) => url.href.startsWith(`${standIn.checkoutOrigin}/`),
        async (route) => {
          if (route.request().method() !== 'POST') return route.continue();
          const response = await route.fetch({ maxRedirects: 0 });
          deliveries = standIn.deliverHeld(endpoint);
          await route.fulfill({ response });
        },
      );
      await Promise.all([page.waitForURL(/\/orders\/ord_[A-Za-z0-9_-]{22}$/), page.getByRole('button', { name: 'Pay' }).click()]);
      const delivered = await deliveries!;
      const completed = delivered.find((d) => d.type === 'checkout.session.completed');
      assert.equal(completed?.status, 200, JSON.stringify(delivered));
      const orderId = page.url().split('/').pop()!;
      assert.deepEqual(await ordersOf(id), [orderId], 'one order, the one the buyer sees');
      assert.equal((await readOrder(shop.t.store.db, orderId))!.paymentState, 'authorized');
      assert.equal((await call('get_checkout', { id })).order.id, orderId);
    }));
  });
}
