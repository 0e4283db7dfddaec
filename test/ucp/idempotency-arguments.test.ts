/**
 * What an idempotency key binds on complete_checkout, cancel_checkout and cancel_cart: the tool's whole `arguments`
 * without `meta`, as canonical JSON (key order ignored at every depth). The same key with the same arguments, in any
 * key order, replays the first answer byte for byte; the same key with any other arguments (other payment data in
 * `checkout`, `signals` or another extra member, another id) is JSON-RPC -32000 (HTTP 200)
 * (`idempotency_conflict`) and changes nothing: no new key, the checkout as it was, its approval link still the one
 * issued. An agent with a profile (a 2026-04-08 agent, served on loopback) makes every call.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { variantId } from '../cart/shopper.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import { agentMeta, postRpc, startListeningStore, type ListeningStore, type RpcAnswer } from './mcp-harness.js';

after(dropTestDatabases);

const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const FULFILLMENT = { methods: [{ type: 'shipping', destinations: [ADDRESS], groups: [{ selected_option_id: 'standard' }] }] };

/** Payment data as an agent would send it to complete_checkout (the store neither uses nor keeps it). */
const payment = (token: string) => ({
  payment: { instruments: [{ id: 'pi_1', handler_id: 'manual_capture', type: 'card', credential: { type: 'token', token } }] },
});
const SIGNALS = { 'dev.ucp.buyer_ip': '203.0.113.9', 'dev.ucp.user_agent': 'agent-test/1.0' };

