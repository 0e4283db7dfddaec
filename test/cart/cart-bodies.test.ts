/**
 * The bodies Shopify themes post (urlencoded with bracket keys, multipart FormData, lenient JSON types), the
 * non-.js routes with content negotiation, and malformed or oversized bodies: never a 5xx, always JSON.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { schemaErrors } from '../helpers/schemas.js';
import { assertCartError, Shopper, variantId } from './shopper.js';

after(dropTestDatabases);

/** A FormData encoded as a browser sends it: the multipart body and its Content-Type with the boundary. */
async function multipart(fields: [string, string][]): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  for (const [name, value] of fields) form.append(name, value);
  const request = new Request('http://store.test/', { method: 'POST', body: form });
  return { payload: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type')! };
}

for (const backend of backends) {
  describe(`cart: request bodies and routes themes use (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    const lines = async (shopper: Shopper) =>
      (await shopper.cart()).body.items.map((i: { sku: string; quantity: number; properties: Record<string, string> }) => [i.sku, i.quantity, i.properties]);

    it('a urlencoded id=…&quantity=… adds the item', async () => {
      const shopper = new Shopper(t.app);
      const answer = await shopper.send('POST', '/cart/add.js', { form: `id=${variantId(t, 'ESP-RIS-10')}&quantity=3` });
      assert.equal(answer.status, 200, answer.raw);
      assert.deepEqual(await lines(shopper), [['ESP-RIS-10', 3, {}]]);
    });

    it('urlencoded items[0][id]…, items[1][…] and properties[Name] as jQuery.serialize sends them add every item', async () => {
      const shopper = new Shopper(t.app);
      const form = new URLSearchParams([
        ['items[0][id]', String(variantId(t, 'ESP-RIS-10'))],
        ['items[0][quantity]', '2'],
        ['items[0][properties][Gift note]', 'Happy birthday'],
        ['items[1][id]', String(variantId(t, 'NRG-CITRUS-12'))],
      ]).toString();
      const answer = await shopper.send('POST', '/cart/add.js', { form });
      assert.equal(answer.status, 200, answer.raw);
      assert.deepEqual(await lines(shopper), [
        ['NRG-CITRUS-12', 1, {}],
        ['ESP-RIS-10', 2, { 'Gift note': 'Happy birthday' }],
      ]);
    });

    it('a single urlencoded item takes properties[Name] and a blank selling_plan as none', async () => {
      const shopper = new Shopper(t.app);
      const form = new URLSearchParams([
        ['id', String(variantId(t, 'ESP-RIS-10'))],
        ['quantity', '1'],
        ['properties[Engraving]', 'A+B'],
        ['selling_plan', ''],
      ]).toString();
      assert.equal((await shopper.send('POST', '/cart/add.js', { form })).status, 200);
      assert.deepEqual(await lines(shopper), [['ESP-RIS-10', 1, { Engraving: 'A+B' }]]);
    });

    it('a multipart FormData product form, as Dawn posts it to /cart/add, adds the item and answers JSON', async () => {
      const shopper = new Shopper(t.app);
      const plan = t.store.catalog.snapshot.productByHandle('espresso-capsules')!.sellingPlanGroups[0]!.plans[0]!.id;
      const { payload, contentType } = await multipart([
        ['form_type', 'product'],
        ['utf8', '✓'],
        ['id', String(variantId(t, 'ESP-CLA-10'))],
        ['quantity', '2'],
        ['selling_plan', String(plan)],
        ['properties[Grind]', 'Whole bean'],
        ['sections', 'cart-drawer,cart-icon-bubble'],
        ['sections_url', '/products/espresso-capsules'],
      ]);
      const answer = await shopper.send('POST', '/cart/add', {
        payload,
        headers: { 'content-type': contentType, accept: 'application/javascript', 'x-requested-with': 'XMLHttpRequest' },
      });
      assert.equal(answer.status, 200, answer.raw);
      assert.equal(answer.body.items[0].quantity, 2);
      assert.equal(answer.body.items[0].selling_plan_allocation.selling_plan.id, plan);
      assert.deepEqual(answer.body.items[0].properties, { Grind: 'Whole bean' });
    });

    it('multipart change and update bodies work too', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      let form = await multipart([
        ['line', '1'],
        ['quantity', '4'],
      ]);
      assert.equal((await shopper.send('POST', '/cart/change.js', { payload: form.payload, headers: { 'content-type': form.contentType } })).status, 200);
      form = await multipart([[`updates[${variantId(t, 'NRG-CITRUS-12')}]`, '2']]);
      assert.equal((await shopper.send('POST', '/cart/update.js', { payload: form.payload, headers: { 'content-type': form.contentType } })).status, 200);
      assert.deepEqual(await lines(shopper), [
        ['NRG-CITRUS-12', 2, {}],
        ['ESP-RIS-10', 4, {}],
      ]);
    });

    it('urlencoded change (line=1&quantity=3) and update (updates[key]=2, updates[]=…) work as Timber and cart.js send them', async () => {
      const shopper = new Shopper(t.app);
      const added = await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      assert.equal((await shopper.send('POST', '/cart/change.js', { form: 'line=1&quantity=3' })).status, 200);
      const key = added.body.items[0].key;
      assert.equal((await shopper.send('POST', '/cart/update.js', { form: `updates[${encodeURIComponent(key)}]=5&note=Hello` })).status, 200);
      assert.deepEqual(await lines(shopper), [['ESP-RIS-10', 5, {}]]);
      assert.equal((await shopper.send('POST', '/cart/update.js', { form: 'updates[]=6' })).status, 200);
      const cart = (await shopper.cart()).body;
      assert.equal(cart.items[0].quantity, 6);
      assert.equal(cart.note, 'Hello');
    });

    it('a form field that names an invalid value answers 422 naming it', async () => {
      const answer = await new Shopper(t.app).send('POST', '/cart/add.js', { form: `id=${variantId(t, 'ESP-RIS-10')}&quantity=many` });
      assert.equal(answer.status, 422);
      assert.match(answer.body.description, /items\[0\]\.quantity/);
    });

    it('form keys that try to reach the prototype are ignored', async () => {
      const shopper = new Shopper(t.app);
      const form = `id=${variantId(t, 'ESP-RIS-10')}&__proto__[polluted]=1&properties[__proto__][x]=1&constructor[prototype][y]=2&properties[ok]=yes`;
      const answer = await shopper.send('POST', '/cart/add.js', { form });
      assert.equal(answer.status, 200, answer.raw);
      assert.deepEqual(answer.body.items[0].properties, { ok: 'yes' });
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    it('a JSON Content-Type with a trailing semicolon (@shopify/theme-cart) is accepted', async () => {
      const answer = await new Shopper(t.app).send('POST', '/cart/add.js', {
        payload: JSON.stringify({ items: [{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }] }),
        headers: { 'content-type': 'application/json;' },
      });
      assert.equal(answer.status, 200, answer.raw);
    });

    it('clear.js posted with a JSON Content-Type and no body answers the empty cart', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const answer = await shopper.send('POST', '/cart/clear.js', { payload: '', headers: { 'content-type': 'application/json' } });
      assert.equal(answer.status, 200, answer.raw);
      assert.equal(answer.body.item_count, 0);
    });

    it('malformed JSON answers 400 JSON and changes nothing', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      for (const path of ['/cart/add.js', '/cart/change.js', '/cart/update.js']) {
        const answer = await shopper.send('POST', path, { payload: '{"items": [', headers: { 'content-type': 'application/json' } });
        assert.equal(answer.status, 400, `${path}: ${answer.raw}`);
        assert.deepEqual(schemaErrors('Error', answer.body), []);
        assert.equal(answer.body.status, 400);
      }
      assert.equal((await shopper.cart()).body.item_count, 1);
    });

    it('a JSON body that is not an object answers 422 naming the body', async () => {
      for (const payload of ['[1,2]', '"items"', '42', 'null']) {
        const answer = await new Shopper(t.app).send('POST', '/cart/add.js', { payload, headers: { 'content-type': 'application/json' } });
        assert.equal(answer.status, 422, `${payload}: ${answer.raw}`);
        assert.match(answer.body.description, /body|items/);
      }
    });

    it('a JSON __proto__ key is dropped, not merged and not refused (the rule of the whole app)', async () => {
      const answer = await new Shopper(t.app).send('POST', '/cart/add.js', {
        payload: `{"items":[{"id":${variantId(t, 'ESP-RIS-10')}}],"__proto__":{"x":1}}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(answer.status, 200, answer.raw);
      assert.equal(answer.body.item_count, 1);
      assert.equal(({} as Record<string, unknown>).x, undefined);
    });

    it('a body over the size limit answers 413 JSON, for JSON, urlencoded and multipart alike', async () => {
      const big = 'x'.repeat(300 * 1024);
      const json = await new Shopper(t.app).send('POST', '/cart/add.js', { payload: JSON.stringify({ items: [], pad: big }), headers: { 'content-type': 'application/json' } });
      assert.equal(json.status, 413);
      assert.equal(json.body.status, 413);
      const form = await new Shopper(t.app).send('POST', '/cart/add.js', { form: `id=1&pad=${big}` });
      assert.equal(form.status, 413);
      const { payload, contentType } = await multipart([['pad', big]]);
      const parts = await new Shopper(t.app).send('POST', '/cart/add.js', { payload, headers: { 'content-type': contentType } });
      assert.equal(parts.status, 413, parts.raw);
      assert.equal(parts.body.status, 413);
    });

    it('a multipart field longer than a form field may be answers 413, not a truncated add', async () => {
      const { payload, contentType } = await multipart([
        ['id', String(variantId(t, 'ESP-RIS-10'))],
        ['properties[note]', 'y'.repeat(5000)],
      ]);
      const shopper = new Shopper(t.app);
      const answer = await shopper.send('POST', '/cart/add.js', { payload, headers: { 'content-type': contentType } });
      assert.equal(answer.status, 413, answer.raw);
      assert.equal((await shopper.cart()).body.item_count, 0);
    });

    it('a malformed multipart body answers 400 JSON, never a 5xx', async () => {
      const bodies = [
        { payload: '--xyz\r\nContent-Disposition: form-data; name="id"\r\n\r\n1', contentType: 'multipart/form-data; boundary=xyz' },
        { payload: 'not multipart at all', contentType: 'multipart/form-data; boundary=xyz' },
        { payload: '--xyz--', contentType: 'multipart/form-data' },
      ];
      for (const { payload, contentType } of bodies) {
        const answer = await new Shopper(t.app).send('POST', '/cart/add.js', { payload, headers: { 'content-type': contentType } });
        assert.ok(answer.status >= 400 && answer.status < 500, `${contentType} ${payload}: ${answer.status} ${answer.raw}`);
        assert.equal(answer.body.status, answer.status);
      }
    });

    it('an unsupported Content-Type answers 415 JSON', async () => {
      const answer = await new Shopper(t.app).send('POST', '/cart/add.js', { payload: '<id>1</id>', headers: { 'content-type': 'application/xml' } });
      assert.equal(answer.status, 415);
      assert.equal(answer.body.status, 415);
    });

    it('a text/plain body answers 415 Unsupported media type (JSON), as for any type the cart does not parse, changing nothing', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const id = variantId(t, 'NRG-CITRUS-12');
      for (const [path, payload] of [
        ['/cart/add.js', `id=${id}&quantity=1`],
        ['/cart/add.js', JSON.stringify({ items: [{ id, quantity: 1 }] })],
        ['/cart/add', JSON.stringify({ items: [{ id, quantity: 1 }] })],
        ['/cart/change.js', 'line=1&quantity=0'],
        ['/cart/update.js', '{"updates":[0]}'],
        ['/cart/clear.js', 'clear'],
      ] as const) {
        for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'text/html']) {
          const answer = await shopper.send('POST', path, { payload, headers: { 'content-type': type, accept: 'application/json' } });
          assert.equal(answer.status, 415, `${path} ${type}: ${answer.raw}`);
          assert.deepEqual(schemaErrors('Error', answer.body), []);
          assert.equal(answer.body.status, 415);
          assert.equal(answer.body.message, 'Unsupported media type');
          assert.match(answer.body.description, /text\/(plain|html)/);
        }
      }
      const cart = (await shopper.cart()).body;
      assert.equal(cart.item_count, 1);
      // A bodiless post (fetch with body "" sends text/plain) still clears, as a post with no body at all does.
      const cleared = await shopper.send('POST', '/cart/clear.js', { payload: '', headers: { 'content-type': 'text/plain;charset=UTF-8' } });
      assert.equal(cleared.status, 200, cleared.raw);
      assert.equal(cleared.body.item_count, 0);
    });

    it('/cart/add (no .js) answers JSON to X-Requested-With: XMLHttpRequest or an Accept of JSON or JavaScript', async () => {
      const ajaxHeaders: Record<string, string>[] = [
        { 'x-requested-with': 'XMLHttpRequest' },
        { accept: 'application/json' },
        { accept: 'application/javascript' },
        { accept: 'text/html', 'x-requested-with': 'XMLHttpRequest' },
      ];
      for (const headers of ajaxHeaders) {
        const shopper = new Shopper(t.app);
        const answer = await shopper.send('POST', '/cart/add', { json: { items: [{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }] }, headers });
        assert.equal(answer.status, 200, JSON.stringify(headers));
        assert.equal(answer.body.item_count, 1);
      }
    });

    it('/cart/change, /cart/update and /cart/clear (no .js) answer JSON to AJAX callers', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const headers = { accept: 'application/json' };
      assert.equal((await shopper.send('POST', '/cart/change', { json: { line: 1, quantity: 2 }, headers })).body.item_count, 2);
      assert.equal((await shopper.send('POST', '/cart/update', { json: { updates: [3] }, headers })).body.item_count, 3);
      assert.equal((await shopper.send('POST', '/cart/clear', { headers })).body.item_count, 0);
    });

    it('a plain HTML form post to /cart/add adds the item and redirects 302 to the cart page, /cart; its errors are still JSON', async () => {
      const shopper = new Shopper(t.app);
      const headers = { accept: 'text/html,application/xhtml+xml' };
      const answer = await shopper.send('POST', '/cart/add', { form: `id=${variantId(t, 'ESP-RIS-10')}&quantity=2`, headers });
      assert.equal(answer.status, 302);
      assert.equal(answer.headers.location, '/cart');
      assert.ok(answer.setCookie);
      assert.deepEqual(await lines(shopper), [['ESP-RIS-10', 2, {}]]);
      const refused = await shopper.send('POST', '/cart/add', { form: `id=${variantId(t, 'HYD-WATERMELON-30')}`, headers });
      assertCartError(refused, /sold out/);
    });

    it('a GET on a cart change path answers 405 JSON with Allow: POST', async () => {
      const answer = await new Shopper(t.app).send('GET', '/cart/add.js');
      assert.equal(answer.status, 405);
      assert.equal(answer.headers.allow, 'POST');
      assert.equal(answer.body.status, 405);
    });
  });
}
