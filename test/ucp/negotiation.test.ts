/** Pure parts of the commerce door: capability intersection, address and host policies, the fast-path envelope. */
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { intersectCapabilities, readPlatformProfile, releasesOffered } from '../../src/ucp/agent/negotiation.js';
import { embeddedIPv4, isAllowedProfileAddress, isLoopbackAddress } from '../../src/ucp/agent/public-address.js';
import { allowedHosts, isAllowedHost, isAllowedOrigin } from '../../src/ucp/mcp/allowed-hosts.js';
import { exactToolsCall } from '../../src/ucp/mcp/fast-path.js';

/** The release a platform is answered in: the newest both speak. */
const chooseRelease = (profile: Parameters<typeof releasesOffered>[0]) => releasesOffered(profile)[0];

describe('capability intersection (UCP overview, intersection algorithm)', () => {
  const business = {
    'dev.ucp.shopping.checkout': [{ version: '2026-01-23' }, { version: '2026-04-08' }],
    'dev.ucp.shopping.fulfillment': [{ version: '2026-04-08', extends: 'dev.ucp.shopping.checkout' }],
    'dev.ucp.shopping.discount': [{ version: '2026-04-08', extends: ['dev.ucp.shopping.checkout', 'dev.ucp.shopping.cart'] }],
    'dev.ucp.shopping.catalog.search': [{ version: '2026-04-08' }],
  };

  it('keeps capabilities both sides name, at the highest version both list', () => {
    const result = intersectCapabilities(business, {
      'dev.ucp.shopping.checkout': [{ version: '2026-01-23' }, { version: '2026-04-08' }],
      'dev.ucp.shopping.catalog.search': [{ version: '2026-04-08' }],
      'com.example.other': [{ version: '2026-04-08' }],
    });
    assert.deepEqual([...result], [
      ['dev.ucp.shopping.checkout', '2026-04-08'],
      ['dev.ucp.shopping.catalog.search', '2026-04-08'],
    ]);
  });

  it('drops a capability with no version in common', () => {
    const result = intersectCapabilities(business, { 'dev.ucp.shopping.catalog.search': [{ version: '2026-01-11' }] });
    assert.equal(result.size, 0);
  });

  it('prunes extensions whose parents are all absent, and keeps one with any parent present', () => {
    const result = intersectCapabilities(business, {
      'dev.ucp.shopping.fulfillment': [{ version: '2026-04-08' }],
      'dev.ucp.shopping.discount': [{ version: '2026-04-08' }],
    });
    assert.equal(result.size, 0);
    const withParent = intersectCapabilities(business, {
      'dev.ucp.shopping.checkout': [{ version: '2026-04-08' }],
      'dev.ucp.shopping.discount': [{ version: '2026-04-08' }],
    });
    assert.deepEqual([...withParent.keys()].sort(), ['dev.ucp.shopping.checkout', 'dev.ucp.shopping.discount']);
  });

  it('answers in the newest release both sides speak: the platform\'s version or one of its supported_versions, nothing else', () => {
    assert.equal(chooseRelease({ version: '2026-08-25' }), '2026-08-25');
    assert.equal(chooseRelease({ version: '2026-04-08' }), '2026-04-08');
    // A platform on a newer release than this store's, offering ours as an older one.
    assert.equal(chooseRelease({ version: '2027-01-01', supportedVersions: { '2026-04-08': 'https://p.example/ucp/2026-04-08' } }), '2026-04-08');
    assert.equal(
      chooseRelease({ version: '2027-01-01', supportedVersions: { '2026-04-08': 'https://p.example/a', '2026-08-25': 'https://p.example/b' } }),
      '2026-08-25',
    );
    assert.equal(chooseRelease({ version: '2026-01-11' }), undefined);
    assert.equal(chooseRelease({ version: '2027-01-01', supportedVersions: { '2026-01-11': 'https://p.example/a' } }), undefined);
  });
});

