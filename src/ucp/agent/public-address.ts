/**
 * Which addresses the store may connect to when it fetches an agent profile: public unicast only. A
 * profile URL must not make the store reach into its own network (SSRF). The classification is ipaddr.js's
 * (its special-purpose ranges: private, loopback, link-local with cloud metadata at 169.254.169.254,
 * carrier-grade NAT, multicast, reserved and documentation, unique-local, …): only the range `unicast` is
 * allowed. An IPv6 address that carries an IPv4 one (mapped, translated, compatible, NAT64, 6to4) is judged
 * by that IPv4 address. Loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104) is allowed only in the test mode
 * that also allows plain http (UCP_ALLOW_INSECURE_PROFILES).
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The address, parsed, when `text` is a plain IPv4 (dotted quad) or IPv6 literal; a zone id is dropped. */
function parse(text: string): Address | undefined {
  let plain = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  // node:net is strict (no `0x7f.1`, `127.1` or octal forms); ipaddr.js then classifies.
  const version = isIP(plain);
  if (version === 0) return undefined;
  if (version === 6) {
    // ipaddr.js reads `::a.b.c.d` (IPv4-compatible) as `::ffff:a.b.c.d` (IPv4-mapped): write a trailing
    // dotted quad as two hex groups first, as the WHATWG URL parser and getaddrinfo do.
    const quad = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(plain);
    if (quad) {
      const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
      plain = `${plain.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    }
  }
  try {
    return ipaddr.parse(plain);
  } catch {
    return undefined;
  }
}

/** An IPv6 prefix that carries an IPv4 address, and the byte offset of that address. */
const carrier = (cidr: string, offset: number) => ({ prefix: ipaddr.IPv6.parseCIDR(cidr), offset });
const CARRIERS = [
  carrier('::ffff:0:0/96', 12), // IPv4-mapped (RFC 4291)
  carrier('::ffff:0:0:0/96', 12), // IPv4-translated (RFC 6145)
  carrier('64:ff9b::/96', 12), // NAT64 well-known prefix (RFC 6052)
  carrier('2002::/16', 2), // 6to4 (RFC 3056)
  carrier('::/96', 12), // IPv4-compatible ::a.b.c.d (deprecated); :: and ::1 excepted below
];
const UNSPECIFIED_OR_LOOPBACK = ipaddr.IPv6.parseCIDR('::/127');

/** The IPv4 address an IPv6 one carries in its place, or undefined. */
function carriedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (address.match(UNSPECIFIED_OR_LOOPBACK)) return undefined;
  const found = CARRIERS.find(({ prefix }) => address.match(prefix));
  if (!found) return undefined;
  return new ipaddr.IPv4(address.toByteArray().slice(found.offset, found.offset + 4));
}

/**
 * The IPv4 address an IPv6 one carries, judged in its place: IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated
 * `::ffff:0:a.b.c.d`, IPv4-compatible `::a.b.c.d` (not `::` or `::1`), NAT64 well-known prefix
 * `64:ff9b::/96`, and 6to4 `2002:AABB:CCDD::/16`. Undefined for anything else (the local-use NAT64 prefix
 * `64:ff9b:1::/48` is refused as a whole).
 */
export function embeddedIPv4(address: string): string | undefined {
  const parsed = parse(address);
  if (parsed?.kind() !== 'ipv6') return undefined;
  return carriedIPv4(parsed as ipaddr.IPv6)?.toString();
}

/**
 * Loopback as this host routes it: 127.0.0.0/8, `::1`, and IPv4-mapped `::ffff:127.x.y.z` (a dual-stack
 * socket connects to the IPv4 address). Loopback carried any other way (translated, compatible, NAT64,
 * 6to4) is not: the kernel routes those IPv6 addresses to the network, so they are simply refused.
 */
export function isLoopbackAddress(address: string): boolean {
  const parsed = parse(address);
  if (!parsed) return false;
  if (parsed.kind() === 'ipv4') return parsed.range() === 'loopback';
  const v6 = parsed as ipaddr.IPv6;
  return v6.range() === 'loopback' || (v6.isIPv4MappedAddress() && v6.toIPv4Address().range() === 'loopback');
}

export function isAllowedProfileAddress(address: string, options: { allowLoopback: boolean }): boolean {
  if (isLoopbackAddress(address)) return options.allowLoopback;
  const parsed = parse(address);
  if (!parsed) return false;
  const judged = parsed.kind() === 'ipv6' ? (carriedIPv4(parsed as ipaddr.IPv6) ?? parsed) : parsed;
  return judged.range() === 'unicast';
}
