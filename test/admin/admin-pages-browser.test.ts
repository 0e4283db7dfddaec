/**
 * Every admin page in Chromium, on both backends, signed in (the session's cookie given to the browser as the
 * sign-in would set it): each section the navigation names (those that exist when the test runs: a section still
 * being built answers 404 and is left out), an order's page and a product's page (found by their links on the
 * lists), the sign-in page and the answer to an admin URL without a session, and the answers of the staff forms (the enrollment link shown, a revocation's
 * confirmation). Each at 390 and 1280 px wide: no serious or critical axe-core violation, no sideways scrolling of
 * the page (a wide table scrolls in its own box), and the same page with JavaScript off shows its content. The staff
 * forms are used with JavaScript off too.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { SECTIONS } from '../../src/admin/admin-layout.js';
import { insertPasskey } from '../../src/checkout/buyer-proof-store.js';
import { loadConfig } from '../../src/config.js';
import { undeliveredCounts, undeliveredIn } from '../../src/outbox/outbox-overview.js';
import type { Store } from '../../src/store.js';
import { ADMIN_SESSION_COOKIE, startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { freePort, seriousViolations, oneChromiumForTheFile } from '../helpers/browser.js';
import { placeOrder } from '../helpers/orders.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';

const WIDTHS = [390, 1280] as const;
const WAIT_MS = 30_000;
/** Long enough to stretch a narrow table cell: the page must still not scroll sideways. */
const LONG_EMAIL = 'a.buyer.with.a.remarkably.long.mailbox.name.that.does.not.break@subdomain.example.com';

let browser: Browser;
oneChromiumForTheFile((opened) => (browser = opened));

