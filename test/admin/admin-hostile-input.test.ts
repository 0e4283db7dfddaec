/**
 * What a hostile or broken client sends the admin gets a clear 4xx and changes nothing, on both backends: text
 * PostgreSQL cannot keep (a NUL) in a query, a form or a passkey response; a day PostgreSQL has no room for; a
 * malformed upload; a fulfil form naming no line of the order; a `?done=` naming an object's built-in member. And the
 * moves that give money back stay the owner's: a staff member cannot cancel a captured order (it would refund it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readOrder } from '../../src/orders/orders.js';
import { startStaffSession, type StaffSessionForTest } from '../helpers/admin-session.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { placeOrderBy, variantOf } from '../reports/placing.js';

after(dropTestDatabases);

const ORIGIN = 'http://store.test';
const FORM = 'application/x-www-form-urlencoded';

for (const backend of backends) {
  describe(`the admin refuses hostile input with a 4xx and changes nothing (${backend.name})`, () => {
    let t: TestStore;
    let owner: StaffSessionForTest;
    let staff: StaffSessionForTest;
    before(async () => {
      t = await startTestStore(backend);
      await t.store.inventory.setOnHand(t.store.db, 'SLP-60', 100);
      owner = await startStaffSession(t.store, { role: 'owner' });
      staff = await startStaffSession(t.store, { role: 'staff' });
    });
    after(() => t?.close());

    const get = (url: string, session = owner) => t.app.inject({ method: 'GET', url, headers: { cookie: session.cookie, accept: 'text/html' } });
    const post = (url: string, fields: Record<string, string>, session = owner) =>
      t.app.inject({ method: 'POST', url, headers: { cookie: session.cookie, origin: ORIGIN, 'content-type': FORM }, payload: new URLSearchParams({ _csrf: session.csrf, ...fields }).toString() });
    const place = () => placeOrderBy(t.store, { by: 'browser' }, [{ variantId: variantOf(t.store, 'SLP-60'), quantity: 2 }]);

    it('a NUL in a search, a form field or a passkey response: 4xx naming no SQL, nothing changed', async () => {
      for (const url of ['/admin/orders?q=%00', '/admin/products?q=%00', '/admin/orders?q=a%00b&page=2']) {
        const response = await get(url);
        assert.equal(response.statusCode, 422, url);
        assert.match(response.json().description, /contains a NUL character/, url);
      }
      const revoke = await post('/admin/buyers/revoke', { email: 'a\u0000@example.com' });
      assert.equal(revoke.statusCode, 422);
      const json = { 'content-type': 'application/json', origin: ORIGIN };
      const nulChallenge = await t.app.inject({ method: 'POST', url: '/admin/sign-in/verify', headers: json, payload: { challenge_id: '\u0000', response: '{}' } });
      assert.equal(nulChallenge.statusCode, 422);
      const options = await t.app.inject({ method: 'POST', url: '/admin/sign-in/options', headers: json, payload: {} });
      assert.equal(options.statusCode, 200);
      const challengeId = options.json().challenge_id as string;
      for (const response of [JSON.stringify({ id: '\u0000' }), JSON.stringify({ id: 'x'.repeat(5000) }), JSON.stringify({ id: 42 })]) {
        const verify = await t.app.inject({ method: 'POST', url: '/admin/sign-in/verify', headers: json, payload: { challenge_id: challengeId, response } });
        assert.ok(verify.statusCode >= 400 && verify.statusCode < 500, `${verify.statusCode} ${verify.body}`);
        assert.doesNotMatch(verify.body, /invalid byte sequence|select|at \//i);
      }
    });

    it('a day out of any order\'s range is left out of the filter, not a 500', async () => {
      for (const url of ['/admin/orders?from=0000-01-01', '/admin/orders?to=0000-12-31', '/admin/orders?from=1969-12-31&to=9999-12-31']) {
        assert.equal((await get(url)).statusCode, 200, url);
      }
    });

    it('a malformed upload is a 400, and nothing is stored', async () => {
      const drafts = async () => (await t.store.db.query<{ n: number }>('select count(*)::int as n from import_drafts'))[0]!.n;
      const before = await drafts();
      for (const payload of ['garbage', `--b\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${owner.csrf}\r\n--b`]) {
        const response = await t.app.inject({
          method: 'POST',
          url: '/admin/import',
          headers: { cookie: owner.cookie, origin: ORIGIN, 'content-type': 'multipart/form-data; boundary=b' },
          payload,
        });
        assert.ok(response.statusCode === 400 || response.statusCode === 403, `${response.statusCode} ${response.body}`);
      }
      assert.equal(await drafts(), before);
    });

    it('a fulfil form whose quantities name no line of the order ships nothing', async () => {
      const order = await place();
      const response = await post(`/admin/orders/${order.number}/fulfil`, { qty_li_typo: '1' });
      assert.equal(response.statusCode, 400);
      assert.equal((await readOrder(t.store.db, order.id))!.lines[0]!.fulfilled, 0);
    });

    it("a staff member cannot cancel a captured order (it would give the money back); the owner can", async () => {
      const order = await place();
      assert.equal((await post(`/admin/orders/${order.number}/capture`, {}, staff)).statusCode, 303);
      const page = await get(`/admin/orders/${order.number}`, staff);
      assert.doesNotMatch(page.body, new RegExp(`action="/admin/orders/${order.number}/cancel"`), 'no cancel form for staff');
      const refused = await post(`/admin/orders/${order.number}/cancel`, { reason: 'changed mind' }, staff);
      assert.equal(refused.statusCode, 403);
      const after = (await readOrder(t.store.db, order.id))!;
      assert.equal(after.status, 'placed');
      assert.equal(after.refunded, 0);
      assert.equal((await post(`/admin/orders/${order.number}/cancel`, { reason: 'changed mind' })).statusCode, 303);
      assert.equal((await readOrder(t.store.db, order.id))!.status, 'canceled');
      // An uncaptured order is staff's to cancel.
      const unpaid = await place();
      assert.equal((await post(`/admin/orders/${unpaid.number}/cancel`, { reason: 'out of stock' }, staff)).statusCode, 303);
    });

    it('?done= names only the page\'s own notices; a tracking URL kept from before that is not a web address is no link', async () => {
      for (const path of ['/admin/staff', '/admin/products', '/admin/buyers', '/admin/import', '/admin/deliveries']) {
        for (const done of ['constructor', '__proto__', 'toString']) {
          const response = await get(`${path}?done=${done}`);
          assert.equal(response.statusCode, 200, path);
          assert.doesNotMatch(response.body, /native code|\[object Object\]/, `${path}?done=${done}`);
        }
      }
      const order = await place();
      assert.equal((await post(`/admin/orders/${order.number}/capture`, {})).statusCode, 303);
      const shipped = await post(`/admin/orders/${order.number}/fulfil`, { tracking_number: '1Z999' });
      assert.equal(shipped.statusCode, 303, shipped.body.match(/class="problem"[^<]*/)?.[0]);
      await t.store.db.query(`update order_fulfillments set tracking_url = 'javascript:alert(1)' where order_id = $1`, [order.id]);
      const body = (await get(`/admin/orders/${order.number}?done=constructor`)).body;
      assert.doesNotMatch(body, /href="javascript:/);
      assert.doesNotMatch(body, /native code/);
    });
  });
}
