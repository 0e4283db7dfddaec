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
