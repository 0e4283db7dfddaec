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
import { LRUCache } from 'lru-cache';

export const REQUEST_ID_HEADER = 'x-request-id';
/** Logs label the id with this (pino JSON: `"request_id":"…"`). */
export const REQUEST_ID_LOG_LABEL = 'request_id';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Addresses whose answer a matcher keeps: the proxies in front of a store are few, so the bound is rarely reached. */
const REMEMBERED_ADDRESSES = 1024;

/**
 * Whether an address (a socket's remoteAddress, or a hop of X-Forwarded-For) lies in one of the CIDRs
 * (config.trustProxy), matched as Fastify's own trustProxy does (proxy-addr; an IPv4 peer also in its IPv4-mapped
 * IPv6 form). It is asked on every request, mostly about the same few proxy addresses, and proxy-addr parses the
 * address on each call (microseconds): each answer is remembered, the least recently asked forgotten first.
 */
export function peerMatcher(cidrs: readonly string[]): (address: string | undefined) => boolean {
  const matches = rangeMatcher(cidrs);
  const known = new LRUCache<string, boolean>({ max: REMEMBERED_ADDRESSES, memoMethod: (address) => matches(address) });
  return (address) => address !== undefined && known.memo(address);
}

/**
 * proxy-addr refuses a /0 range, which TRUST_PROXY accepts (`0.0.0.0/0`, `::/0`: every peer of that family): such a
 * range is matched by the address's family (an IPv4-mapped address is IPv4, as proxy-addr reads it), every other
 * by proxy-addr's compiled matcher.
 */
function rangeMatcher(cidrs: readonly string[]): (address: string) => boolean {
  const wholeFamilies = new Set(cidrs.filter((cidr) => cidr.endsWith('/0')).map((cidr) => ipaddr.parse(cidr.slice(0, -2)).kind()));
  const inRanges = proxyAddr.compile(cidrs.filter((cidr) => !cidr.endsWith('/0')));
  return (address) => (wholeFamilies.size > 0 && ipaddr.isValid(address) && wholeFamilies.has(ipaddr.process(address).kind())) || inRanges(address, 0);
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

declare module 'fastify' {
  interface FastifyRequest {
    /** clientAddress's answer, once asked (the symbol is this module's own). */
    [CLIENT_ADDRESS]?: string;
  }
}

/**
 * The client's address (`request.ip`: X-Forwarded-For believed only from TRUST_PROXY peers), worked out once per
 * request: Fastify parses the forwarded chain again on every read of `request.ip`, and the rate limit and the
 * request log both need it.
 */
export function clientAddress(request: FastifyRequest): string {
  return (request[CLIENT_ADDRESS] ??= request.ip);
}
