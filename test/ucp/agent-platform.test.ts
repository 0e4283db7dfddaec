/**
 * Which platform's agent prepared an order, on both backends: a checkout created through the MCP door records the host
 * of the agent's profile URL (its platform), an update by another platform's agent records that one, and the order the
 * buyer approves keeps the platform of the agent that last wrote its checkout; a checkout a browser made has none.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readOrder } from '../../src/orders/orders.js';
import { backends, dropTestDatabases, startTestStore, type TestStore } from '../helpers/store.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import { agentMeta, injectToolCall } from './mcp-harness.js';

after(dropTestDatabases);

const RELEASE = '2026-08-25';
const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
const FULFILLMENT = { methods: [{ type: 'shipping', destinations: [ADDRESS], groups: [{ selected_option_id: 'standard' }] }] };

for (const backend of backends) {
  describe(`the agent's platform on checkouts and orders (${backend.name})`, () => {
    let test: TestStore;
    let first: AgentProfileServer;
    let second: AgentProfileServer;
    before(async () => {
      [first, second] = await Promise.all([serveAgentProfiles([RELEASE]), serveAgentProfiles([RELEASE])]);
      test = await startTestStore(backend, { config: { allowInsecureProfiles: true } });
    });
    after(async () => {
      await test.close();
      await Promise.all([first.close(), second.close()]);
    });

    const hostOf = (profiles: AgentProfileServer) => new URL(profiles.profileUrl(RELEASE)).host;
    const call = (profiles: AgentProfileServer, name: string, args: Record<string, unknown>) =>
      injectToolCall(test.app, name, { ...args, meta: { ...(args.meta as object | undefined), ...agentMeta(profiles.profileUrl(RELEASE)) } });
    const variantOf = (sku: string) => {
      for (const product of test.store.catalog.snapshot.products) for (const variant of product.variants) if (variant.sku === sku) return variant.id;
      throw new Error(`no variant ${sku}`);
    };
    const platformOfCheckout = async (id: string) =>
      (await test.store.db.query<{ agent_platform: string | null }>('select agent_platform from checkouts where id = $1', [id]))[0]?.agent_platform;

    it("create_checkout records the host of the agent's profile URL; update_checkout by another platform's agent records that one; the order keeps it", async () => {
      assert.notEqual(hostOf(first), hostOf(second), 'two platforms, two hosts');
      const lines = [{ item: { id: String(variantOf('ESP-CLA-10')) }, quantity: 1 }];
      const created = await call(first, 'create_checkout', { checkout: { line_items: lines, buyer: { email: 'plat@example.com' }, fulfillment: FULFILLMENT } });
      assert.equal(created.status, 'ready_for_complete', JSON.stringify(created.messages));
      assert.equal(await platformOfCheckout(created.id), hostOf(first));
      assert.equal((await test.store.checkouts.get(test.store.db, created.id))!.view.record.agentPlatform, hostOf(first));

      const updated = await call(second, 'update_checkout', { id: created.id, checkout: { line_items: lines, buyer: { email: 'plat@example.com' }, fulfillment: FULFILLMENT } });
      assert.equal(updated.status, 'ready_for_complete');
      assert.equal(await platformOfCheckout(created.id), hostOf(second));

      // A read changes nothing.
      await call(first, 'get_checkout', { id: created.id });
      assert.equal(await platformOfCheckout(created.id), hostOf(second));

      const asked = await test.store.checkouts.requestCompletion(test.store.db, created.id, 'agent');
      const outcome = await test.store.checkouts.approve(test.store.db, asked.approval!.token, asked.approval!.formSecret, asked.approval!.digest, { kind: 'none' });
      assert.equal(outcome.kind, 'placed');
      if (outcome.kind !== 'placed') return;
      assert.equal(outcome.order.agentPlatform, hostOf(second));
      const order = await readOrder(test.store.db, outcome.order.id);
      assert.equal(order!.channel, 'agent');
      assert.equal(order!.agentPlatform, hostOf(second));
    });

    it('a checkout a browser made has no platform, nor its order', async () => {
      const created = await test.store.checkouts.create(
        test.store.db,
        {
          lines: [{ variantId: variantOf('ESP-DEC-10'), quantity: 1 }],
          buyer: { email: 'browser@example.com' },
          destination: { firstName: 'Ann', lastName: 'Lee', streetAddress: '1 Main St', locality: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' },
          shippingOption: 'standard',
        },
        'browser',
        'buyer',
      );
      assert.equal(await platformOfCheckout(created.view.record.id), null);
      const asked = await test.store.checkouts.requestCompletion(test.store.db, created.view.record.id, 'buyer');
      const outcome = await test.store.checkouts.approve(test.store.db, asked.approval!.token, asked.approval!.formSecret, asked.approval!.digest, { kind: 'none' });
      assert.equal(outcome.kind, 'placed');
      if (outcome.kind !== 'placed') return;
      assert.equal((await readOrder(test.store.db, outcome.order.id))!.agentPlatform, null);
    });
  });
}
