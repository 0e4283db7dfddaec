/**
 * Numbers are read in decimal digits only, in forms and query strings alike: `0x3`, `0b11`, `0o3`, `3e0`,
 * `+3`, `3.0`, `Infinity` and `0x9CD60E6A1` are refused with 422 naming the parameter, and nothing changes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nonDecimalNumber } from '../../src/http/decimal-numbers.js';
import { AddCartItemsBody } from '../../src/storefront/cart-schemas.js';
import { backends, dropTestDatabases, getJson, startTestStore, type TestStore } from '../helpers/store.js';
import { countRows, Shopper, variantId } from '../cart/shopper.js';

after(dropTestDatabases);

const LOOSE = ['0x3', '0b11', '0o3', '3e0', '+3', '3.0', ' 3', 'Infinity'];

describe('decimal numbers (pure)', () => {
  it('names the first number that is not plain decimal digits, at any depth; strings where strings are allowed pass', () => {
    assert.equal(nonDecimalNumber(AddCartItemsBody, { items: [{ id: 1, quantity: '2' }, { id: '0x3', quantity: '1' }] }), 'items[1].id');
    assert.equal(nonDecimalNumber(AddCartItemsBody, { items: [{ id: '12', quantity: '3', properties: { Size: '0x3' } }] }), undefined);
    for (const loose of LOOSE) assert.equal(nonDecimalNumber(AddCartItemsBody, { items: [{ id: '12', quantity: loose }] }), 'items[0].quantity', loose);
  });
});

for (const backend of backends) {
  describe(`decimal numbers over HTTP (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend);
    });
    after(() => t.close());

    it('a form quantity or id that is not plain decimal digits is refused with 422 naming it, and no cart is written', async () => {
      const id = variantId(t, 'ESP-RIS-10');
      const carts = await countRows(t, 'carts');
      for (const [form, parameter] of [
        ...LOOSE.map((quantity) => [`id=${id}&quantity=${encodeURIComponent(quantity)}`, 'items[0].quantity'] as const),
        [`id=0x9CD60E6A1&quantity=1`, 'items[0].id'] as const,
      ]) {
        const answer = await new Shopper(t.app).send('POST', '/cart/add.js', { form });
        assert.equal(answer.status, 422, `${form}: ${answer.raw}`);
        assert.equal(answer.body.message, 'Invalid parameter error');
        assert.match(answer.body.description, new RegExp(parameter.replace(/[[\].]/g, '\\$&')));
      }
      assert.equal(await countRows(t, 'carts'), carts);
      assert.equal((await new Shopper(t.app).send('POST', '/cart/add.js', { form: `id=${id}&quantity=3` })).body.item_count, 3);
    });

    it('limit and page in a query string take decimal digits only', async () => {
      for (const query of ['limit=0x5', 'limit=5e0', 'page=+2', 'limit=Infinity']) {
        const answer = await getJson(t.app, `/products.json?${query}`);
        assert.equal(answer.status, 422, query);
        assert.match(answer.body.description, /Parameter (limit|page) is invalid/);
      }
      assert.equal((await getJson(t.app, '/products.json?limit=5')).body.products.length, 5);
    });
  });
}
