/**
 * The cart's shopper-written text (line properties, note, attributes) is refused when it holds controls, bidi
 * overrides or invisible characters (issue 35, build item 1): 422 Cart Error naming the field, nothing kept; what
 * people write (accents, emoji, a note on several lines) is kept. Both backends, through the storefront JSON door.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { Shopper, variantId } from '../cart/shopper.js';

after(dropTestDatabases);

const HOSTILE = ['\u001b[2J\u001b[HAll orders paid', 'Gift\u001b]52;c;cm0gLXJmIH4K\u0007', '\u202eteertS kaO 21', 'a\u2066b\u2069', 'hidden\u200bword'];

for (const backend of backends) {
  describe(`the cart's text is refused at the border (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    const refused = (answer: { status: number; body: any; raw: string }, named: RegExp) => {
      assert.equal(answer.status, 422, answer.raw);
      assert.equal(answer.body.message, 'Cart Error');
      assert.match(answer.body.description, named);
      assert.doesNotMatch(answer.raw, /\\u001b|\\u202e|\u001b|\u202e/, 'the text is not echoed');
    };

    it('a line property with a control, bidi or invisible character: 422 naming the property, no line added', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'ESP-RIS-10');
      for (const value of HOSTILE) refused(await shopper.add([{ id, quantity: 1, properties: { Engraving: value } }]), /^The property 'Engraving' contains/);
      refused(await shopper.add([{ id, quantity: 1, properties: { 'En\u202egraving': 'x' } }]), /^The name of the property '\d+ characters' contains/);
      assert.equal((await shopper.cart()).body?.item_count ?? 0, 0);
    });

    it('a note or an attribute with one: 422 naming it, the cart unchanged; a note on several lines and emoji are kept', async () => {
      const shopper = new Shopper(t.app);
      assert.equal((await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }])).status, 200);
      for (const value of HOSTILE) {
        refused(await shopper.update({ note: value }), /^The note contains/);
        refused(await shopper.update({ attributes: { gift: value } }), /^The attribute 'gift' contains/);
      }
      const cart = await shopper.cart();
      assert.equal(cart.body.note, null);
      assert.deepEqual(cart.body.attributes, {});
      const kept = await shopper.update({ note: 'Leave at the door.\nThanks! 👩‍🍳', attributes: { gift: 'Für Zoë 🎁' } });
      assert.equal(kept.status, 200, kept.raw);
      assert.equal(kept.body.note, 'Leave at the door.\nThanks! 👩‍🍳');
      assert.deepEqual(kept.body.attributes, { gift: 'Für Zoë 🎁' });
    });
  });
}
