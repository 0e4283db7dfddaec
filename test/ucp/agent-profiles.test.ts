/**
 * Agent profile negotiation against profiles served on loopback (UCP_ALLOW_INSECURE_PROFILES=1): the
 * intersection decides which tools an agent may use; every way fetching or checking a profile can fail
 * is a -32001 error with the HTTP status UCP lists; the store never fetches into its own network.
 *
 * The store under test waits up to 30 s for a profile (GENEROUS_DEADLINE_MS), so a loaded machine does not fail a
 * fetch that works, and an answer "at once" (under AT_ONCE_MS) is one that did not wait for the deadline. The
 * 2 s deadline itself is tested on a store of its own.
 */
import dns from 'node:dns';
import { readFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it, type TestContext } from 'node:test';
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
const CART = 'dev.ucp.shopping.cart';

/** What `ucp profile init --version 2026-04-08` of @shopify/ucp-cli 0.9.0 writes, byte for byte. */
const UCP_CLI_PROFILE = readFileSync(new URL('./agent-profile.ucp-cli-0.9.0.json', import.meta.url), 'utf8');
const minimal = (capabilities: unknown, version: unknown = '2026-04-08') => ({ ucp: { version, capabilities } });

/** The profile fetch deadline of the store most tests use: far beyond any fetch here, even on a loaded machine. */
const GENEROUS_DEADLINE_MS = 30_000;
/** An answer this fast did not wait for GENEROUS_DEADLINE_MS. */
const AT_ONCE_MS = 10_000;
/** The deadline a store has by default (AgentProfiles), and the most a loaded machine may add to it. */
const DEFAULT_DEADLINE_MS = 2000;
const DEADLINE_SLACK_MS = 13_000;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Records the host names the store asks DNS for during a test (node:dns lookup, which the profile fetch uses). */
function dnsQueries(t: TestContext): () => string[] {
  const lookup = t.mock.method(dns, 'lookup');
  return () => lookup.mock.calls.map((call) => String(call.arguments[0]));
}

/** A loopback TCP peer that accepts connections and never says a word (a TLS handshake that never completes). */
async function mutePeer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function timed<T>(work: () => Promise<T>): Promise<{ answer: T; ms: number }> {
  const started = performance.now();
  const answer = await work();
  return { answer, ms: performance.now() - started };
}

/** A discovery failure: HTTP 200 (the spec), -32001 and the UCP code in data.code (UCP would send `ucpStatus`). */
function assertDiscoveryError(answer: { status: number; body: any }, ucpStatus: number, code: string) {
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'id', 'jsonrpc']);
  assert.equal(answer.body.error.code, -32001);
  assert.equal(answer.body.error.data.code, code);
  assert.equal(typeof answer.body.error.data.content, 'string');
  assert.ok(ucpStatus === 400 || ucpStatus === 422 || ucpStatus === 424);
}

