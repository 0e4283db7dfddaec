/**
 * The buyer's proof on the approval page, in a real headless Chromium (Debian's, through playwright-core) with a
 * virtual WebAuthn authenticator (CDP), against the store listening on loopback with its default proof
 * (APPROVAL_PROOF=passkey-or-code) and mailing its codes to a real SMTP server on loopback:
 *   - a first-time buyer asks for a code, reads it from the mail, types a wrong one (refused, the page says so),
 *     then the right one: the order is placed; on the order page they create a passkey (one row in buyer_passkeys);
 *   - their next checkout offers the passkey, which approves it alone (no code mailed);
 *   - an authenticator that does not verify the user places no order (the checkout still requires_escalation): the
 *     browser refuses it; and when the page's options are changed to not ask for verification, the store refuses it;
 *   - with JavaScript off, the code path works end to end (the passkey part of the page stays hidden);
 *   - five wrong codes lock the code (the right one is then refused too), and five codes in an hour stop the page
 *     offering another;
 *   - axe-core finds no serious or critical violation in any of those states, nor on the order page's passkey offer,
 *     and no page logs a console error (a script refused by the page's CSP would).
 * WebAuthn refuses an IP address as RP ID, so BASE_URL is http://localhost:PORT and the browser opens localhost URLs.
 * One browser for the file; on both backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { freePort, seriousViolations, oneChromiumForTheFile } from '../helpers/browser.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.js';
import { backends, startTestStore, type TestStore } from '../helpers/store.js';


/** The 6-digit code a code mail's subject begins with. */
function codeOf(mail: ReceivedMail | undefined): string {
  const code = /^(\d{6}) /.exec(mail?.subject ?? '')?.[1];
  assert.ok(code, `a code mail: ${JSON.stringify(mail?.subject)}`);
  return code;
}

/** A 6-digit code that is not `code`. */
const otherThan = (code: string, step = 1) => String((Number(code) + step) % 1_000_000).padStart(6, '0');

let browser: Browser;
oneChromiumForTheFile((opened) => (browser = opened));