async function until<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}`);
    await sleep(25);
  }
}

function variantId(store: Store, sku: string): number {
  const found = store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku);
  if (!found) throw new Error(`no variant ${sku}`);
  return found.id;
}

/** An admin page to check: where it is, and a text it shows when it renders its content. */
interface AdminPage {
  name: string;
  path: string;
  shows?: string | RegExp;
}

for (const backend of backends) {
  describe(`every admin page in Chromium: axe, 390 and 1280 px, without JavaScript (${backend.name})`, () => {
    let t: TestStore;
    let smtp: TestSmtpServer;
    let base: string;
    let owner: StaffSessionForTest;
    let orderNumber: number;
    const contexts: BrowserContext[] = [];

    before(async () => {
      smtp = await startSmtpServer();
      const port = await freePort();
      base = `http://localhost:${port}`;
      const config = loadConfig({ BASE_URL: base, DATA_DIR: 'unused', APPROVAL_PROOF: 'link' });
      t = await startTestStore(backend, {
        deliver: true,
        config: {
          ...config,
          rateLimit: false,
          mail: { ...config.mail, smtpUrl: smtp.url, merchantEmail: 'merchant@store.test' },
          outbox: { ...config.outbox, retryBaseSeconds: 3600, leaseSeconds: 5 },
        },
      });
      await t.app.listen({ host: '127.0.0.1', port });
      const { store } = t;
      owner = await startStaffSession(store, { email: 'owner@example.com', role: 'owner' });
      await startStaffSession(store, { email: 'clerk@example.com', role: 'staff' });
      await until('the enrollment mails delivered', async () => (await undeliveredCounts(store.db)).pending === 0);
      // Deliveries of both kinds: given up (refused for good), and waiting (refused for now).
      smtp.refuse(550, { message: 'Mailbox unavailable (test server)' });
      // Bought on a plan: the order starts a subscription (the Subscriptions section's pages have one to show).
      const espresso = store.catalog.snapshot.products.find((product) => product.variants.some((variant) => variant.sku === 'ESP-LUN-10'))!;
      const plan = espresso.sellingPlanGroups[0]!.plans[0]!;
      const order = await placeOrder(store, [{ variantId: variantId(store, 'ESP-LUN-10'), quantity: 2, sellingPlanId: plan.id }], { email: LONG_EMAIL });
      orderNumber = order.number;
      await until('the order mails given up', async () => (await undeliveredIn(store.db, 'failed')).length >= 2);
      smtp.refuse(451);
      await placeOrder(store, [{ variantId: variantId(store, 'ESP-DEC-10'), quantity: 1 }], { email: 'second@example.com' });
      await until('an order mail waiting', async () => (await undeliveredIn(store.db, 'pending')).some((row) => row.attempts >= 1));
      for (const [id, email] of [
        ['passkey-of-a-long-mailbox-0123456789abcdef0123456789abcdef', LONG_EMAIL],
        ['passkey-two-0123456789', 'second@example.com'],
      ]) {
        await insertPasskey(store.db, { id: id!, email: email!, publicKey: new Uint8Array([1]), counter: 0, transports: [], deviceType: 'multiDevice', backedUp: true, createdAt: new Date() });
      }
    });
    after(async () => {
      for (const context of contexts) await context.close().catch(() => {});
      await t?.close();
      await smtp?.close();
    });

    /** A window signed in as `session`: the cookie the sign-in sets, given to the browser for this store's URL. */
    async function signedInWindow(session: StaffSessionForTest | null, options: { width: number; javaScriptEnabled: boolean }): Promise<Page> {
      const context = await browser.newContext({ viewport: { width: options.width, height: 900 }, javaScriptEnabled: options.javaScriptEnabled });
      contexts.push(context);
      if (!session) return context.newPage();
      // Chromium refuses a __Host- cookie given with a url of http://localhost ("invalid cookie fields"); by its host
      // (no leading dot: host-only) and path it takes it, as the sign-in's Set-Cookie would leave it.
      await context.addCookies([{ name: ADMIN_SESSION_COOKIE, value: session.secret, domain: 'localhost', path: '/', secure: true, httpOnly: true, sameSite: 'Strict' }]);
      const kept = await context.cookies(base);
      assert.ok(
        kept.some((cookie) => cookie.name === ADMIN_SESSION_COOKIE && cookie.value === session.secret),
        'the browser keeps the __Host- cookie for http://localhost',
      );
      const page = await context.newPage();
      return page;
    }

    /** What a page's request answers with the owner's session (404: the section is not built yet). */
    async function statusOf(path: string): Promise<number> {
      const response = await fetch(`${base}${path}`, { headers: { cookie: owner.cookie, accept: 'text/html' }, redirect: 'manual' });
      await response.arrayBuffer();
      return response.status;
    }

    /** The first link on a page whose path matches `pattern` (an order's or a product's page, from its list). */
    async function firstLink(listPath: string, pattern: RegExp): Promise<string | undefined> {
      const response = await fetch(`${base}${listPath}`, { headers: { cookie: owner.cookie, accept: 'text/html' } });
      if (response.status !== 200) return undefined;
      const body = await response.text();
      for (const [, href] of body.matchAll(/href="([^"]+)"/g)) {
        const path = href!.replace(/&amp;/g, '&');
        if (pattern.test(path)) return path;
      }
      return undefined;
    }

    /** Every admin page that exists now. */
    async function adminPages(): Promise<AdminPage[]> {
      const shows: Partial<Record<keyof typeof SECTIONS, string | RegExp>> = {
        orders: `#${orderNumber}`,
        deliveries: `Order #${orderNumber}`,
        buyers: 'second@example.com',
        staff: 'clerk@example.com',
        subscriptions: LONG_EMAIL,
      };
      const pages: AdminPage[] = [];
      for (const [name, section] of Object.entries(SECTIONS) as [keyof typeof SECTIONS, (typeof SECTIONS)[keyof typeof SECTIONS]][]) {
        const status = await statusOf(section.path);
        if (status === 404) continue;
        assert.equal(status, 200, `${section.path} answers its page`);
        pages.push({ name, path: section.path, ...(shows[name] ? { shows: shows[name] } : {}) });
      }
      const order = await firstLink(SECTIONS.orders.path, new RegExp(`^${SECTIONS.orders.path}/${orderNumber}$`));
      if (order) pages.push({ name: 'an order', path: order, shows: `#${orderNumber}` });
      const product = await firstLink(SECTIONS.products.path, new RegExp(`^${SECTIONS.products.path}/[^/?#]+$`));
      if (product) pages.push({ name: 'a product', path: product });
      const subscription = await firstLink(SECTIONS.subscriptions.path, new RegExp(`^${SECTIONS.subscriptions.path}/\\d+$`));
      if (subscription) pages.push({ name: 'a subscription', path: subscription, shows: 'The next delivery, priced now' });
      return pages;
    }

    /**
     * Clicks a form's button and waits for the page it answers with; a 403 from the Origin check fails naming why
     * (a document whose Referrer-Policy is no-referrer makes Chromium send `Origin: null` on its own forms).
     */
    async function submit(page: Page, button: ReturnType<Page['getByRole']>): Promise<void> {
      const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.waitForEvent('load'), button.click()]);
      const origin = (await response.request().allHeaders()).origin;
      assert.notEqual(response.status(), 403, `the form's POST was refused (403); Chromium sent Origin: ${origin}`);
    }

    /** The page's checks at its width: axe (JavaScript on only), no sideways scroll, its heading and content. */
    async function checkPage(page: Page, what: string, options: { axe: boolean; shows?: string | RegExp }): Promise<void> {
      const heading = (await page.locator('main h1').first().textContent())?.trim();
      assert.ok(heading, `${what}: a heading`);
      if (options.shows) {
        const text = (await page.locator('main').textContent()) ?? '';
        assert.ok(typeof options.shows === 'string' ? text.includes(options.shows) : options.shows.test(text), `${what}: shows ${options.shows}`);
      }
      const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
      assert.ok(scrollWidth <= innerWidth, `${what}: the page scrolls sideways (${scrollWidth} > ${innerWidth})`);
      if (options.axe) assert.deepEqual(await seriousViolations(page), [], `${what}: axe`);
    }

    // The markup does not depend on the database: axe (the slow part, with JavaScript on) runs on the first backend; the
    // pages, their content and their width without JavaScript on both.
    const modes = backend === backends[0] ? [true, false] : [false];

    it('each page, at 390 and 1280 px, with JavaScript on (axe) and off (its content)', async (test) => {
      const pages = await adminPages();
      test.diagnostic(`pages checked: ${pages.map((p) => p.path).join(' ')}`);
      for (const mine of ['deliveries', 'buyers', 'staff', 'subscriptions', 'a subscription']) assert.ok(pages.some((p) => p.name === mine), `${mine} is checked`);
      for (const width of WIDTHS) {
        for (const javaScriptEnabled of modes) {
          const page = await signedInWindow(owner, { width, javaScriptEnabled });
          for (const adminPage of pages) {
            const what = `${adminPage.path} at ${width} px, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`;
            const response = await page.goto(`${base}${adminPage.path}`);
            assert.equal(response?.status(), 200, `${what}: answered`);
            await checkPage(page, what, { axe: javaScriptEnabled, ...(adminPage.shows ? { shows: adminPage.shows } : {}) });
          }
          // Signed out: the sign-in page, and the page any admin URL answers without a session.
          const signedOut = await signedInWindow(null, { width, javaScriptEnabled });
          for (const [path, status] of [['/admin/sign-in', 200], [SECTIONS.deliveries.path, 401]] as const) {
            const what = `${path} signed out at ${width} px, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`;
            const response = await signedOut.goto(`${base}${path}`);
            assert.equal(response?.status(), status, `${what}: answered`);
            await checkPage(signedOut, what, { axe: javaScriptEnabled, shows: /Sign in/ });
          }
        }
      }
    });

    it("the staff forms' answers (the enrollment link shown, a revocation's confirmation) pass at 390 px, and work with JavaScript off", async () => {
      for (const javaScriptEnabled of modes) {
        const page = await signedInWindow(owner, { width: 390, javaScriptEnabled });
        const email = `new-${javaScriptEnabled ? 'on' : 'off'}@example.com`;
        await page.goto(`${base}${SECTIONS.staff.path}`);
        await page.getByLabel('Email', { exact: true }).fill(email);
        await page.getByLabel('Role').selectOption('staff');
        await submit(page, page.getByRole('button', { name: 'Add and make the link' }));
        assert.equal(new URL(page.url()).pathname, SECTIONS.staff.path, 'the answer is not a redirect to another URL');
        const link = await page.getByLabel('Single-use link').inputValue();
        assert.ok(link.startsWith(`${base}/admin/enroll/`), link);
        assert.ok(!page.url().includes(link.slice(link.lastIndexOf('/') + 1)), 'the link is in no URL');
        await checkPage(page, `the enrollment answer, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, { axe: javaScriptEnabled, shows: `${email} can use this link once` });

        await submit(page, page.getByRole('form', { name: `Revoke ${email}` }).getByRole('button', { name: 'Revoke' }));
        await checkPage(page, `the revocation's confirmation, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, { axe: javaScriptEnabled, shows: 'Their sessions end at once' });
        await submit(page, page.getByRole('button', { name: `Revoke ${email}` }));
        assert.equal(new URL(page.url()).search, '?done=revoked');
        await checkPage(page, `the staff page after a revocation, JavaScript ${javaScriptEnabled ? 'on' : 'off'}`, { axe: javaScriptEnabled, shows: 'The person was revoked' });
        assert.ok((await t.store.staff.list(t.store.db)).find((member) => member.email === email)?.revokedAt, 'revoked');
      }
    });

    it('a delivery retried and a passkey revoked from the pages with JavaScript off', async () => {
      const page = await signedInWindow(owner, { width: 390, javaScriptEnabled: false });
      smtp.accept();
      await page.goto(`${base}${SECTIONS.deliveries.path}`);
      // One of the order's (its subscription's mail, given up too, names no order).
      const failed = (await undeliveredIn(t.store.db, 'failed')).find((message) => message.orderNumber === orderNumber);
      await submit(page, page.getByRole('form', { name: `Retry message ${failed!.id} of order #${orderNumber}` }).getByRole('button', { name: 'Retry' }));
      assert.equal(new URL(page.url()).search, '?done=delivered');
      await checkPage(page, 'deliveries after a retry', { axe: false, shows: 'The message was delivered.' });

      await page.goto(`${base}${SECTIONS.buyers.path}`);
      await submit(page, page.getByRole('form', { name: 'Revoke every passkey of second@example.com' }).getByRole('button'));
      assert.equal(new URL(page.url()).search, '?done=revoked-all');
      await checkPage(page, 'buyers after a revocation', { axe: false, shows: 'were revoked' });
      assert.equal((await t.store.db.query('select 1 from buyer_passkeys where email = $1', ['second@example.com'])).length, 0);
    });
  });
}
