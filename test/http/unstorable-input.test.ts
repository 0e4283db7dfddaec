/**
 * The storefront door refuses input the store cannot keep, in one place for every route: a JSON body, a form
 * (urlencoded or multipart) or a query string holding a NUL or an unpaired surrogate, in a value or a name, or
 * nested deeper than MAX_INPUT_DEPTH, is answered 422 Invalid parameter error naming the field, and changes
 * nothing. The approval page's form, which reached the database with such text (a 500), is refused the same way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_INPUT_DEPTH } from '../../src/http/storable-input.js';
import { Shopper, variantId, type Answer } from '../cart/shopper.js';
import { backends, dropTestDatabases, startTestStore, testConfig, type TestStore } from '../helpers/store.js';
import { ANA_AT_MARKET_ST } from '../helpers/orders.js';

after(dropTestDatabases);

/** The storefront's Error body, exactly: 422, the class, and a description naming the field and the problem. */
function assertRefused(answer: { status: number; body: unknown; raw: string }, field: string, problem: RegExp): void {
  assert.equal(answer.status, 422, answer.raw);
  const body = answer.body as { status: number; message: string; description: string };
  assert.deepEqual(Object.keys(body).sort(), ['description', 'message', 'status']);
  assert.equal(body.status, 422);
  assert.equal(body.message, 'Invalid parameter error');
  assert.ok(body.description.startsWith(`Parameter ${field} is invalid: `), body.description);
  assert.match(body.description, problem);
}

const NUL = /contains a NUL character/;
const SURROGATE = /contains an unpaired surrogate \(not valid Unicode\)/;
const TOO_DEEP = new RegExp(`is nested more than ${MAX_INPUT_DEPTH} levels deep`);

