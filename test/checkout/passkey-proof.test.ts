/**
 * Passkeys as the buyer's proof on the approval page (issue 21, APPROVAL_PROOF=passkey-or-code), over HTTP on both
 * backends, with a real SMTP server for the codes and a software authenticator making real WebAuthn responses: a
 * buyer who approved with a mailed code registers a passkey from the order page (once, from that browser), then
 * approves the next checkout of that email with it alone. Every assertion that is not exactly the right one
 * (replayed, altered, for another checkout, over an expired challenge, without user verification, from a credential
 * the email does not hold, or none) re-renders the page with 403, is counted on /metrics, and keeps nothing; each
 * refusal is followed by the untouched proof succeeding, so it was the alteration that was refused.
 * The page and the passkey options are the same for an email with passkeys and one without (no credential listed,
 * a discoverable credential registered). APPROVAL_PROOF=code never takes a passkey.
 *
 * The tests of one backend run in order: the passkeys registered by the first are used by the next.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { approvalChallenge } from '../../src/checkout/buyer-proof.js';
import { insertChallenge, insertPasskey } from '../../src/checkout/buyer-proof-store.js';
import { loadConfig, type ApprovalProofMode, type Config } from '../../src/config.js';
import { contentSecurityPolicy } from '../../src/storefront/page-policy.js';
import { SHIP_TO } from '../helpers/orders.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

/** BASE_URL: its origin is where passkeys are used, its host (localhost) the WebAuthn RP ID. */
const ORIGIN = 'http://localhost:3000';
/** The buyer, as the agent typed the email (the proof is for the mailbox, whatever its case). */
const BUYER = 'Pat.Buyer@Example.COM';
const BUYER_KEY = 'pat.buyer@example.com';
const OTHER = 'sam@example.com';
const SKU = 'HYD-LEMONLIME-30';
const QUANTITY = 2;

function proofConfig(mode: ApprovalProofMode, smtpUrl: string): Partial<Config> {
  const base = loadConfig({ BASE_URL: ORIGIN, DATA_DIR: 'unused', APPROVAL_PROOF: mode });
  return { ...base, rateLimit: false, mail: { ...base.mail, smtpUrl } };
}

/** What a browser keeps from the approval page: its cookie, and the form's hidden fields. */
interface OpenedPage {
  token: string;
  html: string;
  headers: LightMyRequestResponse['headers'];
  cookie: string;
  formToken: string;
  digest: string;
}

interface Challenge {
  challenge_id: string;
  options: any;
}

const cookieNamed = (response: LightMyRequestResponse, name: string): string | undefined =>
  ([] as string[])
    .concat(response.headers['set-cookie'] ?? [])
    .find((c) => c.startsWith(`${name}=`))
    ?.split(';')[0];

/** Flips the bits of one byte of a base64url field, somewhere after `from`. */
function flipByte(field: string, from = 0): string {
  const bytes = Buffer.from(field, 'base64url');
  const at = from + ((bytes.length - from) >> 1);
  bytes[at] = bytes[at]! ^ 0xff;
  return bytes.toString('base64url');
}

/** A credential the store never saw: made by the authenticator alone, for this RP. */
function unregisteredCredential(authenticator: SoftwareAuthenticator): string {
  const response = authenticator.register(
    {
      rp: { id: 'localhost', name: 'nobody' },
      user: { id: randomBytes(16).toString('base64url'), name: 'nobody', displayName: 'nobody' },
      challenge: randomBytes(32).toString('base64url'),
      pubKeyCredParams: [{ alg: -7, type: 'public-key' }],
    },
    ORIGIN,
  );
  return response.id;
}

