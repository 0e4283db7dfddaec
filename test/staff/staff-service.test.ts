/**
 * The staff domain on both backends, with a software authenticator making real WebAuthn responses and an injected
 * clock: enrollment links work once and for 30 minutes, sign-in links once and for 5; a passkey made on the
 * enrollment page signs in with no email asked; sessions end after 12 idle hours or 7 days whatever the activity,
 * at sign-out, and at once when the person is revoked; the last owner cannot be revoked; secrets are kept hashed.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { TERMINAL_ACTOR, type Actor } from '../../src/audit/audit-log.js';
import { StaffService } from '../../src/staff/staff-service.js';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, StaffRefused } from '../../src/staff/staff.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

const ORIGIN = 'http://localhost:3000';
const HOUR = 3600_000;
const MINUTE = 60_000;

const secretOf = (link: string) => link.slice(link.lastIndexOf('/') + 1);

async function refused(promise: Promise<unknown>, code: StaffRefused['code']): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof StaffRefused && error.code === code);
}

for (const backend of backends) {
  describe(`staff service (${backend.name})`, () => {
    let test: TestStore;
    let clock: Date;
    let staff: StaffService;
    const at = (ms: number) => (clock = new Date(clock.getTime() + ms));

    before(async () => {
      test = await startTestStore(backend, { seedDemo: false });
      clock = new Date('2026-11-29T10:00:00Z');
      staff = new StaffService({
        baseUrl: ORIGIN,
        storeName: 'Test store',
        merchant: { storeName: 'Test store', contactEmail: 'shop@example.com', address: [] },
        timeZone: 'UTC',
        mail: { deadlineSeconds: 3600 },
        passkeysPossible: true,
        now: () => clock,
      });
    });
    after(() => test?.close());

    it('an enrollment link makes a passkey once; the passkey signs in with no email asked', async () => {
      const { db } = test.store;
      const added = await staff.add(db, TERMINAL_ACTOR, 'Owner@Example.com', 'owner');
      assert.equal(added.member.email, 'owner@example.com');
      assert.equal(added.member.role, 'owner');
      assert.match(added.link, /^http:\/\/localhost:3000\/admin\/enroll\/[A-Za-z0-9_-]{43}$/);
      assert.equal(added.expiresAt.getTime() - clock.getTime(), 30 * MINUTE);
      assert.equal(added.mailed, true);
      const secret = secretOf(added.link);
      // Only the hash is stored; the mail carries the link, to the address.
      const stored = await db.query<{ hash: string }>("select encode(secret_hash, 'hex') as hash from staff_links");
      assert.deepEqual(stored.map((row) => row.hash), [createHash('sha256').update(secret).digest('hex')]);
      const mails = await db.query<{ payload: { to: string; text: string } }>("select payload from outbox where topic = 'staff.enrollment'");
      assert.equal(mails.length, 1);
      assert.equal(mails[0]!.payload.to, 'owner@example.com');
      assert.ok(mails[0]!.payload.text.includes(added.link));

      assert.deepEqual(await staff.enrollment(db, secret), { email: 'owner@example.com', expiresAt: added.expiresAt });
      const authenticator = new SoftwareAuthenticator();
      const { challengeId, options } = await staff.enrollmentOptions(db, secret);
      assert.equal(options.rp.id, 'localhost');
      assert.equal(options.authenticatorSelection?.residentKey, 'required');
      assert.equal(options.authenticatorSelection?.userVerification, 'required');
      const registration = authenticator.register(options, ORIGIN);
      const started = await staff.enroll(db, secret, challengeId, JSON.stringify(registration));
      assert.equal(started.session.email, 'owner@example.com');
      assert.equal(started.session.role, 'owner');
      assert.match(started.secret, /^[A-Za-z0-9_-]{43}$/);
      assert.ok((await staff.session(db, started.secret))?.csrfToken);

      // Used: the link no longer shows or enrolls.
      assert.equal(await staff.enrollment(db, secret), undefined);
      await refused(staff.enrollmentOptions(db, secret), 'link_invalid');
      await refused(staff.enroll(db, secret, challengeId, JSON.stringify(registration)), 'link_invalid');

      // Sign-in: the options list no credential; the device's passkey answers.
      const signIn = await staff.signInOptions(db);
      assert.equal(signIn.options.allowCredentials?.length ?? 0, 0);
      assert.equal(signIn.options.userVerification, 'required');
      const assertion = authenticator.authenticate(signIn.options, ORIGIN);
      const second = await staff.signIn(db, signIn.challengeId, JSON.stringify(assertion));
      assert.equal(second.session.email, 'owner@example.com');
      assert.notEqual(second.secret, started.secret);
      // The challenge is single use.
      await refused(staff.signIn(db, signIn.challengeId, JSON.stringify(assertion)), 'passkey_refused');
      // Without user verification: refused.
      const noUv = await staff.signInOptions(db);
      await refused(staff.signIn(db, noUv.challengeId, JSON.stringify(authenticator.authenticate(noUv.options, ORIGIN, { userVerified: false }))), 'passkey_refused');
      // From another origin: refused.
      const elsewhere = await staff.signInOptions(db);
      await refused(staff.signIn(db, elsewhere.challengeId, JSON.stringify(authenticator.authenticate(elsewhere.options, 'http://evil.test'))), 'passkey_refused');

      await staff.signOut(db, second.secret);
      assert.equal(await staff.session(db, second.secret), undefined);
      assert.ok(await staff.session(db, started.secret), 'another session of the person is not ended by signing out of one');
      await staff.signOut(db, started.secret);

      const list = await staff.list(db);
      assert.deepEqual(list.map((m) => [m.email, m.role, m.passkeys]), [['owner@example.com', 'owner', 1]]);
      await refused(staff.add(db, TERMINAL_ACTOR, 'owner@example.com', 'staff'), 'already_staff');
      await refused(staff.add(db, TERMINAL_ACTOR, 'not an email', 'staff'), 'invalid_email');
    });

    it('an enrollment link expires after 30 minutes; adding again gives a new one and the old stops', async () => {
      const { db } = test.store;
      const first = await staff.add(db, TERMINAL_ACTOR, 'late@example.com', 'staff');
      at(30 * MINUTE);
      assert.equal(await staff.enrollment(db, secretOf(first.link)), undefined);
      await refused(staff.enrollmentOptions(db, secretOf(first.link)), 'link_invalid');
      at(-31 * MINUTE);
      const again = await staff.add(db, TERMINAL_ACTOR, 'late@example.com', 'staff');
      assert.equal(await staff.enrollment(db, secretOf(first.link)), undefined, 'the older link was replaced');
      assert.ok(await staff.enrollment(db, secretOf(again.link)));
      at(29 * MINUTE);
      assert.ok(await staff.enrollment(db, secretOf(again.link)));
      at(2 * MINUTE);
    });

    it('a sign-in link works once, for 5 minutes; a session lasts 12 idle hours and 7 days at most', async () => {
      const { db } = test.store;
      await staff.add(db, TERMINAL_ACTOR, 'clerk@example.com', 'staff');
      const expired = await staff.signInLink(db, TERMINAL_ACTOR, 'clerk@example.com');
      assert.equal(expired.expiresAt.getTime() - clock.getTime(), 5 * MINUTE);
      at(5 * MINUTE);
      assert.equal(await staff.signInLinkValid(db, secretOf(expired.link)), false);
      await refused(staff.useSignInLink(db, secretOf(expired.link)), 'link_invalid');

      const { link } = await staff.signInLink(db, TERMINAL_ACTOR, 'clerk@example.com');
      assert.equal(await staff.signInLinkValid(db, secretOf(link)), true);
      const started = await staff.useSignInLink(db, secretOf(link));
      assert.equal(started.session.role, 'staff');
      assert.equal(await staff.signInLinkValid(db, secretOf(link)), false);
      await refused(staff.useSignInLink(db, secretOf(link)), 'link_invalid');

      // Idle: seen within 12 hours keeps it; 12 hours unseen ends it.
      at(SESSION_IDLE_MS - MINUTE);
      assert.ok(await staff.session(db, started.secret));
      at(SESSION_IDLE_MS - MINUTE);
      assert.ok(await staff.session(db, started.secret), 'seen 11h59 ago: still on');
      at(SESSION_IDLE_MS);
      assert.equal(await staff.session(db, started.secret), undefined, '12 idle hours end it');

      // Absolute: seen every 11 hours, it still ends 7 days after it began.
      const fresh = await staff.useSignInLink(db, secretOf((await staff.signInLink(db, TERMINAL_ACTOR, 'clerk@example.com')).link));
      const began = clock.getTime();
      while (clock.getTime() + 11 * HOUR < began + SESSION_ABSOLUTE_MS) {
        at(11 * HOUR);
        assert.ok(await staff.session(db, fresh.secret));
      }
      at(began + SESSION_ABSOLUTE_MS - clock.getTime());
      assert.equal(await staff.session(db, fresh.secret), undefined, '7 days end it');
      // Nothing that is not a secret of ours names a session.
      assert.equal(await staff.session(db, 'x'.repeat(500)), undefined);
      assert.equal(await staff.session(db, ''), undefined);
    });

    it('revoking ends every session of the person at once; the last owner cannot be revoked', async () => {
      const { db } = test.store;
      const owner: Actor = { staffId: null, label: 'owner@example.com' };
      await staff.add(db, TERMINAL_ACTOR, 'two@example.com', 'staff');
      const one = await staff.useSignInLink(db, secretOf((await staff.signInLink(db, TERMINAL_ACTOR, 'two@example.com')).link));
      const two = await staff.useSignInLink(db, secretOf((await staff.signInLink(db, TERMINAL_ACTOR, 'two@example.com')).link));
      const pending = await staff.signInLink(db, TERMINAL_ACTOR, 'two@example.com');
      const revoked = await staff.revoke(db, owner, 'TWO@example.com');
      assert.ok(revoked.revokedAt);
      assert.equal(await staff.session(db, one.secret), undefined);
      assert.equal(await staff.session(db, two.secret), undefined);
      assert.equal(await staff.signInLinkValid(db, secretOf(pending.link)), false, 'a link made before stops too');
      await refused(staff.signInLink(db, TERMINAL_ACTOR, 'two@example.com'), 'not_found');
      await refused(staff.revoke(db, owner, 'two@example.com'), 'not_found');
      await refused(staff.revoke(db, owner, 'nobody@example.com'), 'not_found');

      // The only active owner stays; with a second owner, one may go.
      await refused(staff.revoke(db, TERMINAL_ACTOR, 'owner@example.com'), 'last_owner');
      await staff.add(db, TERMINAL_ACTOR, 'second@example.com', 'owner');
      await staff.revoke(db, TERMINAL_ACTOR, 'owner@example.com');
      await refused(staff.revoke(db, TERMINAL_ACTOR, 'second@example.com'), 'last_owner');
      // A revoked owner's passkey no longer signs in.
      const members = await staff.list(db);
      assert.equal(members.find((m) => m.email === 'owner@example.com')?.passkeys, 0);

      // Added again: a new enrollment link, the old passkeys gone.
      const back = await staff.add(db, TERMINAL_ACTOR, 'two@example.com', 'staff');
      assert.equal(back.member.revokedAt, null);

      const audit = await db.query<{ actor: string; action: string; summary: string }>('select actor, action, summary from audit_log order by id');
      const revokes = audit.filter((entry) => entry.action === 'staff.revoke');
      assert.deepEqual(revokes[0], { actor: 'owner@example.com', action: 'staff.revoke', summary: 'revoked two@example.com' });
      assert.ok(audit.some((entry) => entry.action === 'staff.add' && entry.actor === 'terminal'));
      assert.ok(audit.some((entry) => entry.action === 'staff.sign_in_link'));
      assert.ok(audit.every((entry) => !/admin\/(enroll|sign-in)/.test(entry.summary)), 'no link in the audit log');
    });

    it('two owners revoking each other at once: one stays (the last owner is kept under concurrency)', async () => {
      const { db } = test.store;
      await staff.add(db, TERMINAL_ACTOR, 'race-a@example.com', 'owner');
      await staff.add(db, TERMINAL_ACTOR, 'race-b@example.com', 'owner');
      // Only these two (and second@) are owners now: revoke second@ first so the race is between a and b.
      await staff.revoke(db, TERMINAL_ACTOR, 'second@example.com');
      const outcomes = await Promise.allSettled([staff.revoke(db, TERMINAL_ACTOR, 'race-a@example.com'), staff.revoke(db, TERMINAL_ACTOR, 'race-b@example.com')]);
      assert.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 1);
      const refusal = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
      assert.ok(refusal.reason instanceof StaffRefused && refusal.reason.code === 'last_owner');
      const owners = (await staff.list(db)).filter((member) => member.role === 'owner' && !member.revokedAt);
      assert.equal(owners.length, 1);
    });

    it('the purge removes expired links and challenges and ended sessions, and keeps what still works', async () => {
      const { db } = test.store;
      const live = await staff.signInLink(db, TERMINAL_ACTOR, 'clerk@example.com');
      await staff.signInOptions(db);
      const session = await staff.useSignInLink(db, secretOf((await staff.signInLink(db, TERMINAL_ACTOR, 'clerk@example.com')).link));
      await staff.purgeExpired(db);
      assert.ok(await staff.session(db, session.secret));
      const stale = await db.query<{ n: number }>('select count(*)::int as n from staff_links where expires_at < $1', [clock.toISOString()]);
      assert.equal(stale[0]!.n, 0);
      assert.equal(await staff.signInLinkValid(db, secretOf(live.link)), false, 'replaced by the newer link, and so purged or spent');
      at(SESSION_ABSOLUTE_MS + 25 * HOUR);
      await staff.purgeExpired(db);
      const left = await db.query<{ n: number }>('select (select count(*) from staff_sessions)::int + (select count(*) from staff_challenges)::int + (select count(*) from staff_links)::int as n');
      assert.equal(left[0]!.n, 0);
    });

    it('where passkeys cannot work (an IP address), passkey ceremonies are refused and sign-in links still work', async () => {
      const { db } = test.store;
      const byIp = new StaffService({
        baseUrl: 'http://127.0.0.1:3000',
        storeName: 'Test store',
        merchant: { storeName: 'Test store', contactEmail: 'shop@example.com', address: [] },
        timeZone: 'UTC',
        mail: undefined,
        passkeysPossible: false,
        now: () => clock,
      });
      await refused(byIp.signInOptions(db), 'passkeys_impossible');
      const { link } = await byIp.signInLink(db, TERMINAL_ACTOR, 'clerk@example.com');
      assert.match(link, /^http:\/\/127\.0\.0\.1:3000\/admin\/sign-in\/link\//);
      assert.ok((await byIp.useSignInLink(db, secretOf(link))).session);
      const added = await byIp.add(db, TERMINAL_ACTOR, 'ip@example.com', 'staff');
      assert.equal(added.mailed, false);
    });
  });
}
