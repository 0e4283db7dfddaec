/**
 * The store speaks both UCP releases, 2026-04-08 and 2026-08-25, chosen per call by the agent's profile:
 *
 * - `GET /.well-known/ucp` is a 2026-08-25 business profile (every dev.ucp.* entry at 2026-08-25, the public signing
 *   keys as `keys`, `supported_versions` naming the 2026-04-08 leaf), and `GET /.well-known/ucp/2026-04-08` a complete
 *   2026-04-08 one (`signing_keys`, no `supported_versions`), each valid against its release's official schema.
 * - For each release, an agent whose profile (served on loopback) speaks it goes the whole way through the MCP
 *   endpoint over a real socket: catalog, cart, checkout to requires_escalation, the buyer's approval, the completed
 *   checkout and its order, a canceled cart and an error answer. Every structuredContent validates against that
 *   release's official schema for the tool and says `ucp.version` = the release.
 * - A profile of a version the store does not speak is -32001 `version_unsupported`; anonymous callers (no
 *   `meta["ucp-agent"]`) get the catalog and cart tools, and no checkout or order tool.
 *
 * One backend, PGlite: the shapes of the answers do not depend on the database (the tools' database behaviour is
 * tested on both backends by the other test/ucp files).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/store.js';
import { serveAgentProfiles, type AgentProfileServer } from './agent-profile-server.js';
import { agentMeta, callTool, startListeningStore, type ListeningStore, type RpcAnswer } from './mcp-harness.js';
import { isUcpRelease, OfficialSchemas, officialSchemaErrorsFor, toolResultErrors, UCP_RELEASES, type UcpRelease } from './official-schemas.js';

const NEWEST: UcpRelease = '2026-08-25';
const OLDER: UcpRelease = '2026-04-08';
const UNSPOKEN = '2025-01-01';

const ADDRESS = { first_name: 'Ann', last_name: 'Lee', street_address: '1 Main St', address_locality: 'Springfield', address_region: 'IL', postal_code: '62701', address_country: 'US' };
/**
 * The checkout of a complete_checkout: both releases require `payment` in the complete request; this store charges
 * nothing through the agent (the buyer approves first), so an empty one.
 */
const COMPLETE = { payment: {} };
const CHECKOUT_TOOLS = ['create_checkout', 'get_checkout', 'update_checkout', 'complete_checkout', 'cancel_checkout', 'get_order'] as const;

const pglite = backends.find((backend) => backend.name === 'pglite')!;
const brief = (value: unknown) => JSON.stringify(value)?.slice(0, 800);

/** Every `dev.ucp.*` service and capability (extensions included) entry of a profile, with its name. */
function devUcpEntries(profile: any): Array<[string, any]> {
  const registries = [profile?.ucp?.services ?? {}, profile?.ucp?.capabilities ?? {}] as Array<Record<string, unknown>>;
  return registries.flatMap((registry) =>
    Object.entries(registry)
      .filter(([name]) => name.startsWith('dev.ucp.'))
      .flatMap(([name, entries]) => (Array.isArray(entries) ? entries : [entries]).map((entry): [string, any] => [name, entry])),
  );
}

/** Each entry is at `version`, and a spec or schema URL naming a release on ucp.dev names that one. */
function assertEntriesAt(profile: any, version: string): void {
  const entries = devUcpEntries(profile);
  assert.ok(entries.length > 0, 'the profile lists dev.ucp.* entries');
  for (const [name, entry] of entries) {
    assert.equal(entry?.version, version, `${name}: ${brief(entry)}`);
    for (const url of [entry.spec, entry.schema]) {
      const release = typeof url === 'string' ? /^https:\/\/ucp\.dev\/(\d{4}-\d{2}-\d{2})\//.exec(url)?.[1] : undefined;
      if (release) assert.equal(release, version, `${name} links another release: ${url}`);
    }
  }
}

