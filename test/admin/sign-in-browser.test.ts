/**
 * Staff sign-in in a real headless Chromium with a virtual WebAuthn authenticator (CDP), against the store listening
 * on loopback, on both backends: a person added from the terminal opens their enrollment link and creates a passkey
 * (signed in at once), signs out, and signs in again with the passkey alone (no email asked). The sign-in and
 * enrollment pages have no serious or critical axe-core violation at 390 and 1280 px, and no page logs a console
 * error (a script refused by the admin's CSP would). WebAuthn refuses an IP address as RP ID, so BASE_URL is
 * http://localhost:PORT; the `__Host-` cookie is kept there (localhost is a secure context).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TERMINAL_ACTOR } from '../../src/audit/audit-log.js';
import { loadConfig } from '../../src/config.js';
import { freePort, seriousViolations, oneChromiumForTheFile, pageWithPasskeys } from '../helpers/browser.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';

let browser: Browser;
oneChromiumForTheFile((opened) => (browser = opened));

const WIDTHS = [390, 1280];

async function accessibleAtEveryWidth(page: Page, what: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    assert.deepEqual(await seriousViolations(page), [], `${what} at ${width} px`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${what} at ${width} px: nothing wider than the screen`);
  }
}

for (const backend of backends) {
  describe(`staff sign-in in Chromium with a passkey (${backend.name})`, () => {
    let t: TestStore;
    let base: string;

    before(async () => {
      const port = await freePort();
      base = `http://localhost:${port}`;
      t = await startTestStore(backend, { config: { ...loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off' }), storeName: 'Fizz & Sons' } });
      await t.app.listen({ host: '127.0.0.1', port });
    });
    after(() => t?.close());

    it('enrolls a passkey from the emailed link, signs out, and signs in again with the passkey alone', async () => {
      const context = await browser.newContext();
      try {
        const { page, errors, cdp, authenticatorId } = await pageWithPasskeys(context);

        const { link } = await t.store.staff.add(t.store.db, TERMINAL_ACTOR, 'ada@example.com', 'owner');
        assert.ok(link.startsWith(`${base}/admin/enroll/`));

        // The enrollment page: who it is for, the button (shown by the script), readable at both widths.
        const opened = await page.goto(link);
        assert.equal(opened?.status(), 200);
        await page.getByRole('heading', { name: 'Create your passkey' }).waitFor();
        assert.ok(await page.getByText('ada@example.com').isVisible());
        await page.getByRole('button', { name: 'Create a passkey' }).waitFor({ state: 'visible' });
        await accessibleAtEveryWidth(page, 'the enrollment page');

        await Promise.all([page.waitForURL(`${base}/admin`), page.getByRole('button', { name: 'Create a passkey' }).click()]);
        assert.ok(await page.getByText('ada@example.com (owner)').isVisible(), 'signed in as the person enrolled');
        const cookies = await context.cookies();
        const session = cookies.find((cookie) => cookie.name === '__Host-storefront-admin');
        assert.ok(session, 'the session cookie');
        assert.equal(session.httpOnly, true);
        assert.equal(session.sameSite, 'Strict');
        assert.equal((await t.store.staff.list(t.store.db)).find((m) => m.email === 'ada@example.com')?.passkeys, 1);
        const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
        assert.equal(credentials.length, 1);
        assert.equal(credentials[0]!.isResidentCredential, true, 'a discoverable passkey: sign-in asks for no email');

        // The link is spent.
        assert.equal((await page.request.get(link)).status(), 404);

        // Sign out: back on the sign-in page, the admin refused.
        await Promise.all([page.waitForURL(`${base}/admin/sign-in`), page.getByRole('button', { name: 'Sign out' }).click()]);
        assert.equal((await page.request.get(`${base}/admin`)).status(), 401);
        await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor({ state: 'visible' });
        await accessibleAtEveryWidth(page, 'the sign-in page');

        // Sign in with the passkey alone: no email typed.
        await Promise.all([page.waitForURL(`${base}/admin`), page.getByRole('button', { name: 'Sign in with a passkey' }).click()]);
        assert.ok(await page.getByText('ada@example.com (owner)').isVisible(), 'signed in again');
        const after = (await context.cookies()).find((cookie) => cookie.name === '__Host-storefront-admin');
        assert.notEqual(after?.value, session.value, 'a new session');
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    });

    it('a spent or unknown link shows a page that says so, accessible at both widths', async () => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        const gone = await page.goto(`${base}/admin/enroll/${'x'.repeat(43)}`);
        assert.equal(gone?.status(), 404);
        await page.getByRole('heading', { name: 'This link no longer works' }).waitFor();
        await accessibleAtEveryWidth(page, 'the spent link page');
        const { link } = await t.store.staff.signInLink(t.store.db, TERMINAL_ACTOR, 'ada@example.com');
        await page.goto(link);
        await accessibleAtEveryWidth(page, 'the sign-in link page');
        await Promise.all([page.waitForURL(`${base}/admin`), page.getByRole('button', { name: 'Sign in' }).click()]);
        assert.ok(await page.getByText('ada@example.com (owner)').isVisible());
      } finally {
        await context.close();
      }
    });
  });
}
