/**
 * One rule for `__proto__` and `constructor.prototype` keys in a JSON body, in both doors: they are stripped
 * (Fastify's onProtoPoisoning / onConstructorPoisoning 'remove'), and the request is answered as if they had
 * not been sent. Neither door refuses them as "not valid JSON", and nothing reaches Object.prototype.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { Shopper, variantId } from '../cart/shopper.js';

after(dropTestDatabases);

const MCP_HEADERS = { host: 'store.test', 'content-type': 'application/json', accept: 'application/json' };

for (const backend of backends) {
  describe(`__proto__ and constructor keys are stripped in both doors (${backend.name})`, () => {
    let t: TestStore;
    before(async () => {
      t = await startTestStore(backend, { config: { rateLimit: false } });
    });
    after(() => t.close());

    const lines = async (shopper: Shopper) =>
      (await shopper.cart()).body.items.map((i: { sku: string; quantity: number; properties: object }) => [i.sku, i.quantity, i.properties]);

    it('cart add.js: a top-level or per-item __proto__ is dropped and the add goes through', async () => {
      const id = variantId(t, 'ESP-RIS-10');
      for (const payload of [
        `{"items":[{"id":${id},"quantity":1}],"__proto__":{"x":1}}`,
        `{"items":[{"id":${id},"quantity":1,"__proto__":{"quantity":5}}]}`,
        `{"id":${id},"quantity":1,"properties":{"__proto__":{"polluted":"yes"},"Engraving":"A"}}`,
        `{"constructor":{"prototype":{"polluted":true}},"items":[{"id":${id},"quantity":1}]}`,
      ]) {
        const shopper = new Shopper(t.app);
        const answer = await shopper.send('POST', '/cart/add.js', { payload, headers: { 'content-type': 'application/json' } });
        assert.equal(answer.status, 200, `${payload}: ${answer.raw}`);
        assert.equal(answer.body.item_count, 1, payload);
        assert.ok(!('polluted' in answer.body.items[0].properties), payload);
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(({} as Record<string, unknown>).x, undefined);
    });

    it('cart change.js and update.js: the same', async () => {
      const shopper = new Shopper(t.app);
      await shopper.add([{ id: variantId(t, 'ESP-RIS-10'), quantity: 1 }]);
      const json = { 'content-type': 'application/json' };
      const changed = await shopper.send('POST', '/cart/change.js', { payload: '{"line":1,"quantity":3,"__proto__":{"quantity":9}}', headers: json });
      assert.equal(changed.status, 200, changed.raw);
      const updated = await shopper.send('POST', '/cart/update.js', { payload: '{"note":"hi","__proto__":{"note":"x"},"attributes":{"__proto__":{"a":"b"}}}', headers: json });
      assert.equal(updated.status, 200, updated.raw);
      assert.deepEqual(updated.body.attributes, {});
      assert.deepEqual(await lines(shopper), [['ESP-RIS-10', 3, {}]]);
      assert.equal((await shopper.cart()).body.note, 'hi');
    });

    it('the commerce endpoint: the same keys are dropped and the call answers as without them', async () => {
      const call = (extra: string) =>
        `{"jsonrpc":"2.0","id":1,"method":"tools/call"${extra},"params":{"name":"lookup_catalog","arguments":{"catalog":{"ids":["SLP-60"]${extra}}}}}`;
      const plain = await t.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers: MCP_HEADERS, payload: call('') });
      assert.equal(plain.statusCode, 200);
      for (const extra of [',"__proto__":{"polluted":true}', ',"constructor":{"prototype":{"polluted":true}}']) {
        const answer = await t.app.inject({ method: 'POST', url: '/api/ucp/mcp', headers: MCP_HEADERS, payload: call(extra) });
        assert.equal(answer.statusCode, 200, answer.body);
        assert.deepEqual(JSON.parse(answer.body).result, JSON.parse(plain.body).result);
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    it('both doors follow the one rule the app is configured with', () => {
      assert.equal(t.app.initialConfig.onProtoPoisoning, 'remove');
      assert.equal(t.app.initialConfig.onConstructorPoisoning, 'remove');
    });
  });
}
