/**
 * What kind of address an IP is, for the egress guard: parsed by `ipaddr.js`
 * (never by a regex), IPv6 forms that embed an IPv4 address (mapped, NAT64,
 * 6to4) classified as the embedded address, ranges held in `node:net`
 * BlockLists.
 */
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** `public` is the only class the guard lets through without an `EGRESS_ALLOW` entry. */
export type AddressClass = 'loopback' | 'private' | 'link_local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved' | 'public';

type Family = 'ipv4' | 'ipv6';

/** Checked in this order: metadata before link-local (169.254.169.254 is both). */
const RANGES: readonly (readonly [AddressClass, Family, string, number])[] = [
  ['metadata', 'ipv4', '169.254.169.254', 32],
  ['metadata', 'ipv4', '100.100.100.200', 32], // Alibaba Cloud
  ['metadata', 'ipv6', 'fd00:ec2::254', 128], // AWS over IPv6
  ['unspecified', 'ipv4', '0.0.0.0', 8],
  ['unspecified', 'ipv6', '::', 128],
  ['loopback', 'ipv4', '127.0.0.0', 8],
  ['loopback', 'ipv6', '::1', 128],
  ['private', 'ipv4', '10.0.0.0', 8],
  ['private', 'ipv4', '172.16.0.0', 12],
  ['private', 'ipv4', '192.168.0.0', 16],
  ['private', 'ipv4', '100.64.0.0', 10], // carrier-grade NAT
  ['private', 'ipv6', 'fc00::', 7],
  ['link_local', 'ipv4', '169.254.0.0', 16],
  ['link_local', 'ipv6', 'fe80::', 10],
  ['multicast', 'ipv4', '224.0.0.0', 4],
  ['multicast', 'ipv6', 'ff00::', 8],
  ['reserved', 'ipv4', '192.0.0.0', 24],
  ['reserved', 'ipv4', '192.0.2.0', 24],
  ['reserved', 'ipv4', '198.18.0.0', 15], // benchmarking
  ['reserved', 'ipv4', '198.51.100.0', 24],
  ['reserved', 'ipv4', '203.0.113.0', 24],
  ['reserved', 'ipv4', '240.0.0.0', 4], // includes 255.255.255.255
  ['reserved', 'ipv6', '2001:db8::', 32],
  ['reserved', 'ipv6', '2001::', 32], // Teredo: tunnels to an address we cannot see
  ['reserved', 'ipv6', '100::', 64], // discard-only
];

const LISTS: readonly (readonly [AddressClass, BlockList])[] = (() => {
  const byClass = new Map<AddressClass, BlockList>();
  for (const [kind, family, network, prefix] of RANGES) {
    const list = byClass.get(kind) ?? new BlockList();
    list.addSubnet(network, prefix, family);
    byClass.set(kind, list);
  }
  return [...byClass.entries()];
})();

/** The IPv4 address an IPv6 one carries (::ffff:a.b.c.d, ::ffff:0:a.b.c.d, 64:ff9b::/96, 2002::/16), else null. */
function embeddedIpv4(address: ipaddr.IPv6): string | null {
  const range = address.range();
  const bytes = address.toByteArray();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || range === 'rfc6052') return bytes.slice(12).join('.');
  if (range === '6to4') return bytes.slice(2, 6).join('.');
  return null;
}

/**
 * The address to judge: IPv4 as is, IPv6 normalized (zone dropped), or the
 * IPv4 address an IPv6 form embeds. Null when `ip` is not an IP address.
 */
export function canonicalAddress(ip: string): { address: string; family: Family } | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (isIP(bare.split('%')[0] ?? '') === 0) return null;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return { address: parsed.toString(), family: 'ipv4' };
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIpv4(v6);
  if (embedded !== null) return { address: embedded, family: 'ipv4' };
  return { address: new ipaddr.IPv6(v6.parts).toString(), family: 'ipv6' }; // without a zone id
}

/** Classifies an IP address (any spelling `node:net` accepts); null when `ip` is not one. */
export function classifyAddress(ip: string): AddressClass | null {
  const canonical = canonicalAddress(ip);
  if (canonical === null) return null;
  for (const [kind, list] of LISTS) if (list.check(canonical.address, canonical.family)) return kind;
  return 'public';
}
