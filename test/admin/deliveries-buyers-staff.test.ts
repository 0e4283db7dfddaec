/**
 * The admin's deliveries, buyers and staff pages over HTTP, on both backends: what each page shows (and does not: no
 * mail recipient, no body), a delivery that really failed (a loopback SMTP server refusing for good) retried from
 * the page and delivered, audited; a buyer's passkeys revoked (one, then all), audited; staff added (the enrollment
 * link shown once on the answer, never in a URL), revoked after a confirmation, their sessions ended; a refusal
 * shown beside its action with nothing changed; a `staff` member refused (403, nothing changed) on the owner's
 * pages and their forms, even resent with an owner's fields.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { insertPasskey, passkeysOf } from '../../src/checkout/buyer-proof-store.js';
import { undeliveredCounts, undeliveredIn } from '../../src/outbox/outbox-overview.js';
import type { Store } from '../../src/store.js';
import { adminClient, startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { placeOrder } from '../helpers/orders.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { backends, dropTestDatabases, startTestStore, testConfig, type TestStore } from '../helpers/store.js';
import { around, pageText } from '../helpers/page-text.js';

after(dropTestDatabases);

const MERCHANT = 'merchant-inbox@store.test';
const BUYER = 'grace.buyer@example.com';
/** Generous: the machines running these tests are loaded. Nothing asserts how long anything took. */
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

async function auditOf(store: Store, action: string) {
  return store.db.query<{ actor: string; order_id: string | null; summary: string; staff_id: string | null }>(
    'select actor, order_id, summary, staff_id from audit_log where action = $1 order by id',
    [action],
  );
}

