/**
 * Only the buyer can approve (issue 21): the adversarial agent's sequence (GET the continue_url, POST its form back
 * with whatever headers, cookies and body) places no order and changes nothing; the mailed code works once, for
 * its approval, within 10 minutes and 5 tries; sending is bounded per checkout and per email; the code never shows
 * in an answer, a page, a URL or a log line. Through the real app, a real SMTP server on loopback, both backends.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { insertPasskey } from '../../src/checkout/buyer-proof-store.js';
import { CODES_PER_CHECKOUT_PER_HOUR, CODES_PER_EMAIL_PER_HOUR } from '../../src/checkout/buyer-proof.js';
import { ConfigError, loadConfig, type Config } from '../../src/config.js';
import { ucpCheckout } from '../../src/ucp/checkout/ucp-checkout.js';
import { SHIP_TO } from '../helpers/orders.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const BASE_URL = 'http://localhost:3000';
const FORM = 'application/x-www-form-urlencoded';

function proofConfig(smtp: TestSmtpServer, mode = 'passkey-or-code'): Config {
  const config = loadConfig({ BASE_URL, DATA_DIR: 'unused', APPROVAL_PROOF: mode, LOG_LEVEL: 'info' });
  return { ...config, rateLimit: false, mail: { ...config.mail, smtpUrl: smtp.url } };
}

for (const backend of backends) {
  describe(`the buyer's proof before an order (${backend.name})`, () => {
    let smtp: TestSmtpServer;
    let t: TestStore;
    const logLines: string[] = [];

    before(async () => {
      smtp = await startSmtpServer();
      t = await startTestStore(backend, { config: proofConfig(smtp), app: { logger: { write: (line: string) => logLines.push(line) } } });
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
    });
    beforeEach(() => {
      smtp.messages.length = 0;
    });

    const variant = () => t.store.catalog.snapshot.products[0]!.variants[0]!;

    /** An agent's checkout asked to complete: the approval link it would hand the buyer. */
    async function awaitingApproval(email = 'Ann.Buyer@Example.com') {
      const { checkouts, db } = t.store;
      const created = await checkouts.create(db, { lines: [{ variantId: variant().id, quantity: 2 }], buyer: { email }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
      assert.equal(asked.view.record.status, 'requires_escalation');
      return { id: created.view.record.id, token: asked.approval!.token, path: `/checkout/approve/${asked.approval!.token}` };
    }

    /** The page as a browser (or an agent's HTTP client) gets it: its cookie and form fields. */
    async function openPage(path: string) {
      const page = await t.app.inject({ url: path });
      assert.equal(page.statusCode, 200);
      const setCookie = page.headers['set-cookie'];
      const cookie = String(Array.isArray(setCookie) ? setCookie[0] : setCookie).split(';')[0]!;
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)?.[1] ?? '';
      return { cookie, formToken: field('form_token'), digest: field('digest'), html: page.body };
    }

    const post = (path: string, cookie: string | undefined, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url: path, headers: { 'content-type': FORM, ...(cookie ? { cookie } : {}), ...headers }, payload: new URLSearchParams(fields).toString() });

    /** Asks for a code as the person on the page does, and reads it from the mail the SMTP server took. */
    async function mailedCode(path: string, page: { cookie: string; formToken: string; digest: string }) {
      const before = smtp.messages.length;
      const sent = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'send_code' });
      assert.equal(sent.statusCode, 303, sent.body.slice(0, 300));
      assert.equal(sent.headers.location, path);
      const mails = await smtp.waitFor(before + 1);
      const mail = mails[mails.length - 1]!;
      return { code: /^(\d{6}) /.exec(mail.subject ?? '')![1]!, mail };
    }

    /** Everything an approval could have changed: the checkout's status, orders, stock, the outbox. */
    async function snapshot(id: string) {
      const { db } = t.store;
      const [checkout] = await db.query<{ status: string }>('select status from checkouts where id = $1', [id]);
      const [orders] = await db.query<{ n: number }>('select count(*)::int as n from orders');
      const [outbox] = await db.query<{ n: number }>('select count(*)::int as n from outbox');
      const stock = await db.query('select variant_id, on_hand from inventory_levels order by variant_id');
      return { status: checkout!.status, orders: orders!.n, outbox: outbox!.n, stock: JSON.stringify(stock) };
    }

    it('the adversarial sequence (GET the page, POST its form back) places no order, whatever the headers, cookies and body', async () => {
      const { id, path } = await awaitingApproval();
      const page = await openPage(path);
      const before = await snapshot(id);
      assert.equal(before.status, 'requires_escalation');
      const fields = { form_token: page.formToken, digest: page.digest, action: 'approve' };
      const headerSets: Record<string, string>[] = [
        {},
        { origin: 'null' },
        { origin: new URL(BASE_URL).origin },
        { referer: `${BASE_URL}${path}` },
        { 'sec-fetch-site': 'same-origin', origin: new URL(BASE_URL).origin },
      ];
      const bodies: { type: string; payload: string }[] = [
        { type: FORM, payload: new URLSearchParams(fields).toString() },
        { type: FORM, payload: new URLSearchParams({ ...fields, code: '' }).toString() },
        { type: FORM, payload: new URLSearchParams({ ...fields, code: '123456' }).toString() },
        { type: FORM, payload: new URLSearchParams({ ...fields, proof: 'link', approved_by: 'buyer' }).toString() },
        { type: FORM, payload: new URLSearchParams({ ...fields, challenge_id: 'x', assertion: '{"id":"x","response":{}}' }).toString() },
        { type: 'application/json', payload: JSON.stringify(fields) },
        { type: 'application/json', payload: JSON.stringify({ ...fields, code: '000000' }) },
      ];
      for (const headers of headerSets) {
        for (const body of bodies) {
          for (const cookie of [page.cookie, undefined]) {
            const answer = await t.app.inject({ method: 'POST', url: path, headers: { 'content-type': body.type, ...(cookie ? { cookie } : {}), ...headers }, payload: body.payload });
            assert.ok(answer.statusCode >= 400 && answer.statusCode < 500, `${JSON.stringify(headers)} ${body.payload.slice(0, 80)}: ${answer.statusCode}`);
            assert.equal(answer.headers.location, undefined);
          }
        }
      }
      assert.deepEqual(await snapshot(id), before);
      // No code was ever sent (nobody asked for one), so no code could be guessed into an order.
      assert.equal(smtp.messages.length, 0);
      const [codes] = await t.store.db.query<{ n: number }>('select count(*)::int as n from approval_codes');
      assert.equal(codes!.n, 0);
    });

    it('a mailed code approves that checkout once; the buyer may then create a passkey', async () => {
      const { id, path } = await awaitingApproval();
      const page = await openPage(path);
      assert.match(page.html, /Email me a code/);
      // The passkey is offered to every email alike: the page never says whether this one holds a passkey.
      assert.match(page.html, /id="passkey-approval"/, 'a passkey is offered even to an email that holds none');
      const { code, mail } = await mailedCode(path, page);
      // Only to the checkout's buyer email; no link in it.
      assert.deepEqual(mail.envelope.to, ['ann.buyer@example.com']);
      assert.doesNotMatch(String(mail.text), /https?:\/\//);
      const asking = await t.app.inject({ url: path, headers: { cookie: page.cookie } });
      assert.match(asking.body, /Code from the email/);
      assert.ok(!asking.body.includes(code), 'the page never shows the code');
      const approved = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'approve', code });
      assert.equal(approved.statusCode, 303, approved.body.slice(0, 400));
      assert.match(String(approved.headers.location), /^\/orders\/ord_/);
      assert.ok(!String(approved.headers.location).includes(code));
      const enroll = ([] as string[]).concat(approved.headers['set-cookie'] ?? []).find((c) => c.startsWith('passkey_enroll='));
      assert.ok(enroll, 'the browser that typed the code may create a passkey');
      assert.match(enroll, new RegExp(`Path=${approved.headers.location}; HttpOnly; SameSite=Strict`));
      assert.equal((await snapshot(id)).status, 'completed');
      const orderPage = await t.app.inject({ url: String(approved.headers.location), headers: { cookie: enroll.split(';')[0]! } });
      assert.match(orderPage.body, /id="passkey-enroll"/);
      assert.match(String(orderPage.headers['content-security-policy']), /script-src http:\/\/localhost:3000\/checkout\/webauthn\.js http:\/\/localhost:3000\/checkout\/passkey\.js;/);
      const withoutCookie = await t.app.inject({ url: String(approved.headers.location) });
      assert.doesNotMatch(withoutCookie.body, /passkey-enroll/);
      // The same code again: the link shows the order it placed, and places nothing more.
      const again = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'approve', code });
      assert.equal((await snapshot(id)).orders, (await snapshot(id)).orders);
      assert.ok(again.statusCode === 303 || again.statusCode === 200 || again.statusCode === 409);
      const [orders] = await t.store.db.query<{ n: number }>('select count(*)::int as n from orders where checkout_id = $1', [id]);
      assert.equal(orders!.n, 1);
    });

    it('wrong codes are counted: the 5th locks the code, and the right one after it (the 6th) is refused with nothing kept', async () => {
      const { id, path } = await awaitingApproval();
      const page = await openPage(path);
      const { code } = await mailedCode(path, page);
      const wrong = code === '000000' ? '111111' : '000000';
      const before = await snapshot(id);
      const failuresBefore = t.store.buyerProof.failures.get('code:wrong') ?? 0;
      for (let attempt = 1; attempt <= 5; attempt++) {
        const answer = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'approve', code: wrong });
        assert.equal(answer.statusCode, 403);
        assert.match(answer.body, attempt < 5 ? new RegExp(`${5 - attempt} tr(y is|ies are) left`) : /now locked/);
      }
      assert.equal(t.store.buyerProof.failures.get('code:wrong'), failuresBefore + 5);
      const sixth = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'approve', code });
      assert.equal(sixth.statusCode, 403);
      assert.match(sixth.body, /Too many wrong codes/);
      assert.deepEqual(await snapshot(id), before);
      const locked = await t.app.inject({ url: path, headers: { cookie: page.cookie } });
      assert.match(locked.body, /that code is locked/);
      // A new code works again.
      const fresh = await mailedCode(path, page);
      const approved = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'approve', code: fresh.code });
      assert.equal(approved.statusCode, 303);
    });

    it('an expired code, an older code after a new one, and a code of another approval are refused', async () => {
      const { id, path } = await awaitingApproval();
      const page = await openPage(path);
      const first = await mailedCode(path, page);
      await t.store.db.query("update approval_codes set expires_at = now() - interval '1 second' where approval_token = $1", [path.split('/').pop()]);
      const before = await snapshot(id);
      const expired = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'approve', code: first.code });
      assert.equal(expired.statusCode, 403);
      assert.match(expired.body, /expired/);
      assert.deepEqual(await snapshot(id), before);

      const second = await mailedCode(path, page);
      const third = await mailedCode(path, page);
      if (second.code !== third.code) {
        const older = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'approve', code: second.code });
        assert.equal(older.statusCode, 403, 'only the newest code counts');
      }

      // The agent asks to complete again: a new link; the code mailed for the old one does not approve it.
      const renewed = await t.store.checkouts.requestCompletion(t.store.db, id, 'agent');
      const newPath = `/checkout/approve/${renewed.approval!.token}`;
      const newPage = await openPage(newPath);
      const bound = await post(newPath, newPage.cookie, { form_token: newPage.formToken, digest: newPage.digest, action: 'approve', code: third.code });
      assert.equal(bound.statusCode, 403);
      assert.match(bound.body, /No code was sent for this page/);
      // Another checkout's page does not take it either.
      const other = await awaitingApproval('someone.else@example.com');
      const otherPage = await openPage(other.path);
      const foreign = await post(other.path, otherPage.cookie, { form_token: otherPage.formToken, digest: otherPage.digest, action: 'approve', code: third.code });
      assert.equal(foreign.statusCode, 403);
      assert.equal((await snapshot(id)).status, 'requires_escalation');
      assert.equal((await snapshot(other.id)).status, 'requires_escalation');
    });

    it(`codes mailed are bounded: ${CODES_PER_CHECKOUT_PER_HOUR} per checkout and ${CODES_PER_EMAIL_PER_HOUR} per email an hour ("too many codes; try in N minutes")`, async () => {
      const email = 'limits@example.com';
      const { path } = await awaitingApproval(email);
      const page = await openPage(path);
      for (let i = 0; i < CODES_PER_CHECKOUT_PER_HOUR; i++) await mailedCode(path, page);
      const sentBefore = smtp.messages.length;
      const limited = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'send_code' });
      assert.equal(limited.statusCode, 429);
      assert.match(limited.body, /Too many codes; try in \d+ minutes?\./);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.equal(smtp.messages.length, sentBefore, 'nothing was mailed');
      // The page says so while it lasts, and still takes the code already sent.
      const shown = await t.app.inject({ url: path, headers: { cookie: page.cookie } });
      assert.match(shown.body, /You can ask for a new code in \d+ minutes?/);

      // Across checkouts, one email gets at most CODES_PER_EMAIL_PER_HOUR.
      const second = await awaitingApproval(email);
      const secondPage = await openPage(second.path);
      for (let i = CODES_PER_CHECKOUT_PER_HOUR; i < CODES_PER_EMAIL_PER_HOUR; i++) await mailedCode(second.path, secondPage);
      const third = await awaitingApproval(email.toUpperCase());
      const thirdPage = await openPage(third.path);
      const byEmail = await post(third.path, thirdPage.cookie, { form_token: thirdPage.formToken, digest: thirdPage.digest, action: 'send_code' });
      assert.equal(byEmail.statusCode, 429);
      const [count] = await t.store.db.query<{ n: number }>('select count(*)::int as n from approval_codes where email = $1', [email]);
      assert.equal(count!.n, CODES_PER_EMAIL_PER_HOUR);
    });

    it('a code that could not be mailed is not kept and the page says so', async () => {
      const { id, path } = await awaitingApproval('bounce@example.com');
      const page = await openPage(path);
      smtp.refuse(451, { times: 1, message: 'Mailbox <bounce@example.com> is busy' });
      const answer = await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'send_code' });
      assert.equal(answer.statusCode, 503);
      assert.match(answer.body, /could not send the code/);
      const logged = logLines.filter((line) => line.includes('approval code not sent'));
      assert.equal(logged.length, 1);
      assert.match(logged[0]!, /"cause":"smtp 451"/);
      assert.ok(!logLines.join('').includes('bounce@example.com'), "the server's answer quoted the address; the log does not");
      const [codes] = await t.store.db.query<{ n: number }>('select count(*)::int as n from approval_codes where checkout_id = $1', [id]);
      assert.equal(codes!.n, 0);
    });

    it('no tool or agent call sends a code, and no answer, URL or log line carries one', async () => {
      const { id, path } = await awaitingApproval('quiet@example.com');
      const page = await openPage(path);
      const { code } = await mailedCode(path, page);
      // The agent's view of the checkout: the continue_url and the proof it asks, never the code.
      const answer = await t.store.checkouts.get(t.store.db, id);
      assert.ok(!JSON.stringify(answer).includes(code));
      const [row] = await t.store.db.query<{ code_hash: unknown }>('select code_hash from approval_codes where checkout_id = $1', [id]);
      assert.ok(!String(row!.code_hash).includes(code), 'only a hash is kept');
      await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'approve', code: code === '999999' ? '888888' : '999999' });
      await post(path, page.cookie, { form_token: page.formToken, digest: page.digest, action: 'approve', code });
      const log = logLines.join('');
      assert.ok(!log.includes(code), 'the log never holds a code');
      assert.ok(!log.includes('quiet@example.com'), 'nor the email');
      assert.ok(!log.includes(path.split('/').pop()!), 'nor the approval link');
      // What the metrics say.
      const metrics = await t.app.inject({ url: '/metrics' });
      assert.match(metrics.body, /storefront_approval_codes_sent_total \d+/);
      assert.match(metrics.body, /storefront_approval_proof_failures_total\{proof="code",reason="wrong"\} [1-9]/);
    });

    it('the profile and the escalation tell the agent what the buyer will be asked', async () => {
      const profile = await t.app.inject({ url: '/.well-known/ucp' });
      const checkout = profile.json().ucp.capabilities['dev.ucp.shopping.checkout'][0];
      assert.deepEqual(checkout.config.buyer_approval.proof, ['passkey', 'email_code']);
      const { id } = await awaitingApproval();
      const answer = (await t.store.checkouts.get(t.store.db, id))!;
      const mapping = { baseUrl: BASE_URL, policies: t.store.config.checkout.policies, payments: t.store.payments, versions: new Map<string, string>(), release: '2026-04-08' as const };
      const asked = ucpCheckout(answer, { ...mapping, approvalProof: 'passkey-or-code' });
      assert.equal(asked.status, 'requires_escalation');
      const message = (asked.messages as { code: string; content: string }[]).find((m) => m.code === 'buyer_approval_required')!;
      assert.match(message.content, /passkey registered to the checkout's email, or a 6-digit code the store emails/);
      assert.match(message.content, /No tool can request, read or skip this step/);
      const codeOnly = ucpCheckout(answer, { ...mapping, approvalProof: 'code' });
      assert.doesNotMatch((codeOnly.messages as { content: string }[])[0]!.content, /passkey/);
    });
  });
}

