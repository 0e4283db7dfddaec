/** POST /cart/add.js: line identity, validation, availability, limits, selling plans (spec addCartItems). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { schemaErrors } from '../helpers/schemas.js';
import { assertCartError, cartSchemaErrors, countRows, Shopper, storedVariantId, variantId } from './shopper.js';

after(dropTestDatabases);

for (const backend of backends) {
  describe(`cart: adding items (${backend.name})`, () => {
    let t: TestStore;
    /** The same catalog with the per-line ceiling at 100, so stock is what limits. */
    let roomy: TestStore;
    before(async () => {
      t = await startTestStore(backend);
      roomy = await startTestStore(backend, { config: { cartMaxLineQuantity: 100 } });
    });
    after(async () => {
      await t.close();
      await roomy.close();
    });

    const sellingPlanId = (handle: string) => t.store.catalog.snapshot.productByHandle(handle)!.sellingPlanGroups[0]!.plans[0]!.id;

    it('adding a variant answers the Cart with the line: key, variant id, quantity, prices in cents, titles, sku, url, image, handle', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'HYD-LEMONLIME-30');
      const answer = await shopper.add([{ id, quantity: 2 }]);
      assert.equal(answer.status, 200);
      assert.match(String(answer.headers['content-type']), /^application\/json/);
      assert.deepEqual(cartSchemaErrors(answer.body), []);
      const cart = answer.body;
      assert.equal(cart.token, shopper.token);
      assert.equal(cart.item_count, 2);
      assert.equal(cart.currency, 'USD');
      assert.equal(cart.items.length, 1);
      const line = cart.items[0];
      assert.match(line.key, new RegExp(`^${id}:[0-9a-f]{32}$`));
      assert.equal(line.id, id);
      assert.equal(line.quantity, 2);
      assert.equal(line.price, 3999);
      assert.equal(line.line_price, 7998);
      assert.equal(cart.total_price, 7998);
      assert.equal(cart.original_total_price, 7998);
      assert.equal(cart.items_subtotal_price, 7998);
      assert.equal(cart.total_discount, 0);
      assert.equal(line.product_title, 'Hydration Drink Stick');
      assert.equal(line.variant_title, 'Lemon-Lime / 30 sticks');
      assert.equal(line.sku, 'HYD-LEMONLIME-30');
      assert.equal(line.handle, 'hydration-drink-stick');
      assert.equal(line.product_id, t.store.catalog.snapshot.productByHandle('hydration-drink-stick')!.id);
      assert.equal(line.url, `/products/hydration-drink-stick?variant=${id}`);
      assert.equal(line.image, 'http://store.test/assets/demo/hydration-drink-stick.svg');
      assert.deepEqual(line.properties, {});
      assert.equal(line.selling_plan_allocation, null);
      assert.equal(cart.requires_shipping, true);
      assert.equal(cart.note, null);
      assert.deepEqual(cart.attributes, {});
    });

    it('a product with only the default variant has a null variant_title', async () => {
      const answer = await new Shopper(t.app).add([{ id: variantId(t, 'ESP-DEC-10'), quantity: 1 }]);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.items[0].variant_title, null);
      assert.equal(answer.body.items[0].title, 'Decaf Espresso Capsules');
    });

    it('adding the same variant and properties again raises that line and keeps its key', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'NRG-CITRUS-12');
      const first = await shopper.add([{ id, quantity: 1, properties: { Engraving: 'Ana' } }]);
      const second = await shopper.add([{ id, quantity: 2, properties: { Engraving: 'Ana' } }]);
      assert.equal(second.status, 200);
      assert.equal(second.body.items.length, 1);
      assert.equal(second.body.items[0].quantity, 3);
      assert.equal(second.body.items[0].key, first.body.items[0].key);
      assert.equal((await shopper.cart()).body.items[0].quantity, 3);
    });

    it('other properties make a new line, listed first; the same properties in another order or with blank values do not', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'NRG-CITRUS-12');
      await shopper.add([{ id, quantity: 1, properties: { a: '1', b: '2' } }]);
      await shopper.add([{ id, quantity: 1, properties: { b: '2', a: '1', note: '' } }]);
      const answer = await shopper.add([{ id, quantity: 1, properties: { a: 'other' } }]);
      assert.equal(answer.body.items.length, 2);
      assert.deepEqual(answer.body.items[0].properties, { a: 'other' });
      assert.deepEqual(answer.body.items[1].properties, { a: '1', b: '2' });
      assert.equal(answer.body.items[1].quantity, 2);
    });

    it('the single top-level {id, quantity} form adds one item, and quantity defaults to 1', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'ESP-RIS-10');
      assert.equal((await shopper.send('POST', '/cart/add.js', { json: { id, quantity: 3 } })).body.items[0].quantity, 3);
      assert.equal((await shopper.send('POST', '/cart/add.js', { json: { id: String(id) } })).body.items[0].quantity, 4);
      assert.equal((await shopper.add([{ id }])).body.items[0].quantity, 5);
    });

    it('items must be a non-empty array: missing, empty or not an array answers 422 naming items and changes nothing', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      for (const body of [{}, { items: [] }, { items: 'all' }, { items: { id: 1 } }]) {
        const answer = await shopper.send('POST', '/cart/add.js', { json: body });
        assert.equal(answer.status, 422, JSON.stringify(body));
        assert.deepEqual(schemaErrors('Error', answer.body), []);
        assert.equal(answer.body.message, 'Invalid parameter error');
        assert.match(answer.body.description, /items/);
      }
      assert.equal((await shopper.cart()).body.item_count, 1);
    });

    it('quantity must be an integer of at least 1: 422 naming items[0].quantity, and nothing changes', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'ESP-RIS-10');
      await shopper.add([{ id, quantity: 1 }]);
      for (const quantity of [0, -1, 1.5, 'two', '2x', {}]) {
        const answer = await shopper.add([{ id, quantity }]);
        assert.equal(answer.status, 422, `quantity ${JSON.stringify(quantity)}: ${answer.raw}`);
        assert.match(answer.body.description, /items\[0\]\.quantity/);
      }
      assert.equal((await shopper.cart()).body.item_count, 1);
    });

    it('the variant id must be a positive integer: 422 naming items[0].id', async () => {
      for (const id of [undefined, 'abc', 0, -5, 1.5, 2 ** 60]) {
        const answer = await new Shopper(t.app).add([{ id, quantity: 1 }]);
        assert.equal(answer.status, 422, `id ${String(id)}: ${answer.raw}`);
        assert.match(answer.body.description, /items\[0\]\.id/);
      }
    });

    it('properties must map names to text: 422 naming them', async () => {
      const answer = await new Shopper(t.app).add([{ id: variantId(t, 'ESP-RIS-10'), properties: { size: { nested: true } } }]);
      assert.equal(answer.status, 422);
      assert.match(answer.body.description, /items\[0\]\.properties/);
    });

    it('an unknown variant answers 422 Cart Error "Cannot find variant" and changes nothing', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const answer = await shopper.add([{ id: 99_999_999_999, quantity: 1 }]);
      assertCartError(answer, /^Cannot find variant 99999999999\.$/);
      assert.deepEqual(schemaErrors('Error', answer.body), []);
      assert.equal((await shopper.cart()).body.item_count, 1);
    });

    it('a variant of an unpublished product answers 422 Cart Error naming the product and writes no cart', async () => {
      const shopper = new Shopper(t.app);
      const before = await countRows(t, 'carts');
      assertCartError(await shopper.add([{ id: await storedVariantId(t, 'CBR-10'), quantity: 1 }]), /'Cold Brew Capsules' is not available/);
      assert.equal(await countRows(t, 'carts'), before);
      assert.equal(shopper.token, undefined);
    });

    it('adding a sold-out variant answers 422 Cart Error and changes nothing', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const answer = await shopper.add([{ id: variantId(t, 'HYD-WATERMELON-30'), quantity: 1 }]);
      assertCartError(answer, /^The product 'Hydration Drink Stick - Watermelon \/ 30 sticks' is already sold out\.$/);
      const cart = (await shopper.cart()).body;
      assert.deepEqual(
        cart.items.map((i: { sku: string; quantity: number }) => [i.sku, i.quantity]),
        [['ESP-RIS-10', 1]],
      );
    });

    it('a quantity above the per-line ceiling (10) answers 422 Cart Error saying how many can still be added, and changes nothing', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'ESP-RIS-10');
      assertCartError(await shopper.add([{ id, quantity: 11 }]), /only 10 more can be added/);
      await shopper.add([{ id, quantity: 8 }]);
      assertCartError(await shopper.add([{ id, quantity: 3 }]), /only 2 more can be added/);
      assert.equal((await shopper.cart()).body.items[0].quantity, 8);
      assert.equal((await shopper.add([{ id, quantity: 2 }])).status, 200);
      assertCartError(await shopper.add([{ id, quantity: 1 }]), /maximum quantity .* is already in your cart/);
      assert.equal((await shopper.cart()).body.items[0].quantity, 10);
    });

    it('a quantity above the stock answers 422 Cart Error saying how many can still be added, counting every line of the variant', async () => {
      const shopper = new Shopper(roomy.app);
      const id = variantId(roomy, 'SLP-120');
      assertCartError(await shopper.add([{ id, quantity: 26 }]), /only 25 more can be added \(25 in stock\)/);
      await shopper.add([{ id, quantity: 20, properties: { gift: 'no' } }]);
      assertCartError(await shopper.add([{ id, quantity: 6, properties: { gift: 'yes' } }]), /only 5 more can be added/);
      const cart = (await shopper.cart()).body;
      assert.equal(cart.items.length, 1);
      assert.equal(cart.item_count, 20);
      assert.equal((await shopper.add([{ id, quantity: 5, properties: { gift: 'yes' } }])).status, 200);
      assertCartError(await shopper.add([{ id, quantity: 1 }]), /All 25 in stock .* already in your cart/);
    });

    it('a back-orderable variant (inventory policy continue) is limited by the ceiling, not by its stock', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'SLP-60');
      const answer = await shopper.add([{ id, quantity: 10 }]);
      assert.equal(answer.status, 200, answer.raw);
      assert.equal(answer.body.items[0].quantity, 10);
    });

    it('a rejected add of several items changes nothing: the valid items are not added either', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const answer = await shopper.add([
        { id: variantId(t, 'ESP-CLA-10'), quantity: 1 },
        { id: variantId(t, 'ESP-RIS-10'), quantity: 1 },
        { id: variantId(t, 'HYD-WATERMELON-30'), quantity: 1 },
      ]);
      assertCartError(answer, /sold out/);
      const cart = (await shopper.cart()).body;
      assert.equal(cart.items.length, 1);
      assert.equal(cart.item_count, 1);
    });

    it('several items in one add are all added', async () => {
      const answer = await new Shopper(t.app).add([
        { id: variantId(t, 'ESP-CLA-10'), quantity: 2 },
        { id: variantId(t, 'ESP-LUN-10'), quantity: 3 },
      ]);
      assert.equal(answer.status, 200);
      assert.equal(answer.body.items.length, 2);
      assert.equal(answer.body.total_price, 5 * 650);
    });

    it("a selling plan of the product: the line carries selling_plan_allocation and the plan's discount shows in its price and total_discount", async () => {
      const shopper = new Shopper(t.app);
      const plan = sellingPlanId('espresso-capsules');
      const id = variantId(t, 'ESP-CLA-50');
      const answer = await shopper.add([{ id, quantity: 2, selling_plan: plan }]);
      assert.equal(answer.status, 200, answer.raw);
      assert.deepEqual(cartSchemaErrors(answer.body), []);
      const line = answer.body.items[0];
      assert.equal(line.price, 2610);
      assert.equal(line.original_price, 2900);
      assert.equal(line.line_price, 5220);
      assert.equal(answer.body.total_price, 5220);
      assert.equal(answer.body.total_discount, 580);
      assert.equal(answer.body.original_total_price, 5800);
      assert.deepEqual(line.selling_plan_allocation.selling_plan.id, plan);
      assert.equal(line.selling_plan_allocation.selling_plan.name, 'Delivery every month');
      assert.equal(line.selling_plan_allocation.price, 2610);
      assert.equal(line.selling_plan_allocation.compare_at_price, 2900);
      assert.equal(line.selling_plan_allocation.per_delivery_price, 2610);
      assert.equal(line.url, `/products/espresso-capsules?variant=${id}&selling_plan=${plan}`);
    });

    it('the same variant with and without a selling plan makes two lines', async () => {
      const shopper = new Shopper(t.app);
      const id = variantId(t, 'ESP-CLA-10');
      await shopper.add([{ id, quantity: 1 }]);
      const answer = await shopper.add([{ id, quantity: 1, selling_plan: sellingPlanId('espresso-capsules') }]);
      assert.equal(answer.body.items.length, 2);
      assert.notEqual(answer.body.items[0].key, answer.body.items[1].key);
    });

    it("a selling plan of another product answers 422 Cart Error and changes nothing", async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const answer = await shopper.add([{ id: variantId(t, 'NRG-CITRUS-12'), quantity: 1, selling_plan: sellingPlanId('espresso-capsules') }]);
      assertCartError(answer, /Selling plan \d+ is not offered for 'Energy Drink Stick'/);
      assert.equal((await shopper.cart()).body.item_count, 1);
    });
  });
}
