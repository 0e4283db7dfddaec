/**
 * The admin logs no personal data and no capability (issue 38, item 6): a session goes through every admin page and
 * every action it can (signing in by a link over HTTP, each section's page, an order's and a product's, the
 * enrollment and sign-in link pages, staff added, given a sign-in link and revoked, a buyer's passkeys revoked, a
 * failed delivery retried, an order captured, shipped, refunded and canceled, refusals, a staff member's 403s, a
 * cross-site and a token-less post, no session, sign-out) over a real socket to a store whose log is captured at
 * the most verbose level; then no line holds an email address of anyone involved, a session cookie's value, a CSRF
 * token, or the secret of an enrollment or sign-in link.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { SECTIONS } from '../../src/admin/admin-layout.js';
import { TERMINAL_ACTOR } from '../../src/audit/audit-log.js';
import { insertPasskey } from '../../src/checkout/buyer-proof-store.js';
import { loadConfig } from '../../src/config.js';
import { undeliveredCounts, undeliveredIn } from '../../src/outbox/outbox-overview.js';
import type { Store } from '../../src/store.js';
import { ADMIN_SESSION_COOKIE, startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { freePort } from '../helpers/browser.js';
import { placeOrder } from '../helpers/orders.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const WAIT_MS = 30_000;

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

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request over the socket, its path as written. */
function send(origin: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: hostname, port, method, path, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** The fields a form sends as it is on the page (hidden inputs, filled inputs, selected options), by its action. */
function formFields(page: string, action: string): Record<string, string> | undefined {
  const escaped = action.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const form = new RegExp(`<form[^>]*action="${escaped}"[^>]*>([\\s\\S]*?)</form>`).exec(page)?.[1];
  if (form === undefined) return undefined;
  const fields: Record<string, string> = {};
  const attribute = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
  const unescape = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const name = attribute(tag, 'name');
    const type = attribute(tag, 'type') ?? 'text';
    if (!name || ((type === 'checkbox' || type === 'radio') && !/\schecked\b/.test(tag))) continue;
    fields[name] = unescape(attribute(tag, 'value') ?? (type === 'checkbox' ? 'on' : ''));
  }
  for (const [, tag, options] of form.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
    const name = attribute(tag!, 'name');
    const chosen = /<option[^>]*\sselected[^>]*>/.exec(options!)?.[0] ?? /<option[^>]*>/.exec(options!)?.[0];
    if (name && chosen) fields[name] = unescape(attribute(chosen, 'value') ?? '');
  }
  for (const [, tag, text] of form.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) {
    const name = attribute(tag!, 'name');
    if (name) fields[name] = unescape(text!);
  }
  return fields;
}

