/**
 * The admin's security, over HTTP on both backends. Every /admin route that is not public (enumerated from the admin's
 * own registration, so a route added later is covered) is refused with 401 and nothing read or changed: without a
 * session, with one that ended by the idle or absolute timeout, and with a revoked person's. Every state-changing
 * route refuses a cross-site POST (another site's Origin, or none) and one without the session's CSRF token with 403
 * and nothing changed. A `staff` member cannot refund or add staff (403, even resending an owner's form with the
 * owner's values). An enrollment link creates a passkey once. A sign-in never keeps the cookie the browser had
 * before (no session fixation): the earlier session ends, by passkey, enrollment and sign-in link alike.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type LightMyRequestResponse } from 'fastify';
import { adminRoutes } from '../../src/admin/admin-routes.js';
import { loadConfig } from '../../src/config.js';
import { TERMINAL_ACTOR } from '../../src/audit/audit-log.js';
import type { Order } from '../../src/orders/orders.js';
import type { Store } from '../../src/store.js';
import { ADMIN_SESSION_COOKIE, startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { placeOrder } from '../helpers/orders.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';

after(dropTestDatabases);

interface AdminRoute {
  method: string;
  url: string;
}

/** The admin's routes that need a session: every one its plugin registers without `adminPublic`. */
async function guardedAdminRoutes(store: Store): Promise<AdminRoute[]> {
  const routes: AdminRoute[] = [];
  const app = Fastify();
  app.addHook('onRoute', (route) => {
    if ((route.config as { adminPublic?: boolean } | undefined)?.adminPublic) return;
    for (const method of ([] as string[]).concat(route.method)) routes.push({ method, url: route.url });
  });
  await app.register(adminRoutes, { store });
  await app.close();
  return routes;
}

/** Everything the store keeps, but the sessions' last-seen times (a valid session's request may touch them). */
async function everything(store: Store): Promise<string> {
  const tables = await store.db.query<{ name: string }>(
    "select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name",
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const select = name === 'staff_sessions' ? 'select id, staff_id, csrf_token, started_at, expires_at, ended_at from staff_sessions' : `select * from ${name}`;
    const rows = await store.db.query<{ digest: string | null; n: number }>(`select md5(string_agg(t::text, '|' order by t::text)) as digest, count(*)::int as n from (${select}) t`);
    parts.push(`${name}:${rows[0]!.n}:${rows[0]!.digest ?? ''}`);
  }
  return parts.join('\n');
}

const cookieOf = (response: LightMyRequestResponse): string | undefined =>
  ([] as string[])
    .concat(response.headers['set-cookie'] ?? [])
    .find((cookie) => cookie.startsWith(`${ADMIN_SESSION_COOKIE}=`) && !cookie.startsWith(`${ADMIN_SESSION_COOKIE}=;`))
    ?.split(';')[0];

const secretOf = (link: string) => link.slice(link.lastIndexOf('/') + 1);

