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

/** An IPv4 address carried in an IPv6 one (`::ffff:10.0.0.1`, `::10.0.0.1`) is judged as IPv4. */
function embeddedIPv4(address: string): string | undefined {
  const match = /^::(?:ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return match?.[1];
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
  return !refused.check(address, 'ipv6') && !/^::ffff:/i.test(address);
}