for (const backend of backends) {
  describe(`the admin logs no email, session, CSRF token or link secret (${backend.name})`, () => {
    const lines: string[] = [];
    let smtp: TestSmtpServer;
    let t: TestStore;
    let origin: string;

    before(async () => {
      smtp = await startSmtpServer();
      const port = await freePort();
      // An IP address: no passkey can exist, so sign-in links are made (and used) from the admin too.
      origin = `http://127.0.0.1:${port}`;
      const config = loadConfig({ BASE_URL: origin, DATA_DIR: 'unused', APPROVAL_PROOF: 'link', LOG_LEVEL: 'trace' });
      t = await startTestStore(backend, {
        deliver: true,
        config: {
          ...config,
          rateLimit: false,
          mail: { ...config.mail, smtpUrl: smtp.url, merchantEmail: 'merchant.inbox@store.test' },
          outbox: { ...config.outbox, retryBaseSeconds: 3600, leaseSeconds: 5 },
        },
        app: { logger: { write: (line: string) => lines.push(line) } },
      });
      await t.app.listen({ host: '127.0.0.1', port });
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
    });

    it('a session through every page and action leaves none of them in any line', async () => {
      const { store } = t;
      const emails = new Set(['merchant.inbox@store.test']);
      const secrets = new Map<string, string>();
      const remember = (what: string, secret: string) => secrets.set(`${what} ${secrets.size}`, secret);
      const linkSecret = (link: string) => link.slice(link.lastIndexOf('/') + 1);

      // The owner signs in by a sign-in link over HTTP, as a person would: the link's page, its button, the cookie.
      await store.staff.add(store.db, TERMINAL_ACTOR, 'owner.person@example.com', 'owner');
      emails.add('owner.person@example.com');
      const { link: ownerLink } = await store.staff.signInLink(store.db, TERMINAL_ACTOR, 'owner.person@example.com');
      remember('sign-in link', linkSecret(ownerLink));
      const ownerLinkPath = new URL(ownerLink).pathname;
      assert.equal((await send(origin, 'GET', ownerLinkPath, { accept: 'text/html' })).status, 200);
      const signedIn = await send(origin, 'POST', ownerLinkPath, { origin, 'content-type': 'application/x-www-form-urlencoded' }, '');
      assert.equal(signedIn.status, 303, signedIn.body);
      const cookieSecret = new RegExp(`${ADMIN_SESSION_COOKIE}=([A-Za-z0-9_-]+)`).exec(String(signedIn.headers['set-cookie']))?.[1];
      assert.ok(cookieSecret, 'the session cookie');
      remember('session', cookieSecret);
      const firstPage = await send(origin, 'GET', SECTIONS.staff.path, { cookie: `${ADMIN_SESSION_COOKIE}=${cookieSecret}`, accept: 'text/html' });
      const csrf = /name="_csrf" value="([^"]+)"/.exec(firstPage.body)?.[1];
      assert.ok(csrf, 'the CSRF token on the page');
      remember('csrf', csrf);
      const owner: StaffSessionForTest = { cookie: `${ADMIN_SESSION_COOKIE}=${cookieSecret}`, csrf, email: 'owner.person@example.com', secret: cookieSecret };

      const clerk = await startStaffSession(store, { email: 'clerk.person@example.com', role: 'staff' });
      emails.add(clerk.email);
      remember('session', clerk.secret);
      remember('csrf', clerk.csrf);

      const get = (path: string, session: StaffSessionForTest | null = owner, accept = 'text/html') =>
        send(origin, 'GET', path, { accept, ...(session ? { cookie: session.cookie } : {}) });
      const post = (path: string, fields: Record<string, string>, session: StaffSessionForTest = owner, headers: Record<string, string> = {}) =>
        send(
          origin,
          'POST',
          path,
          { cookie: session.cookie, origin, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', ...headers },
          new URLSearchParams({ _csrf: session.csrf, ...fields }).toString(),
        );
      /** Submits a form as it is on the page, with `changes`; undefined when the page has no such form. */
      const submit = async (pagePath: string, action: string, changes: Record<string, string> = {}) => {
        const fields = formFields((await get(pagePath)).body, action);
        return fields ? post(action, { ...fields, ...changes }) : undefined;
      };

      // What the pages show: enrollment mails delivered, an order whose mails are refused for good, buyers' passkeys.
      await until('the enrollment mails delivered', async () => (await undeliveredCounts(store.db)).pending === 0);
      const buyer = 'ada.buyer@example.com';
      emails.add(buyer);
      smtp.refuse(550, { message: `Mailbox ${buyer} unavailable` });
      const order = await placeOrder(store, [{ variantId: variantId(store, 'ESP-LUN-10'), quantity: 3 }], { email: buyer });
      const secondOrder = await placeOrder(store, [{ variantId: variantId(store, 'ESP-DEC-10'), quantity: 1 }], { email: 'lin.buyer@example.com' });
      emails.add('lin.buyer@example.com');
      await until('the order mails given up', async () => (await undeliveredIn(store.db, 'failed')).length >= 4);
      smtp.accept();
      for (const [id, email] of [
        ['log-passkey-one-0123456789', buyer],
        ['log-passkey-two-0123456789', buyer],
        ['log-passkey-three-0123456789', 'lin.buyer@example.com'],
      ]) {
        await insertPasskey(store.db, { id: id!, email: email!, publicKey: new Uint8Array([1]), counter: 0, transports: [], deviceType: 'singleDevice', backedUp: false, createdAt: new Date() });
      }

      // Every page: the sections, an order's, a product's (when their sections exist), sign-in; with ?done= notices.
      const pages: string[] = [...Object.values(SECTIONS).map((section) => section.path), `${SECTIONS.orders.path}/${order.number}`, '/admin/sign-in'];
      const products = await get(SECTIONS.products.path);
      const productPath = [...products.body.matchAll(/href="(\/admin\/products\/[^"?#/]+)"/g)][0]?.[1];
      if (productPath) pages.push(productPath);
      pages.push(`${SECTIONS.orders.path}?q=${encodeURIComponent(buyer)}`, `${SECTIONS.deliveries.path}?done=delivered`, `${SECTIONS.staff.path}?done=revoked`);
      for (const path of pages) {
        const answer = await get(path);
        assert.ok([200, 303, 404].includes(answer.status), `${path}: ${answer.status}`);
        await get(path, clerk);
      }
      await get(SECTIONS.orders.path, owner, 'application/json');

      // Staff: add (the link shown once), its enrollment page, a sign-in link and its page, revoke.
      const added = await post(SECTIONS.staff.path, { email: 'New.Hire@Example.com', role: 'staff' });
      emails.add('new.hire@example.com').add('New.Hire@Example.com');
      assert.equal(added.status, 200);
      const enrollLink = /value="(http[^"]+\/admin\/enroll\/[A-Za-z0-9_-]+)"/.exec(added.body)?.[1];
      assert.ok(enrollLink);
      remember('enrollment link', linkSecret(enrollLink));
      assert.equal((await get(new URL(enrollLink).pathname, null)).status, 200);
      const linked = await post(`${SECTIONS.staff.path}/sign-in-link`, { email: 'clerk.person@example.com' });
      const clerkLink = /value="(http[^"]+\/admin\/sign-in\/link\/[A-Za-z0-9_-]+)"/.exec(linked.body)?.[1];
      assert.ok(clerkLink, 'a sign-in link');
      remember('sign-in link', linkSecret(clerkLink));
      assert.equal((await get(new URL(clerkLink).pathname, null)).status, 200);
      assert.equal((await post(`${SECTIONS.staff.path}/revoke`, { email: 'new.hire@example.com' })).status, 200);
      assert.equal((await post(`${SECTIONS.staff.path}/revoke`, { email: 'new.hire@example.com', confirm: 'yes' })).status, 303);
      assert.equal((await post(`${SECTIONS.staff.path}/revoke`, { email: 'owner.person@example.com', confirm: 'yes' })).status, 409);
      assert.equal((await post(SECTIONS.staff.path, { email: 'not an address', role: 'staff' })).status, 400);
      assert.equal((await post(`${SECTIONS.staff.path}/sign-in-link`, { email: 'nobody.known@example.com' })).status, 409);
      emails.add('nobody.known@example.com');

      // Buyers: one passkey, then all of another's; a refusal.
      assert.equal((await post(`${SECTIONS.buyers.path}/revoke`, { email: buyer, passkey: 'log-passkey-one-0123456789' })).status, 303);
      assert.equal((await post(`${SECTIONS.buyers.path}/revoke`, { email: 'lin.buyer@example.com' })).status, 303);
      assert.equal((await post(`${SECTIONS.buyers.path}/revoke`, { email: 'lin.buyer@example.com' })).status, 409);

      // Deliveries: a failed one retried (delivered), a delivered one again (refused).
      const [failed] = await undeliveredIn(store.db, 'failed');
      assert.equal((await post(`${SECTIONS.deliveries.path}/${failed!.id}/retry`, {})).status, 303);
      assert.equal((await post(`${SECTIONS.deliveries.path}/${failed!.id}/retry`, {})).status, 404);

      // The order's actions as their forms are on its page (when the orders section exists): capture, ship, refund, cancel.
      const orderPage = `${SECTIONS.orders.path}/${order.number}`;
      const secondPage = `${SECTIONS.orders.path}/${secondOrder.number}`;
      const moves = [
        await submit(orderPage, `${orderPage}/capture`),
        await submit(orderPage, `${orderPage}/fulfil`, { tracking_number: '1Z999', carrier: 'UPS' }),
        await submit(orderPage, `${orderPage}/refund`, { amount: '1.00', reason: `asked by ${buyer}` }),
        await submit(secondPage, `${secondPage}/cancel`, { reason: 'out of stock' }),
        await submit(orderPage, `${orderPage}/refund`, { amount: 'lots' }),
      ];
      if ((await get(orderPage)).status === 200) {
        assert.deepEqual(moves.map((answer) => answer?.status), [303, 303, 303, 303, 400], 'each order action answered');
        const audited = await store.db.query<{ action: string }>('select action from audit_log where order_id = any($1::text[]) order by id', [[order.id, secondOrder.id]]);
        for (const action of ['order.capture', 'order.fulfill', 'order.refund', 'order.cancel']) assert.ok(audited.some((entry) => entry.action === action), action);
      }

      // Refusals of the guard: a staff member on the owner's forms, another site, no token, no session (page and JSON).
      assert.equal((await post(SECTIONS.staff.path, { email: 'intruder.person@example.com', role: 'owner' }, clerk)).status, 403);
      emails.add('intruder.person@example.com');
      assert.equal((await post(`${SECTIONS.buyers.path}/revoke`, { email: buyer }, clerk)).status, 403);
      assert.equal((await post(`${SECTIONS.buyers.path}/revoke`, { email: buyer }, owner, { origin: 'https://elsewhere.example' })).status, 403);
      assert.equal((await send(origin, 'POST', `${SECTIONS.buyers.path}/revoke`, { cookie: owner.cookie, origin, 'content-type': 'application/x-www-form-urlencoded' }, `email=${encodeURIComponent(buyer)}`)).status, 403);
      assert.equal((await get(SECTIONS.deliveries.path, null)).status, 401);
      assert.equal((await get(SECTIONS.deliveries.path, null, 'application/json')).status, 401);
      assert.equal((await send(origin, 'GET', SECTIONS.deliveries.path, { cookie: `${ADMIN_SESSION_COOKIE}=${'x'.repeat(43)}` })).status, 401);
      // A used link again; the enrollment link's page once more; sign out (the cookie then ends).
      assert.notEqual((await send(origin, 'POST', ownerLinkPath, { origin, 'content-type': 'application/x-www-form-urlencoded' }, '')).status, 303);
      assert.equal((await post('/admin/sign-out', {})).status, 303);
      assert.equal((await get(SECTIONS.deliveries.path)).status, 401);

      await t.app.close(); // every line written
      const log = lines.join('');
      assert.ok(lines.length > 50, `the requests were logged (${lines.length} lines)`);
      for (const email of emails) {
        for (const spelling of [email, email.toLowerCase(), encodeURIComponent(email), email.split('@')[0]!]) {
          assert.ok(!log.includes(spelling), `an email (${spelling}) is in the log:\n${lines.filter((line) => line.includes(spelling)).join('')}`);
        }
      }
      for (const [what, secret] of secrets) {
        for (const spelling of [secret, secret.slice(0, 16), secret.slice(-16)]) {
          assert.ok(!log.includes(spelling), `a ${what} (${spelling}) is in the log:\n${lines.filter((line) => line.includes(spelling)).join('')}`);
        }
      }
      assert.ok(!/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[a-z]{2,}/i.test(log), `no address of any kind:\n${lines.filter((line) => /@[A-Za-z0-9.-]+\.[a-z]{2,}/i.test(line)).join('')}`);
    });
  });
}
