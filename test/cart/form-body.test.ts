/** Rack-style form fields as Shopify themes post them (src/cart/form-body.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formFields, indexedArray, urlencodedFields } from '../../src/storefront/form-body.js';

describe('form fields with bracket keys', () => {
  it('nests bracket keys into objects and keeps values as text', () => {
    assert.deepEqual(urlencodedFields('id=1&quantity=2&properties%5BGift+note%5D=Happy+birthday&attributes[Wrap]=yes'), {
      id: '1',
      quantity: '2',
      properties: { 'Gift note': 'Happy birthday' },
      attributes: { Wrap: 'yes' },
    });
  });

  it('numbered keys stay an object (updates[123] is a variant id), and indexedArray turns items[0], items[1] into a list', () => {
    const fields = urlencodedFields('items[1][id]=20&items[0][id]=10&items[0][quantity]=2&updates[42100000001]=3');
    assert.deepEqual(fields.updates, { '42100000001': '3' });
    assert.deepEqual(indexedArray(fields.items), [{ id: '10', quantity: '2' }, { id: '20' }]);
    assert.deepEqual(indexedArray({ a: 1 }), { a: 1 });
  });

  it('[] appends: updates[]=1&updates[]=2 is a list, and items[][id] starts a new item when the key repeats', () => {
    assert.deepEqual(urlencodedFields('updates[]=1&updates[]=2').updates, ['1', '2']);
    assert.deepEqual(urlencodedFields('items[][id]=1&items[][quantity]=2&items[][id]=3').items, [{ id: '1', quantity: '2' }, { id: '3' }]);
  });

  it('a repeated plain key keeps its last value', () => {
    assert.deepEqual(formFields([['id', '1'], ['id', '2']]), { id: '2' });
  });

  it('keys reaching the prototype are dropped; malformed brackets are taken literally', () => {
    const fields = formFields([
      ['__proto__[polluted]', 'yes'],
      ['constructor[prototype][x]', '1'],
      ['properties[__proto__]', '1'],
      ['a]b[', 'literal'],
    ]);
    assert.deepEqual(fields, { 'a]b[': 'literal' });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('keys nested deeper than four brackets are taken literally', () => {
    assert.deepEqual(Object.keys(formFields([['a[b][c][d][e][f]', '1']])), ['a[b][c][d][e][f]']);
  });
});