for (const backend of backends) {
  describe(`passkeys as the buyer's proof (${backend.name})`, () => {
    let smtp: TestSmtpServer;
    let t: TestStore;
    /** The buyer's device, and another buyer's (OTHER), each holding one registered passkey after the first test. */
    const buyerDevice = new SoftwareAuthenticator();
    const otherDevice = new SoftwareAuthenticator();

    before(async () => {
      smtp = await startSmtpServer();
      t = await startTestStore(backend, { config: proofConfig('passkey-or-code', smtp.url) });
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
    });

    const variantId = (): number => {
      const variant = t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === SKU);
      if (!variant) throw new Error(`no variant ${SKU}`);
      return variant.id;
    };

    const onHand = async (): Promise<number> =>
      (await t.store.db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variantId()]))[0]!.on_hand;

    /** A checkout an agent filled and asked to complete: it waits for the buyer, with an approval link. */
    async function pendingCheckout(email: string): Promise<{ id: string; token: string }> {
      const { checkouts, db } = t.store;
      const created = await checkouts.create(db, { lines: [{ variantId: variantId(), quantity: QUANTITY }], buyer: { email }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
      const asked = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
      assert.equal(asked.view.record.status, 'requires_escalation');
      return { id: created.view.record.id, token: asked.approval!.token };
    }

    async function openPage(token: string): Promise<OpenedPage> {
      const response = await t.app.inject({ method: 'GET', url: `/checkout/approve/${token}` });
      assert.equal(response.statusCode, 200, response.body);
      const cookie = cookieNamed(response, 'approval_form');
      assert.ok(cookie, 'the approval page sets the form cookie');
      const field = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(response.body)?.[1];
      return { token, html: response.body, headers: response.headers, cookie, formToken: field('form_token')!, digest: field('digest')! };
    }

    /** The page's form, posted as the browser posts it (from the store's origin, with the page's cookie). */
    function postForm(page: OpenedPage, fields: Record<string, string>): Promise<LightMyRequestResponse> {
      return t.app.inject({
        method: 'POST',
        url: `/checkout/approve/${page.token}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie, origin: ORIGIN },
        payload: new URLSearchParams({ form_token: page.formToken, digest: page.digest, ...fields }).toString(),
      });
    }

    function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
      return t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
    }

    /** The passkey script's request for a challenge bound to this page's approval. */
    async function passkeyChallenge(page: OpenedPage): Promise<Challenge> {
      const response = await postJson(`/checkout/approve/${page.token}/passkey`, { form_token: page.formToken, digest: page.digest }, { cookie: page.cookie, origin: ORIGIN });
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    }

    const approveWith = (page: OpenedPage, challengeId: string, assertion: unknown) =>
      postForm(page, { action: 'approve', challenge_id: challengeId, assertion: typeof assertion === 'string' ? assertion : JSON.stringify(assertion) });

    /** The buyer asks for a code, reads it in the mail, types it: the order is placed and the browser may enroll a passkey. */
    async function approveWithCode(email: string): Promise<{ checkoutId: string; orderId: string; enrollCookie: string }> {
      const checkout = await pendingCheckout(email);
      const page = await openPage(checkout.token);
      const mailed = smtp.messages.length;
      const sent = await postForm(page, { action: 'send_code' });
      assert.equal(sent.statusCode, 303, sent.body);
      const mail = (await smtp.waitFor(mailed + 1)).at(-1)!;
      assert.deepEqual(mail.envelope.to, [email.toLowerCase()]);
      const code = /^(\d{6}) /.exec(mail.subject ?? '')?.[1];
      assert.ok(code, `a code in the subject: ${mail.subject}`);
      const approved = await postForm(page, { action: 'approve', code });
      assert.equal(approved.statusCode, 303, approved.body);
      const orderId = /^\/orders\/(ord_[A-Za-z0-9_-]{22})$/.exec(approved.headers.location ?? '')?.[1];
      assert.ok(orderId, `redirected to the order page: ${approved.headers.location}`);
      const enrollCookie = cookieNamed(approved, 'passkey_enroll');
      assert.ok(enrollCookie, 'a code grants the browser a passkey enrollment');
      return { checkoutId: checkout.id, orderId, enrollCookie };
    }

    const registrationOptions = (orderId: string, headers: Record<string, string>) => postJson(`/orders/${orderId}/passkey/options`, {}, { origin: ORIGIN, ...headers });
    const registerCredential = (orderId: string, challengeId: string, response: unknown, headers: Record<string, string>) =>
      postJson(`/orders/${orderId}/passkey`, { challenge_id: challengeId, response: JSON.stringify(response) }, { origin: ORIGIN, ...headers });

    const passkeyRows = () =>
      t.store.db.query<{ id: string; email: string; counter: number | string; last_used_at: unknown }>('select id, email, counter, last_used_at from buyer_passkeys order by created_at, id');

    /** The assertion the second test approved with, for the replay test. */
    let replayed: { challengeId: string; assertion: unknown } | undefined;

    const failures = (): Record<string, number> => Object.fromEntries(t.store.buyerProof.failures);

    /** The checkout still waits for the buyer, holds no order, and took no stock. */
    async function assertNothingKept(checkoutId: string, stock: number): Promise<void> {
      const checkout = await t.store.checkouts.get(t.store.db, checkoutId);
      assert.equal(checkout!.view.record.status, 'requires_escalation');
      assert.equal(checkout!.view.record.orderId ?? null, null);
      const orders = await t.store.db.query<{ n: number }>('select count(*)::int as n from orders where checkout_id = $1', [checkoutId]);
      assert.equal(orders[0]!.n, 0, 'no order row');
      assert.equal(await onHand(), stock, 'stock unchanged');
    }

    /**
     * A refused assertion: the same page again with 403 and the reason, the named passkey failure counted once more
     * (in the service and on /metrics), and nothing kept.
     */
    async function assertRefused(send: () => Promise<LightMyRequestResponse>, reason: string | undefined, checkoutId: string, stock: number): Promise<LightMyRequestResponse> {
      const counted = failures();
      const response = await send();
      assert.equal(response.statusCode, 403, response.body);
      assert.equal(response.headers.location, undefined);
      assert.match(response.body, /<h1>Approve your order<\/h1>/, 'the approval page again');
      assert.match(response.body, /id="proof-problem"/, 'saying why');
      assert.equal(cookieNamed(response, 'passkey_enroll'), undefined);
      const now = failures();
      const expected = { ...counted };
      if (reason) expected[`passkey:${reason}`] = (counted[`passkey:${reason}`] ?? 0) + 1;
      assert.deepEqual(now, expected, `counted as passkey:${reason ?? '(nothing)'}`);
      if (reason) {
        const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
        assert.equal(metrics.statusCode, 200);
        assert.match(metrics.body, new RegExp(`^storefront_approval_proof_failures_total\\{proof="passkey",reason="${reason}"\\} ${expected[`passkey:${reason}`]}$`, 'm'));
      }
      await assertNothingKept(checkoutId, stock);
      return response;
    }

    /** The untouched proof still works: the refusal was about what was changed, and nothing was used up. */
    async function assertPlacedWith(page: OpenedPage, checkoutId: string, challenge: Challenge, device = buyerDevice): Promise<void> {
      const placed = await approveWith(page, challenge.challenge_id, device.authenticate(challenge.options, ORIGIN));
      assert.equal(placed.statusCode, 303, placed.body);
      const checkout = await t.store.checkouts.get(t.store.db, checkoutId);
      assert.equal(checkout!.view.record.status, 'completed');
      assert.equal(placed.headers.location, `/orders/${checkout!.view.record.orderId}`);
    }

    it('a buyer who approved with a code registers a passkey, once, only from the order page that code opened', async () => {
      const first = await approveWithCode(BUYER);
      const second = await approveWithCode(OTHER);

      // The order page offers it to that browser only.
      const withCookie = await t.app.inject({ method: 'GET', url: `/orders/${first.orderId}`, headers: { cookie: first.enrollCookie } });
      assert.match(withCookie.body, /id="passkey-enroll"/);
      const withoutCookie = await t.app.inject({ method: 'GET', url: `/orders/${first.orderId}` });
      assert.equal(withoutCookie.statusCode, 200);
      assert.doesNotMatch(withoutCookie.body, /id="passkey-enroll"/);

      // No cookie, or the cookie of one order used on another order's path: refused, nothing stored.
      assert.equal((await registrationOptions(first.orderId, {})).statusCode, 403);
      assert.equal((await registrationOptions(second.orderId, { cookie: first.enrollCookie })).statusCode, 403);
      assert.equal((await registrationOptions(first.orderId, { cookie: second.enrollCookie })).statusCode, 403);
      assert.equal((await registrationOptions(first.orderId, { cookie: first.enrollCookie, origin: 'https://evil.example' })).statusCode, 403);

      const offered = await registrationOptions(first.orderId, { cookie: first.enrollCookie });
      assert.equal(offered.statusCode, 200, offered.body);
      const { challenge_id: challengeId, options } = offered.json();
      assert.equal(options.rp.id, 'localhost');
      assert.equal(options.user.name, BUYER_KEY);
      assert.equal(options.authenticatorSelection.userVerification, 'required');
      assert.equal(options.authenticatorSelection.residentKey, 'required', 'a discoverable credential: approvals list none');

      const stranger = new SoftwareAuthenticator();
      const noCookie = await registerCredential(first.orderId, challengeId, stranger.register(options, ORIGIN), {});
      assert.equal(noCookie.statusCode, 403, noCookie.body);
      const otherPath = await registerCredential(second.orderId, challengeId, stranger.register(options, ORIGIN), { cookie: first.enrollCookie });
      assert.equal(otherPath.statusCode, 409, otherPath.body);
      // A credential made for another site, or without user verification, is not taken (and uses nothing up).
      const elsewhere = await registerCredential(first.orderId, challengeId, stranger.register(options, 'https://evil.example'), { cookie: first.enrollCookie });
      assert.equal(elsewhere.statusCode, 409, elsewhere.body);
      const unverified = await registerCredential(first.orderId, challengeId, stranger.register(options, ORIGIN, { userVerified: false }), { cookie: first.enrollCookie });
      assert.equal(unverified.statusCode, 409, unverified.body);
      assert.deepEqual(await passkeyRows(), [], 'nothing stored');

      const registration = buyerDevice.register(options, ORIGIN);
      const registered = await registerCredential(first.orderId, challengeId, registration, { cookie: first.enrollCookie });
      assert.equal(registered.statusCode, 201, registered.body);
      assert.equal(registered.json().passkey.id, registration.id);
      assert.match(String(registered.headers['set-cookie']), /passkey_enroll=;/, 'the enrollment cookie is cleared');
      const rows = await passkeyRows();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.id, registration.id);
      assert.equal(rows[0]!.email, BUYER_KEY);
      assert.equal(Number(rows[0]!.counter), 0);
      assert.equal(rows[0]!.last_used_at, null);

      // Single use: the same cookie neither asks for new options nor registers another credential.
      assert.equal((await registrationOptions(first.orderId, { cookie: first.enrollCookie })).statusCode, 403);
      const again = await registerCredential(first.orderId, challengeId, stranger.register(options, ORIGIN), { cookie: first.enrollCookie });
      assert.equal(again.statusCode, 409, again.body);
      assert.equal((await passkeyRows()).length, 1);

      // The other buyer's browser registers one for OTHER (used below as "a passkey of another email").
      const otherOffered = await registrationOptions(second.orderId, { cookie: second.enrollCookie });
      assert.equal(otherOffered.statusCode, 200, otherOffered.body);
      const otherRegistered = await registerCredential(second.orderId, otherOffered.json().challenge_id, otherDevice.register(otherOffered.json().options, ORIGIN), { cookie: second.enrollCookie });
      assert.equal(otherRegistered.statusCode, 201, otherRegistered.body);
      assert.deepEqual((await passkeyRows()).map((row) => row.email).sort(), [BUYER_KEY, OTHER]);
    });

    it("the next checkout of that email offers the passkey, and an assertion over the page's challenge approves it", async () => {
      // The agent types the email in another case: the passkey is the mailbox's.
      const checkout = await pendingCheckout('pat.BUYER@example.com');
      const page = await openPage(checkout.token);
      assert.match(page.html, /id="passkey-approval" data-options="\/checkout\/approve\/[A-Za-z0-9_-]{43}\/passkey"/);
      assert.match(page.html, /<script /);
      assert.match(String(page.headers['content-security-policy']), /script-src http:\/\/localhost:3000\/checkout\/webauthn\.js http:\/\/localhost:3000\/checkout\/passkey\.js/);

      // The challenge is for the page's browser, from this store.
      const challengeUrl = `/checkout/approve/${checkout.token}/passkey`;
      assert.equal((await postJson(challengeUrl, { form_token: page.formToken })).statusCode, 403, 'no cookie');
      assert.equal((await postJson(challengeUrl, { form_token: 'x'.repeat(43) }, { cookie: page.cookie })).statusCode, 403, 'another form token');
      assert.equal((await postJson(challengeUrl, { form_token: page.formToken }, { cookie: page.cookie, origin: 'https://evil.example' })).statusCode, 403, 'another site');

      const challenge = await passkeyChallenge(page);
      assert.equal(challenge.options.rpId, 'localhost');
      assert.equal(challenge.options.userVerification, 'required');
      assert.deepEqual(challenge.options.allowCredentials ?? [], [], 'no credential listed: the device offers the passkeys it holds');
      const [stored] = await t.store.db.query<{ challenge: string; approval_token: string; email: string }>('select challenge, approval_token, email from webauthn_challenges where id = $1', [challenge.challenge_id]);
      assert.deepEqual(stored, { challenge: challenge.options.challenge, approval_token: checkout.token, email: BUYER_KEY });

      const stock = await onHand();
      const assertion = buyerDevice.authenticate(challenge.options, ORIGIN);
      const approved = await approveWith(page, challenge.challenge_id, assertion);
      assert.equal(approved.statusCode, 303, approved.body);
      const after = await t.store.checkouts.get(t.store.db, checkout.id);
      assert.equal(after!.view.record.status, 'completed');
      assert.equal(approved.headers.location, `/orders/${after!.view.record.orderId}`);
      assert.equal(cookieNamed(approved, 'passkey_enroll'), undefined, 'a passkey approval grants no enrollment');
      assert.equal(await onHand(), stock - QUANTITY);
      const transitions = await t.store.db.query<{ reason: string }>("select reason from checkout_transitions where checkout_id = $1 and to_status = 'complete_in_progress'", [checkout.id]);
      assert.deepEqual(transitions.map((row) => row.reason), ['approved by the buyer on the approval page (proven with a passkey)']);

      const [passkey] = (await passkeyRows()).filter((row) => row.id === assertion.id);
      assert.equal(Number(passkey!.counter), 1, 'the counter advanced');
      assert.ok(passkey!.last_used_at, 'last_used_at set');
      const [used] = await t.store.db.query<{ used_at: unknown }>('select used_at from webauthn_challenges where id = $1', [challenge.challenge_id]);
      assert.ok(used!.used_at, 'the challenge is used');
      assert.deepEqual(failures(), {}, 'no failure counted');

      // Posting the same assertion again shows the order it placed, placing nothing more.
      const orders = await t.store.db.query<{ n: number }>('select count(*)::int as n from orders');
      const repeated = await approveWith(page, challenge.challenge_id, assertion);
      assert.equal(repeated.statusCode, 303);
      assert.equal(repeated.headers.location, approved.headers.location);
      assert.deepEqual(await t.store.db.query<{ n: number }>('select count(*)::int as n from orders'), orders);
      assert.equal(await onHand(), stock - QUANTITY);

      replayed = { challengeId: challenge.challenge_id, assertion };
    });

    it('refuses a replayed assertion: with its own challenge on another checkout, or with the new checkout\'s challenge, or a counter that did not advance', async () => {
      assert.ok(replayed, 'the previous test approved with a passkey');
      const { challengeId: usedChallenge, assertion: usedAssertion } = replayed;
      const checkout = await pendingCheckout(BUYER);
      const page = await openPage(checkout.token);
      const stock = await onHand();

      await assertRefused(() => approveWith(page, usedChallenge, usedAssertion), 'unknown_challenge', checkout.id, stock);
      const challenge = await passkeyChallenge(page);
      await assertRefused(() => approveWith(page, challenge.challenge_id, usedAssertion), 'invalid', checkout.id, stock);
      // A right signature over this challenge, but the counter the store already saw (a cloned authenticator).
      const stale = buyerDevice.authenticate(challenge.options, ORIGIN, { counter: buyerDevice.counterOf(buyerDevice.credentialIds[0]!) });
      await assertRefused(() => approveWith(page, challenge.challenge_id, stale), 'invalid', checkout.id, stock);

      await assertPlacedWith(page, checkout.id, challenge);
    });

    it('refuses an altered assertion: a byte of its signature, its client data or its authenticator data', async () => {
      const checkout = await pendingCheckout(BUYER);
      const page = await openPage(checkout.token);
      const stock = await onHand();
      const challenge = await passkeyChallenge(page);
      const assertion = buyerDevice.authenticate(challenge.options, ORIGIN);
      const altered = [
        { ...assertion, response: { ...assertion.response, signature: flipByte(assertion.response.signature, 8) } },
        { ...assertion, response: { ...assertion.response, clientDataJSON: flipByte(assertion.response.clientDataJSON) } },
        // Client data still well-formed JSON with the same fields (one space added): only the signed bytes differ.
        {
          ...assertion,
          response: {
            ...assertion.response,
            clientDataJSON: Buffer.from(Buffer.from(assertion.response.clientDataJSON, 'base64url').toString().replace('"crossOrigin":false', '"crossOrigin":false ')).toString('base64url'),
          },
        },
        { ...assertion, response: { ...assertion.response, authenticatorData: flipByte(assertion.response.authenticatorData, 33) } },
      ];
      for (const forged of altered) await assertRefused(() => approveWith(page, challenge.challenge_id, forged), 'invalid', checkout.id, stock);
      await assertRefused(() => approveWith(page, challenge.challenge_id, '{not json'), 'malformed', checkout.id, stock);

      await assertPlacedWith(page, checkout.id, challenge);
    });

    it("refuses an assertion for another checkout's challenge", async () => {
      const a = await pendingCheckout(BUYER);
      const b = await pendingCheckout(BUYER);
      const pageA = await openPage(a.token);
      const pageB = await openPage(b.token);
      const stock = await onHand();
      const challengeA = await passkeyChallenge(pageA);
      const challengeB = await passkeyChallenge(pageB);
      const signedForA = buyerDevice.authenticate(challengeA.options, ORIGIN);

      // A's challenge_id and A's assertion on B's page; then A's assertion with B's challenge_id.
      await assertRefused(() => approveWith(pageB, challengeA.challenge_id, signedForA), 'unknown_challenge', b.id, stock);
      await assertRefused(() => approveWith(pageB, challengeB.challenge_id, signedForA), 'invalid', b.id, stock);
      // A is untouched by what was tried on B; each still takes its own proof (the refusals used nothing up).
      await assertNothingKept(a.id, stock);

      await assertPlacedWith(pageB, b.id, challengeB);
      const stillA = await t.store.checkouts.get(t.store.db, a.id);
      assert.equal(stillA!.view.record.status, 'requires_escalation');
      await assertPlacedWith(pageA, a.id, challengeA);
    });

    it('refuses an assertion over a challenge that expired', async () => {
      const checkout = await pendingCheckout(BUYER);
      const page = await openPage(checkout.token);
      const stock = await onHand();
      const challenge = await passkeyChallenge(page);
      await t.store.db.query("update webauthn_challenges set expires_at = now() - interval '1 second' where id = $1", [challenge.challenge_id]);
      await assertRefused(() => approveWith(page, challenge.challenge_id, buyerDevice.authenticate(challenge.options, ORIGIN)), 'expired', checkout.id, stock);
      await assertPlacedWith(page, checkout.id, await passkeyChallenge(page));
    });

    it('refuses an assertion without user verification', async () => {
      const checkout = await pendingCheckout(BUYER);
      const page = await openPage(checkout.token);
      const stock = await onHand();
      const challenge = await passkeyChallenge(page);
      const unverified = buyerDevice.authenticate(challenge.options, ORIGIN, { userVerified: false });
      await assertRefused(() => approveWith(page, challenge.challenge_id, unverified), 'invalid', checkout.id, stock);
      await assertPlacedWith(page, checkout.id, challenge);
    });

    it('refuses an assertion from a credential this email does not hold: unregistered, or registered to another email', async () => {
      const checkout = await pendingCheckout(BUYER);
      const page = await openPage(checkout.token);
      const stock = await onHand();
      const challenge = await passkeyChallenge(page);

      const stranger = new SoftwareAuthenticator();
      const unknown = stranger.authenticate(challenge.options, ORIGIN, { credentialId: unregisteredCredential(stranger) });
      await assertRefused(() => approveWith(page, challenge.challenge_id, unknown), 'unknown_passkey', checkout.id, stock);
      const othersKey = otherDevice.authenticate(challenge.options, ORIGIN, { credentialId: otherDevice.credentialIds[0] });
      await assertRefused(() => approveWith(page, challenge.challenge_id, othersKey), 'unknown_passkey', checkout.id, stock);
      // The other buyer's passkey under the buyer's credential id: the signature is not the registered key's.
      await assertRefused(() => approveWith(page, challenge.challenge_id, { ...othersKey, id: buyerDevice.credentialIds[0], rawId: buyerDevice.credentialIds[0] }), 'invalid', checkout.id, stock);

      await assertPlacedWith(page, checkout.id, challenge);
    });

    it('refuses a bare approve (no proof at all), counting no passkey failure', async () => {
      const checkout = await pendingCheckout(BUYER);
      const page = await openPage(checkout.token);
      const stock = await onHand();
      const bare = await assertRefused(() => postForm(page, { action: 'approve' }), undefined, checkout.id, stock);
      assert.match(bare.body, /Confirm it is you first: use your passkey, or the code we email you\./);
      assert.match(bare.body, /id="passkey-approval"/, 'the page still offers the passkey');
      // A challenge without an assertion (or an assertion without a challenge) is no proof either.
      const challenge = await passkeyChallenge(page);
      await assertRefused(() => postForm(page, { action: 'approve', challenge_id: challenge.challenge_id }), undefined, checkout.id, stock);
      await assertRefused(() => postForm(page, { action: 'approve', assertion: JSON.stringify(buyerDevice.authenticate(challenge.options, ORIGIN)) }), undefined, checkout.id, stock);

      await assertPlacedWith(page, checkout.id, challenge);
    });

    it('the page and the passkey options are the same for an email with passkeys and one without: no credential id, nothing read', async () => {
      const withPasskeys = await openPage((await pendingCheckout(BUYER)).token);
      const without = await openPage((await pendingCheckout('no.passkeys@example.com')).token);
      // The proof part of each page, with what differs by checkout (its link, form secret, digest, email) set aside.
      const proofPart = (page: OpenedPage, email: string) =>
        /<section class="proof"[\s\S]*?<\/section>/
          .exec(page.html)![0]
          .replaceAll(page.token, 'TOKEN')
          .replaceAll(page.formToken, 'FORM')
          .replaceAll(page.digest, 'DIGEST')
          .replaceAll(email, 'EMAIL');
      assert.equal(proofPart(without, 'no.passkeys@example.com'), proofPart(withPasskeys, BUYER_KEY));
      assert.match(without.html, /id="passkey-approval"/);
      assert.equal(without.headers['content-security-policy'], withPasskeys.headers['content-security-policy']);

      const answers = [await passkeyChallenge(withPasskeys), await passkeyChallenge(without)];
      /** A JSON value's shape: its keys and the types of its leaves, not their values. */
      const shape = (value: unknown): unknown =>
        Array.isArray(value) ? value.map(shape) : value !== null && typeof value === 'object' ? Object.fromEntries(Object.entries(value).sort().map(([k, v]) => [k, shape(v)])) : typeof value;
      assert.deepEqual(shape(answers[1]), shape(answers[0]));
      for (const answer of answers) {
        assert.equal(answer.options.allowCredentials, undefined);
        const text = JSON.stringify(answer);
        for (const id of [...buyerDevice.credentialIds, ...otherDevice.credentialIds]) assert.ok(!text.includes(id), `a credential id in ${text}`);
      }
      // The options name the same relying party, verification and timeout: only the challenge differs.
      const { challenge: _first, ...first } = answers[0]!.options;
      const { challenge: _second, ...second } = answers[1]!.options;
      assert.deepEqual(second, first);

      // The buyer's own passkey still cannot approve another email's checkout.
      const stock = await onHand();
      const checkout = await pendingCheckout('no.passkeys@example.com');
      const page = await openPage(checkout.token);
      const challenge = await passkeyChallenge(page);
      await assertRefused(() => approveWith(page, challenge.challenge_id, buyerDevice.authenticate(challenge.options, ORIGIN)), 'unknown_passkey', checkout.id, stock);
    });

    describe('APPROVAL_PROOF=code', () => {
      let codeStore: TestStore;
      before(async () => {
        codeStore = await startTestStore(backend, { config: proofConfig('code', smtp.url) });
      });
      after(() => codeStore?.close());

      it('offers no passkey even when the email holds one, and refuses a valid assertion over a stored challenge', async () => {
        const { db, checkouts } = codeStore.store;
        const device = new SoftwareAuthenticator();
        const credentialId = unregisteredCredential(device);
        assert.ok(
          await insertPasskey(db, {
            id: credentialId,
            email: BUYER_KEY,
            publicKey: new Uint8Array(device.cosePublicKey(credentialId)),
            counter: 0,
            transports: ['internal'],
            deviceType: 'singleDevice',
            backedUp: false,
            createdAt: new Date(),
          }),
        );

        const variant = codeStore.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === SKU)!;
        const stockOf = async () => (await db.query<{ on_hand: number }>('select on_hand from inventory_levels where variant_id = $1', [variant.id]))[0]!.on_hand;
        const created = await checkouts.create(db, { lines: [{ variantId: variant.id, quantity: QUANTITY }], buyer: { email: BUYER }, destination: SHIP_TO, shippingOption: 'standard' }, 'agent', 'agent');
        const { approval } = await checkouts.requestCompletion(db, created.view.record.id, 'agent');
        const token = approval!.token;

        const opened = await codeStore.app.inject({ method: 'GET', url: `/checkout/approve/${token}` });
        assert.equal(opened.statusCode, 200, opened.body);
        assert.doesNotMatch(opened.body, /passkey-approval|<script/);
        assert.equal(opened.headers['content-security-policy'], contentSecurityPolicy(ORIGIN, [], 'none'));
        assert.match(opened.body, /We can email a 6-digit code to <bdi>pat\.buyer@example\.com<\/bdi>/);
        const cookie = cookieNamed(opened, 'approval_form')!;
        const field = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(opened.body)![1]!;
        const formToken = field('form_token');
        const digest = field('digest');

        const asked = await codeStore.app.inject({ method: 'POST', url: `/checkout/approve/${token}/passkey`, headers: { 'content-type': 'application/json', cookie, origin: ORIGIN }, payload: JSON.stringify({ form_token: formToken }) });
        assert.equal(asked.statusCode, 409, asked.body);
        assert.deepEqual(await db.query('select id from webauthn_challenges'), [], 'no challenge issued');

        // A challenge as passkey-or-code would have issued it, signed by the email's passkey: still no proof here.
        const challengeId = randomBytes(16).toString('base64url');
        const challenge = approvalChallenge(digest, randomBytes(16).toString('base64url'));
        const now = new Date();
        await insertChallenge(db, { id: challengeId, purpose: 'approve', approvalToken: token, email: BUYER_KEY, challenge, createdAt: now, expiresAt: new Date(now.getTime() + 5 * 60_000) });
        const assertion = device.authenticate({ challenge, rpId: 'localhost', allowCredentials: [{ id: credentialId, type: 'public-key' }] }, ORIGIN);
        const stock = await stockOf();
        const refused = await codeStore.app.inject({
          method: 'POST',
          url: `/checkout/approve/${token}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: ORIGIN },
          payload: new URLSearchParams({ action: 'approve', form_token: formToken, digest, challenge_id: challengeId, assertion: JSON.stringify(assertion) }).toString(),
        });
        assert.equal(refused.statusCode, 403, refused.body);
        assert.match(refused.body, /Confirm it is you first: enter the code we email you\./);
        assert.doesNotMatch(refused.body, /passkey-approval/);
        const checkout = await checkouts.get(db, created.view.record.id);
        assert.equal(checkout!.view.record.status, 'requires_escalation');
        assert.equal(checkout!.view.record.orderId ?? null, null);
        assert.deepEqual(await db.query('select id from orders where checkout_id = $1', [created.view.record.id]), []);
        assert.equal(await stockOf(), stock);
        const [passkey] = await db.query<{ counter: number | string; last_used_at: unknown }>('select counter, last_used_at from buyer_passkeys where id = $1', [credentialId]);
        assert.equal(Number(passkey!.counter), 0);
        assert.equal(passkey!.last_used_at, null);
        const [unused] = await db.query<{ used_at: unknown }>('select used_at from webauthn_challenges where id = $1', [challengeId]);
        assert.equal(unused!.used_at, null);
        assert.equal(codeStore.store.buyerProof.failures.size, 0, 'no passkey was even tried');

        // The code is the way here: it places the order, and grants no passkey enrollment.
        const form = (fields: Record<string, string>) =>
          codeStore.app.inject({
            method: 'POST',
            url: `/checkout/approve/${token}`,
            headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: ORIGIN },
            payload: new URLSearchParams({ form_token: formToken, digest, ...fields }).toString(),
          });
        const mailed = smtp.messages.length;
        assert.equal((await form({ action: 'send_code' })).statusCode, 303);
        const code = /^(\d{6}) /.exec((await smtp.waitFor(mailed + 1)).at(-1)!.subject ?? '')![1]!;
        const placed = await form({ action: 'approve', code });
        assert.equal(placed.statusCode, 303, placed.body);
        assert.match(placed.headers.location ?? '', /^\/orders\/ord_/);
        assert.equal(cookieNamed(placed, 'passkey_enroll'), undefined);
        assert.equal(await stockOf(), stock - QUANTITY);
      });
    });
  });
}
