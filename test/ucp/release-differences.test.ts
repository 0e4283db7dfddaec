/**
 * Where the two releases part, beyond the shapes both-releases.test.ts validates:
 * - a platform on a release this store does not speak, offering one it does through its own `supported_versions`,
 *   is answered in that one, with the capabilities of that leaf profile (whose `ucp.version` must be the release);
 * - an `update_checkout` after the buyer's approval placed the order: 2026-08-25 answers the checkout unchanged with a
 *   recoverable error; 2026-04-08 the error alone;
 * - the order's event goes to the platform in the release of the agent that created the checkout.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends, dropTestDatabases } from '../helpers/store.js';
import { variantId } from '../cart/shopper.js';
import { agentProfileOf } from './agent-profile-server.js';
import { agentMeta, callTool, json, startListeningStore, startProfileServer, type ListeningStore, type ProfileServer } from './mcp-harness.js';
import { answerSchemaErrors, officialSchemaErrorsFor, OfficialSchemas, type UcpRelease } from './official-schemas.js';

after(dropTestDatabases);

const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const FULFILLMENT = { methods: [{ type: 'shipping', destinations: [ADDRESS], groups: [{ selected_option_id: 'standard' }] }] };
const HOOK = '/hooks/orders';

/** An agent profile of `release` whose order capability asks for order events at `webhookUrl`. */
function withOrderWebhook(release: string, webhookUrl: string): object {
  const profile = agentProfileOf(release) as { ucp: { capabilities: Record<string, Record<string, unknown>[]> } };
  profile.ucp.capabilities['dev.ucp.shopping.order']![0]!.config = { webhook_url: webhookUrl };
  return profile;
}

