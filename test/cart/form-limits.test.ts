/**
 * A form over the limits of the form reader (src/storefront/form-body.ts: too many fields, names nested too deep,
 * lists longer than the cart takes) is answered with a clear 4xx JSON error and changes nothing, urlencoded or
 * multipart: a hostile form never makes a large structure, and never a 5xx.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_FORM_FIELDS } from '../../src/storefront/form-body.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { Shopper, variantId } from './shopper.js';

after(dropTestDatabases);

/** A FormData encoded as a browser sends it: the multipart body and its Content-Type with the boundary. */
async function multipart(fields: [string, string][]): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData();
  for (const [name, value] of fields) form.append(name, value);
  const request = new Request('http://store.test/', { method: 'POST', body: form });
  return { payload: Buffer.from(await request.arrayBuffer()), headers: { 'content-type': request.headers.get('content-type')! } };
}

for (const backend of backends) {
  describe(`cart: forms over the reader's limits (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('a field name nested deeper than four brackets is 400 Bad request, urlencoded or multipart, and adds nothing', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'ESP-RIS-10');
      const deep = 'items[0][properties][a][b][c]';
      for (const answer of [
        await shopper.send('POST', '/cart/add.js', { form: `items[0][id]=${id}&${deep}=1` }),
        await shopper.send('POST', '/cart/add.js', await multipart([['items[0][id]', String(id)], [deep, '1']])),
      ]) {
        assert.equal(answer.status, 400, answer.raw);
        assert.deepEqual(answer.body, { status: 400, message: 'Bad request', description: 'A form field name nests deeper than 4 brackets.' });
      }
      assert.deepEqual((await shopper.cart()).body.items, []);
    });

    it(`a urlencoded form of more than ${MAX_FORM_FIELDS} fields is 400 Bad request`, async () => {
      const form = Array.from({ length: MAX_FORM_FIELDS + 1 }, (_, n) => `attributes[k${n}]=v`).join('&');
      const answer = await new Shopper(t.app).send('POST', '/cart/update.js', { form });
      assert.equal(answer.status, 400, answer.raw);
      assert.equal(answer.body.description, `The form has more than ${MAX_FORM_FIELDS} fields.`);
    });

    it('a list longer than the cart takes is refused by the schema (422), not read as a longer list', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'ESP-RIS-10');
      const answer = await shopper.send('POST', '/cart/add.js', { form: `items[][id]=${id}&`.repeat(101) });
      assert.equal(answer.status, 422, answer.raw);
      assert.deepEqual((await shopper.cart()).body.items, []);
      const updated = await shopper.send('POST', '/cart/update.js', { form: 'updates[]=1&'.repeat(101) });
      assert.equal(updated.status, 422, updated.raw);
    });
  });
}
