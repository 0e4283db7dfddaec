/**
 * Which addresses the store may connect to when it fetches an agent profile: public unicast only. A
 * profile URL must not make the store reach into its own network (SSRF): private, loopback, link-local
 * (cloud metadata at 169.254.169.254), shared, multicast, reserved and documentation ranges are refused.
 * Loopback is allowed only in the test mode that also allows plain http (UCP_ALLOW_INSECURE_PROFILES).
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared (carrier-grade NAT)
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  refused.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  refused.addSubnet(network, prefix, 'ipv6');
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** The 16 bytes of an IPv6 address (zone id ignored, a trailing dotted quad allowed), or undefined. */
function ipv6Bytes(address: string): number[] | undefined {
  const plain = address.replace(/%.*$/, '');
  if (!isIPv6(plain)) return undefined;
  let text = plain.toLowerCase();
  const quad = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const hextets = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const left = hextets(head);
  const right = tail === undefined ? [] : hextets(tail);
  const groups = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  if (groups.length !== 8) return undefined;
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

const zero = (bytes: number[], from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);

/**
 * The IPv4 address an IPv6 one carries, judged in its place: IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
 * `::a.b.c.d` (not `::` or `::1`), NAT64 well-known prefix `64:ff9b::/96`, and 6to4 `2002:AABB:CCDD::/16`.
 */
export function embeddedIPv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  if (!bytes) return undefined;
  const v4 = (at: number) => bytes.slice(at, at + 4).join('.');
  if (zero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4(12); // ::ffff:0:0/96
  if (zero(bytes, 0, 12) && !(zero(bytes, 12, 15) && bytes[15]! <= 1)) return v4(12); // ::/96 except :: and ::1
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(bytes, 4, 12)) return v4(12); // 64:ff9b::/96
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4(2); // 2002::/16
  return undefined;
}

export function isLoopbackAddress(address: string): boolean {
  const v4 = isIPv4(address) ? address : embeddedIPv4(address);
  if (v4) return loopback.check(v4, 'ipv4');
  return isIPv6(address) && loopback.check(address, 'ipv6');
}

export function isAllowedProfileAddress(address: string, options: { allowLoopback: boolean }): boolean {
  if (isLoopbackAddress(address)) return options.allowLoopback;
  const v4 = isIPv4(address) ? address : embeddedIPv4(address);
  if (v4) return !refused.check(v4, 'ipv4');
  if (!isIPv6(address)) return false;
  return !refused.check(address, 'ipv6');
}
