/**
 * Every request has an id, in every log line of it and in the `x-request-id` header of its answer. The id a client
 * sends is kept only when the connection comes from a trusted proxy (TRUST_PROXY) and it has a safe shape; anyone
 * else could otherwise forge ids to confuse the logs. Otherwise the store makes one.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';

export const REQUEST_ID_HEADER = 'x-request-id';
/** Logs label the id with this (pino JSON: `"request_id":"…"`). */
export const REQUEST_ID_LOG_LABEL = 'request_id';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Addresses whose answer a matcher keeps: the proxies in front of a store are few, so this is rarely reached. */
const REMEMBERED_ADDRESSES = 1024;

/**
 * Whether an address (a socket's remoteAddress, or a hop of X-Forwarded-For) lies in one of the CIDRs
 * (config.trustProxy). It is asked on every request (the client address, the request id), mostly about the same
 * few proxy addresses: each answer is remembered, so an address is parsed once rather than per request.
 */
export function peerMatcher(cidrs: readonly string[]): (address: string | undefined) => boolean {
  const matches = rangeMatcher(cidrs);
  const known = new Map<string, boolean>();
  return (address) => {
    if (address === undefined) return false;
    let answer = known.get(address);
    if (answer === undefined) {
      if (known.size >= REMEMBERED_ADDRESSES) known.clear();
      known.set(address, (answer = matches(address)));
    }
    return answer;
  };
}

function rangeMatcher(cidrs: readonly string[]): (address: string) => boolean {
  const ranges: Range[] = cidrs.map((cidr) => {
    const [address, prefix] = ipaddr.parseCIDR(cidr);
    // An IPv4-mapped range (::ffff:10.0.0.0/104) matches the IPv4 form the socket's address is read as.
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
      return [(address as ipaddr.IPv6).toIPv4Address(), prefix - 96];
    }
    return [address, prefix];
  });
  return (address) => {
    if (!ipaddr.isValid(address)) return false;
    const peer = ipaddr.process(address);
    return ranges.some((range) => range[0].kind() === peer.kind() && peer.match(range));
  };
}

/** Fastify's genReqId: the trusted proxy's id when it has a safe shape, else a new UUID. */
export function requestIdGenerator(trustedProxies: readonly string[]): (request: IncomingMessage) => string {
  if (trustedProxies.length === 0) return () => randomUUID();
  const trusted = peerMatcher(trustedProxies);
  return (request) => {
    const offered = request.headers[REQUEST_ID_HEADER];
    return typeof offered === 'string' && REQUEST_ID.test(offered) && trusted(request.socket?.remoteAddress) ? offered : randomUUID();
  };
}

const CLIENT_ADDRESS = Symbol('clientAddress');

/**
 * The client's address (`request.ip`: X-Forwarded-For believed only from TRUST_PROXY peers), worked out once per
 * request: Fastify parses the forwarded chain again on every read of `request.ip`, and the rate limit and the
 * request log both need it.
 */
export function clientAddress(request: FastifyRequest): string {
  const memo = request as FastifyRequest & { [CLIENT_ADDRESS]?: string };
  return (memo[CLIENT_ADDRESS] ??= request.ip);
}

/**
 * The client address of a request before Fastify has made it a request object: what its request.ip would be, with
 * `trusted` the matcher app.ts gives Fastify as trustProxy (none: the connection's address).
 */
export function rawClientAddress(trusted: ((address: string | undefined) => boolean) | undefined): (raw: IncomingMessage) => string {
  if (trusted === undefined) return (raw) => raw.socket.remoteAddress ?? '';
  return (raw) => proxyAddr(raw, trusted);
}
