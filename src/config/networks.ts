/**
 * The networks an operator lets outbound requests reach besides public addresses
 * (AVATAR_PRIVATE_ORIGINS, WEBHOOK_PRIVATE_ORIGINS), as settings: read here with the rest of the
 * configuration, applied by src/outbound/address-policy.ts.
 */
import net from 'node:net';

export type Family = 'ipv4' | 'ipv6';

/** A network of AVATAR_PRIVATE_ORIGINS, checked: `address/prefix` or a single address. */
export interface Network {
  readonly address: string;
  readonly prefix: number;
  readonly family: Family;
}

/**
 * A CIDR (`127.0.0.1/32`, `10.0.0.0/8`, `fd00::/8`) or a bare address, or null when it is
 * neither. The network address is taken as written; the prefix must fit the family.
 */
export function parseNetwork(text: string): Network | null {
  const [rawAddress, rawPrefix, ...rest] = text.trim().split('/');
  if (rest.length > 0 || rawAddress === undefined) return null;
  const version = net.isIP(rawAddress);
  if (version === 0) return null;
  const family: Family = version === 4 ? 'ipv4' : 'ipv6';
  const max = version === 4 ? 32 : 128;
  if (rawPrefix !== undefined && !/^\d{1,3}$/.test(rawPrefix)) return null;
  const prefix = rawPrefix === undefined ? max : Number(rawPrefix);
  return prefix <= max ? { address: rawAddress, prefix, family } : null;
}
