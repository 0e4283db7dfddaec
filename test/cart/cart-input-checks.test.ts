/**
 * Input the cart refuses before changing anything: text PostgreSQL cannot store (NUL, an unpaired surrogate),
 * JSON quantities that are not integers (JSON bodies are never coerced; form bodies still are), and a change
 * judged on a stale cached copy of a cart another instance changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { backends, dropTestDatabases, startSecondInstance, startTestStore, type TestStore } from '../helpers/store.js';
import { Shopper, variantId, type Answer } from './shopper.js';

after(dropTestDatabases);

function assertInvalidParameter(answer: Answer, field: RegExp): void {
  assert.equal(answer.status, 422, answer.raw);
  assert.equal(answer.body.message, 'Invalid parameter error', answer.raw);
  assert.match(answer.body.description, field);
}

for (const backend of backends) {
  describe(`cart: input checks (${backend.name})`, () => {
    let t: TestStore;
    /** A second instance on the same database: its own app, cart service and cache. */
    let other: { app: FastifyInstance; close(): Promise<void> };
    before(async () => {
      t = await startTestStore(backend, { config: { cartMaxLineQuantity: 10 } });
      other = await startSecondInstance(backend, t, { cartMaxLineQuantity: 10 });
    });
    after(async () => {
      await other.close();
      await t.close();
    });

    /** A shopper whose cart holds ESP-RIS-10 × 2, with a note and an attribute; returns its line key. */
    async function shopperWithALine() {
      const shopper = new Shopper(t.app);
      const added = await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 2, properties: { Engraving: 'A' } }]);
      assert.equal(added.status, 200, added.raw);
      assert.equal((await shopper.update({ note: 'hi', attributes: { Gift: 'yes' } })).status, 200);
      return { shopper, key: added.body.items[0].key as string, snapshot: (await shopper.cart()).body };
    }

    for (const [label, text] of [
      ['a NUL', 'a\u0000b'],
      ['an unpaired surrogate', 'a\ud800b'],
    ] as const) {
      it(`add.js refuses ${label} in a line property value or name with 422 naming the field, changing nothing`, async () => {
        const { shopper, snapshot } = await shopperWithALine();
        const id = variantId(t, 'NRG-CITRUS-12');
        assertInvalidParameter(await shopper.add([{ id, quantity: 1, properties: { a: text } }]), /items\[0\]\.properties/);
        assertInvalidParameter(await shopper.add([{ id, quantity: 1, properties: { [text]: 'x' } }]), /items\[0\]\.properties/);
        assertInvalidParameter(await shopper.send('POST', '/cart/add.js', { json: { id, quantity: 1, properties: { a: text } } }), /properties/);
        // A form carries UTF-8, which has no unpaired surrogate (it decodes to U+FFFD); a NUL it can carry.
        assertInvalidParameter(await shopper.send('POST', '/cart/add.js', { form: `id=${id}&quantity=1&properties[Name]=%00` }), /items\[0\]\.properties/);
        assertInvalidParameter(await shopper.send('POST', '/cart/add.js', { form: `id=${id}&quantity=1&properties[%00]=x` }), /items\[0\]\.properties/);
        assert.deepEqual((await shopper.cart()).body, snapshot);
      });

      it(`update.js refuses ${label} in the note or attributes with 422 naming the field, changing nothing`, async () => {
        const { shopper, snapshot } = await shopperWithALine();
        assertInvalidParameter(await shopper.update({ note: text }), /\bnote\b/);
        assertInvalidParameter(await shopper.update({ attributes: { Gift: text } }), /attributes/);
        assertInvalidParameter(await shopper.update({ attributes: { [text]: 'x' } }), /attributes/);
        assertInvalidParameter(await shopper.send('POST', '/cart/update.js', { form: 'note=%00' }), /\bnote\b/);
        assert.deepEqual((await shopper.cart()).body, snapshot);
      });
    }

    it('cart text keeps emoji and other characters outside the Basic Multilingual Plane', async () => {
      const shopper = new Shopper(t.app);
      const answer = await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1, properties: { 'Gift 🎁': 'Happy 😀 day' } }]);
      assert.equal(answer.status, 200, answer.raw);
      assert.deepEqual(answer.body.items[0].properties, { 'Gift 🎁': 'Happy 😀 day' });
      assert.equal((await shopper.update({ note: 'Merci 🙏' })).body.note, 'Merci 🙏');
    });

    for (const quantity of [null, false, '', '2', 1.5, true]) {
      it(`JSON quantity ${JSON.stringify(quantity)} is refused with 422 by change.js, update.js and add.js, changing nothing`, async () => {
        const { shopper, key, snapshot } = await shopperWithALine();
        const id = variantId(t, 'ESP-RIS-10');
        assertInvalidParameter(await shopper.change({ id: key, quantity }), /\bquantity\b/);
        assertInvalidParameter(await shopper.change({ line: 1, quantity }), /\bquantity\b/);
        assertInvalidParameter(await shopper.update({ updates: { [String(id)]: quantity } }), /updates/);
        assertInvalidParameter(await shopper.update({ updates: { [key]: quantity } }), /updates/);
        assertInvalidParameter(await shopper.update({ updates: [quantity] }), /updates/);
        assertInvalidParameter(await shopper.add([{ id, quantity }]), /items\[0\]\.quantity/);
        assert.deepEqual((await shopper.cart()).body, snapshot);
      });
    }

    it('JSON change.js still takes a variant id as a number, and form bodies still coerce their digit strings', async () => {
      const { shopper, key } = await shopperWithALine();
      const id = variantId(t, 'ESP-RIS-10');
      assert.equal((await shopper.change({ id, quantity: 3 })).body.items[0].quantity, 3);
      assert.equal((await shopper.send('POST', '/cart/change.js', { form: `id=${encodeURIComponent(key)}&quantity=4` })).body.items[0].quantity, 4);
      assert.equal((await shopper.send('POST', '/cart/update.js', { form: `updates[${id}]=5` })).body.items[0].quantity, 5);
      assert.equal((await shopper.send('POST', '/cart/update.js', { form: 'updates[]=6' })).body.items[0].quantity, 6);
      assert.equal((await shopper.send('POST', '/cart/add.js', { form: `id=${id}&quantity=2&properties[Engraving]=A` })).body.items[0].quantity, 8);
      assertInvalidParameter(await shopper.send('POST', '/cart/change.js', { form: 'line=1&quantity=' }), /\bquantity\b/);
      assertInvalidParameter(await shopper.send('POST', '/cart/update.js', { form: `updates[${id}]=many` }), /updates/);
      assert.equal((await shopper.cart()).body.items[0].quantity, 8);
    });

    it('a JSON number too large for a double (1e400, read as Infinity) is refused with 422 naming the field, changing nothing', async () => {
      const { shopper, key, snapshot } = await shopperWithALine();
      const id = variantId(t, 'ESP-RIS-10');
      const json = (payload: string) => ({ payload, headers: { 'content-type': 'application/json' } });
      assertInvalidParameter(await shopper.send('POST', '/cart/add.js', json(`{"items":[{"id":${id},"quantity":1e400}]}`)), /items\[0\]\.quantity/);
      assertInvalidParameter(await shopper.send('POST', '/cart/add.js', json(`{"id":${id},"quantity":-1e400}`)), /items\[0\]\.quantity/);
      assertInvalidParameter(await shopper.send('POST', '/cart/change.js', json(`{"id":${JSON.stringify(key)},"quantity":1e400}`)), /\bquantity\b/);
      assertInvalidParameter(await shopper.send('POST', '/cart/change.js', json(`{"line":1e400,"quantity":1}`)), /\bline\b/);
      assertInvalidParameter(await shopper.send('POST', '/cart/update.js', json(`{"updates":{${JSON.stringify(key)}:1e400}}`)), /updates/);
      assertInvalidParameter(await shopper.send('POST', '/cart/update.js', json('{"updates":[1e400]}')), /updates/);
      assert.deepEqual((await shopper.cart()).body, snapshot);
    });

    it('a change refused on this instance’s stale cached copy is judged again on the stored cart (two instances)', async () => {
      const onA = new Shopper(t.app);
      const id = variantId(t, 'ESP-RIS-10');
      const added = await onA.add([{ id, quantity: 10 }]);
      assert.equal(added.status, 200, added.raw);
      const onB = new Shopper(other.app);
      onB.token = onA.token;
      assert.equal((await onB.change({ id: added.body.items[0].key, quantity: 1 })).status, 200);
      const again = await onA.add([{ id, quantity: 1 }]);
      assert.equal(again.status, 200, again.raw);
      assert.equal(again.body.items[0].quantity, 2);
      assert.equal((await onB.cart()).body.items[0].quantity, 2);
    });

    it('a change the stored cart really refuses still answers 422 Cart Error after the fresh read, changing nothing', async () => {
      const onA = new Shopper(t.app);
      const id = variantId(t, 'ESP-RIS-10');
      await onA.add([{ id, quantity: 5 }]);
      const onB = new Shopper(other.app);
      onB.token = onA.token;
      assert.equal((await onB.add([{ id, quantity: 4 }])).status, 200);
      const snapshot = (await onB.cart()).body;
      const refused = await onA.add([{ id, quantity: 2 }]);
      assert.equal(refused.status, 422, refused.raw);
      assert.equal(refused.body.message, 'Cart Error');
      assert.deepEqual((await onA.cart()).body, snapshot);
    });
  });
}