describe('reading a platform profile: only what negotiation uses is checked', () => {
  const known = ['dev.ucp.shopping.catalog.search', 'dev.ucp.shopping.catalog.lookup', 'dev.ucp.shopping.cart'];
  // Byte for byte what `ucp profile init --version 2026-04-08` of @shopify/ucp-cli 0.9.0 writes: its checkout,
  // fulfillment, buyer_consent and discount entries carry only `version` (and `extends`), no `spec`/`schema`.
  const ucpCli = JSON.parse(readFileSync(new URL('./agent-profile.ucp-cli-0.9.0.json', import.meta.url), 'utf8'));
  const profile = (capabilities: unknown, version: unknown = '2026-04-08') => ({ ucp: { version, capabilities } });

  it('accepts the profile @shopify/ucp-cli 0.9.0 writes, and negotiates the catalog and cart capabilities from it', () => {
    const read = readPlatformProfile(ucpCli, known);
    assert.ok(!('message' in read), JSON.stringify(read));
    assert.equal(read.version, '2026-04-08');
    const business = Object.fromEntries(known.map((name) => [name, [{ version: '2026-04-08' }]]));
    assert.deepEqual([...intersectCapabilities(business, read.capabilities).keys()].sort(), [...known].sort());
  });

  it('ignores services, payment handlers, unknown members and capabilities this store does not offer, however odd', () => {
    const read = readPlatformProfile(
      {
        ucp: {
          version: '2026-04-08',
          capabilities: {
            'dev.ucp.shopping.cart': [{ version: '2026-04-08', extends: 'dev.ucp.shopping.checkout', config: { x: 1 }, id: 'c' }],
            'com.example.odd': 'not even an array',
            'Not A Name': [{ version: 7 }],
          },
          services: 'ignored',
        },
        signature: 'ignored',
      },
      known,
    );
    assert.deepEqual(read, { version: '2026-04-08', capabilities: { 'dev.ucp.shopping.cart': [{ version: '2026-04-08', extends: 'dev.ucp.shopping.checkout' }] } });
  });

  it('names what is missing or of the wrong type', () => {
    const cases: [unknown, string][] = [
      [null, ''],
      [[], ''],
      ['{"ucp": {}}', ''],
      [{}, '/ucp'],
      [{ ucp: [] }, '/ucp'],
      [{ ucp: 'x' }, '/ucp'],
      [{ ucp: { capabilities: {} } }, '/ucp/version'],
      [profile({}, 20260408), '/ucp/version'],
      [{ ucp: { version: '2026-04-08' } }, '/ucp/capabilities'],
      [profile([]), '/ucp/capabilities'],
      [profile('dev.ucp.shopping.cart'), '/ucp/capabilities'],
      [profile({ 'dev.ucp.shopping.cart': { version: '2026-04-08' } }), '/ucp/capabilities/dev.ucp.shopping.cart'],
      [profile({ 'dev.ucp.shopping.cart': ['2026-04-08'] }), '/ucp/capabilities/dev.ucp.shopping.cart/0'],
      [profile({ 'dev.ucp.shopping.cart': [{ spec: 'https://ucp.dev' }] }), '/ucp/capabilities/dev.ucp.shopping.cart/0/version'],
      [profile({ 'dev.ucp.shopping.catalog.search': [{ version: '2026-04-08' }, { version: null }] }), '/ucp/capabilities/dev.ucp.shopping.catalog.search/1/version'],
      [profile({ 'dev.ucp.shopping.cart': [{ version: '2026-04-08', extends: 3 }] }), '/ucp/capabilities/dev.ucp.shopping.cart/0/extends'],
      [profile({ 'dev.ucp.shopping.cart': [{ version: '2026-04-08', extends: ['a.b', {}] }] }), '/ucp/capabilities/dev.ucp.shopping.cart/0/extends'],
    ];
    for (const [document, path] of cases) {
      const read = readPlatformProfile(document, known);
      assert.ok('message' in read, `${JSON.stringify(document)} was accepted`);
      assert.equal(read.path, path, JSON.stringify(document));
    }
  });
});