for (const backend of backends) {
  describe(`the admin's security (${backend.name})`, () => {
    let t: TestStore;
    let origin: string;
    let routes: AdminRoute[];
    let order: Order;
    let owner: StaffSessionForTest;
    let staffer: StaffSessionForTest;

    /** A route's URL with its parameters filled: a real order's number, so a leak would show its buyer. */
    const urlOf = (route: AdminRoute) => route.url.replace(':number', String(order.number)).replace(/:[A-Za-z_]+/g, '1').replace(/\*$/, 'x');

    const send = (route: AdminRoute, headers: Record<string, string>, fields: Record<string, string> = {}) =>
      t.app.inject({
        method: route.method as 'GET',
        url: urlOf(route),
        headers: { accept: 'text/html', ...(route.method === 'GET' || route.method === 'HEAD' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }), ...headers },
        ...(route.method === 'GET' || route.method === 'HEAD' ? {} : { payload: new URLSearchParams(fields).toString() }),
      });

    before(async () => {
      t = await startTestStore(backend);
      origin = new URL(t.store.config.baseUrl).origin;
      routes = await guardedAdminRoutes(t.store);
      const variant = t.store.catalog.snapshot.products[0]!.variants[0]!;
      order = await placeOrder(t.store, [{ variantId: variant.id, quantity: 1 }], { email: 'leak.check@example.com' });
      await t.store.orders.capture(t.store.db, order.id, undefined, TERMINAL_ACTOR);
      owner = await startStaffSession(t.store, { email: 'owner@example.com', role: 'owner' });
      staffer = await startStaffSession(t.store, { email: 'clerk@example.com', role: 'staff' });
    });
    after(() => t?.close());

    it('the admin has guarded routes of every kind (pages and forms)', () => {
      assert.ok(routes.some((route) => route.method === 'GET' && route.url === '/admin'), 'the dashboard');
      assert.ok(routes.some((route) => route.method === 'POST' && route.url === '/admin/sign-out'), 'sign-out');
      assert.ok(routes.some((route) => route.method === 'POST' && route.url === '/admin/orders/:number/refund'), 'refund');
      assert.ok(routes.some((route) => route.method === 'POST' && route.url === '/admin/staff'), 'adding staff');
      assert.ok(routes.every((route) => route.url.startsWith('/admin')));
    });

    /** Each guarded route with `cookie` answers 401, shows nothing of the store, and changes nothing. */
    async function refusedEverywhere(cookie: string | undefined, csrf: string | undefined, what: string): Promise<void> {
      const before = await everything(t.store);
      for (const route of routes) {
        for (const accept of ['text/html', 'application/json']) {
          const response = await send(route, { accept, origin, ...(cookie ? { cookie } : {}) }, csrf ? { _csrf: csrf, email: 'intruder@example.com', role: 'owner', amount: '1.00', confirm: 'yes' } : {});
          assert.equal(response.statusCode, 401, `${route.method} ${route.url} ${what} (${accept})`);
          assert.ok(!response.body.includes('leak.check@example.com') && !response.body.includes(order.id), `${route.method} ${route.url} ${what}: nothing of the store shown`);
          assert.equal(response.headers['cache-control'], 'no-store');
          if (cookie) assert.match(String(response.headers['set-cookie']), new RegExp(`^${ADMIN_SESSION_COOKIE}=; Max-Age=0`), 'the dead cookie is removed');
        }
      }
      assert.equal(await everything(t.store), before, `${what}: nothing changed`);
    }

    it('without a session, every guarded route is refused (401) and nothing is read or changed', async () => {
      await refusedEverywhere(undefined, undefined, 'without a session');
      await refusedEverywhere(`${ADMIN_SESSION_COOKIE}=${'A'.repeat(43)}`, 'x', 'with a made-up session');
    });

    it('with a session ended by 12 idle hours or by its 7 days, every guarded route is refused', async () => {
      const idle = await startStaffSession(t.store, { email: 'owner@example.com' });
      await t.store.db.query("update staff_sessions set last_seen_at = now() - interval '12 hours 1 minute' where id = sha256(convert_to($1, 'UTF8'))", [idle.secret]);
      await refusedEverywhere(idle.cookie, idle.csrf, 'with an idle session');
      const old = await startStaffSession(t.store, { email: 'owner@example.com' });
      await t.store.db.query("update staff_sessions set expires_at = now() - interval '1 second' where id = sha256(convert_to($1, 'UTF8'))", [old.secret]);
      await refusedEverywhere(old.cookie, old.csrf, 'with a session past its 7 days');
      const ended = await startStaffSession(t.store, { email: 'owner@example.com' });
      await t.store.staff.signOut(t.store.db, ended.secret);
      await refusedEverywhere(ended.cookie, ended.csrf, 'with a signed-out session');
    });

    it("with a revoked person's session, every guarded route is refused", async () => {
      const gone = await startStaffSession(t.store, { email: 'gone@example.com', role: 'owner' });
      assert.equal((await send({ method: 'GET', url: '/admin' }, { cookie: gone.cookie })).statusCode, 200, 'signed in before');
      await t.store.staff.revoke(t.store.db, TERMINAL_ACTOR, 'gone@example.com');
      await refusedEverywhere(gone.cookie, gone.csrf, "with a revoked person's session");
    });

    it('a cross-site POST, one without an Origin, or one without the CSRF token is refused (403) and changes nothing', async () => {
      const posts = routes.filter((route) => route.method === 'POST');
      assert.ok(posts.length >= 5);
      const fields = { email: 'intruder@example.com', role: 'owner', amount: '1.00', reason: 'x', confirm: 'yes' };
      const before = await everything(t.store);
      for (const route of posts) {
        const cases: [string, Record<string, string>, Record<string, string>][] = [
          ['from another site', { cookie: owner.cookie, origin: 'https://evil.example' }, { _csrf: owner.csrf, ...fields }],
          ['from a look-alike origin', { cookie: owner.cookie, origin: `${origin}.evil.example` }, { _csrf: owner.csrf, ...fields }],
          ['without an Origin', { cookie: owner.cookie }, { _csrf: owner.csrf, ...fields }],
          ['without _csrf', { cookie: owner.cookie, origin }, fields],
          ['with a wrong _csrf', { cookie: owner.cookie, origin }, { _csrf: staffer.csrf, ...fields }],
        ];
        for (const [what, headers, body] of cases) {
          const response = await send(route, headers, body);
          assert.equal(response.statusCode, 403, `${route.url} ${what}`);
        }
      }
      assert.equal(await everything(t.store), before, 'nothing changed');
      // The session is still good: the refusals were the checks, not the session.
      assert.equal((await send({ method: 'GET', url: '/admin' }, { cookie: owner.cookie })).statusCode, 200);
    });

    it("a staff member cannot refund or add staff (403), even resending an owner's form with the owner's values", async () => {
      const orderPage = await send({ method: 'GET', url: '/admin/orders/:number' }, { cookie: owner.cookie });
      assert.equal(orderPage.statusCode, 200);
      const ownersRefund = { _csrf: owner.csrf, amount: '1.00', reason: 'damaged' };
      const ownersAdd = { _csrf: owner.csrf, email: 'new.owner@example.com', role: 'owner' };
      const before = await everything(t.store);
      for (const [url, values] of [
        ['/admin/orders/:number/refund', ownersRefund],
        ['/admin/staff', ownersAdd],
        ['/admin/staff/revoke', { _csrf: owner.csrf, email: 'owner@example.com', confirm: 'yes' }],
      ] as const) {
        // The owner's form as it is (their token): refused by the token check.
        assert.equal((await send({ method: 'POST', url }, { cookie: staffer.cookie, origin }, values)).statusCode, 403, `${url} with the owner's token`);
        // The owner's values under the staff member's own valid token: refused by the role.
        const resent = await send({ method: 'POST', url }, { cookie: staffer.cookie, origin }, { ...values, _csrf: staffer.csrf });
        assert.equal(resent.statusCode, 403, `${url} resent by staff`);
        assert.match(resent.body, /Your role does not allow this/);
      }
      assert.equal((await send({ method: 'GET', url: '/admin/staff' }, { cookie: staffer.cookie })).statusCode, 403, 'nor see the staff page');
      assert.equal(await everything(t.store), before, 'nothing changed');
      // What a staff member may do, they can: the order page.
      assert.equal((await send({ method: 'GET', url: '/admin/orders/:number' }, { cookie: staffer.cookie })).statusCode, 200);
    });

    it('sign-in attempts are rate limited (the admin-sign-in budget): passkey ceremonies and sign-in links alike', async () => {
      const limited = await startTestStore(backend, {
        seedDemo: false,
        config: { ...loadConfig({ BASE_URL: t.store.config.baseUrl, DATA_DIR: 'unused', RATE_LIMITS: 'admin-sign-in=3/min' }), rateLimit: true },
      });
      try {
        const post = (url: string) =>
          limited.app.inject({ method: 'POST', url, headers: { origin, accept: 'application/json', 'content-type': 'application/json' }, payload: '{}' });
        const statuses = [];
        for (const url of ['/admin/sign-in/options', '/admin/sign-in/options', `/admin/sign-in/link/${'x'.repeat(43)}`, '/admin/sign-in/options', `/admin/sign-in/link/${'y'.repeat(43)}`]) {
          statuses.push((await post(url)).statusCode);
        }
        assert.deepEqual(statuses, [200, 200, 404, 429, 429]);
      } finally {
        await limited.close();
      }
    });

    it('an enrollment link creates a passkey once; every sign-in replaces the cookie it came with (no fixation)', async () => {
      const json = (url: string, body: unknown, cookie?: string, from = origin) =>
        t.app.inject({ method: 'POST', url, headers: { accept: 'application/json', 'content-type': 'application/json', origin: from, ...(cookie ? { cookie } : {}) }, payload: JSON.stringify(body) });
      const authenticator = new SoftwareAuthenticator();
      const { link } = await t.store.staff.add(t.store.db, TERMINAL_ACTOR, 'enrolls@example.com', 'staff');
      const enroll = `/admin/enroll/${secretOf(link)}`;
      const page = await t.app.inject({ method: 'GET', url: enroll });
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /enrolls@example\.com/);
      assert.equal(page.headers['cache-control'], 'no-store');
      // The link's secret is in the page's URL: no other site is sent it as a Referer.
      assert.ok(['same-origin', 'no-referrer'].includes(String(page.headers['referrer-policy'])), String(page.headers['referrer-policy']));

      // A cross-site page cannot drive the ceremony.
      assert.equal((await json(`${enroll}/options`, {}, undefined, 'https://evil.example')).statusCode, 403);

      // The browser comes with a cookie already: a session of someone else's, planted.
      const planted = await startStaffSession(t.store, { email: 'clerk@example.com' });
      const options = await json(`${enroll}/options`, {}, planted.cookie);
      assert.equal(options.statusCode, 200);
      const { challenge_id: challengeId, options: creation } = JSON.parse(options.body);
      const registration = JSON.stringify(authenticator.register(creation, origin));
      const enrolled = await json(`${enroll}/verify`, { challenge_id: challengeId, response: registration }, planted.cookie);
      assert.equal(enrolled.statusCode, 200, enrolled.body);
      const afterEnroll = cookieOf(enrolled)!;
      assert.ok(afterEnroll);
      assert.notEqual(afterEnroll, planted.cookie, 'a new cookie');
      assert.match(String(enrolled.headers['set-cookie']), /HttpOnly/);
      assert.match(String(enrolled.headers['set-cookie']), /SameSite=Strict/);
      assert.match(String(enrolled.headers['set-cookie']), /Secure/);
      assert.equal(await t.store.staff.session(t.store.db, planted.secret), undefined, 'the cookie the browser came with no longer signs in');
      assert.equal((await send({ method: 'GET', url: '/admin/orders' }, { cookie: afterEnroll })).statusCode, 200);

      // Once: the link is spent.
      assert.equal((await t.app.inject({ method: 'GET', url: enroll })).statusCode, 404);
      assert.equal((await json(`${enroll}/options`, {})).statusCode, 403);
      assert.equal((await json(`${enroll}/verify`, { challenge_id: challengeId, response: registration })).statusCode, 403);
      assert.equal((await t.store.staff.list(t.store.db)).find((m) => m.email === 'enrolls@example.com')?.passkeys, 1);

      // Sign in with the passkey from that browser: the cookie rotates, the earlier session ends.
      const signInOptions = await json('/admin/sign-in/options', {}, afterEnroll);
      assert.equal(signInOptions.statusCode, 200);
      const request = JSON.parse(signInOptions.body);
      const assertion = JSON.stringify(authenticator.authenticate(request.options, origin));
      const signedIn = await json('/admin/sign-in/verify', { challenge_id: request.challenge_id, response: assertion }, afterEnroll);
      assert.equal(signedIn.statusCode, 200, signedIn.body);
      const afterSignIn = cookieOf(signedIn)!;
      assert.notEqual(afterSignIn, afterEnroll);
      assert.equal((await send({ method: 'GET', url: '/admin' }, { cookie: afterEnroll })).statusCode, 401, 'the session before sign-in ended');
      assert.equal((await send({ method: 'GET', url: '/admin' }, { cookie: afterSignIn })).statusCode, 200);
      // The assertion is single use.
      assert.equal((await json('/admin/sign-in/verify', { challenge_id: request.challenge_id, response: assertion })).statusCode, 403);

      // A sign-in link: a GET signs no one in; a cross-site POST is refused; the POST rotates the cookie.
      const { link: signInLink } = await t.store.staff.signInLink(t.store.db, TERMINAL_ACTOR, 'enrolls@example.com');
      const linkPath = `/admin/sign-in/link/${secretOf(signInLink)}`;
      const shown = await t.app.inject({ method: 'GET', url: linkPath, headers: { cookie: afterSignIn } });
      assert.equal(shown.statusCode, 200);
      assert.equal(cookieOf(shown), undefined);
      const crossSite = await t.app.inject({ method: 'POST', url: linkPath, headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
      assert.equal(crossSite.statusCode, 403);
      assert.equal(await t.store.staff.signInLinkValid(t.store.db, secretOf(signInLink)), true, 'the refused POST left the link unused');
      const used = await t.app.inject({ method: 'POST', url: linkPath, headers: { origin, cookie: afterSignIn, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
      assert.equal(used.statusCode, 303);
      assert.equal(used.headers.location, '/admin');
      const afterLink = cookieOf(used)!;
      assert.notEqual(afterLink, afterSignIn);
      assert.equal((await send({ method: 'GET', url: '/admin' }, { cookie: afterSignIn })).statusCode, 401);
      const again = await t.app.inject({ method: 'POST', url: linkPath, headers: { origin, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
      assert.equal(again.statusCode, 404, 'the link works once');
      assert.equal(cookieOf(again), undefined);

      // Signing out ends the session.
      const csrf = (await t.store.staff.session(t.store.db, afterLink.split('=')[1]!))!.csrfToken;
      const out = await send({ method: 'POST', url: '/admin/sign-out' }, { cookie: afterLink, origin }, { _csrf: csrf });
      assert.equal(out.statusCode, 303);
      assert.equal(out.headers.location, '/admin/sign-in');
      assert.equal((await send({ method: 'GET', url: '/admin' }, { cookie: afterLink })).statusCode, 401);
    });
  });
}