/** A JWK Set of public signing keys: each with kid and kty, no private member. */
function assertPublicJwks(keys: unknown, what: string): string[] {
  assert.ok(Array.isArray(keys) && keys.length > 0, `${what}: a non-empty array of keys (${brief(keys)})`);
  for (const key of keys as Array<Record<string, unknown>>) {
    assert.equal(typeof key.kid, 'string', `${what}: kid`);
    assert.equal(typeof key.kty, 'string', `${what}: kty`);
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) assert.equal(key[secret], undefined, `${what}: no private member ${secret}`);
  }
  return (keys as Array<{ kid: string }>).map((key) => key.kid).sort();
}

/** The answer refuses: a JSON-RPC error, or a UCP error result (isError, `ucp.status` error) that is not the resource. */
function assertRefused(answer: RpcAnswer, what: string): void {
  if (answer.body?.error) {
    assert.equal(typeof answer.body.error.code, 'number', `${what}: ${answer.text.slice(0, 600)}`);
    return;
  }
  const result = answer.body?.result;
  assert.ok(result, `${what}: neither result nor error: ${answer.text.slice(0, 600)}`);
  const structured = result.structuredContent;
  assert.equal(structured?.ucp?.status, 'error', `${what} must be refused to an anonymous caller; it answered ${brief(structured)}`);
  assert.equal(result.isError, true, `${what}: isError`);
  assert.ok(Array.isArray(structured.messages) && structured.messages.length > 0, `${what}: says why`);
  const version: unknown = structured.ucp.version;
  if (isUcpRelease(version)) {
    const errors = officialSchemaErrorsFor(version, OfficialSchemas[version].errorResponse, structured);
    assert.deepEqual(errors, [], `${what}: not a ${version} error response: ${errors.join('; ')}`);
  }
}