describe('APPROVAL_PROOF', () => {
  it('is passkey-or-code by default, and takes code or link; anything else names the variable', () => {
    assert.equal(loadConfig({}).checkout.approvalProof, 'passkey-or-code');
    assert.equal(loadConfig({ APPROVAL_PROOF: 'code' }).checkout.approvalProof, 'code');
    assert.equal(loadConfig({ APPROVAL_PROOF: 'link' }).checkout.approvalProof, 'link');
    assert.throws(() => loadConfig({ APPROVAL_PROOF: 'none' }), (error: unknown) => error instanceof ConfigError && error.variable === 'APPROVAL_PROOF');
  });

  it('link mode: the page says no proof is asked, and the form alone approves (development only)', async () => {
    const smtp = await startSmtpServer();
    const t = await startTestStore(backends[0]!, { config: proofConfig(smtp, 'link') });
    try {
      const v = t.store.catalog.snapshot.products[0]!.variants[0]!;
      const created = await t.store.checkouts.create(t.store.db, { lines: [{ variantId: v.id, quantity: 1 }], buyer: { email: 'dev@example.com' }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await t.store.checkouts.requestCompletion(t.store.db, created.view.record.id, 'agent');
      const path = `/checkout/approve/${asked.approval!.token}`;
      const page = await t.app.inject({ url: path });
      assert.match(page.body, /No proof is asked/);
      assert.doesNotMatch(page.body, /Email me a code/);
      const profile = await t.app.inject({ url: '/.well-known/ucp' });
      assert.deepEqual(profile.json().ucp.capabilities['dev.ucp.shopping.checkout'][0].config.buyer_approval.proof, []);
      const setCookie = page.headers['set-cookie'];
      const cookie = String(Array.isArray(setCookie) ? setCookie[0] : setCookie).split(';')[0]!;
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)![1]!;
      const approved = await t.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': FORM, cookie },
        payload: new URLSearchParams({ form_token: field('form_token'), digest: field('digest'), action: 'approve' }).toString(),
      });
      assert.equal(approved.statusCode, 303);
      assert.match(String(approved.headers.location), /^\/orders\/ord_/);
      assert.equal(smtp.messages.length, 0, 'no code mail in link mode');
    } finally {
      await t.close();
      await smtp.close();
    }
  });

  it('a BASE_URL naming an IP address (no passkey can bind to it) offers the code alone, and no passkey after it', async () => {
    const smtp = await startSmtpServer();
    const config = loadConfig({ BASE_URL: 'http://127.0.0.1:3000', DATA_DIR: 'unused' });
    const t = await startTestStore(backends[0]!, { config: { ...config, rateLimit: false, mail: { ...config.mail, smtpUrl: smtp.url } } });
    try {
      await insertPasskey(t.store.db, { id: 'cred-ip', email: 'ip@example.com', publicKey: new Uint8Array([1]), counter: 0, transports: [], deviceType: 'singleDevice', backedUp: false, createdAt: new Date() });
      const v = t.store.catalog.snapshot.products[0]!.variants[0]!;
      const created = await t.store.checkouts.create(t.store.db, { lines: [{ variantId: v.id, quantity: 1 }], buyer: { email: 'ip@example.com' }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await t.store.checkouts.requestCompletion(t.store.db, created.view.record.id, 'agent');
      const path = `/checkout/approve/${asked.approval!.token}`;
      const page = await t.app.inject({ url: path });
      assert.doesNotMatch(page.body, /passkey-approval/, 'the email holds a passkey, but none can work here');
      const profile = await t.app.inject({ url: '/.well-known/ucp' });
      assert.deepEqual(profile.json().ucp.capabilities['dev.ucp.shopping.checkout'][0].config.buyer_approval.proof, ['email_code'], 'the profile says so too');
      const cookie = String((page.headers['set-cookie'] as string[] | string)).split(';')[0]!;
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)![1]!;
      const form = (extra: Record<string, string>) =>
        t.app.inject({ method: 'POST', url: path, headers: { 'content-type': FORM, cookie }, payload: new URLSearchParams({ form_token: field('form_token'), digest: field('digest'), ...extra }).toString() });
      assert.equal((await form({ action: 'send_code' })).statusCode, 303);
      const [mail] = await smtp.waitFor(1);
      const approved = await form({ action: 'approve', code: /^(\d{6})/.exec(mail!.subject!)![1]! });
      assert.equal(approved.statusCode, 303);
      assert.ok(!([] as string[]).concat(approved.headers['set-cookie'] ?? []).some((c) => c.startsWith('passkey_enroll=')), 'no passkey offer');
    } finally {
      await t.close();
      await smtp.close();
    }
  });
});
