/**
 * findUnstorable (src/http/storable-input.ts): the one check both doors make on what a client sends. A NUL or an
 * unpaired surrogate in any string, value or member name, and nesting past the limit, are found and named; a
 * surrogate pair (an emoji) is text like any other; input thousands of levels deep is walked without recursion.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_INPUT_DEPTH, findUnstorable, inputPathText, unstorableProblemText } from '../../src/http/storable-input.js';

/** `{a: {a: … leaf}}`, `levels` objects deep. */
function nested(levels: number, leaf: unknown = 'x'): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('findUnstorable', () => {
  it('finds a NUL or an unpaired surrogate in a value, naming its path', () => {
    const checkout = { checkout: { buyer: { email: 'ana@example.com' }, line_items: [{ item: { id: 'a' } }, { item: { id: 'b\u0000' } }] } };
    assert.deepEqual(findUnstorable(checkout), { path: ['checkout', 'line_items', 1, 'item', 'id'], problem: 'nul' });
    for (const lone of ['\ud800', '\udfff', 'a\ud83d', '\ude00b', '\ude00\ud83d']) {
      assert.deepEqual(findUnstorable({ buyer: { email: lone } }), { path: ['buyer', 'email'], problem: 'lone_surrogate' }, JSON.stringify(lone));
    }
    assert.deepEqual(findUnstorable('\u0000'), { path: [], problem: 'nul' });
    assert.deepEqual(findUnstorable(['ok', ['\ud800']]), { path: [1, 0], problem: 'lone_surrogate' });
  });

  it('finds them in member names too, naming the object that holds the member', () => {
    assert.deepEqual(findUnstorable({ buyer: { 'e\u0000mail': 'x' } }), { path: ['buyer'], problem: 'nul', inKey: true });
    assert.deepEqual(findUnstorable({ '\ud800': 1 }), { path: [], problem: 'lone_surrogate', inKey: true });
  });

  it('passes storable text: emoji (surrogate pairs), other control characters, every JSON type', () => {
    const value = { 'Gift 🎁': 'Happy 😀 day', tab: 'a\tb', n: 1, yes: true, none: null, list: [1, 'two', { '𝄞': '\u0001' }] };
    assert.equal(findUnstorable(value), undefined);
    assert.equal(findUnstorable(undefined), undefined);
    assert.equal(findUnstorable(42), undefined);
  });

  it(`refuses nesting deeper than MAX_INPUT_DEPTH (${MAX_INPUT_DEPTH}), the outermost object counting as one level`, () => {
    assert.equal(findUnstorable(nested(MAX_INPUT_DEPTH)), undefined);
    const found = findUnstorable(nested(MAX_INPUT_DEPTH + 1));
    assert.equal(found?.problem, 'too_deep');
    assert.deepEqual(found?.path, Array(MAX_INPUT_DEPTH).fill('a'));
    assert.deepEqual(findUnstorable({ a: { b: { c: 1 } } }, { maxDepth: 2 }), { path: ['a', 'b'], problem: 'too_deep' });
    assert.deepEqual(findUnstorable([[[]]], { maxDepth: 2 }), { path: [0, 0], problem: 'too_deep' });
  });

  it('walks input 10,000 levels deep without overflowing the stack, even with no limit', () => {
    const deep = nested(10_000, 'bad\u0000');
    assert.equal(findUnstorable(deep)?.problem, 'too_deep');
    const found = findUnstorable(deep, { maxDepth: Infinity });
    assert.equal(found?.problem, 'nul');
    assert.equal(found?.path.length, 10_000);
    let arrays: unknown = [];
    for (let i = 0; i < 10_000; i++) arrays = [arrays];
    assert.equal(findUnstorable(arrays, { maxDepth: Infinity }), undefined);
  });

  it("reports an object's own members before what is inside them, each in order", () => {
    assert.deepEqual(findUnstorable({ a: { b: '\u0000' }, c: '\ud800' }), { path: ['c'], problem: 'lone_surrogate' });
    assert.deepEqual(findUnstorable({ a: { b: '\u0000' }, c: { d: '\ud800' } }), { path: ['a', 'b'], problem: 'nul' });
  });
});

describe('naming a problem', () => {
  it('renders the path as JSONPath, or as the storefront names parameters', () => {
    assert.equal(inputPathText(['checkout', 'buyer', 'email']), '$.checkout.buyer.email');
    assert.equal(inputPathText(['line_items', 0, 'item', 'id']), '$.line_items[0].item.id');
    assert.equal(inputPathText(['attributes', 'Gift wrap']), '$.attributes["Gift wrap"]');
    assert.equal(inputPathText([]), '$');
    assert.equal(inputPathText(['items', 0, 'properties'], ''), 'items[0].properties');
  });

  it('says what is wrong in a plain sentence', () => {
    assert.equal(unstorableProblemText({ problem: 'nul' }), 'contains a NUL character');
    assert.equal(unstorableProblemText({ problem: 'lone_surrogate' }), 'contains an unpaired surrogate (not valid Unicode)');
    assert.equal(unstorableProblemText({ problem: 'nul', inKey: true }), 'has a member name that contains a NUL character');
    assert.equal(unstorableProblemText({ problem: 'too_deep' }), `is nested more than ${MAX_INPUT_DEPTH} levels deep`);
    assert.equal(unstorableProblemText({ problem: 'too_deep' }, 8), 'is nested more than 8 levels deep');
  });
});