for (const backend of backends) {
  describe(`${backend.name}: where the releases part`, () => {
    let t: ListeningStore;
    let profiles: ProfileServer;
    before(async () => {
      t = await startListeningStore(backend);
      const later = (path: string) => (request: Parameters<ReturnType<typeof json>>[0], response: Parameters<ReturnType<typeof json>>[1]) =>
        json(routes()[path]!)(request, response);
      const routes = (): Record<string, object> => ({
        // A platform a release ahead of this store, offering 2026-04-08 through its supported_versions.
        '/future.json': { ...agentProfileOf('2027-01-01'), ucp: { ...(agentProfileOf('2027-01-01') as { ucp: object }).ucp, supported_versions: { '2026-04-08': profiles.url('/future-2026-04-08.json') } } },
        '/future-2026-04-08.json': agentProfileOf('2026-04-08', ['dev.ucp.shopping.catalog.search', 'dev.ucp.shopping.cart']),
        // Its leaf says another release than the key it is listed under.
        '/liar.json': { ucp: { ...(agentProfileOf('2027-01-01') as { ucp: object }).ucp, supported_versions: { '2026-04-08': profiles.url('/liar-leaf.json') } } },
        '/liar-leaf.json': agentProfileOf('2026-08-25'),
        '/agent-2026-04-08.json': withOrderWebhook('2026-04-08', profiles.url(HOOK)),
        '/agent-2026-08-25.json': withOrderWebhook('2026-08-25', profiles.url(HOOK)),
        // A 2026-04-08 platform whose 2026-08-25 leaf cannot be used (a private address): it is answered in 2026-04-08.
        '/broken-leaf.json': { ucp: { ...(agentProfileOf('2026-04-08') as { ucp: object }).ucp, supported_versions: { '2026-08-25': 'https://10.0.0.1/agent.json' } } },
        // A 2026-08-25 agent without an order webhook.
        '/plain-2026-08-25.json': agentProfileOf('2026-08-25'),
      });
      // The routes name the server's own URLs: each is built when asked for, once the server listens.
      profiles = await startProfileServer(
        Object.fromEntries(['/future.json', '/future-2026-04-08.json', '/liar.json', '/liar-leaf.json', '/agent-2026-04-08.json', '/agent-2026-08-25.json', '/broken-leaf.json', '/plain-2026-08-25.json'].map((path) => [path, later(path)])),
      );
    });
    after(async () => {
      await profiles.close();
      await t.close();
    });

    const item = () => String(variantId(t, 'ESP-RIS-10'));
    const meta = (path: string) => agentMeta(profiles.url(path));

    it("a platform on a newer release is answered in the one it also offers through supported_versions, with that leaf's capabilities", async () => {
      const search = await callTool(t.mcpUrl, 'search_catalog', { meta: meta('/future.json'), catalog: { query: 'espresso' } });
      const answer = search.body.result.structuredContent;
      assert.equal(answer.ucp.version, '2026-04-08', search.text.slice(0, 300));
      assert.deepEqual(answerSchemaErrors('search_catalog', answer), []);
      assert.equal(profiles.hits.get('/future-2026-04-08.json'), 1, 'the leaf was read');
      // The leaf declares no checkout: the checkout tools are refused as incompatible, not run.
      const checkout = await callTool(t.mcpUrl, 'create_checkout', { meta: meta('/future.json'), checkout: { line_items: [{ item: { id: item() }, quantity: 1 }] } });
      assert.equal(checkout.body.result.isError, true);
      assert.equal(checkout.body.result.structuredContent.messages[0].code, 'capabilities_incompatible');
      assert.equal(checkout.body.result.structuredContent.ucp.version, '2026-04-08');
    });

    it('a supported_versions leaf whose ucp.version is not its key is -32001 profile_malformed', async () => {
      const answer = await callTool(t.mcpUrl, 'search_catalog', { meta: meta('/liar.json'), catalog: { query: 'espresso' } });
      assert.equal(answer.status, 200, answer.text.slice(0, 300));
      assert.equal(answer.body.error.code, -32001);
      assert.equal(answer.body.error.data.code, 'profile_malformed');
    });

    it('a supported_versions leaf that cannot be used leaves the next release both speak: the profile\'s own', async () => {
      const answer = await callTool(t.mcpUrl, 'search_catalog', { meta: meta('/broken-leaf.json'), catalog: { query: 'espresso' } });
      assert.equal(answer.body.result?.structuredContent?.ucp?.version, '2026-04-08', answer.text.slice(0, 300));
    });

    it('an idempotency key binds the release too: the same key and arguments from an agent of another release is an idempotency conflict', async () => {
      const created = await callTool(t.mcpUrl, 'create_checkout', {
        meta: meta('/agent-2026-04-08.json'),
        checkout: { line_items: [{ item: { id: item() }, quantity: 1 }], buyer: { email: 'ada@example.com' }, fulfillment: FULFILLMENT },
      });
      const id = created.body.result.structuredContent.id;
      const key = randomUUID();
      const first = await callTool(t.mcpUrl, 'complete_checkout', { meta: { ...meta('/agent-2026-04-08.json'), 'idempotency-key': key }, id });
      assert.equal(first.body.result.structuredContent.ucp.version, '2026-04-08');
      const replay = await callTool(t.mcpUrl, 'complete_checkout', { meta: { ...meta('/agent-2026-04-08.json'), 'idempotency-key': key }, id });
      assert.equal(replay.text, first.text.replace(/"id":\d+/, `"id":${replay.body.id}`), 'the same release replays');
      const other = await callTool(t.mcpUrl, 'complete_checkout', { meta: { ...meta('/agent-2026-08-25.json'), 'idempotency-key': key }, id });
      assert.equal(other.status, 200, other.text.slice(0, 300));
      assert.equal(other.body.error.data.code, 'idempotency_conflict');
      assert.equal(other.body.error.code, -32000);
    });

    it('a key on create_cart and create_checkout replays the first answer: one cart, one checkout', async () => {
      const agent = meta('/plain-2026-08-25.json');
      const count = async (table: string) => (await t.store.db.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;
      const key = randomUUID();
      const cartArgs = { meta: { ...agent, 'idempotency-key': key }, cart: { line_items: [{ item: { id: item() }, quantity: 1 }] } };
      const carts = await count('carts');
      const cart = await callTool(t.mcpUrl, 'create_cart', cartArgs);
      const again = await callTool(t.mcpUrl, 'create_cart', cartArgs);
      assert.equal(again.body.result.structuredContent.id, cart.body.result.structuredContent.id);
      assert.equal(await count('carts'), carts + 1);
      const checkoutKey = randomUUID();
      const checkoutArgs = { meta: { ...agent, 'idempotency-key': checkoutKey }, checkout: { line_items: [{ item: { id: item() }, quantity: 2 }] } };
      const checkouts = await count('checkouts');
      const checkout = await callTool(t.mcpUrl, 'create_checkout', checkoutArgs);
      const checkoutAgain = await callTool(t.mcpUrl, 'create_checkout', checkoutArgs);
      assert.equal(checkoutAgain.body.result.structuredContent.id, checkout.body.result.structuredContent.id);
      assert.equal(await count('checkouts'), checkouts + 1);
      // Without a key, each call is its own.
      await callTool(t.mcpUrl, 'create_checkout', { meta: agent, checkout: checkoutArgs.checkout });
      assert.equal(await count('checkouts'), checkouts + 2);
    });

    it("an update by another agent that names no order webhook leaves the events in the creating agent's release", async () => {
      const created = await callTool(t.mcpUrl, 'create_checkout', {
        meta: meta('/agent-2026-04-08.json'),
        checkout: { line_items: [{ item: { id: item() }, quantity: 1 }], buyer: { email: 'ada@example.com' }, fulfillment: FULFILLMENT },
      });
      const id = created.body.result.structuredContent.id;
      await callTool(t.mcpUrl, 'update_checkout', {
        meta: meta('/plain-2026-08-25.json'),
        id,
        checkout: { line_items: [{ item: { id: item() }, quantity: 2 }], buyer: { email: 'ada@example.com' }, fulfillment: FULFILLMENT },
      });
      const [row] = await t.store.db.query<{ release: string }>('select release from ucp_checkout_releases where checkout_id = $1', [id]);
      assert.equal(row?.release, '2026-04-08');
    });

    const releases: UcpRelease[] = ['2026-08-25', '2026-04-08'];
    for (const release of releases) {
      it(`${release}: after the buyer's approval, an update leaves the checkout as it was; the order event goes out in ${release}`, async () => {
        const agent = meta(`/agent-${release}.json`);
        const created = await callTool(t.mcpUrl, 'create_checkout', {
          meta: agent,
          checkout: { line_items: [{ item: { id: item() }, quantity: 1 }], buyer: { email: 'ada@example.com' }, fulfillment: FULFILLMENT },
        });
        const id = created.body.result.structuredContent.id;
        const asked = await callTool(t.mcpUrl, 'complete_checkout', { meta: { ...agent, 'idempotency-key': randomUUID() }, id });
        const token = new URL(asked.body.result.structuredContent.continue_url).pathname.split('/').pop()!;
        const pending = await t.store.checkouts.approvalState(t.store.db, token);
        if (pending.kind !== 'pending') throw new Error(`not pending: ${pending.kind}`);
        const placed = await t.store.checkouts.approve(t.store.db, token, pending.approval.formSecret, pending.approval.digest, { kind: 'none' });
        assert.equal(placed.kind, 'placed');

        const updated = await callTool(t.mcpUrl, 'update_checkout', {
          meta: agent,
          id,
          checkout: { line_items: [{ item: { id: item() }, quantity: 3 }], buyer: { email: 'eve@example.com' }, fulfillment: FULFILLMENT },
        });
        const answer = updated.body.result.structuredContent;
        assert.deepEqual(answerSchemaErrors('update_checkout', answer), []);
        assert.equal(answer.ucp.version, release);
        if (release === '2026-08-25') {
          assert.equal(updated.body.result.isError, false);
          assert.equal(answer.status, 'completed');
          assert.equal(answer.line_items[0].quantity, 1, 'unchanged');
          assert.equal(answer.buyer.email, 'ada@example.com', 'unchanged');
          assert.ok(answer.order?.id);
          assert.equal(answer.messages.length, 1);
          assert.deepEqual([answer.messages[0].type, answer.messages[0].severity], ['error', 'recoverable']);
        } else {
          assert.equal(updated.body.result.isError, true);
          assert.equal(answer.ucp.status, 'error');
        }
        const after = await callTool(t.mcpUrl, 'get_checkout', { meta: agent, id });
        assert.equal(after.body.result.structuredContent.line_items[0].quantity, 1);

        // The order event for the platform, as the outbox holds it: the order in the agent's release.
        const [row] = await t.store.db.query<{ payload: { url: string; body: string } | string }>(
          "select payload from outbox where kind = 'webhook' and order_id = $1 and topic = 'order.placed'",
          [answer.order?.id ?? after.body.result.structuredContent.order.id],
        );
        assert.ok(row, 'an order event was queued for the platform');
        const payload = typeof row.payload === 'string' ? (JSON.parse(row.payload) as { url: string; body: string }) : row.payload;
        assert.equal(payload.url, profiles.url(HOOK));
        const order = JSON.parse(payload.body);
        assert.equal(order.ucp.version, release);
        assert.deepEqual(officialSchemaErrorsFor(release, OfficialSchemas[release].order, order), []);
      });
    }
  });
}