/** `{a: {a: … 'x'}}`, `levels` objects deep. */
function nested(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

/** A multipart/form-data body of text fields, as `new FormData(form)` posts it. */
function multipart(fields: Record<string, string>): { payload: Buffer; headers: Record<string, string> } {
  const boundary = '----storefront-test-boundary';
  const parts = Object.entries(fields).map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  return { payload: Buffer.from(`${parts.join('')}--${boundary}--\r\n`), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** A deliverable address (the checkout domain's names). */
const DESTINATION = ANA_AT_MARKET_ST;

function variantIdOf(t: TestStore, sku: string): number {
  return t.store.catalog.snapshot.products.flatMap((p) => p.variants).find((v) => v.sku === sku)!.id;
}

for (const backend of backends) {
  describe(`storefront: input the store cannot keep (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      // The buyer proves the approval (a code or a passkey): the form then carries the proof's fields.
      t = await startTestStore(backend, { config: { checkout: { ...testConfig().checkout, approvalProof: 'passkey-or-code' } } });
    });
    after(() => t.close());

    /** A shopper whose cart holds a line and a note; and the cart as it is. */
    async function shopperWithALine(): Promise<{ shopper: Shopper; before: Answer['body'] }> {
      const shopper = new Shopper(t.app);
      assert.equal((await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 2 }])).status, 200);
      assert.equal((await shopper.update({ note: 'as before' })).status, 200);
      return { shopper, before: (await shopper.cart()).body };
    }

    for (const [label, text, problem] of [
      ['a NUL', 'a\u0000b', NUL],
      ['an unpaired surrogate', 'a\ud800b', SURROGATE],
    ] as const) {
      it(`a JSON body with ${label} in any field, even one the route ignores, is 422 naming it; the cart is unchanged`, async () => {
        const { shopper, before } = await shopperWithALine();
        const id = variantId(t, 'NRG-CITRUS-12');
        assertRefused(await shopper.add([{ id, quantity: 1, gift: { message: text } }]), 'items[0].gift.message', problem);
        assertRefused(await shopper.send('POST', '/cart/add.js', { json: { id, quantity: 1, source: text } }), 'source', problem);
        assertRefused(await shopper.update({ note: 'changed', context: [{ page: text }] }), 'context[0].page', problem);
        assertRefused(await shopper.change({ line: 1, quantity: 5, origin: text }), 'origin', problem);
        assert.deepEqual((await shopper.cart()).body, before);
      });

      it(`a member name with ${label} is 422 naming the object that holds it; the cart is unchanged`, async () => {
        const { shopper, before } = await shopperWithALine();
        const refused = await shopper.update({ note: 'changed', [text]: 'x' });
        assertRefused(refused, 'body', /has a member name that contains/);
        assertRefused(await shopper.update({ note: 'changed', meta: { [text]: 'x' } }), 'meta', /has a member name that contains/);
        assert.deepEqual((await shopper.cart()).body, before);
      });
    }

    it(`a JSON body nested deeper than ${MAX_INPUT_DEPTH} levels (10,000 here) is 422 naming where; the cart is unchanged`, async () => {
      const { shopper, before } = await shopperWithALine();
      // Written out as text: JSON.stringify itself recurses, and overflows at this depth.
      const deepBody = `{"note":"changed","extra":${'{"a":'.repeat(10_000)}"x"${'}'.repeat(10_000)}}`;
      const refused = await shopper.send('POST', '/cart/update.js', { payload: deepBody, headers: { 'content-type': 'application/json' } });
      assert.equal(refused.status, 422, refused.raw);
      assert.match(refused.body.description, /^Parameter extra\.a\.a\.a/);
      assert.match(refused.body.description, TOO_DEEP);
      assert.ok(refused.body.description.length < 400, 'the path is cut, not 10,000 names long');
      // The body, the items array and the item are three levels: `extra` holding MAX_INPUT_DEPTH more is too deep.
      const added = await shopper.add([{ id: variantId(t, 'NRG-CITRUS-12'), quantity: 1, extra: nested(MAX_INPUT_DEPTH) }]);
      assert.equal(added.status, 422, added.raw);
      assert.match(added.body.description, new RegExp(`^Parameter items\\[0\\]\\.extra(\\.a){${MAX_INPUT_DEPTH - 3}} is invalid: it ${TOO_DEEP.source}\\.$`));
      assert.deepEqual((await shopper.cart()).body, before);
      // At the limit it is only an unknown field, as before.
      assert.equal((await shopper.update({ extra: nested(MAX_INPUT_DEPTH - 1) })).status, 200);
    });

    it('a urlencoded or multipart form with a NUL in any field is 422 naming it; the cart is unchanged', async () => {
      const { shopper, before } = await shopperWithALine();
      const id = variantId(t, 'NRG-CITRUS-12');
      assertRefused(await shopper.send('POST', '/cart/add.js', { form: `id=${id}&quantity=1&return_to=%00` }), 'return_to', NUL);
      assertRefused(await shopper.send('POST', '/cart/update.js', { form: 'note=changed&%00=1' }), 'body', /has a member name that contains a NUL/);
      const form = multipart({ id: String(id), quantity: '1', 'options[Size]': 'a\u0000' });
      assertRefused(await shopper.send('POST', '/cart/add.js', form), 'options.Size', NUL);
      assertRefused(await shopper.send('POST', '/cart/add', { ...form, headers: { ...form.headers, accept: 'application/json' } }), 'options.Size', NUL);
      assert.deepEqual((await shopper.cart()).body, before);
    });

    it('a query string with a NUL is 422 naming the parameter, on the catalog, search and cart routes', async () => {
      const { shopper, before } = await shopperWithALine();
      const get = async (url: string) => shopper.send('GET', url);
      assertRefused(await get('/search/suggest.json?q=drink%00'), 'q', NUL);
      assertRefused(await get('/products.json?page=1&view=%00'), 'view', NUL);
      assertRefused(await get('/collections/all/products.json?sort_by=a%00'), 'sort_by', NUL);
      assertRefused(await get('/recommendations/products.json?product_id=1&section_id=%00'), 'section_id', NUL);
      assertRefused(await get(`/products/${t.store.catalog.snapshot.products[0]!.handle}.js?variant=%00`), 'variant', NUL);
      assertRefused(await shopper.send('POST', '/cart/update.js?note=%00', { json: { note: 'changed' } }), 'note', NUL);
      assert.deepEqual((await shopper.cart()).body, before);
      // Storable text is untouched by the check.
      assert.equal((await get('/search/suggest.json?q=drink')).status, 200);
    });

    it("the approval page's form with a NUL in the passkey's challenge id is 422 naming it, not a 500; nothing is ordered", async () => {
      const { checkouts, db } = t.store;
      const created = await checkouts.create(
        db,
        {
          lines: [{ variantId: variantIdOf(t, 'HYD-LEMONLIME-30'), quantity: 1 }],
          buyer: { email: 'ana@example.com' },
          destination: DESTINATION as never,
          shippingOption: 'standard',
        },
        'agent',
        'agent',
      );
      const checkoutId = created.view.record.id;
      const token = (await checkouts.requestCompletion(db, checkoutId, 'agent')).approval!.token;
      const page = await t.app.inject({ method: 'GET', url: `/checkout/approve/${token}` });
      assert.equal(page.statusCode, 200);
      const cookie = ([] as string[]).concat(page.headers['set-cookie'] ?? []).find((c) => c.startsWith('approval_form='))!.split(';')[0]!;
      const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)![1]!;
      const form = { action: 'approve', form_token: hidden('form_token'), digest: hidden('digest') };
      const post = (fields: Record<string, string>) =>
        t.app.inject({
          method: 'POST',
          url: `/checkout/approve/${token}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: 'http://store.test', 'sec-fetch-site': 'same-origin' },
          payload: new URLSearchParams({ ...form, ...fields }).toString(),
        });
      const refusedForms: Record<string, string>[] = [{ challenge_id: 'c\u0000', assertion: '{}' }, { code: '12\u00003' }];
      for (const fields of refusedForms) {
        const response = await post(fields);
        assert.equal(response.statusCode, 422, response.body);
        assertRefused({ status: response.statusCode, body: JSON.parse(response.body), raw: response.body }, Object.keys(fields)[0]!, NUL);
      }
      assert.equal((await checkouts.get(db, checkoutId))!.view.record.status, 'requires_escalation');
      const [orders] = await db.query<{ count: number }>('select count(*)::int as count from orders');
      assert.equal(orders!.count, 0);
    });
  });
}
