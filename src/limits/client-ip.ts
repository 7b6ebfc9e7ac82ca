/**
 * Who is asking: the address rate limits are counted against.
 *
 * By default that is the socket's peer address, which a client cannot choose. Behind reverse
 * proxies the operator sets TRUST_PROXY_HOPS to the number of proxies in front of the service;
 * each of them appends the address it received the request from to `X-Forwarded-For`, so the
 * Nth entry from the right is the address the outermost trusted proxy saw. Entries further left
 * were written by the client and are never used.
 */
import type { IncomingMessage } from 'node:http';
import { isIP, SocketAddress } from 'node:net';

/** Used when the socket has already lost its peer address (a client that hung up). */
export const UNKNOWN_CLIENT = 'unknown';

export function clientIp(req: IncomingMessage, trustProxyHops: number): string {
  const peer = normaliseIp(req.socket.remoteAddress ?? '') ?? UNKNOWN_CLIENT;
  if (trustProxyHops <= 0) return peer;

  const entries = forwardedFor(req.headers['x-forwarded-for']);
  if (entries.length === 0) return peer;
  // Fewer entries than trusted hops: the request skipped a proxy; the leftmost entry is the
  // furthest address known.
  const chosen = entries[Math.max(0, entries.length - trustProxyHops)] ?? '';
  return normaliseIp(chosen) ?? peer;
}

/** All `X-Forwarded-For` entries in order; several header lines count as one list. */
function forwardedFor(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const lines = Array.isArray(header) ? header : [header];
  return lines
    .flatMap((line) => line.split(','))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/**
 * The address in the form rate limits are keyed by, or undefined when `text` is not an IP
 * address. Accepts what proxies write besides a bare address: an IPv4 address with a port,
 * a bracketed IPv6 address with or without a port. IPv4-mapped IPv6 (`::ffff:1.2.3.4`, what a
 * dual-stack socket reports for IPv4 clients) becomes plain IPv4; IPv6 is lower-cased and
 * compressed so one address has one spelling.
 */
export function normaliseIp(text: string): string | undefined {
  const address = stripPort(text.trim());
  if (address === undefined) return undefined;
  const version = isIP(address);
  if (version === 4) return address;
  if (version !== 6) return undefined;
  const canonical = canonicalIpv6(address);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(canonical);
  return mapped?.[1] ?? canonical;
}

/** The address part of `[v6]`, `[v6]:port` or `v4:port`; undefined when the port is not a port. */
function stripPort(text: string): string | undefined {
  const withPort = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text) ?? /^(\d+\.\d+\.\d+\.\d+):(\d{1,5})$/.exec(text);
  if (withPort === null) return text;
  const [, address, port] = withPort;
  if (port !== undefined && Number(port) > 65_535) return undefined;
  return address;
}

/**
 * Canonical text of an IPv6 address (lower case, compressed, IPv4-mapped in dotted form), as
 * node's own address parser prints it. It also drops a zone (`fe80::1%eth0`), which names an
 * interface of this machine, not a different client.
 */
function canonicalIpv6(address: string): string {
  return new SocketAddress({ address, family: 'ipv6' }).address;
}