describe(`both UCP releases, ${OLDER} and ${NEWEST} (${pglite.name})`, () => {
  let t: ListeningStore;
  let agents: AgentProfileServer;
  let baseUrl: string;

  before(async () => {
    t = await startListeningStore(pglite, { agentProfileTimeoutMs: 30_000 });
    agents = await serveAgentProfiles([...UCP_RELEASES, UNSPOKEN]);
    baseUrl = t.store.config.baseUrl;
  });
  after(async () => {
    await agents?.close();
    await t?.close();
  });

  const getProfile = async (path: string): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${t.origin}${path}`);
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, body };
  };
  const count = async (table: 'checkouts' | 'orders') => (await t.store.db.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;

  /**
   * A tools/call over the socket as an agent speaking `release`: the answer is a result whose structuredContent says
   * `ucp.version` = the release, names every negotiated capability at it, and validates against the release's
   * official schema for the tool (or its error response). Returns the structuredContent.
   */
  async function callAs(release: UcpRelease, name: string, args: Record<string, any>): Promise<any> {
    const answer = await callTool(t.mcpUrl, name, { ...args, meta: { ...agentMeta(agents.profileUrl(release)), ...args.meta } });
    assert.equal(answer.status, 200, `${name} (${release} agent): HTTP ${answer.status} ${answer.text.slice(0, 600)}`);
    const result = answer.body?.result;
    assert.ok(result, `${name} (${release} agent): no result: ${answer.text.slice(0, 600)}`);
    const structured = result.structuredContent;
    assert.ok(structured && typeof structured === 'object', `${name} (${release} agent): no structuredContent`);
    assert.equal(structured.ucp?.version, release, `${name} answered a ${release} agent with ucp.version ${structured.ucp?.version}`);
    const errors = toolResultErrors(release, name, structured);
    assert.deepEqual(errors, [], `${name} (${release}): not valid against the ${release} schema: ${errors.slice(0, 8).join('; ')} in ${brief(structured)}`);
    assert.equal(result.isError ?? false, structured.ucp.status === 'error', `${name}: isError matches ucp.status`);
    for (const [capability, entries] of Object.entries(structured.ucp.capabilities ?? {})) {
      for (const entry of entries as Array<{ version?: string }>) assert.equal(entry.version, release, `${name}: ucp.capabilities ${capability}`);
    }
    return structured;
  }

  /** The fulfillment of a create_checkout: shipping to ADDRESS with `option`, in the release's request shape. */
  function shippingCreate(release: UcpRelease, option: string) {
    const destination = release === OLDER ? ADDRESS : { type: 'shipping_address', ...ADDRESS };
    return { methods: [{ type: 'shipping', destinations: [destination], groups: [{ selected_option_id: option }] }] };
  }

  /** The fulfillment of an update_checkout: the method and group as `checkout` (an answer) names them, with ADDRESS and `option`. */
  function shippingUpdate(release: UcpRelease, checkout: any, option: string) {
    const method = checkout.fulfillment.methods[0];
    const destination = release === OLDER ? ADDRESS : { type: 'shipping_address', ...ADDRESS };
    return {
      methods: [
        {
          id: method.id,
          type: 'shipping',
          line_item_ids: checkout.line_items.map((line: { id: string }) => line.id),
          destinations: [destination],
          groups: [{ id: method.groups[0].id, selected_option_id: option }],
        },
      ],
    };
  }

  /** A variant to buy: the first variant of the first product an espresso search finds. */
  async function aVariant(release: UcpRelease): Promise<string> {
    const search = await callAs(release, 'search_catalog', { catalog: { query: 'espresso' } });
    assert.ok(search.products.length > 0);
    return search.products[0].variants[0].id as string;
  }

  /** create_checkout ready for complete, complete (requires_escalation), the buyer approves: the completed checkout. */
  async function placeOrder(release: UcpRelease, email: string): Promise<{ checkoutId: string; orderId: string }> {
    const variant = await aVariant(release);
    const created = await callAs(release, 'create_checkout', {
      checkout: { line_items: [{ item: { id: variant }, quantity: 1 }], buyer: { email }, fulfillment: shippingCreate(release, 'standard') },
    });
    assert.equal(created.status, 'ready_for_complete', brief(created.messages));
    const asked = await callAs(release, 'complete_checkout', { meta: { 'idempotency-key': randomUUID() }, id: created.id, checkout: COMPLETE });
    assert.equal(asked.status, 'requires_escalation');
    await buyerApproves(asked.continue_url);
    const completed = await callAs(release, 'get_checkout', { id: created.id });
    assert.equal(completed.status, 'completed');
    return { checkoutId: created.id, orderId: completed.order.id };
  }

  /** The buyer approves on the store's page (APPROVAL_PROOF=link in test stores: no further proof); the page calls this. */
  async function buyerApproves(continueUrl: string): Promise<void> {
    assert.match(continueUrl, /\/checkout\/approve\/[A-Za-z0-9_-]{43,}$/);
    const token = continueUrl.split('/').pop()!;
    const pending = await t.store.checkouts.approvalState(t.store.db, token);
    assert.equal(pending.kind, 'pending');
    if (pending.kind !== 'pending') return;
    const placed = await t.store.checkouts.approve(t.store.db, token, pending.approval.formSecret, pending.approval.digest, { kind: 'none' });
    assert.equal(placed.kind, 'placed');
  }

  describe('discovery', () => {
    it(`GET /.well-known/ucp is a ${NEWEST} business profile: entries at ${NEWEST}, keys, supported_versions naming the ${OLDER} leaf`, async () => {
      const { status, body } = await getProfile('/.well-known/ucp');
      assert.equal(status, 200);
      assert.equal(body.ucp.version, NEWEST);
      assertEntriesAt(body, NEWEST);
      const errors = officialSchemaErrorsFor(NEWEST, OfficialSchemas[NEWEST].businessProfile, body);
      assert.deepEqual(errors, [], `not a ${NEWEST} business profile: ${errors.join('; ')}`);
      assert.deepEqual(body.ucp.supported_versions, { [OLDER]: `${baseUrl}/.well-known/ucp/${OLDER}` });
      assertPublicJwks(body.keys, 'keys');
      assert.equal(body.signing_keys, undefined, `${NEWEST} names the signing keys keys, not signing_keys`);
      assert.deepEqual(
        body.ucp.services['dev.ucp.shopping'].map((entry: any) => [entry.transport, entry.endpoint]),
        [['mcp', `${baseUrl}/api/ucp/mcp`]],
      );
      for (const capability of ['dev.ucp.shopping.catalog.search', 'dev.ucp.shopping.catalog.lookup', 'dev.ucp.shopping.cart', 'dev.ucp.shopping.checkout', 'dev.ucp.shopping.fulfillment', 'dev.ucp.shopping.order']) {
        assert.ok(body.ucp.capabilities[capability], capability);
      }
    });

    it(`GET /.well-known/ucp/${OLDER} is a complete ${OLDER} business profile: entries at ${OLDER}, signing_keys, no supported_versions`, async () => {
      const { status, body } = await getProfile(`/.well-known/ucp/${OLDER}`);
      assert.equal(status, 200);
      assert.equal(body.ucp.version, OLDER);
      assertEntriesAt(body, OLDER);
      const errors = officialSchemaErrorsFor(OLDER, OfficialSchemas[OLDER].businessProfile, body);
      assert.deepEqual(errors, [], `not a ${OLDER} business profile: ${errors.join('; ')}`);
      assert.equal(body.ucp.supported_versions, undefined, 'a leaf has no supported_versions');
      const kids = assertPublicJwks(body.signing_keys, 'signing_keys');
      assert.deepEqual(
        body.ucp.services['dev.ucp.shopping'].map((entry: any) => [entry.transport, entry.endpoint]),
        [['mcp', `${baseUrl}/api/ucp/mcp`]],
      );
      // The same store, the same tools and the same keys as the newest profile.
      const newest = (await getProfile('/.well-known/ucp')).body;
      assert.deepEqual(Object.keys(body.ucp.capabilities).sort(), Object.keys(newest.ucp.capabilities).sort());
      if (Array.isArray(newest.keys)) assert.deepEqual(kids, newest.keys.map((key: { kid: string }) => key.kid).sort());
    });

    it('the agent profiles these tests serve are valid platform profiles of their releases', () => {
      for (const release of UCP_RELEASES) {
        const errors = officialSchemaErrorsFor(release, OfficialSchemas[release].platformProfile, agents.profile(release));
        assert.deepEqual(errors, [], `${release}: ${errors.join('; ')}`);
      }
    });
  });

  for (const release of UCP_RELEASES) {
    describe(`an agent speaking ${release}`, () => {
      it(`search_catalog, lookup_catalog and get_product answer in ${release} shapes`, async () => {
        const search = await callAs(release, 'search_catalog', { catalog: { query: 'espresso' } });
        assert.ok(search.products.length > 0, 'espresso finds products');
        const product = search.products[0];
        const variant = product.variants[0];
        const lookup = await callAs(release, 'lookup_catalog', { catalog: { ids: [variant.id] } });
        assert.ok(
          lookup.products.some((p: any) => p.variants.some((v: any) => v.id === variant.id)),
          `lookup_catalog finds variant ${variant.id}`,
        );
        const detail = await callAs(release, 'get_product', { catalog: { id: product.id } });
        assert.equal(detail.product.id, product.id);
        assert.ok(detail.product.variants.length > 0);
      });

      it(`create_cart, get_cart, update_cart (${release === OLDER ? 'the body names the cart' : 'no cart.id in the body'}) and cancel_cart`, async () => {
        const variant = await aVariant(release);
        const cart = await callAs(release, 'create_cart', { cart: { line_items: [{ item: { id: variant }, quantity: 2 }] } });
        assert.equal(cart.ucp.status, 'success');
        assert.equal(cart.line_items[0].quantity, 2);
        const seen = await callAs(release, 'get_cart', { id: cart.id });
        assert.equal(seen.id, cart.id);
        assert.deepEqual(seen.line_items, cart.line_items);
        const lines = [{ id: cart.line_items[0].id, item: { id: variant }, quantity: 3 }];
        // 2026-04-08 asks the update body to carry cart.id; 2026-08-25 omits it (the cart is named by `id` alone).
        const body = release === OLDER ? { id: cart.id, line_items: lines } : { line_items: lines };
        const updated = await callAs(release, 'update_cart', { id: cart.id, cart: body });
        assert.equal(updated.id, cart.id);
        assert.deepEqual(updated.line_items.map((line: any) => [line.item.id, line.quantity]), [[variant, 3]]);

        const other = await callAs(release, 'create_cart', { cart: { line_items: [{ item: { id: variant }, quantity: 1 }] } });
        const canceled = await callAs(release, 'cancel_cart', { meta: { 'idempotency-key': randomUUID() }, id: other.id });
        assert.equal(canceled.id, other.id);
        const gone = await callAs(release, 'get_cart', { id: other.id });
        assert.equal(gone.ucp.status, 'error');
        assert.equal(gone.messages[0].code, 'not_found');
        assert.equal((await callAs(release, 'get_cart', { id: cart.id })).line_items[0].quantity, 3, 'the first cart is untouched');
      });

      it(`a checkout from line items to the order: every answer in ${release}`, async () => {
        const email = `buyer-${release}@example.com`;
        const variant = await aVariant(release);
        const created = await callAs(release, 'create_checkout', {
          checkout: { line_items: [{ item: { id: variant }, quantity: 2 }], buyer: { email }, fulfillment: shippingCreate(release, 'standard') },
        });
        assert.equal(created.status, 'ready_for_complete', brief(created.messages));
        assert.equal(created.buyer.email, email);
        assert.equal(created.fulfillment.methods[0].groups[0].selected_option_id, 'standard');
        if (release !== OLDER) assert.equal(created.fulfillment.methods[0].destinations[0].type, 'shipping_address');

        const seen = await callAs(release, 'get_checkout', { id: created.id });
        assert.equal(seen.id, created.id);
        assert.equal(seen.status, 'ready_for_complete');

        const updated = await callAs(release, 'update_checkout', {
          id: created.id,
          checkout: {
            line_items: created.line_items.map((line: any) => ({ id: line.id, item: { id: line.item.id }, quantity: 1 })),
            buyer: { email },
            fulfillment: shippingUpdate(release, created, 'standard'),
          },
        });
        assert.equal(updated.status, 'ready_for_complete', brief(updated.messages));
        assert.equal(updated.line_items[0].quantity, 1);

        const ordersBefore = await count('orders');
        const asked = await callAs(release, 'complete_checkout', { meta: { 'idempotency-key': randomUUID() }, id: created.id, checkout: COMPLETE });
        assert.equal(asked.status, 'requires_escalation');
        assert.equal(asked.order, undefined, 'no order before the buyer approves');
        assert.equal(await count('orders'), ordersBefore, 'no order from an agent');

        await buyerApproves(asked.continue_url);

        const completed = await callAs(release, 'get_checkout', { id: created.id });
        assert.equal(completed.status, 'completed');
        assert.equal(completed.continue_url, undefined);
        assert.equal(typeof completed.order?.id, 'string', 'the completed checkout names its order');
        const order = await callAs(release, 'get_order', { id: completed.order.id });
        assert.equal(order.id, completed.order.id);
        assert.equal(order.checkout_id, created.id);
        assert.equal(order.line_items[0].quantity.total, 1);
      });

      it(`an unknown checkout is a ${release} error response`, async () => {
        const missing = await callAs(release, 'get_checkout', { id: 'chk_nope' });
        assert.equal(missing.ucp.status, 'error');
        assert.equal(missing.messages[0].code, 'not_found');
      });
    });
  }

  it('the release is per call: one cart read by agents of both releases is answered in each one’s', async () => {
    const variant = await aVariant(OLDER);
    const cart = await callAs(OLDER, 'create_cart', { cart: { line_items: [{ item: { id: variant }, quantity: 1 }] } });
    const asNewest = await callAs(NEWEST, 'get_cart', { id: cart.id });
    const asOlder = await callAs(OLDER, 'get_cart', { id: cart.id });
    assert.equal(asNewest.id, cart.id);
    assert.equal(asOlder.id, cart.id);
  });

  it(`an agent profile of a version the store does not speak (${UNSPOKEN}) is -32001 version_unsupported, and nothing is created`, async () => {
    const checkoutsBefore = await count('checkouts');
    const meta = agentMeta(agents.profileUrl(UNSPOKEN));
    const search = await callTool(t.mcpUrl, 'search_catalog', { meta, catalog: { query: 'espresso' } });
    assert.equal(search.body?.error?.code, -32001, search.text.slice(0, 600));
    assert.equal(search.body.error.data?.code, 'version_unsupported', search.text.slice(0, 600));
    const checkout = await callTool(t.mcpUrl, 'create_checkout', {
      meta,
      checkout: { line_items: [{ item: { id: await aVariant(OLDER) }, quantity: 1 }], buyer: { email: 'old@example.com' } },
    });
    assert.equal(checkout.body?.error?.code, -32001, checkout.text.slice(0, 600));
    assert.equal(checkout.body.error.data?.code, 'version_unsupported');
    assert.equal(await count('checkouts'), checkoutsBefore);
  });

  describe('anonymous callers (no meta["ucp-agent"])', () => {
    it('may search the catalog and use carts', async () => {
      const search = await callTool(t.mcpUrl, 'search_catalog', { catalog: { query: 'espresso' } });
      const found = search.body?.result?.structuredContent;
      assert.equal(found?.ucp?.status, 'success', search.text.slice(0, 600));
      assert.ok(isUcpRelease(found.ucp.version), `ucp.version ${found.ucp.version}`);
      assert.deepEqual(toolResultErrors(found.ucp.version, 'search_catalog', found), []);
      const variant = found.products[0].variants[0].id;
      const created = await callTool(t.mcpUrl, 'create_cart', { cart: { line_items: [{ item: { id: variant }, quantity: 1 }] } });
      const cart = created.body?.result?.structuredContent;
      assert.equal(cart?.ucp?.status, 'success', created.text.slice(0, 600));
      assert.deepEqual(toolResultErrors(cart.ucp.version, 'create_cart', cart), []);
      const seen = await callTool(t.mcpUrl, 'get_cart', { id: cart.id });
      assert.equal(seen.body?.result?.structuredContent?.id, cart.id);
    });

    it('are refused every checkout and order tool: nothing is created, read or changed', async () => {
      // An agent's checkout ready for complete, and an agent's order, for the anonymous caller to reach for.
      const variant = await aVariant(OLDER);
      const ready = await callAs(OLDER, 'create_checkout', {
        checkout: { line_items: [{ item: { id: variant }, quantity: 1 }], buyer: { email: 'agent-only@example.com' }, fulfillment: shippingCreate(OLDER, 'standard') },
      });
      assert.equal(ready.status, 'ready_for_complete');
      const { orderId } = await placeOrder(OLDER, 'agent-order@example.com');
      const checkoutsBefore = await count('checkouts');
      const ordersBefore = await count('orders');

      const attempts: Array<[(typeof CHECKOUT_TOOLS)[number], Record<string, unknown>]> = [
        ['create_checkout', { checkout: { line_items: [{ item: { id: variant }, quantity: 1 }], buyer: { email: 'anon@example.com' }, fulfillment: shippingCreate(OLDER, 'standard') } }],
        ['get_checkout', { id: ready.id }],
        [
          'update_checkout',
          {
            id: ready.id,
            checkout: { line_items: [{ id: ready.line_items[0].id, item: { id: variant }, quantity: 5 }], buyer: { email: 'anon@example.com' }, fulfillment: shippingUpdate(OLDER, ready, 'express') },
          },
        ],
        ['complete_checkout', { meta: { 'idempotency-key': randomUUID() }, id: ready.id, checkout: COMPLETE }],
        ['cancel_checkout', { meta: { 'idempotency-key': randomUUID() }, id: ready.id }],
        ['get_order', { id: orderId }],
      ];
      assert.deepEqual(attempts.map(([tool]) => tool), [...CHECKOUT_TOOLS]);
      for (const [tool, args] of attempts) {
        const answer = await callTool(t.mcpUrl, tool, args);
        assertRefused(answer, tool);
        assert.ok(!answer.text.includes('agent-only@example.com') && !answer.text.includes('agent-order@example.com'), `${tool}: nothing of the agent's checkout or order`);
      }

      assert.equal(await count('checkouts'), checkoutsBefore, 'no checkout created');
      assert.equal(await count('orders'), ordersBefore, 'no order created');
      const untouched = await callAs(OLDER, 'get_checkout', { id: ready.id });
      assert.equal(untouched.status, 'ready_for_complete', 'neither completed, escalated nor canceled');
      assert.equal(untouched.buyer.email, 'agent-only@example.com', 'not updated');
      assert.equal(untouched.line_items[0].quantity, 1, 'not updated');
    });
  });
});
