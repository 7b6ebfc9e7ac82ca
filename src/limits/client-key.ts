/**
 * The key a client's budgets are counted under. An IPv4 address is one client. An IPv6 client
 * usually gets a whole /64 network from its provider and can pick any of its 2^64 addresses, so
 * counting per IPv6 address would give it a practically endless budget: IPv6 addresses are
 * counted per /64 network instead.
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { clientIp } from './client-ip.js';

const IPV6_GROUPS = 8;
const PREFIX_GROUPS = 4; // 4 groups of 16 bits: the /64 network part

/** The rate-limit key of the request's client (see clientIp for which address that is). */
export function rateLimitKey(req: IncomingMessage, trustProxyHops: number): string {
  return addressKey(clientIp(req, trustProxyHops));
}

/** `1.2.3.4` → `1.2.3.4`; `2001:db8:1:2:3:4:5:6` → `2001:db8:1:2::/64`; anything else unchanged. */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${expandIpv6(address).slice(0, PREFIX_GROUPS).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros. */
function expandIpv6(address: string): string[] {
  const withoutZone = address.replace(/%.*$/, '');
  const [head = '', tail] = withoutZone.split('::');
  const groupsOf = (part: string): string[] =>
    part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? ipv4AsGroups(group) : [group]));
  const headGroups = groupsOf(head);
  const tailGroups = tail === undefined ? [] : groupsOf(tail);
  const zeros = Array<string>(Math.max(0, IPV6_GROUPS - headGroups.length - tailGroups.length)).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((group) => Number.parseInt(group, 16).toString(16));
}

/** The embedded IPv4 tail of an address like `::ffff:1.2.3.4` as two hex groups. */
function ipv4AsGroups(ipv4: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = ipv4.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