for (const backend of backends) {
  describe(`the admin's deliveries, buyers and staff (${backend.name})`, () => {
    let smtp: TestSmtpServer;
    let t: TestStore;
    let owner: StaffSessionForTest;
    let staffer: StaffSessionForTest;
    let admin: ReturnType<typeof adminClient>;

    before(async () => {
      smtp = await startSmtpServer();
      t = await startTestStore(backend, {
        deliver: true,
        config: {
          mail: { ...testConfig().mail, smtpUrl: smtp.url, merchantEmail: MERCHANT },
          // A refused attempt waits half an hour at least: a message that waits stays waiting while the test reads it.
          outbox: { ...testConfig().outbox, retryBaseSeconds: 3600, leaseSeconds: 5 },
        },
      });
      owner = await startStaffSession(t.store, { email: 'owner@example.com', role: 'owner' });
      staffer = await startStaffSession(t.store, { email: 'clerk@example.com', role: 'staff' });
      admin = adminClient(t);
      // Their enrollment mails go out first: the deliveries below are the orders'.
      await until('the enrollment mails delivered', async () => (await undeliveredCounts(t.store.db)).pending === 0);
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
    });

    it('a delivery refused for good is listed as given up with its order and the error, shortened, without the recipient; Retry delivers it and audits it', async () => {
      const { store } = t;
      smtp.refuse(550, { message: `No mailbox here for ${BUYER}` });
      const order = await placeOrder(store, [{ variantId: variantId(store, 'ESP-LUN-10'), quantity: 1 }], { email: BUYER });
      const failed = await until('both order mails given up', async () => {
        const rows = await undeliveredIn(store.db, 'failed');
        return rows.filter((row) => row.orderId === order.id).length === 2 ? rows : undefined;
      });

      const page = await admin.get('/admin/deliveries', staffer);
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['cache-control'], 'no-store');
      const text = pageText(page.body);
      assert.match(text, /Given up: 2/);
      assert.ok(page.body.includes(`href="/admin/orders/${order.number}"`), 'the order is linked');
      assert.ok(text.includes(`Order #${order.number}`));
      assert.ok(text.includes('order.placed'), 'the topic');
      assert.ok(text.includes('No mailbox here for …@example.com'), `the last error, its address reduced: ${text}`);
      for (const secret of [BUYER, MERCHANT, 'grace.buyer']) assert.ok(!page.body.includes(secret), `no recipient (${secret}) on the page`);
      assert.ok(!page.body.includes('order #' + order.number + ' confirmed'), 'no subject');

      smtp.accept();
      const [first] = failed;
      const retried = await admin.post(`/admin/deliveries/${first!.id}/retry`, staffer);
      assert.equal(retried.statusCode, 303, retried.body);
      assert.equal(retried.headers.location, '/admin/deliveries?done=delivered');
      const [sent] = await store.db.query<{ sent_at: Date | null }>('select sent_at from outbox where id = $1', [first!.id]);
      assert.ok(sent!.sent_at, 'delivered');
      assert.ok(smtp.messages.length >= 1);
      const audit = await auditOf(store, 'outbox.retry');
      assert.equal(audit.length, 1);
      assert.equal(audit[0]!.actor, 'clerk@example.com');
      assert.equal(audit[0]!.order_id, order.id);
      assert.match(audit[0]!.summary, /delivered/);

      const after = await admin.get('/admin/deliveries?done=delivered', owner);
      assert.match(pageText(after.body), /The message was delivered\./);
      assert.match(pageText(after.body), /Given up: 1/);
      assert.ok(!after.body.includes(`/admin/deliveries/${first!.id}/retry`), 'the delivered message is gone from the lists');

      // Retrying it again: it was delivered meanwhile; nothing is audited.
      const again = await admin.post(`/admin/deliveries/${first!.id}/retry`, owner);
      assert.equal(again.statusCode, 404);
      assert.match(pageText(again.body), /no such message waiting for delivery/);
      assert.equal((await auditOf(store, 'outbox.retry')).length, 1);
      // The other one is delivered too, so the next test starts with none given up.
      assert.equal((await admin.post(`/admin/deliveries/${failed[1]!.id}/retry`, owner)).statusCode, 303);
    });

    it('a message that waits is listed with its attempts and next attempt; a cross-site retry is refused and changes nothing', async () => {
      const { store } = t;
      smtp.refuse(451);
      const order = await placeOrder(store, [{ variantId: variantId(store, 'ESP-LUN-10'), quantity: 1 }], { email: BUYER });
      const waiting = await until('an order mail refused for now', async () => {
        const rows = await undeliveredIn(store.db, 'pending');
        return rows.find((row) => row.orderId === order.id && row.attempts >= 1 && row.lastError !== null && row.nextAttemptAt !== null);
      });
      const page = await admin.get('/admin/deliveries', owner);
      const text = pageText(page.body);
      assert.match(text, /Waiting: [1-9]/);
      assert.ok(text.includes('Try again later (test server)'));
      assert.ok(text.includes(`Order #${order.number}`));
      assert.ok(text.includes(store.config.storeTimeZone), 'times say their zone');

      const crossSite = await t.app.inject({
        method: 'POST',
        url: `/admin/deliveries/${waiting.id}/retry`,
        headers: { cookie: owner.cookie, origin: 'https://elsewhere.example', 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: owner.csrf }).toString(),
      });
      assert.equal(crossSite.statusCode, 403);
      const [row] = await store.db.query<{ attempts: number }>('select attempts from outbox where id = $1', [waiting.id]);
      assert.equal(row!.attempts, waiting.attempts, 'not tried');
      smtp.accept();
    });

    it("an owner revokes one of a buyer's passkeys, then all of another's; both audited; a second revoke is refused beside its action", async () => {
      const { store } = t;
      const passkey = (id: string, email: string) =>
        insertPasskey(store.db, { id, email, publicKey: new Uint8Array([1, 2, 3]), counter: 0, transports: ['internal'], deviceType: 'multiDevice', backedUp: true, createdAt: new Date() });
      await passkey('ada-passkey-one-0123456789', 'ada@example.com');
      await passkey('ada-passkey-two-0123456789', 'ada@example.com');
      await passkey('lin-passkey-one-0123456789', 'lin@example.com');

      const page = await admin.get('/admin/buyers', owner);
      assert.equal(page.statusCode, 200);
      const text = pageText(page.body);
      assert.ok(text.includes('ada@example.com') && text.includes('lin@example.com'));
      assert.match(text, /ada@example\.com 2 passkeys/);
      assert.ok(text.includes('ada-passkey-'), 'the passkey named by its start');
      assert.match(text, /Synced, backed up/);

      const one = await admin.post('/admin/buyers/revoke', owner, { email: 'ada@example.com', passkey: 'ada-passkey-one-0123456789' });
      assert.equal(one.statusCode, 303);
      assert.equal(one.headers.location, '/admin/buyers?done=revoked-one');
      assert.deepEqual((await passkeysOf(store.db, 'ada@example.com')).map((p) => p.id), ['ada-passkey-two-0123456789']);

      const all = await admin.post('/admin/buyers/revoke', owner, { email: 'LIN@example.com ' });
      assert.equal(all.statusCode, 303);
      assert.deepEqual(await passkeysOf(store.db, 'lin@example.com'), []);

      const audit = await auditOf(store, 'buyer.revoke');
      assert.equal(audit.length, 2);
      assert.ok(audit.every((entry) => entry.actor === 'owner@example.com'));
      assert.match(audit[0]!.summary, /ada@example\.com/);
      assert.match(audit[1]!.summary, /revoked 1 passkey of lin@example\.com/);

      const shown = await admin.get('/admin/buyers?done=revoked-all', owner);
      assert.ok(!pageText(shown.body).includes('lin@example.com'), 'a buyer with no passkey left is not listed');

      // The passkey revoked already: refused, beside that passkey's Revoke (the page still lists the other).
      const twice = await admin.post('/admin/buyers/revoke', owner, { email: 'ada@example.com', passkey: 'ada-passkey-one-0123456789' });
      assert.equal(twice.statusCode, 409);
      assert.match(pageText(twice.body), /Not revoked: this buyer holds no such passkey/);
      assert.equal((await auditOf(store, 'buyer.revoke')).length, 2, 'a refusal is not audited');
      assert.equal((await passkeysOf(store.db, 'ada@example.com')).length, 1, 'nothing changed');
    });

    it('a staff member is refused the buyers and staff pages and their forms, even with an owner’s fields: 403 and nothing changed', async () => {
      const { store } = t;
      await insertPasskey(store.db, { id: 'kept-passkey-0123456789', email: 'kept@example.com', publicKey: new Uint8Array([1]), counter: 0, transports: [], deviceType: 'singleDevice', backedUp: false, createdAt: new Date() });
      const staffBefore = await store.staff.list(store.db);
      const auditBefore = (await store.db.query<{ n: number }>('select count(*)::int as n from audit_log'))[0]!.n;

      for (const path of ['/admin/staff', '/admin/buyers']) {
        const page = await admin.get(path, staffer);
        assert.equal(page.statusCode, 403, path);
        assert.ok(!page.body.includes('kept@example.com') && !page.body.includes('owner@example.com (owner)'), `${path} reads nothing`);
      }
      const posts: [string, Record<string, string>][] = [
        ['/admin/buyers/revoke', { email: 'kept@example.com' }],
        ['/admin/staff', { email: 'intruder@example.com', role: 'owner' }],
        ['/admin/staff/revoke', { email: 'owner@example.com', confirm: 'yes' }],
        ['/admin/staff/sign-in-link', { email: 'owner@example.com' }],
      ];
      for (const [path, fields] of posts) {
        const answer = await admin.post(path, staffer, fields);
        assert.equal(answer.statusCode, 403, path);
        assert.ok(!answer.body.includes('/admin/enroll/') && !answer.body.includes('/admin/sign-in/link/'), `${path} makes no link`);
      }
      assert.equal((await passkeysOf(store.db, 'kept@example.com')).length, 1);
      assert.deepEqual(await store.staff.list(store.db), staffBefore);
      assert.equal((await store.db.query<{ n: number }>('select count(*)::int as n from audit_log'))[0]!.n, auditBefore);
      // The navigation offers a staff member neither.
      const deliveries = await admin.get('/admin/deliveries', staffer);
      assert.equal(deliveries.statusCode, 200);
      assert.ok(!deliveries.body.includes('href="/admin/staff"') && !deliveries.body.includes('href="/admin/buyers"'));
    });

    it('an owner adds a person: the enrollment link shown once on the answer (no redirect), mailed too; a bad address is refused beside the form', async () => {
      const { store } = t;
      const page = await admin.get('/admin/staff', owner);
      assert.equal(page.statusCode, 200);
      const text = pageText(page.body);
      assert.ok(text.includes('owner@example.com (you)') && text.includes('clerk@example.com'));
      assert.ok(!page.body.includes('sign-in-link'), 'passkeys are possible here: no sign-in link buttons');

      smtp.messages.length = 0;
      const added = await admin.post('/admin/staff', owner, { email: 'New.Person@Example.com', role: 'staff' });
      assert.equal(added.statusCode, 200);
      assert.equal(added.headers.location, undefined);
      assert.equal(added.headers['cache-control'], 'no-store');
      const link = /value="(http:\/\/store\.test\/admin\/enroll\/[A-Za-z0-9_-]+)"/.exec(added.body)?.[1];
      assert.ok(link, 'the link on the answer');
      const addedText = pageText(added.body);
      assert.match(addedText, /new\.person@example\.com can use this link once, until /);
      assert.match(addedText, /it was also mailed to them/);
      const secret = link.slice(link.lastIndexOf('/') + 1);
      assert.equal((await store.staff.enrollment(store.db, secret))?.email, 'new.person@example.com');
      // The enrollment mail (a message an earlier test left waiting for its retry may arrive beside it).
      let received = await smtp.waitFor(1);
      for (let count = 2; !received.some((m) => m.envelope.to.includes('new.person@example.com')) && count <= 3; count++) received = await smtp.waitFor(count);
      const mail = received.find((m) => m.envelope.to.includes('new.person@example.com'));
      assert.deepEqual(mail?.envelope.to, ['new.person@example.com']);
      assert.equal((await auditOf(store, 'staff.add')).at(-1)!.actor, 'owner@example.com');

      // The staff page afterwards lists them and shows no link.
      const later = await admin.get('/admin/staff', owner);
      assert.ok(pageText(later.body).includes('new.person@example.com'));
      assert.ok(!later.body.includes(secret));

      const bad = await admin.post('/admin/staff', owner, { email: 'not an address', role: 'staff' });
      assert.equal(bad.statusCode, 400);
      const form = around(bad.body, 'aria-labelledby="add-heading"', '</section>');
      assert.match(form, /role="alert">That is not an email address/);
      assert.ok(form.includes('value="not an address"'), 'what was typed is kept');
      const badRole = await admin.post('/admin/staff', owner, { email: 'x@example.com', role: 'admin' });
      assert.equal(badRole.statusCode, 400);
      assert.ok(!(await store.staff.list(store.db)).some((member) => member.email === 'x@example.com'));
    });

    it("an owner revokes a person after a confirmation: their session ends at once; the last owner's revocation is refused beside it", async () => {
      const { store } = t;
      const victim = await startStaffSession(store, { email: 'leaving@example.com', role: 'staff' });
      assert.equal((await admin.get('/admin/deliveries', victim)).statusCode, 200);

      const asked = await admin.post('/admin/staff/revoke', owner, { email: 'leaving@example.com' });
      assert.equal(asked.statusCode, 200);
      assert.match(pageText(asked.body), /Revoke leaving@example\.com\?/);
      assert.ok(asked.body.includes('name="confirm" value="yes"'));
      assert.equal((await store.staff.list(store.db)).find((m) => m.email === 'leaving@example.com')!.revokedAt, null, 'not yet');
      assert.equal((await admin.get('/admin/deliveries', victim)).statusCode, 200, 'still signed in');

      const confirmed = await admin.post('/admin/staff/revoke', owner, { email: 'leaving@example.com', confirm: 'yes' });
      assert.equal(confirmed.statusCode, 303);
      assert.equal(confirmed.headers.location, '/admin/staff?done=revoked');
      assert.ok((await store.staff.list(store.db)).find((m) => m.email === 'leaving@example.com')!.revokedAt);
      assert.equal((await admin.get('/admin/deliveries', victim)).statusCode, 401, 'their session ended');
      assert.match((await auditOf(store, 'staff.revoke')).at(-1)!.summary, /leaving@example\.com/);
      const shown = await admin.get('/admin/staff?done=revoked', owner);
      assert.match(pageText(shown.body), /The person was revoked/);
      assert.match(pageText(shown.body), /leaving@example\.com Staff .* Revoked /);

      // The only owner: refused, beside their own Revoke; nothing changed.
      const last = await admin.post('/admin/staff/revoke', owner, { email: 'owner@example.com', confirm: 'yes' });
      assert.equal(last.statusCode, 409);
      const row = around(last.body, '<td><bdi>owner@example.com</bdi>', '</tr>');
      assert.match(row, /role="alert">Not revoked: owner@example\.com is the last owner/);
      assert.equal((await store.staff.list(store.db)).find((m) => m.email === 'owner@example.com')!.revokedAt, null);
      assert.equal((await admin.get('/admin/staff', owner)).statusCode, 200, 'still signed in');
    });
  });

  describe(`the admin's staff page where no passkey can exist (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend, { seedDemo: false, config: { baseUrl: 'http://127.0.0.1:8080' } });
    });
    after(() => t?.close());

    it('offers a sign-in link per person, shown once on the answer; it signs that person in', async () => {
      const { store } = t;
      const owner = await startStaffSession(store, { email: 'owner@example.com', role: 'owner' });
      await startStaffSession(store, { email: 'clerk@example.com', role: 'staff' });
      const admin = adminClient(t);
      const page = await admin.get('/admin/staff', owner);
      assert.equal(page.statusCode, 200);
      assert.match(pageText(page.body), /is an IP address, where no passkey can exist/);
      assert.ok(page.body.includes('aria-label="Make a sign-in link for clerk@example.com"'));

      const made = await admin.post('/admin/staff/sign-in-link', owner, { email: 'clerk@example.com' });
      assert.equal(made.statusCode, 200);
      const link = /value="(http:\/\/127\.0\.0\.1:8080\/admin\/sign-in\/link\/[A-Za-z0-9_-]+)"/.exec(made.body)?.[1];
      assert.ok(link);
      assert.match(pageText(made.body), /clerk@example\.com can use this link once, until /);
      const signedIn = await store.staff.useSignInLink(store.db, link.slice(link.lastIndexOf('/') + 1));
      assert.equal(signedIn.session.email, 'clerk@example.com');

      const unknown = await admin.post('/admin/staff/sign-in-link', owner, { email: 'nobody@example.com' });
      assert.equal(unknown.statusCode, 409);
      assert.match(pageText(unknown.body), /No link made: nobody@example\.com is not staff/);
    });
  });
}
