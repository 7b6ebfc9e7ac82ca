/**
 * Which addresses a request the service makes to a URL taken from data may connect to: public
 * unicast addresses only, unless the operator lets a network through (AVATAR_PRIVATE_ORIGINS for
 * avatar originals, WEBHOOK_PRIVATE_ORIGINS for webhook endpoints). This is the one guard that
 * keeps a profile's `image` URL or an app's webhook URL from aiming the service at its own network
 * (SSRF, docs/security.md); ./checked-target.ts applies it to a URL.
 *
 * Addresses are compared as addresses, never as text: whatever spelling reached us (`0x7f000001`,
 * `2130706433`, `0177.0.0.1`, `127.1`, `[::ffff:7f00:1]`) is read by the WHATWG URL parser into
 * its canonical form first, and Node's `net.BlockList` matches IPv4-mapped IPv6 addresses against
 * the IPv4 rules. Addresses that embed an IPv4 address by translation (NAT64, 6to4) are checked by
 * the address they embed.
 */
import net from 'node:net';
import type { Family, Network } from '../config/networks.js';

/** [network, prefix length, family]: every range an avatar fetch must never reach. */
const REFUSED_RANGES: ReadonlyArray<readonly [string, number, Family]> = [
  ['0.0.0.0', 8, 'ipv4'], // "this network", unspecified
  ['10.0.0.0', 8, 'ipv4'], // private
  ['100.64.0.0', 10, 'ipv4'], // CGNAT shared address space
  ['127.0.0.0', 8, 'ipv4'], // loopback
  ['169.254.0.0', 16, 'ipv4'], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12, 'ipv4'], // private
  ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments
  ['192.0.2.0', 24, 'ipv4'], // documentation (TEST-NET-1)
  ['192.88.99.0', 24, 'ipv4'], // 6to4 relay anycast
  ['192.168.0.0', 16, 'ipv4'], // private
  ['198.18.0.0', 15, 'ipv4'], // benchmarking
  ['198.51.100.0', 24, 'ipv4'], // documentation (TEST-NET-2)
  ['203.0.113.0', 24, 'ipv4'], // documentation (TEST-NET-3)
  ['224.0.0.0', 4, 'ipv4'], // multicast
  ['240.0.0.0', 4, 'ipv4'], // reserved, broadcast
  ['::', 96, 'ipv6'], // unspecified, loopback, IPv4-compatible
  ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64
  ['100::', 64, 'ipv6'], // discard
  ['2001::', 23, 'ipv6'], // IETF protocol assignments (Teredo, ORCHID, …)
  ['2001:db8::', 32, 'ipv6'], // documentation
  ['3fff::', 20, 'ipv6'], // documentation
  ['fc00::', 7, 'ipv6'], // unique-local
  ['fe80::', 10, 'ipv6'], // link-local
  ['fec0::', 10, 'ipv6'], // site-local (deprecated)
  ['ff00::', 8, 'ipv6'], // multicast
];

const REFUSED = blockListOf(REFUSED_RANGES);

export interface AddressPolicy {
  /** Whether a connection to `address` (an IP address in any spelling) is allowed. */
  allows(address: string): boolean;
  /** Whether `address` is in one of the networks the operator allowed (not merely public). */
  listed(address: string): boolean;
  /** The networks allowed besides public addresses: what the policy is made from again in another process. */
  readonly allowed: readonly Network[];
}

/** The policy: refused ranges, except the networks the operator allowed. */
export function createAddressPolicy(allowed: readonly Network[] = []): AddressPolicy {
  const allowList = blockListOf(allowed.map((network) => [network.address, network.prefix, network.family] as const));
  return {
    allowed: allowed.map((network) => ({ ...network })),
    allows(address) {
      const canonical = canonicalAddress(address);
      if (canonical === null) return false;
      const family: Family = net.isIPv4(canonical) ? 'ipv4' : 'ipv6';
      if (allowList.check(canonical, family)) return true;
      return !isRefused(canonical, family);
    },
    listed(address) {
      const canonical = canonicalAddress(address);
      if (canonical === null) return false;
      return allowList.check(canonical, net.isIPv4(canonical) ? 'ipv4' : 'ipv6');
    },
  };
}

/**
 * The canonical text of an IP address in any spelling the URL parser accepts (decimal, hex,
 * octal and shortened IPv4; IPv6 with or without brackets, with an embedded IPv4 part), or null
 * when `text` is not an IP address (a host name).
 */
export function canonicalAddress(text: string): string | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (net.isIPv6(bare)) return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  if (bare === '' || /[^0-9a-fx.]/i.test(bare)) return null;
  let hostname: string;
  try {
    hostname = new URL(`http://${bare}/`).hostname;
  } catch {
    return null;
  }
  return net.isIPv4(hostname) ? hostname : null;
}

function isRefused(address: string, family: Family): boolean {
  if (REFUSED.check(address, family)) return true;
  if (family === 'ipv6') {
    const embedded = embeddedIpv4(address);
    if (embedded !== null) return REFUSED.check(embedded, 'ipv4');
  }
  return false;
}

/** The IPv4 address a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address stands for, or null. */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (groups === null) return null;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
  if (nat64) return ipv4Of(groups[6] ?? 0, groups[7] ?? 0);
  if (groups[0] === 0x2002) return ipv4Of(groups[1] ?? 0, groups[2] ?? 0);
  return null;
}

function ipv4Of(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight 16-bit groups of a canonical IPv6 address (no embedded IPv4 part), or null. */
function expandIpv6(address: string): number[] | null {
  if (address.includes('.')) return null;
  const [head = '', tail] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailGroups];
  return groups.length === 8 ? groups.map((group) => Number.parseInt(group, 16)) : null;
}

function blockListOf(ranges: ReadonlyArray<readonly [string, number, Family]>): net.BlockList {
  const list = new net.BlockList();
  for (const [address, prefix, family] of ranges) list.addSubnet(address, prefix, family);
  return list;
}