for (const backend of backends) {
  describe(`the buyer's proof in Chromium, passkeys and mailed codes (${backend.name})`, () => {
    let t: TestStore;
    let smtp: TestSmtpServer;
    let base: string;

    before(async () => {
      smtp = await startSmtpServer();
      const port = await freePort();
      base = `http://localhost:${port}`;
      const config = loadConfig({ BASE_URL: base, DATA_DIR: 'unused', RATE_LIMIT: 'off' });
      assert.equal(config.checkout.approvalProof, 'passkey-or-code', 'the default proof');
      t = await startTestStore(backend, { config: { ...config, storeName: 'Fizz & Sons', mail: { ...config.mail, smtpUrl: smtp.url } } });
      await t.app.listen({ host: '127.0.0.1', port });
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
    });

    const variantIdOf = (sku: string) => t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;

    /** A checkout an agent asked to complete, waiting for its buyer: its id and the continue_url (on localhost). */
    async function awaitingApproval(email: string): Promise<{ id: string; url: string }> {
      const { checkouts, db } = t.store;
      const created = await checkouts.create(
        db,
        {
          lines: [{ variantId: variantIdOf('HYD-LEMONLIME-30'), quantity: 1 }],
          buyer: { email },
          destination: { firstName: 'Ana', streetAddress: '1 Market St', locality: 'San Francisco', region: 'CA', postalCode: '94103', country: 'US' },
          shippingOption: 'standard',
        },
        'agent',
        'agent',
      );
      const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
      const url = `${base}/checkout/approve/${asked.approval!.token}`;
      return { id: created.view.record.id, url };
    }

    const checkoutStatus = async (id: string) => (await t.store.checkouts.get(t.store.db, id))!.view.record.status;
    const ordersOf = async (checkoutId: string) => (await t.store.db.query<{ count: number }>('select count(*)::int as count from orders where checkout_id = $1', [checkoutId]))[0]!.count;
    const passkeysOf = async (email: string) => (await t.store.db.query<{ count: number }>('select count(*)::int as count from buyer_passkeys where email = $1', [email]))[0]!.count;

    /** A browser window that records its console errors and page errors (a CSP violation is one). */
    async function openWindow(options: { javaScriptEnabled?: boolean } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
      const context = await browser.newContext({ javaScriptEnabled: options.javaScriptEnabled ?? true });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (message) => {
        // A refused proof answers 403 (and a limit 429): Chromium logs the document's status; nothing else may appear.
        if (message.type() === 'error' && !/status of (403|429)/.test(message.text())) errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
      return { context, page, errors };
    }

    /** Clicks "Email me a (new) code" and returns the code the SMTP server received for it. */
    async function askForCode(page: Page, email: string): Promise<string> {
      const before = smtp.messages.length;
      await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: /Email me a (new )?code/ }).click()]);
      const mail = (await smtp.waitFor(before + 1))[before];
      assert.deepEqual(mail?.envelope.to, [email], 'the code goes to the checkout buyer email');
      await page.locator('#code').waitFor();
      return codeOf(mail);
    }

    /** Types a code and clicks "Approve and place order". */
    async function typeCode(page: Page, code: string): Promise<void> {
      await page.getByLabel('Code from the email').fill(code);
      await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: /Approve and place order/ }).click()]);
    }

    // The passkey tests share one window: its virtual authenticator holds the passkey created in the first.
    const email = 'first-time@example.com';
    let window: { context: BrowserContext; page: Page; errors: string[]; cdp: CDPSession; authenticatorId: string } | undefined;
    after(async () => {
      await window?.context.close();
    });

    it('a first-time buyer approves with the mailed code (a wrong one refused first), then creates a passkey on the order page', async () => {
      const opened = await openWindow();
      const cdp = await opened.context.newCDPSession(opened.page);
      await cdp.send('WebAuthn.enable');
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
      });
      window = { ...opened, cdp, authenticatorId };
      const { page, errors } = window;
      const checkout = await awaitingApproval(email);

      const response = await page.goto(checkout.url);
      assert.equal(response?.status(), 200);
      assert.equal(new URL(page.url()).hostname, 'localhost', 'the browser is on localhost');
      // A passkey is offered to every email alike (the page never says whether one holds a passkey). This one holds
      // none yet: the device finds no passkey for this store, and the page says to use the code instead.
      await page.locator('#passkey-button').click();
      await page.locator('#passkey-status', { hasText: 'You can use the emailed code instead.' }).waitFor({ timeout: 15_000 });
      assert.equal(await checkoutStatus(checkout.id), 'requires_escalation');
      assert.equal(await page.locator('#code').count(), 0, 'no code field before a code is sent');
      assert.equal(await page.getByRole('button', { name: /Approve and place order/ }).count(), 0, 'no way to approve without a proof');
      assert.deepEqual(await seriousViolations(page), [], 'axe: the approval page before a code is sent');

      const code = await askForCode(page, email);
      assert.match(await page.locator('section.proof').innerText(), /We emailed a 6-digit code to first-time@example\.com/);
      assert.deepEqual(await seriousViolations(page), [], 'axe: the approval page with the code field');

      await typeCode(page, otherThan(code));
      assert.match(await page.locator('#proof-problem').innerText(), /That code is not right\. 4 tries are left\./);
      assert.equal(await checkoutStatus(checkout.id), 'requires_escalation');
      assert.deepEqual(await seriousViolations(page), [], 'axe: the approval page after a wrong code');

      await typeCode(page, code);
      await page.waitForURL(/\/orders\/ord_[A-Za-z0-9_-]{22}$/);
      assert.equal(await checkoutStatus(checkout.id), 'completed');
      assert.equal(await ordersOf(checkout.id), 1);

      // The order page offers a passkey to the browser that just proved the email (its script reveals the offer).
      const create = page.getByRole('button', { name: 'Create a passkey' });
      await create.waitFor({ state: 'visible' });
      assert.deepEqual(await seriousViolations(page), [], 'axe: the order page with the passkey offer');
      await create.click();
      await page.locator('#passkey-enroll-status', { hasText: 'Your passkey is created' }).waitFor({ timeout: 10_000 });
      assert.equal(await passkeysOf(email), 1, 'one passkey registered for the email');
      const { credentials } = await window.cdp.send('WebAuthn.getCredentials', { authenticatorId });
      assert.equal(credentials.length, 1, 'the authenticator holds the passkey');
      assert.equal(credentials[0]!.rpId, 'localhost');
      assert.deepEqual(errors, [], 'no console error (no CSP violation)');
    });

    it('the next checkout for that email offers the passkey, which approves it alone: no code is mailed', async () => {
      assert.ok(window, 'the window of the first test');
      const { page, errors } = window;
      const checkout = await awaitingApproval(email);
      const mailsBefore = smtp.messages.length;

      await page.goto(checkout.url);
      const button = page.locator('#passkey-button');
      await button.waitFor({ state: 'visible' });
      assert.match((await button.innerText()) ?? '', /^Approve with your passkey \(\$/);
      assert.deepEqual(await seriousViolations(page), [], 'axe: the approval page offering the passkey');

      await Promise.all([page.waitForURL(/\/orders\/ord_[A-Za-z0-9_-]{22}$/, { timeout: 15_000 }), button.click()]);
      assert.equal(await checkoutStatus(checkout.id), 'completed');
      assert.equal(await ordersOf(checkout.id), 1);
      assert.equal(await page.locator('#passkey-enroll').count(), 0, 'no passkey offer after a passkey approval');
      assert.equal(smtp.messages.length, mailsBefore, 'no code mail was sent for this checkout');
      const [codes] = await t.store.db.query<{ count: number }>('select count(*)::int as count from approval_codes where checkout_id = $1', [checkout.id]);
      assert.equal(codes!.count, 0, 'no code was made for this checkout');
      const [used] = await t.store.db.query<{ used: boolean }>('select last_used_at is not null as used from buyer_passkeys where email = $1', [email]);
      assert.equal(used!.used, true, 'the passkey was used');
      assert.deepEqual(errors, [], 'no console error');
    });

    it('an authenticator that does not verify the user places no order: the browser refuses it, and so does the store', async () => {
      assert.ok(window, 'the window of the first test');
      const { page, cdp, authenticatorId, errors } = window;
      const checkout = await awaitingApproval(email);
      const button = page.locator('#passkey-button');
      const failuresBefore = t.store.buyerProof.failures.get('passkey:invalid') ?? 0;
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
      try {
        // The store asks for user verification: the browser's WebAuthn refuses (NotAllowedError), and the page says so.
        await page.goto(checkout.url);
        await button.waitFor({ state: 'visible' });
        await button.click();
        await page.locator('#passkey-status', { hasText: 'The passkey was not used. You can use the emailed code instead.' }).waitFor({ timeout: 15_000 });
        assert.equal(await button.isEnabled(), true, 'the button can be used again');
        assert.equal(await checkoutStatus(checkout.id), 'requires_escalation');
        assert.equal(await ordersOf(checkout.id), 0);

        // A page whose options were changed on the way to ask for no verification (as an agent driving the browser
        // could): the authenticator signs without verifying the user, and the store refuses that assertion.
        await page.route('**/checkout/approve/*/passkey', async (route) => {
          const response = await route.fetch();
          const json = (await response.json()) as { options: { userVerification?: string } };
          json.options.userVerification = 'discouraged';
          await route.fulfill({ response, json });
        });
        try {
          await page.goto(checkout.url);
          await button.waitFor({ state: 'visible' });
          const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === checkout.url), button.click()]);
          assert.equal(answer.status(), 403);
          await page.locator('#proof-problem').waitFor();
          assert.equal(await page.locator('#proof-problem').innerText(), 'Your passkey could not confirm this order. Try again, or use the code we email you.');
        } finally {
          await page.unroute('**/checkout/approve/*/passkey');
        }
        assert.equal(t.store.buyerProof.failures.get('passkey:invalid') ?? 0, failuresBefore + 1, 'refused as invalid (no user verification)');
        assert.doesNotMatch(page.url(), /\/orders\//);
        assert.equal(await checkoutStatus(checkout.id), 'requires_escalation');
        assert.equal(await ordersOf(checkout.id), 0);
        assert.deepEqual(await seriousViolations(page), [], 'axe: the approval page after a refused passkey');
        assert.deepEqual(errors, [], 'no console error');
      } finally {
        await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
      }
    });

    it('with JavaScript off, the code path works end to end (the passkey part stays hidden)', async () => {
      const { context, page } = await openWindow({ javaScriptEnabled: false });
      try {
        // Without the script the page offers the code alone (the passkey part stays hidden).
        const checkout = await awaitingApproval(email);
        // A phone: the proof's action is on the first screen, before the code is sent and after.
        await page.setViewportSize({ width: 390, height: 844 });
        const onFirstScreen = async (name: RegExp) => {
          const box = await page.getByRole('button', { name }).boundingBox();
          assert.ok(box && box.y >= 0 && box.y + box.height <= 844, `${name} on the first screen at 390 × 844: ${JSON.stringify(box)}`);
        };
        await page.goto(checkout.url);
        assert.equal(await page.locator('#passkey-approval').count(), 1);
        assert.equal(await page.locator('#passkey-approval').isVisible(), false, 'the passkey part is hidden without the script');
        await onFirstScreen(/^Email me a code$/);
        const code = await askForCode(page, email);
        await onFirstScreen(/^Approve and place order/);
        await typeCode(page, code);
        await page.waitForURL(/\/orders\/ord_[A-Za-z0-9_-]{22}$/);
        assert.match(await page.locator('h1').innerText(), /^Thank you, your order #\d+ is placed$/);
        assert.equal(await page.locator('#passkey-enroll').isVisible(), false, 'no passkey offer without the script');
        assert.equal(await checkoutStatus(checkout.id), 'completed');
        assert.equal(await ordersOf(checkout.id), 1);
      } finally {
        await context.close();
      }
    });

    /** Posts the code form with `code` as the page's own form would (its form token and digest), even when the page shows no code field. */
    async function postCode(page: Page, code: string): Promise<void> {
      await Promise.all([
        page.waitForEvent('load'),
        page.evaluate((typed) => {
          const form = document.createElement('form');
          form.method = 'post';
          form.action = location.pathname;
          const fields: Record<string, string> = { action: 'approve', code: typed };
          for (const name of ['form_token', 'digest']) fields[name] = document.querySelector<HTMLInputElement>(`input[name="${name}"]`)!.value;
          for (const [name, value] of Object.entries(fields)) form.append(Object.assign(document.createElement('input'), { type: 'hidden', name, value }));
          document.body.append(form);
          form.submit();
        }, code),
      ]);
    }

    const attemptsOf = async (checkoutId: string) =>
      (await t.store.db.query<{ attempts: number }>('select attempts from approval_codes where checkout_id = $1 order by id', [checkoutId])).map((row) => row.attempts);

    it('five wrong codes lock the code (the right one is then refused too); five codes in an hour stop the page offering another; axe finds nothing serious in either state', async () => {
      const buyer = 'guesser@example.com';
      const { context, page, errors } = await openWindow();
      try {
        const checkout = await awaitingApproval(buyer);
        await page.goto(checkout.url);
        const code = await askForCode(page, buyer);
        const said: string[] = [];
        for (let attempt = 1; attempt <= 5; attempt++) {
          await typeCode(page, otherThan(code, attempt));
          said.push(await page.locator('#proof-problem').innerText());
        }
        assert.deepEqual(said, [
          'That code is not right. 4 tries are left.',
          'That code is not right. 3 tries are left.',
          'That code is not right. 2 tries are left.',
          'That code is not right. 1 try is left.',
          'That code is not right, and it is now locked. Ask for a new code.',
        ]);
        assert.deepEqual(await attemptsOf(checkout.id), [5], 'each wrong code was counted');
        assert.match(await page.locator('section.proof').innerText(), /Too many wrong codes were tried, so that code is locked\./);
        assert.equal(await page.locator('#code').count(), 0, 'no code field for a locked code');
        assert.equal(await page.getByRole('button', { name: 'Email me a new code' }).count(), 1);
        assert.deepEqual(await seriousViolations(page), [], 'axe: the locked state');
        // The right code no longer works (posted as the code form would).
        await postCode(page, code);
        assert.equal(await page.locator('#proof-problem').innerText(), 'Too many wrong codes were tried. Ask for a new code.');
        assert.equal(await checkoutStatus(checkout.id), 'requires_escalation');
        assert.equal(await ordersOf(checkout.id), 0);

        // Four more codes (five for this checkout within the hour): the page stops offering another.
        let latest = code;
        for (let sent = 2; sent <= 5; sent++) latest = await askForCode(page, buyer);
        assert.match(await page.locator('#code-limit').innerText(), /^Too many codes were sent for this order or this email\. You can ask for a new code in \d+ minutes?\.$/);
        assert.equal(await page.getByRole('button', { name: /Email me/ }).count(), 0);
        assert.equal(await page.locator('#code').count(), 1, 'the newest code can still be typed');
        assert.deepEqual(await seriousViolations(page), [], 'axe: the rate-limited state');

        // The newest code still approves.
        await typeCode(page, latest);
        await page.waitForURL(/\/orders\/ord_[A-Za-z0-9_-]{22}$/);
        assert.equal(await checkoutStatus(checkout.id), 'completed');
        assert.equal(smtp.messages.filter((mail) => mail.envelope.to.includes(buyer)).length, 5);
        assert.deepEqual(errors, [], 'no console error');
      } finally {
        await context.close();
      }
    });
  });
}