/** The same value with the keys of every object in reverse order. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).reverse().map(([key, member]) => [key, reordered(member)]));
  }
  return value;
}

/** One tools/call, always with the same JSON-RPC id, so that two answers to the same request are the same bytes. */
function call(url: string, name: string, args: unknown): Promise<RpcAnswer> {
  return postRpc(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
}

function assertConflict(answer: RpcAnswer, what: string): void {
  assert.equal(answer.status, 200, `${what}: ${answer.text.slice(0, 600)}`);
  assert.equal(answer.body.result, undefined, what);
  assert.equal(answer.body.error.code, -32000, what);
  assert.equal(answer.body.error.data.code, 'idempotency_conflict', what);
}

function assertAnswered(answer: RpcAnswer, what: string): any {
  assert.equal(answer.status, 200, `${what}: ${answer.text.slice(0, 600)}`);
  assert.equal(answer.body.result?.isError, false, `${what}: ${answer.text.slice(0, 600)}`);
  return answer.body.result.structuredContent;
}

for (const backend of backends) {
  describe(`${backend.name}: an idempotency key binds the whole arguments`, () => {
    let t: ListeningStore;
    let profiles: AgentProfileServer;
    before(async () => {
      profiles = await serveAgentProfiles(['2026-04-08']);
      t = await startListeningStore(backend);
    });
    after(async () => {
      await t?.close();
      await profiles?.close();
    });

    const agent = () => agentMeta(profiles.profileUrl('2026-04-08'));
    /** `meta` of the agent with an idempotency key. */
    const keyed = (key: string) => ({ ...agent(), 'idempotency-key': key });
    const item = () => String(variantId(t, 'ESP-RIS-10'));
    const tool = (name: string, args: unknown) => call(t.mcpUrl, name, args);
    const keyCount = async () => (await t.store.db.query<{ n: number }>('select count(*)::int as n from idempotency_keys'))[0]!.n;

    async function newCheckout(ready: boolean): Promise<string> {
      const checkout = {
        line_items: [{ item: { id: item() }, quantity: 1 }],
        ...(ready ? { buyer: { email: 'ann@example.com' }, fulfillment: FULFILLMENT } : {}),
      };
      const created = assertAnswered(await tool('create_checkout', { meta: agent(), checkout }), 'create_checkout');
      assert.equal(created.status, ready ? 'ready_for_complete' : 'incomplete', JSON.stringify(created.messages));
      return created.id;
    }

    const getCheckout = async (id: string) => assertAnswered(await tool('get_checkout', { meta: agent(), id }), 'get_checkout');

    it('complete_checkout: other payment data, signals or another member under the key is 409 and changes nothing; the same arguments in another order replay the first answer byte for byte', async () => {
      const id = await newCheckout(true);
      const other = await newCheckout(true);
      const key = randomUUID();
      const first = await tool('complete_checkout', { meta: keyed(key), id, checkout: payment('tok_A') });
      const asked = assertAnswered(first, 'complete_checkout');
      assert.equal(asked.status, 'requires_escalation');
      const keys = await keyCount();

      const conflicts: [string, Record<string, unknown>][] = [
        ['other payment data', { id, checkout: payment('tok_B') }],
        ['no payment data', { id }],
        ['an empty checkout', { id, checkout: {} }],
        ['signals', { id, checkout: payment('tok_A'), signals: SIGNALS }],
        ['another member in checkout', { id, checkout: { ...payment('tok_A'), note: 'gift' } }],
        ['another id', { id: other, checkout: payment('tok_A') }],
      ];
      for (const [what, args] of conflicts) assertConflict(await tool('complete_checkout', { meta: keyed(key), ...args }), what);

      assert.equal(await keyCount(), keys, 'no key was written');
      const now = await getCheckout(id);
      assert.equal(now.status, asked.status);
      assert.equal(now.continue_url, asked.continue_url);
      const token = String(asked.continue_url).split('/').pop()!;
      assert.equal((await t.store.checkouts.approvalState(t.store.db, token)).kind, 'pending', 'the link issued first still stands');
      const untouched = await getCheckout(other);
      assert.equal(untouched.status, 'ready_for_complete', 'the other checkout was not asked to complete');

      // The same request, every key in another order (meta, the arguments, the payment data): the first answer, as it was.
      const same = reordered({ meta: keyed(key), id, checkout: payment('tok_A') });
      assert.notEqual(JSON.stringify(same), JSON.stringify({ meta: keyed(key), id, checkout: payment('tok_A') }));
      const replayed = await tool('complete_checkout', same);
      assert.equal(replayed.status, 200);
      assert.equal(replayed.text, first.text);
      assert.equal(await keyCount(), keys);
    });

    it('cancel_checkout: another id or signals under the key is 409 and cancels nothing; the same arguments replay', async () => {
      const id = await newCheckout(false);
      const other = await newCheckout(false);
      const key = randomUUID();
      const first = await tool('cancel_checkout', { meta: keyed(key), id });
      assert.equal(assertAnswered(first, 'cancel_checkout').status, 'canceled');
      const keys = await keyCount();

      assertConflict(await tool('cancel_checkout', { meta: keyed(key), id: other }), 'another id');
      assertConflict(await tool('cancel_checkout', { meta: keyed(key), id, signals: SIGNALS }), 'signals');
      assertConflict(await tool('cancel_checkout', { meta: keyed(key), id, reason: 'changed mind' }), 'another member');
      assertConflict(await tool('complete_checkout', { meta: keyed(key), id }), 'the same arguments to another tool');
      assert.equal(await keyCount(), keys, 'no key was written');
      assert.equal((await getCheckout(other)).status, 'incomplete', 'the other checkout was not canceled');

      const replayed = await tool('cancel_checkout', reordered({ meta: keyed(key), id }));
      assert.equal(replayed.status, 200);
      assert.equal(replayed.text, first.text);
    });

    it('cancel_cart: another id or signals under the key is 409 and deletes nothing; the same arguments replay', async () => {
      const newCart = async () =>
        assertAnswered(await tool('create_cart', { meta: agent(), cart: { line_items: [{ item: { id: item() }, quantity: 1 }] } }), 'create_cart').id as string;
      const id = await newCart();
      const other = await newCart();
      const key = randomUUID();
      const first = await tool('cancel_cart', { meta: keyed(key), id });
      assert.equal(assertAnswered(first, 'cancel_cart').id, id);
      const keys = await keyCount();

      assertConflict(await tool('cancel_cart', { meta: keyed(key), id: other }), 'another id');
      assertConflict(await tool('cancel_cart', { meta: keyed(key), id, signals: SIGNALS }), 'signals');
      assert.equal(await keyCount(), keys, 'no key was written');
      assert.equal(assertAnswered(await tool('get_cart', { meta: agent(), id: other }), 'get_cart').id, other, 'the other cart is still there');

      const replayed = await tool('cancel_cart', reordered({ meta: keyed(key), id }));
      assert.equal(replayed.status, 200);
      assert.equal(replayed.text, first.text);
    });
  });
}
