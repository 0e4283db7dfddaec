/**
 * Fetches an agent (platform) profile document the way UCP asks a business to: https only, no redirects,
 * a short timeout, a size cap, and never into the store's own network. The address check runs inside the
 * connection's DNS lookup, so the address checked is the address connected to (no rebinding window).
 * One deadline covers everything (lookup, connect, TLS, headers, body): an unreachable host, a peer that
 * never answers or a name server that does not reply all end in `profile_unreachable` when it passes.
 * The same URL rules and guarded lookup govern where order webhooks are posted (webhooks/webhook-sender.ts).
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { discoveryFailed } from '../jsonrpc-errors.js';
import { isAllowedProfileAddress, isLoopbackAddress } from './public-address.js';

export interface ProfileFetchOptions {
  /** Plain http (and addresses) on loopback allowed: UCP_ALLOW_INSECURE_PROFILES, for tests only. */
  allowInsecure: boolean;
  timeoutMs: number;
  maxBytes: number;
}

export interface FetchedProfile {
  document: unknown;
  /** The profile's own Cache-Control max-age, when it sent one. */
  maxAgeSeconds: number | undefined;
}

const MAX_URL_LENGTH = 2048;

/**
 * Names that never resolve to a public host, refused before any DNS query: single-label names (resolved
 * through search domains into the local network) and special-use domains (RFC 6761 `invalid`, `test`,
 * `example`, `localhost`; RFC 6762 `local`; RFC 7686 `onion`; RFC 8375 `home.arpa`; RFC 9476 `alt`;
 * `internal`, reserved for private use). `localhost` itself is judged by its addresses (loopback).
 */
const SPECIAL_USE_SUFFIXES = ['invalid', 'test', 'example', 'localhost', 'local', 'onion', 'home.arpa', 'alt', 'internal'];

function isSpecialUseName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost') return false;
  if (!name.includes('.')) return true;
  return SPECIAL_USE_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

/** getaddrinfo's answers for a name that does not exist or has no address (as opposed to "try again"). */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'EAI_NONAME', 'EAI_NODATA']);

export const isNoSuchName = (error: NodeJS.ErrnoException) => NO_SUCH_NAME.has(error.code ?? '');

/** A connection's lookup found an address the store does not connect to. */
export class RefusedAddress extends Error {}

/**
 * A DNS lookup for `http.request` that fails with `RefusedAddress` unless every address of the name is one the
 * store may connect to: the address checked is the address connected to (no rebinding window).
 */
export function guardedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const list = addresses as dns.LookupAddress[];
      const bad = list.find((a) => !isAllowedProfileAddress(a.address, { allowLoopback }));
      if (bad || list.length === 0) return callback(new RefusedAddress(hostname), '', 4);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}

function maxAge(cacheControl: string | undefined): number | undefined {
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d+)"?/i.exec(cacheControl ?? '');
  return match ? Number(match[1]) : undefined;
}

/** Why the store will not connect to a URL (fetch a profile from it, post an order event to it). */
export type UrlRefusal = 'too_long' | 'not_absolute' | 'credentials' | 'not_https' | 'refused_address' | 'not_public_name';

/**
 * The URL when the store may connect to it: absolute, no credentials, https (or http to loopback when insecure
 * profiles are allowed), not an address of the store's own network, not a name that never resolves to a public
 * host. The addresses a name resolves to are checked again when connecting (`guardedLookup`).
 */
export function outboundUrl(raw: string, allowInsecure: boolean): { url: URL } | { refusal: UrlRefusal } {
  if (raw.length > MAX_URL_LENGTH) return { refusal: 'too_long' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { refusal: 'not_absolute' };
  }
  if (url.username || url.password) return { refusal: 'credentials' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopbackHost = host === 'localhost' || (isIP(host) !== 0 && isLoopbackAddress(host));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowInsecure && loopbackHost)) return { refusal: 'not_https' };
  if (isIP(host) !== 0 && !isAllowedProfileAddress(host, { allowLoopback: allowInsecure })) return { refusal: 'refused_address' };
  if (isIP(host) === 0 && isSpecialUseName(host)) return { refusal: 'not_public_name' };
  return { url };
}

const PROFILE_URL_REFUSALS: Record<UrlRefusal, string> = {
  too_long: 'The agent profile URL is too long.',
  not_absolute: 'The agent profile URL is not an absolute URL.',
  credentials: 'The agent profile URL must not carry credentials.',
  not_https: 'The agent profile URL must use https.',
  refused_address: 'The agent profile URL points to an address this store does not fetch from.',
  not_public_name: 'The agent profile host is not a public DNS name.',
};

/** The URL, or a discovery error saying why the store will not fetch it. */
export function checkProfileUrl(raw: string, allowInsecure: boolean): URL {
  const checked = outboundUrl(raw, allowInsecure);
  if ('refusal' in checked) throw discoveryFailed('invalid_profile_url', PROFILE_URL_REFUSALS[checked.refusal]);
  return checked.url;
}

export function fetchProfileDocument(raw: string, options: ProfileFetchOptions): Promise<FetchedProfile> {
  const url = checkProfileUrl(raw, options.allowInsecure);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<FetchedProfile>((resolve, reject) => {
    let settled = false;
    // Assigned once, below; `fail` (which the timer may call first) reads it before that.
    // eslint-disable-next-line prefer-const
    let request: http.ClientRequest | undefined;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request?.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(discoveryFailed('profile_unreachable', `The agent profile did not arrive within ${options.timeoutMs} ms.`)),
      options.timeoutMs,
    );
    timer.unref(); // a pending profile fetch must not keep the process alive at shutdown
    request = client.request(
      url,
      {
        method: 'GET',
        agent: false,
        lookup: guardedLookup(options.allowInsecure),
        headers: { accept: 'application/json', 'user-agent': 'storefront-ucp/1.0' },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          response.resume();
          return fail(discoveryFailed('profile_unreachable', `The agent profile answered HTTP ${status}; redirects are not followed.`));
        }
        if (status < 200 || status >= 300) {
          response.resume();
          return fail(discoveryFailed('profile_unreachable', `The agent profile answered HTTP ${status}.`));
        }
        const tooLarge = () => discoveryFailed('profile_malformed', `The agent profile is larger than ${options.maxBytes} bytes.`);
        if (Number(response.headers['content-length'] ?? 0) > options.maxBytes) return fail(tooLarge());
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) return fail(tooLarge());
          chunks.push(chunk);
        });
        response.on('error', () => fail(discoveryFailed('profile_unreachable', 'The agent profile connection broke.')));
        response.on('end', () => {
          if (settled) return;
          let document: unknown;
          try {
            document = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            return fail(discoveryFailed('profile_malformed', 'The agent profile is not valid JSON.'));
          }
          settled = true;
          clearTimeout(timer);
          resolve({ document, maxAgeSeconds: maxAge(response.headers['cache-control']) });
        });
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof RefusedAddress) {
        return fail(discoveryFailed('invalid_profile_url', 'The agent profile host resolves to an address this store does not fetch from.'));
      }
      if (isNoSuchName(error)) {
        return fail(discoveryFailed('invalid_profile_url', 'The agent profile host does not resolve.'));
      }
      fail(discoveryFailed('profile_unreachable', 'The agent profile could not be fetched.'));
    });
    request.end();
  });
}