for (const backend of backends) {
  describe(`${backend.name}: agent profile negotiation`, () => {
    let store: ListeningStore;
    let profiles: ProfileServer;

    before(async () => {
      store = await startListeningStore(backend, { agentProfileTimeoutMs: GENEROUS_DEADLINE_MS });
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
        '/ucp-cli.json': json(UCP_CLI_PROFILE),
        '/liberal.json': json({
          ucp: {
            version: '2026-04-08',
            capabilities: {
              [SEARCH]: [{ version: '2026-04-08', config: { anything: true } }],
              'com.example.loyalty': 'not an array: this store does not offer it, so it is not read',
            },
          },
        }),
        '/null.json': json('null'),
        '/array.json': json([]),
        '/ucp-string.json': json({ ucp: '2026-04-08' }),
        '/no-version.json': json({ ucp: { capabilities: {} } }),
        '/version-number.json': json(minimal({ [SEARCH]: [{ version: '2026-04-08' }] }, 20260408)),
        '/capabilities-array.json': json(minimal([{ [SEARCH]: [{ version: '2026-04-08' }] }])),
        '/entry-without-version.json': json(minimal({ [SEARCH]: [{ spec: 'https://ucp.dev/2026-04-08/specification/catalog/search' }] })),
        '/entry-bad-extends.json': json(minimal({ [SEARCH]: [{ version: '2026-04-08', extends: 42 }] })),
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

    it('accepts the profile `ucp profile init` (@shopify/ucp-cli 0.9.0) writes, whose entries carry only version and extends', async () => {
      const meta = agentMeta(profiles.url('/ucp-cli.json'));
      const search = await callTool(store.mcpUrl, 'search_catalog', { meta, catalog: { query: 'espresso' } });
      assert.equal(search.status, 200, search.text);
      assert.equal(search.body.result.structuredContent.ucp.status, 'success');
      assert.deepEqual(search.body.result.structuredContent.ucp.capabilities, { [SEARCH]: [{ version: '2026-04-08' }] });
      const cart = await callTool(store.mcpUrl, 'create_cart', { meta, cart: { line_items: [{ item: { id: '42100000001' }, quantity: 1 }] } });
      assert.equal(cart.status, 200, cart.text);
      assert.deepEqual(cart.body.result.structuredContent.ucp.capabilities, { [CART]: [{ version: '2026-04-08' }] });
    });

    it('ignores what negotiation does not use: members it does not read and capabilities this store does not offer', async () => {
      const meta = agentMeta(profiles.url('/liberal.json'));
      const search = await callTool(store.mcpUrl, 'search_catalog', { meta, catalog: { query: 'espresso' } });
      assert.equal(search.status, 200, search.text);
      assert.equal(search.body.result.structuredContent.ucp.status, 'success');
    });

    const failures: [string, string, number, string][] = [
      ['a profile that is JSON null', '/null.json', 422, 'profile_malformed'],
      ['a profile that is a JSON array', '/array.json', 422, 'profile_malformed'],
      ['a profile whose ucp is a string', '/ucp-string.json', 422, 'profile_malformed'],
      ['a profile without ucp.version', '/no-version.json', 422, 'profile_malformed'],
      ['a profile whose ucp.version is a number', '/version-number.json', 422, 'profile_malformed'],
      ['a profile whose capabilities are an array', '/capabilities-array.json', 422, 'profile_malformed'],
      ['a profile with an offered capability entry without version', '/entry-without-version.json', 422, 'profile_malformed'],
      ['a profile with an offered capability entry whose extends is a number', '/entry-bad-extends.json', 422, 'profile_malformed'],
      ['a profile on another UCP version', '/old-version.json', 422, 'version_unsupported'],
      ['a profile that is not JSON', '/not-json.json', 422, 'profile_malformed'],
      ['a profile that breaks the UCP profile schema', '/not-a-profile.json', 422, 'profile_malformed'],
      ['a profile over 64 KiB', '/huge.json', 422, 'profile_malformed'],
      ['a profile URL that redirects (never followed)', '/redirect.json', 424, 'profile_unreachable'],
      ['a profile URL answering 500', '/broken.json', 424, 'profile_unreachable'],
      ['a profile URL answering 404', '/missing.json', 424, 'profile_unreachable'],
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

    it('a closed port: HTTP 424, -32001 profile_unreachable, at once', async () => {
      const closed = await startProfileServer({});
      const url = closed.url('/p.json');
      await closed.close();
      const { answer, ms } = await timed(() => callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }));
      assertDiscoveryError(answer, 424, 'profile_unreachable');
      assert.ok(ms < AT_ONCE_MS, `${ms} ms`);
    });

    it('a host whose every address refuses the connection (localhost: ::1 and 127.0.0.1): HTTP 424 profile_unreachable, at once', async (t) => {
      const queried = dnsQueries(t);
      const port = await closedPort();
      for (const url of [`http://localhost:${port}/p.json`, `http://[::1]:${port}/p.json`, `http://[::ffff:127.0.0.1]:${port}/p.json`]) {
        const { answer, ms } = await timed(() => callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }));
        assertDiscoveryError(answer, 424, 'profile_unreachable');
        assert.ok(ms < AT_ONCE_MS, `${url}: ${ms} ms`);
      }
      // The lookup the tests below watch is the one the fetch makes: localhost was resolved through it.
      assert.ok(queried().includes('localhost'), `DNS queries: ${queried().join(', ')}`);
    });

    // Names that cannot be a public host are refused before any DNS query is made.
    for (const url of ['https://agent.invalid/p.json', 'https://profiles.agent.test/p.json', 'https://agent.example/p.json', 'https://printer.local/p.json', 'https://agent.localhost/p.json', 'https://metadata/computeMetadata/v1/', 'https://metadata.google.internal/p.json']) {
      it(`a name that does not resolve to a public host, ${url}: HTTP 400 invalid_profile_url, without a DNS query`, async (t) => {
        const queried = dnsQueries(t);
        const { answer, ms } = await timed(() => callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }));
        assertDiscoveryError(answer, 400, 'invalid_profile_url');
        assert.ok(!queried().includes(new URL(url).hostname), `DNS queries: ${queried().join(', ')}`);
        assert.ok(ms < AT_ONCE_MS, `${ms} ms`);
      });
    }

    // IPv6 forms carrying a loopback IPv4 address other than the mapped one are routed to the network, not
    // to this host: never fetched from, even in test mode.
    for (const host of ['[::ffff:0:127.0.0.1]', '[64:ff9b::127.0.0.1]', '[2002:7f00:1::1]', '[::127.0.0.1]']) {
      it(`refuses https://${host}:PORT in test mode without connecting: HTTP 400, -32001 invalid_profile_url`, async () => {
        const url = profiles.url('/full.json').replace('http://127.0.0.1', `https://${host}`);
        assertDiscoveryError(await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }), 400, 'invalid_profile_url');
      });
    }

    for (const url of ['https://169.254.169.254/latest/meta-data', 'https://10.0.0.1/profile.json', 'https://[fe80::1]/p.json', 'https://192.168.1.1/p.json', 'ftp://agent.example/p.json']) {
      it(`refuses ${url} without connecting: HTTP 400, -32001 invalid_profile_url`, async () => {
        assertDiscoveryError(await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }), 400, 'invalid_profile_url');
      });
    }
  });

  describe(`${backend.name}: the profile fetch deadline (2 s by default)`, () => {
    let store: ListeningStore;
    let profiles: ProfileServer;
    before(async () => {
      store = await startListeningStore(backend);
      profiles = await startProfileServer({ '/silent.json': () => {} }); // never answers
    });
    after(async () => {
      await profiles.close();
      await store.close();
    });

    const assertDeadline = (ms: number) => assert.ok(ms >= DEFAULT_DEADLINE_MS - 100 && ms < DEFAULT_DEADLINE_MS + DEADLINE_SLACK_MS, `${ms} ms`);

    it('a profile that never arrives: HTTP 424, -32001 profile_unreachable, after the deadline', async () => {
      const { answer, ms } = await timed(() => callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(profiles.url('/silent.json')), catalog: {} }));
      assertDiscoveryError(answer, 424, 'profile_unreachable');
      assertDeadline(ms);
    });

    it('a peer that accepts and never completes the TLS handshake: HTTP 424 profile_unreachable after the deadline, not waiting for the peer', async () => {
      const peer = await mutePeer();
      try {
        const url = `https://127.0.0.1:${peer.port}/p.json`;
        const { answer, ms } = await timed(() => callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }));
        assertDiscoveryError(answer, 424, 'profile_unreachable');
        assertDeadline(ms);
      } finally {
        await peer.close();
      }
    });
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

    it('IPv4-translated loopback (::ffff:0:127.0.0.1) is refused without connecting: HTTP 400, -32001 invalid_profile_url', async () => {
      for (const host of ['[::ffff:0:127.0.0.1]', '[::ffff:0:7f00:1]', '[::ffff:0:10.0.0.1]', '[::ffff:0:169.254.169.254]']) {
        const url = profiles.url('/full.json').replace('http://127.0.0.1', `https://${host}`);
        assertDiscoveryError(await callTool(store.mcpUrl, 'search_catalog', { meta: agentMeta(url), catalog: {} }), 400, 'invalid_profile_url');
      }
    });
  });
}
