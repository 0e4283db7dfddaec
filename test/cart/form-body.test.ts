/** Rack-style form fields as Shopify themes post them, read by qs (src/storefront/form-body.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StorefrontError } from '../../src/http/errors.js';
import { formFields, indexedArray, MAX_FORM_FIELDS, urlencodedFields } from '../../src/storefront/form-body.js';

/** The 400 a form over the limits is answered with, naming why. */
const refused = (why: RegExp) => (error: unknown) => error instanceof StorefrontError && error.statusCode === 400 && why.test(error.description);

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

  it('keys reaching the prototype are dropped; a malformed bracket key is read as qs reads it, never refused', () => {
    const fields = formFields([
      ['__proto__[polluted]', 'yes'],
      ['constructor[prototype][x]', '1'],
      ['properties[__proto__]', '1'],
      ['a]b[', 'literal'],
    ]);
    assert.deepEqual(fields, { 'a]b': { '[': 'literal' } });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('a key nested deeper than four brackets is a 400 naming the limit; four brackets are read', () => {
    assert.deepEqual(formFields([['a[b][c][d][e]', '1']]), { a: { b: { c: { d: { e: '1' } } } } });
    assert.throws(() => formFields([['a[b][c][d][e][f]', '1']]), refused(/deeper than 4 brackets/));
    assert.throws(() => urlencodedFields('items[0][properties][a][b][c]=1'), refused(/deeper than 4 brackets/));
  });

  it(`a form of more than ${MAX_FORM_FIELDS} fields is a 400; ${MAX_FORM_FIELDS} are read`, () => {
    const form = (count: number) => Array.from({ length: count }, (_, n) => `attributes[k${n}]=v`).join('&');
    assert.equal(Object.keys(urlencodedFields(form(MAX_FORM_FIELDS)).attributes as object).length, MAX_FORM_FIELDS);
    assert.throws(() => urlencodedFields(form(MAX_FORM_FIELDS + 1)), refused(/more than 300 fields/));
    assert.throws(() => urlencodedFields('updates[]=1&'.repeat(MAX_FORM_FIELDS + 1)), refused(/more than 300 fields/));
  });

  it('a list longer than the cart takes (100) is read as a numbered object, which the cart schemas refuse, not a bigger list', () => {
    const updates = urlencodedFields('updates[]=1&'.repeat(101)).updates;
    assert.ok(!Array.isArray(updates) && Object.keys(updates as object).length === 101);
    assert.equal((urlencodedFields('updates[]=1&'.repeat(100)).updates as string[]).length, 100);
    // A numbered key past the list limit stays a key, as a variant id does.
    assert.deepEqual(urlencodedFields('items[100][id]=1&items[0][id]=2').items, { 0: { id: '2' }, 100: { id: '1' } });
  });
});
