/**
 * The payload identity of an idempotency key (canonicalJson, payloadHash) on input no client should send but any
 * may: arguments nested 10,000 levels deep hash without overflowing the stack (the doors refuse such input first,
 * but the hash must not be the thing that breaks), key order still ignored at every depth, and the text the same as
 * before for ordinary payloads, so hashes stored before a deploy still match their retries after it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { migrate } from '../../src/db/migrate.js';
import { IdempotencyStore, canonicalJson, payloadHash } from '../../src/idempotency/idempotency-store.js';
import { backends, dropTestDatabases } from '../helpers/store.js';

after(dropTestDatabases);

/** `levels` objects deep, each with two members in the order given; the innermost holds `leaf`. */
function deepObject(levels: number, order: 'ab' | 'ba', leaf: unknown = 'x'): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = order === 'ab' ? { a: value, b: i } : { b: i, a: value };
  return value;
}

function deepArray(levels: number): unknown {
  let value: unknown = [];
  for (let i = 0; i < levels; i++) value = [value, i];
  return value;
}

describe('idempotency: canonical JSON of deep payloads', () => {
  for (const levels of [6_000, 10_000, 100_000]) {
    it(`hashes a payload ${levels.toLocaleString('en-US')} levels deep without overflowing the stack; key order ignored at every depth`, () => {
      const ab = deepObject(levels, 'ab');
      const ba = deepObject(levels, 'ba');
      assert.equal(payloadHash(ab), payloadHash(ba));
      assert.notEqual(payloadHash(ab), payloadHash(deepObject(levels, 'ab', 'y')));
      const text = canonicalJson(ab);
      assert.ok(text.startsWith('{"a":{"a":'));
      assert.ok(text.endsWith(`"b":${levels - 2}},"b":${levels - 1}}`));
      assert.match(payloadHash(deepArray(levels)), /^[0-9a-f]{64}$/);
    });
  }

  it('writes what the recursive version wrote: sorted keys, undefined members left out, undefined in arrays null', () => {
    const payload = { z: [1, 'two', null, true, { y: undefined, x: [] }], a: { c: 'é"\\\n', b: {} }, m: undefined, n: -0.5 };
    assert.equal(canonicalJson(payload), '{"a":{"b":{},"c":"é\\"\\\\\\n"},"n":-0.5,"z":[1,"two",null,true,{"x":[]}]}');
    assert.equal(canonicalJson([undefined, () => 1]), '[null,null]');
    assert.equal(canonicalJson('text'), '"text"');
    assert.equal(canonicalJson(undefined), 'null');
    assert.equal(canonicalJson({}), '{}');
    assert.equal(canonicalJson([]), '[]');
    // A stored hash of an ordinary payload, as the recursive version computed it.
    assert.equal(payloadHash({ id: 'cart-1', cart: { line_items: [{ item: { id: '1' }, quantity: 2 }] } }), payloadHash(JSON.parse('{"cart":{"line_items":[{"item":{"id":"1"},"quantity":2}]},"id":"cart-1"}')));
    assert.equal(
      canonicalJson({ id: 'cart-1', cart: { line_items: [{ quantity: 2, item: { id: '1' } }] } }),
      '{"cart":{"line_items":[{"item":{"id":"1"},"quantity":2}]},"id":"cart-1"}',
    );
  });
});

for (const backend of backends) {
  describe(`idempotency: a deep payload through the store (${backend.name})`, () => {
    it('runs once and replays for a payload 10,000 levels deep, whatever its key order', async () => {
      const { db } = await backend.open({ migrated: true });
      try {
        await migrate(db);
        const keys = new IdempotencyStore();
        const codec = { encode: (answer: string) => answer, decode: (stored: string) => stored };
        const request = { key: randomUUID(), tool: 'cancel_cart', resource: 'cart-1' };
        let runs = 0;
        const first = await keys.run(db, { ...request, payload: deepObject(10_000, 'ab') }, async () => `answer ${++runs}`, codec);
        const retry = await keys.run(db, { ...request, payload: deepObject(10_000, 'ba') }, async () => `answer ${++runs}`, codec);
        assert.equal(first, 'answer 1');
        assert.equal(retry, 'answer 1');
        assert.equal(runs, 1);
        await keys.close();
      } finally {
        await db.close();
      }
    });
  });
}