describe('addresses an agent profile may be fetched from', () => {
  const production = { allowLoopback: false };
  it('allows public unicast addresses', () => {
    for (const address of ['8.8.8.8', '151.101.1.69', '2606:4700:4700::1111']) assert.equal(isAllowedProfileAddress(address, production), true, address);
  });
  it('refuses private, loopback, link-local, shared, multicast, reserved and mapped addresses', () => {
    for (const address of [
      '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.0.10', '127.0.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'fc00::1', 'ff02::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1',
      '2001:db8::1', 'not-an-ip',
    ]) {
      assert.equal(isAllowedProfileAddress(address, production), false, address);
    }
  });
  it('judges an IPv6 address carrying an IPv4 one (mapped, compatible, NAT64, 6to4) by that IPv4 address', () => {
    const refusedForms = [
      '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::ffff:0a00:0001', '::FFFF:192.168.1.1', '0:0:0:0:0:ffff:10.0.0.1',
      '::10.0.0.1', '::a00:1', '::169.254.169.254', '::2',
      '64:ff9b::10.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b:0:0:0:0:c0a8:0101', '64:ff9b::100.64.0.1',
      '2002:a00:1::', '2002:a9fe:a9fe::1', '2002:c0a8:0101::', '2002:e000:0001::', 'fe80::1%eth0',
    ];
    for (const address of refusedForms) {
      assert.equal(isAllowedProfileAddress(address, production), false, address);
      assert.equal(isAllowedProfileAddress(address, { allowLoopback: true }), false, `${address} (test mode)`);
    }
    for (const address of ['::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', '64:ff9b::97e5:c945', '2002:808:808::1', '2002:97e5:c945:1::']) {
      assert.equal(isAllowedProfileAddress(address, production), true, address);
    }
    assert.equal(embeddedIPv4('64:ff9b::a9fe:a9fe'), '169.254.169.254');
    assert.equal(embeddedIPv4('2002:c0a8:0101:0:0:0:0:1'), '192.168.1.1');
    assert.equal(embeddedIPv4('::ffff:a00:1'), '10.0.0.1');
    assert.equal(embeddedIPv4('::a00:1'), '10.0.0.1');
    assert.equal(embeddedIPv4('::1'), undefined);
    assert.equal(embeddedIPv4('2606:4700:4700::1111'), undefined);
    assert.equal(embeddedIPv4('64:ff9b:1::a00:1'), undefined, 'local-use NAT64 is refused as a whole, not by its IPv4');
    assert.equal(isAllowedProfileAddress('64:ff9b:1::808:808', production), false);
  });
  it('judges IPv4-translated IPv6 (::ffff:0:0:0/96) by its IPv4 address', () => {
    for (const address of ['::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '0:0:0:0:ffff:0:127.0.0.1', '::ffff:0:10.0.0.1', '::ffff:0:a9fe:a9fe', '::ffff:0:192.168.1.1']) {
      assert.equal(isAllowedProfileAddress(address, production), false, address);
      assert.equal(isAllowedProfileAddress(address, { allowLoopback: true }), false, `${address} (test mode)`);
    }
    assert.equal(embeddedIPv4('::ffff:0:127.0.0.1'), '127.0.0.1');
    assert.equal(embeddedIPv4('::ffff:0:a00:1'), '10.0.0.1');
    assert.equal(isAllowedProfileAddress('::ffff:0:8.8.8.8', production), true);
  });
  it('allows only the unicast range: every special-purpose IPv4 and IPv6 range is refused', () => {
    for (const address of [
      '198.18.0.1', '198.19.255.1', '192.0.0.8', '192.0.2.1', '192.88.99.1', '198.51.100.7', '203.0.113.9', '240.0.0.1', '192.175.48.1',
      '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:2::1', '2001:10::1', '2001:20::1', '2001:db8::1', '3fff::1', '5f00::1', '100::1',
      '64:ff9b:1::808:808', 'fec0::1', '::ffff:0:0', '::',
    ]) {
      assert.equal(isAllowedProfileAddress(address, production), false, address);
    }
  });
  it('IPv4-mapped loopback is loopback (a dual-stack socket connects to it); other IPv6 forms carrying loopback are refused', () => {
    for (const address of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:127.1.2.3']) {
      assert.equal(isLoopbackAddress(address), true, address);
      assert.equal(isAllowedProfileAddress(address, production), false, address);
      assert.equal(isAllowedProfileAddress(address, { allowLoopback: true }), true, address);
    }
    // These are routed to the network, not to this host's loopback: never fetched from, even in test mode.
    for (const address of ['::ffff:0:127.0.0.1', '::127.0.0.1', '64:ff9b::7f00:1', '64:ff9b::127.0.0.1', '2002:7f00:1::', '2002:7f00:1:1::1']) {
      assert.equal(isLoopbackAddress(address), false, address);
      assert.equal(isAllowedProfileAddress(address, production), false, address);
      assert.equal(isAllowedProfileAddress(address, { allowLoopback: true }), false, address);
    }
  });
  it('allows loopback only in the test mode', () => {
    assert.equal(isAllowedProfileAddress('127.0.0.1', { allowLoopback: true }), true);
    assert.equal(isAllowedProfileAddress('::1', { allowLoopback: true }), true);
    assert.equal(isAllowedProfileAddress('10.0.0.1', { allowLoopback: true }), false);
  });
});

describe('Host and Origin checks (DNS-rebinding protection)', () => {
  const hosts = allowedHosts('https://shop.example', ['admin.shop.example', 'localhost:3000', '[::1]:8080']);
  it("always allows BASE_URL's host, with or without its default port", () => {
    assert.equal(isAllowedHost('shop.example', hosts), true);
    assert.equal(isAllowedHost('SHOP.example:443', hosts), true);
    assert.equal(isAllowedHost('shop.example:8443', hosts), false);
  });
  it('allows configured hosts: any port without one, that port with one', () => {
    assert.equal(isAllowedHost('admin.shop.example:9000', hosts), true);
    assert.equal(isAllowedHost('localhost:3000', hosts), true);
    assert.equal(isAllowedHost('localhost:3001', hosts), false);
    assert.equal(isAllowedHost('[::1]:8080', hosts), true);
  });
  it('refuses other hosts and a missing Host', () => {
    for (const host of ['evil.example.com', 'shop.example.evil.com', '127.0.0.1', undefined]) assert.equal(isAllowedHost(host, hosts), false, String(host));
  });
  it('passes a request without Origin; checks an Origin by its host', () => {
    assert.equal(isAllowedOrigin(undefined, hosts), true);
    assert.equal(isAllowedOrigin('https://shop.example', hosts), true);
    assert.equal(isAllowedOrigin('http://localhost:3000', hosts), true);
    for (const origin of ['https://evil.example.com', 'null', 'file://', 'not a url']) assert.equal(isAllowedOrigin(origin, hosts), false, origin);
  });
});

describe('the fast path takes only the exact tools/call envelope', () => {
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_catalog', arguments: { catalog: {} } } };
  it('takes a single well-formed call, with or without arguments and _meta', () => {
    assert.deepEqual(exactToolsCall(call, undefined), { id: 1, name: 'search_catalog', arguments: { catalog: {} } });
    assert.ok(exactToolsCall({ ...call, id: 'a', params: { name: 'x', _meta: { progressToken: 1 } } }, '2025-11-25'));
  });
  it('leaves everything else to the SDK', () => {
    const others: unknown[] = [
      [call], { ...call, method: 'tools/list' }, { ...call, jsonrpc: '1.0' }, { ...call, id: null }, { ...call, id: 1.5 }, { ...call, extra: 1 },
      { ...call, params: { ...call.params, task: {} } }, { ...call, params: { name: 1 } }, { ...call, params: { name: 'x', arguments: [] } },
      { jsonrpc: '2.0', method: 'tools/call', params: call.params },
    ];
    for (const body of others) assert.equal(exactToolsCall(body, undefined), undefined, JSON.stringify(body));
    assert.equal(exactToolsCall(call, '1999-01-01'), undefined, 'an unsupported MCP-Protocol-Version');
  });
});
