/**
 * `storefront staff` as a merchant runs it, on both backends: the first person added is an owner, each add prints a
 * single-use enrollment link and its expiry and says whether it was mailed (SMTP_URL set: a mail waits in the
 * outbox), `staff` lists who may use the admin, `staff sign-in-link` prints a 5-minute link, `staff revoke` ends the
 * person's sessions and never removes the last owner; every action is in the audit log as the terminal. With the
 * embedded database held by a running store, the same commands go through its control socket, and the sign-in link
 * printed there signs in to that store's admin.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/store.js';
import { cliScratch, cliTargets, commandSession, storefrontArgs } from '../helpers/cli.js';
import { freePort } from '../helpers/browser.js';

const { scratch, databases } = cliScratch('sf-staff');

async function within(limitMs: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > limitMs) assert.fail(`${what}: not seen within ${limitMs} ms`);
    await sleep(200);
  }
}

const LINK = /(https?:\/\/\S+\/admin\/(?:enroll|sign-in\/link)\/[A-Za-z0-9_-]{43})/;

for (const target of cliTargets(scratch, 'sf_staff', databases)) {
  describe(`storefront staff (${target.name})`, () => {
    let env: Record<string, string>;
    const session = commandSession(() => env);
    after(() => session.close());
    const cli = (...args: string[]) => session.run(...args);

    before(async () => {
      env = { ...(await target.env()), BASE_URL: 'http://localhost:3000', SMTP_URL: 'smtp://127.0.0.1:2525' };
    });

    it('with no staff yet, the list says how to add the first owner', async () => {
      const listed = await cli('staff');
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /no staff yet: add the first owner with `storefront staff add EMAIL --role owner`/);
    });

    it('adds the first person as an owner, prints the link and its expiry, and mails it', async () => {
      const added = await cli('staff', 'add', 'Owner@Example.com');
      assert.equal(added.code, 0, added.stderr);
      assert.match(added.stdout, /^added owner@example\.com as owner$/m);
      assert.match(added.stdout, /^enrollment link \(works once, until \d{4}-\d\d-\d\d \d\d:\d\d UTC\): http:\/\/localhost:3000\/admin\/enroll\/[A-Za-z0-9_-]{43}$/m);
      assert.match(added.stdout, /^mailed to owner@example\.com as well$/m);
      const clerk = await cli('staff', 'add', 'clerk@example.com', '--role', 'staff');
      assert.equal(clerk.code, 0, clerk.stderr);
      assert.match(clerk.stdout, /^added clerk@example\.com as staff$/m);
      const second = await cli('staff', 'add', 'boss@example.com');
      assert.match(second.stdout, /^added boss@example\.com as staff$/m, 'after the first owner, staff unless --role says otherwise');
      await session.close();
      const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
      try {
        const mails = await store.db.query<{ payload: { to: string; text: string } }>("select payload from outbox where topic = 'staff.enrollment' order by id");
        assert.deepEqual(mails.map((mail) => mail.payload.to), ['owner@example.com', 'clerk@example.com', 'boss@example.com']);
        assert.ok(mails[0]!.payload.text.includes(LINK.exec(added.stdout)![1]!));
        const audit = await store.db.query<{ actor: string; action: string; staff_id: string | null }>('select actor, action, staff_id from audit_log order by id');
        assert.deepEqual(audit, [
          { actor: 'terminal', action: 'staff.add', staff_id: null },
          { actor: 'terminal', action: 'staff.add', staff_id: null },
          { actor: 'terminal', action: 'staff.add', staff_id: null },
        ]);
      } finally {
        await store.close();
      }
    });

    it('lists each person with role, state and passkeys', async () => {
      const listed = await cli('staff');
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /^EMAIL +ROLE +STATE +PASSKEYS +LAST SIGN-IN +ADDED$/m);
      assert.match(listed.stdout, /^owner@example\.com +owner +not enrolled +0 +- +\d{4}-/m);
      assert.match(listed.stdout, /^clerk@example\.com +staff +not enrolled +0 +- +\d{4}-/m);
    });

    it('prints a single-use sign-in link; refuses one for someone who is not staff', async () => {
      const made = await cli('staff', 'sign-in-link', 'CLERK@example.com');
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.stdout, /^sign-in link for clerk@example\.com \(works once, until \d{4}-\d\d-\d\d \d\d:\d\d UTC\): http:\/\/localhost:3000\/admin\/sign-in\/link\/[A-Za-z0-9_-]{43}$/m);
      const nobody = await cli('staff', 'sign-in-link', 'nobody@example.com');
      assert.equal(nobody.code, 1);
      assert.equal(nobody.stderr, 'storefront: nobody@example.com is not staff.; nothing was changed\n');
    });

    it('revokes a person (their sessions end); never the last owner', async () => {
      await session.close();
      const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
      let secret: string;
      try {
        const { link } = await store.staff.signInLink(store.db, { staffId: null, label: 'terminal' }, 'clerk@example.com');
        secret = (await store.staff.useSignInLink(store.db, link.slice(link.lastIndexOf('/') + 1))).secret;
      } finally {
        await store.close();
      }
      const revoked = await cli('staff', 'revoke', 'clerk@example.com');
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal(revoked.stdout, 'clerk@example.com revoked: every session ended, passkeys removed\n');
      assert.match((await cli('staff')).stdout, /^clerk@example\.com +staff +revoked \d{4}-/m);
      const last = await cli('staff', 'revoke', 'owner@example.com');
      assert.equal(last.code, 1);
      assert.match(last.stderr, /owner@example\.com is the last owner: add another owner first\.; nothing was changed/);
      const again = await cli('staff', 'revoke', 'clerk@example.com');
      assert.equal(again.code, 1);
      await session.close();
      const reopened = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { onBackgroundError: () => {} });
      try {
        assert.equal(await reopened.staff.session(reopened.db, secret), undefined);
      } finally {
        await reopened.close();
      }
    });

    it('a wrong use says how to use it, and prints what was typed inert', async () => {
      for (const args of [
        ['staff', 'remove', 'x@example.com'],
        ['staff', 'add'],
        ['staff', 'add', 'x@example.com', '--role', 'admin'],
        ['staff', 'add', 'x@example.com', 'y@example.com'],
        ['staff', 'revoke', 'not-an-email'],
        ['staff', 'add', 'x@example.com', '--color'],
      ]) {
        const result = await cli(...args);
        assert.equal(result.code, 1, args.join(' '));
        assert.match(result.stderr, /usage: storefront staff/, args.join(' '));
      }
      const steering = await cli('staff', 'add', 'a\u001b[2Jb@example.com');
      assert.equal(steering.code, 1);
      assert.doesNotMatch(steering.stderr + steering.stdout, /\u001b/);
      const help = await cli('help');
      assert.match(help.stdout, /staff add EMAIL \[--role owner\|staff\]/);
      assert.match(help.stdout, /staff sign-in-link EMAIL/);
    });

    if (target.name === 'embedded database') {
      describe('while a store serves the embedded database', () => {
        let server: ChildProcess;
        let origin: string;

        before(async () => {
          await session.close();
          const port = await freePort();
          origin = `http://localhost:${port}`;
          env = { ...env, BASE_URL: origin };
          server = spawn(process.execPath, storefrontArgs('serve'), {
            env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1', RATE_LIMIT: 'off' },
            stdio: 'inherit',
          });
          await within(60_000, 'the store starting', async () => (await fetch(`${origin}/healthz`).catch(() => undefined))?.status === 200);
        });
        after(async () => {
          server.kill('SIGTERM');
          await new Promise((resolve) => server.once('exit', resolve));
        });

        it('add, list, sign-in-link and revoke go through the control socket; the link signs in to the running admin', async () => {
          const added = await cli('staff', 'add', 'live@example.com', '--role', 'staff');
          assert.equal(added.code, 0, added.stderr);
          assert.match(added.stdout, /^added live@example\.com as staff$/m);
          assert.match((await cli('staff')).stdout, /^live@example\.com +staff +not enrolled/m);
          const made = await cli('staff', 'sign-in-link', 'live@example.com');
          assert.equal(made.code, 0, made.stderr);
          const link = LINK.exec(made.stdout)![1]!;
          assert.ok(link.startsWith(`${origin}/admin/sign-in/link/`));
          const signedIn = await fetch(link, { method: 'POST', headers: { origin }, redirect: 'manual' });
          assert.equal(signedIn.status, 303);
          const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
          assert.equal((await fetch(`${origin}/admin`, { headers: { cookie }, redirect: 'manual' })).status, 200);
          const revoked = await cli('staff', 'revoke', 'live@example.com');
          assert.equal(revoked.code, 0, revoked.stderr);
          assert.equal((await fetch(`${origin}/admin`, { headers: { cookie }, redirect: 'manual' })).status, 401, 'the revoked person is signed out at once');
          const refused = await cli('staff', 'revoke', 'live@example.com');
          assert.equal(refused.code, 1);
          assert.equal(refused.stderr, 'storefront: live@example.com is not staff.; nothing was changed\n');
        });

        it('the subscriptions commands go through the control socket too', async () => {
          const listed = await cli('subscriptions');
          assert.equal(listed.code, 0, listed.stderr);
          assert.match(listed.stdout, /^no subscriptions yet$/m);
          const ran = await cli('subscriptions', 'run', '--as-of', '2027-01-15');
          assert.equal(ran.code, 0, ran.stderr);
          assert.match(ran.stdout, /^ {2}0 renewals produced/m);
          assert.equal((await cli('subscriptions', 'show', '4242')).code, 1);
        });
      });
    }
  });
}
