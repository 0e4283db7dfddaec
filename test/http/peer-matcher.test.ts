/** Which peers TRUST_PROXY trusts: CIDRs of either family, through proxy-addr's matcher (Fastify's own). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { peerMatcher } from '../../src/http/request-id.js';

describe('peerMatcher (TRUST_PROXY)', () => {
  it('matches IPv4 and IPv6 CIDRs, and an IPv4 peer in its IPv4-mapped IPv6 form', () => {
    const trusted = peerMatcher(['10.0.0.0/8', '192.0.2.7/32', 'fd00::/8']);
    for (const address of ['10.1.2.3', '10.255.255.255', '192.0.2.7', '::ffff:10.1.2.3', 'fd00::1', 'fdff:1::2']) assert.equal(trusted(address), true, address);
    for (const address of ['11.0.0.1', '192.0.2.8', '::ffff:11.0.0.1', 'fe80::1', '::1', '127.0.0.1']) assert.equal(trusted(address), false, address);
  });

  it('an IPv4-mapped range matches the IPv4 form a socket reports', () => {
    const trusted = peerMatcher(['::ffff:10.0.0.0/104']);
    assert.equal(trusted('10.9.8.7'), true);
    assert.equal(trusted('::ffff:10.9.8.7'), true);
    assert.equal(trusted('11.9.8.7'), false);
  });

  it('no address, or text that is not one, is never trusted', () => {
    const trusted = peerMatcher(['0.0.0.0/0', '::/0']);
    for (const address of [undefined, '', 'localhost', '10.0.0.1:80', 'not an address']) assert.equal(trusted(address), false, String(address));
    assert.equal(trusted('203.0.113.9'), true);
  });
});

describe('peerMatcher: /0 beside other ranges, and many addresses', () => {
  it('a /0 range trusts its whole family and nothing of the other, beside the other ranges given', () => {
    const trusted = peerMatcher(['0.0.0.0/0', 'fd00::/8']);
    for (const address of ['203.0.113.9', '10.0.0.1', '::ffff:198.51.100.1', 'fd00::1']) assert.equal(trusted(address), true, address);
    for (const address of ['fe80::1', '::1', '2001:db8::1']) assert.equal(trusted(address), false, address);
    const ipv6Only = peerMatcher(['::/0']);
    assert.equal(ipv6Only('2001:db8::1'), true);
    // An IPv4-mapped address is an IPv4 peer (as proxy-addr and Fastify read it), outside ::/0.
    assert.equal(ipv6Only('::ffff:203.0.113.9'), false);
    assert.equal(ipv6Only('203.0.113.9'), false);
  });

  it('answers every address right past the number of answers it remembers', () => {
    const trusted = peerMatcher(['10.0.0.0/16']);
    for (let round = 0; round < 2; round += 1) {
      for (let n = 0; n < 3000; n += 1) {
        const address = `10.${n % 2}.${(n >> 8) & 255}.${n & 255}`;
        assert.equal(trusted(address), n % 2 === 0, address);
      }
    }
  });
});
