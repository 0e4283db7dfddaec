/**
 * Durable idempotency keys (meta["idempotency-key"] of cancel_cart, and of complete_checkout and
 * cancel_checkout next): kept in the database, replayed by any instance, key order of the payload ignored,
 * one key racing itself runs the action once, another payload under the same key is HTTP 409 / -32000.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { canonicalJson, IdempotencyConflict, payloadHash } from '../../src/idempotency/idempotency-store.js';
import { backends, dropTestDatabases, startSecondInstance, type TestStore } from '../helpers/store.js';
import { variantId } from '../cart/shopper.js';
import { callTool, startListeningStore, type ListeningStore } from '../ucp/mcp-harness.js';

after(dropTestDatabases);

const text = { encode: (answer: string) => answer, decode: (stored: string) => stored };

describe('idempotency: payload identity', () => {
  it('key order does not matter, at any depth; values, array order and types do', () => {
    const a = { id: 'cart-1', cart: { line_items: [{ item: { id: '1' }, quantity: 2 }], note: null } };
    const b = { cart: { note: null, line_items: [{ quantity: 2, item: { id: '1' } }] }, id: 'cart-1' };
    assert.equal(canonicalJson(a), canonicalJson(b));
    assert.equal(payloadHash(a), payloadHash(b));
    assert.notEqual(payloadHash(a), payloadHash({ ...a, id: 'cart-2' }));
    assert.notEqual(payloadHash({ ids: [1, 2] }), payloadHash({ ids: [2, 1] }));
    assert.notEqual(payloadHash({ quantity: 2 }), payloadHash({ quantity: '2' }));
  });
});

for (const backend of backends) {
  describe(`idempotency keys (${backend.name})`, () => {
    let first: ListeningStore;
    let second: TestStore & { mcpUrl: string };

    before(async () => {
      first = await startListeningStore(backend);
      const other = await startSecondInstance(backend, first, first.store.config);
      await other.app.listen({ port: 0, host: '127.0.0.1' });
      second = { ...other, mcpUrl: `http://127.0.0.1:${(other.app.server.address() as AddressInfo).port}/api/ucp/mcp` };
    });
    after(async () => {
      await second.close();
      await first.close();
    });

    async function newCart(): Promise<string> {
      const answer = await callTool(first.mcpUrl, 'create_cart', { cart: { line_items: [{ item: { id: String(variantId(first, 'ESP-RIS-10')) }, quantity: 1 }] } });
      return answer.body.result.structuredContent.id as string;
    }

    it('a retry on the other instance replays the first answer, even though the cart is gone; another payload is -32000 idempotency_conflict (HTTP 200)', async () => {
      const id = await newCart();
      const key = randomUUID();
      const canceled = await callTool(first.mcpUrl, 'cancel_cart', { meta: { 'idempotency-key': key }, id });
      assert.equal(canceled.status, 200);
      assert.equal(canceled.body.result.isError, false);
      assert.equal(canceled.body.result.structuredContent.id, id);

      // The same request, its arguments in another order, through the other instance.
      const replayed = await callTool(second.mcpUrl, 'cancel_cart', { id, meta: { 'idempotency-key': key } });
      assert.equal(replayed.status, 200);
      assert.deepEqual(replayed.body.result.structuredContent, canceled.body.result.structuredContent);

      // Without the key the cart is gone: the not-found business error, not a new cart.
      const fresh = await callTool(second.mcpUrl, 'cancel_cart', { meta: { 'idempotency-key': randomUUID() }, id });
      assert.equal(fresh.body.result.structuredContent.messages[0].code, 'not_found');

      const conflict = await callTool(second.mcpUrl, 'cancel_cart', { meta: { 'idempotency-key': key }, id: await newCart() });
      assert.equal(conflict.status, 200);
      assert.equal(conflict.body.error.code, -32000);
      assert.equal(conflict.body.error.data.code, 'idempotency_conflict');
    });

    it('eight identical cancels racing on two instances: one cancellation, eight identical answers', async () => {
      const id = await newCart();
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => callTool(i % 2 ? second.mcpUrl : first.mcpUrl, 'cancel_cart', { meta: { 'idempotency-key': key }, id })),
      );
      for (const answer of answers) {
        assert.equal(answer.status, 200);
        assert.equal(answer.body.result.isError, false, JSON.stringify(answer.body.result.structuredContent));
        assert.deepEqual(answer.body.result.structuredContent, answers[0]!.body.result.structuredContent);
      }
    });

    it('one key racing itself runs the operation once, whichever instance asks', async () => {
      const stores = [first.store, second.store];
      let runs = 0;
      const key = randomUUID();
      const request = { key, tool: 'cancel_checkout', resource: 'co_1', payload: { id: 'co_1', reason: 'changed mind' } };
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          stores[i % 2]!.idempotency.run(
            stores[i % 2]!.db,
            { ...request, payload: i % 3 ? request.payload : { reason: 'changed mind', id: 'co_1' } },
            async () => {
              runs++;
              await sleep(50);
              return `done ${runs}`;
            },
            text,
          ),
        ),
      );
      assert.equal(runs, 1);
      assert.deepEqual(new Set(answers), new Set(['done 1']));
    });

    it('an operation that throws frees its key: the retry runs it; the same key for another tool is a conflict', async () => {
      const store = first.store;
      const key = randomUUID();
      const request = { key, tool: 'cancel_cart', resource: 'c1', payload: { id: 'c1' } };
      await assert.rejects(store.idempotency.run(store.db, request, async () => { throw new Error('database went away'); }, text), /went away/);
      assert.equal(await store.idempotency.run(store.db, request, async () => 'second try', text), 'second try');
      await assert.rejects(store.idempotency.run(store.db, { ...request, tool: 'cancel_checkout' }, async () => 'x', text), IdempotencyConflict);
    });

    it('keys are kept 24 hours, then purged, and the key can be used afresh', async () => {
      const store = first.store;
      const key = randomUUID();
      const request = { key, tool: 'cancel_cart', resource: 'c2', payload: { id: 'c2' } };
      assert.equal(await store.idempotency.run(store.db, request, async () => 'first', text), 'first');
      const [kept] = await store.db.query<{ hours: number }>(
        `select round(extract(epoch from expires_at - claimed_at) / 3600)::int as hours from idempotency_keys where key = $1`,
        [key],
      );
      assert.equal(kept!.hours, 24);
      assert.equal(await store.idempotency.run(store.db, request, async () => 'again', text), 'first');
      await store.db.query(`update idempotency_keys set expires_at = now() - interval '1 second' where key = $1`, [key]);
      assert.ok((await store.idempotency.purgeExpired(store.db)) >= 1);
      assert.equal(await store.idempotency.run(store.db, request, async () => 'afresh', text), 'afresh');
    });
  });
}
