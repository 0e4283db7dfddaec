/**
 * Agent profile negotiation against profiles served on loopback (UCP_ALLOW_INSECURE_PROFILES=1): the
 * intersection decides which tools an agent may use; every way fetching or checking a profile can fail
 * is a -32001 error with the HTTP status UCP lists; the store never fetches into its own network.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backends, dropTestDatabases } from '../helpers/store.js';
import {
  agentMeta,
  callTool,
  json,
  platformProfile,
  startListeningStore,
  startProfileServer,
  type ListeningStore,
  type ProfileServer,
} from './mcp-harness.js';
import { officialSchemaErrors, resultSchemaFor } from './official-schemas.js';

after(dropTestDatabases);

const SEARCH = 'dev.ucp.shopping.catalog.search';
const LOOKUP = 'dev.ucp.shopping.catalog.lookup';

function assertDiscoveryError(answer: { status: number; body: any }, status: number, code: string) {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body.error.code, -32001);
  assert.equal(answer.body.error.data.code, code);
  assert.equal(typeof answer.body.error.data.content, 'string');
  assert.equal(answer.body.status, status);
}

for (const backend of backends) {
  describe(`${backend.name}: agent profile negotiation`, () => {
    let store: ListeningStore;
    let profiles: ProfileServer;

    before(async () => {
      store = await startListeningStore(backend);
      profiles = await startProfileServer({
        '/full.json': json(platformProfile([SEARCH, LOOKUP, 'dev.ucp.shopping.cart', 'dev.ucp.shopping.checkout']), { 'cache-control': 'max-age=120' }),
        '/lookup-only.json': json(platformProfile([LOOKUP])),
        '/nothing-shared.json': json(platformProfile(['com.example.loyalty'])),
        '/old-version.json': json(platformProfile([SEARCH], '2026-01-11')),
        '/not-json.json': json('{"ucp": '),
        '/not-a-profile.json': json({ ucp: { version: '2026-04-08' } }),
        '/huge.json': json({ ...platformProfile([SEARCH]), padding: 'x'.repeat(70 * 1024) }),
        '/redirect.json': (_request, response) => response.writeHead(302, { location: '/full.json' }).end(),
        '/redirect-elsewhere.json': (_request, response) => response.writeHead(307, { location: '/redirect-target.json' }).end(),
        '/redirect-target.json': json(platformProfile([SEARCH])),
        '/broken.json': (_request, response) => response.writeHead(500).end('oops'),
        '/silent.json': () => {}, // never answers: the store gives up after 2 s
      });
    });
    after(async () => {
      await profiles.close();
      await store.close();
    });

    it('an agent whose profile shares the catalog capabilities gets results naming the negotiated capability', async () => {
      const answer = await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(profiles.url('/full.json')), catalog: { query: 'espresso' } });
      assert.equal(answer.status, 200);
      const result = answer.body.result.structuredContent;
      assert.equal(result.ucp.status, 'success');
      assert.deepEqual(result.ucp.capabilities, { [SEARCH]: [{ version: '2026-04-08' }] });
      assert.deepEqual(officialSchemaErrors(resultSchemaFor('search_catalog', result), result), []);
    });

    it('fetches a profile once and answers later calls from the cache', async () => {
      const before = profiles.hits.get('/full.json') ?? 0;
      for (let i = 0; i < 3; i++) {
        const answer = await callTool(store.mcpUrl, 'get_product', { meta: agentMeta(profiles.url('/full.json')), catalog: { id: 'decaf-capsules' } });
        assert.equal(answer.body.result.structuredContent.ucp.status, 'success');
      }
      assert.ok((profiles.hits.get('/full.json') ?? 0) - before <= 1);
    });

    it('tools outside the intersection answer a capabilities_incompatible result, and tools inside it work', async () => {
      const meta = agentMeta(profiles.url('/lookup-only.json'));
      const refused = await callTool(store.mcpUrl, 'search_catalog', { meta, catalog: { query: 'espresso' } });
      assert.equal(refused.status, 200);
      const result = refused.body.result.structuredContent;
      assert.equal(refused.body.result.isError, true);
      assert.equal(result.ucp.status, 'error');
      assert.equal(result.messages[0].code, 'capabilities_incompatible');
      assert.deepEqual(officialSchemaErrors(resultSchemaFor('search_catalog', result), result), []);
      const noCart = await callTool(store.mcpUrl, 'create_cart', { meta, cart: { line_items: [{ item: { id: '42100000001' }, quantity: 1 }] } });
      assert.equal(noCart.body.result.structuredContent.messages[0].code, 'capabilities_incompatible');
      const allowed = await callTool(store.mcpUrl, 'lookup_catalog', { meta, catalog: { ids: ['decaf-capsules'] } });
      assert.equal(allowed.body.result.structuredContent.ucp.status, 'success');
    });

    it('an agent that shares no capability gets capabilities_incompatible from every tool', async () => {
      const answer = await callTool(store.mcpUrl, 'get_product', { meta: agentMeta(profiles.url('/nothing-shared.json')), catalog: { id: 'decaf-capsules' } });
      assert.equal(answer.body.result.structuredContent.messages[0].code, 'capabilities_incompatible');
    });

    it('without a profile the caller is anonymous and gets the catalog and cart tools', async () => {
      const answer = await callTool(store.mcpUrl, 'search_catalog', { catalog: { query: 'sleep' } });
      assert.equal(answer.body.result.structuredContent.ucp.status, 'success');
      const variant = answer.body.result.structuredContent.products[0].variants[0].id;
      const cart = await callTool(store.mcpUrl, 'create_cart', { cart: { line_items: [{ item: { id: variant }, quantity: 1 }] } });
      assert.equal(cart.body.result.structuredContent.ucp.status, 'success');
    });

    it('a cart made by an agent names the negotiated cart capability', async () => {
      const answer = await callTool(store.mcpUrl, 'create_cart', {
        meta: agentMeta(profiles.url('/full.json')),
        cart: { line_items: [{ item: { id: '42100000001' }, quantity: 1 }] },
      });
      const cart = answer.body.result.structuredContent;
      assert.deepEqual(cart.ucp.capabilities, { 'dev.ucp.shopping.cart': [{ version: '2026-04-08' }] });
      assert.deepEqual(officialSchemaErrors(resultSchemaFor('create_cart', cart), cart), []);
    });

    const failures: [string, string, number, string][] = [
      ['a profile on another UCP version', '/old-version.json', 422, 'version_unsupported'],
      ['a profile that is not JSON', '/not-json.json', 422, 'profile_malformed'],
      ['a profile that breaks the UCP profile schema', '/not-a-profile.json', 422, 'profile_malformed'],
      ['a profile over 64 KiB', '/huge.json', 422, 'profile_malformed'],
      ['a profile URL that redirects (never followed)', '/redirect.json', 424, 'profile_unreachable'],
      ['a profile URL answering 500', '/broken.json', 424, 'profile_unreachable'],
      ['a profile URL answering 404', '/missing.json', 424, 'profile_unreachable'],
      ['a profile that never arrives (2 s timeout)', '/silent.json', 424, 'profile_unreachable'],
    ];
    for (const [what, path, status, code] of failures) {
      it(`${what}: HTTP ${status}, -32001 ${code}`, async () => {
        const answer = await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(profiles.url(path)), catalog: {} });
        assertDiscoveryError(answer, status, code);
      });
    }

    it('a redirect is not followed: its target is not fetched because of it', async () => {
      const answer = await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(profiles.url('/redirect-elsewhere.json')), catalog: {} });
      assertDiscoveryError(answer, 424, 'profile_unreachable');
      assert.equal(profiles.hits.get('/redirect-elsewhere.json'), 1);
      assert.equal(profiles.hits.get('/redirect-target.json') ?? 0, 0);
    });

    it('a closed port: HTTP 424, -32001 profile_unreachable', async () => {
      const closed = await startProfileServer({});
      const url = closed.url('/p.json');
      await closed.close();
      assertDiscoveryError(await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }), 424, 'profile_unreachable');
    });

    for (const url of ['https://169.254.169.254/latest/meta-data', 'https://10.0.0.1/profile.json', 'https://[fe80::1]/p.json', 'https://192.168.1.1/p.json', 'ftp://agent.example/p.json']) {
      it(`refuses ${url} without connecting: HTTP 400, -32001 invalid_profile_url`, async () => {
        assertDiscoveryError(await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }), 400, 'invalid_profile_url');
      });
    }
  });

  describe(`${backend.name}: agent profiles when insecure profiles are off (production)`, () => {
    let store: ListeningStore;
    let profiles: ProfileServer;
    before(async () => {
      store = await startListeningStore(backend, { allowInsecureProfiles: false });
      profiles = await startProfileServer({ '/full.json': json(platformProfile([SEARCH])) });
    });
    after(async () => {
      await profiles.close();
      await store.close();
    });

    it('plain http is refused: HTTP 400, -32001 invalid_profile_url, and nothing is fetched', async () => {
      assertDiscoveryError(
        await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(profiles.url('/full.json')), catalog: {} }),
        400,
        'invalid_profile_url',
      );
      assert.equal(profiles.hits.get('/full.json'), undefined);
    });

    for (const url of ['https://127.0.0.1/p.json', 'https://[::1]/p.json', 'https://localhost/p.json', 'https://[::ffff:127.0.0.1]/p.json']) {
      it(`loopback ${url} is refused: HTTP 400, -32001 invalid_profile_url`, async () => {
        assertDiscoveryError(await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }), 400, 'invalid_profile_url');
      });
    }
  });
}
