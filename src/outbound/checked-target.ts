/**
 * Where a request to a URL taken from data may go (avatar originals, webhook endpoints): the URL
 * is read and its scheme and credentials checked, every address its host name resolves to is
 * checked by the address policy (./address-policy.ts), and the connection is pinned to the
 * address that was checked: the request's `lookup` hands Node that address, so no second DNS
 * query (which a rebinding name server could answer differently) is made. An IP-literal host, in
 * any spelling (the URL parser has made it canonical), is checked as it is.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import type { AddressPolicy } from './address-policy.js';

/** Why a request to a URL taken from data failed or was refused. */
export type OutboundFailure =
  /** Not a URL, a scheme not allowed, or credentials in it. */
  | 'refused-url'
  /** An address the policy refuses: the host's, one its name resolves to, or a redirect's. */
  | 'refused-address'
  /** Not answered in time. */
  | 'timeout'
  /** More bytes than the cap, declared or sent. */
  | 'too-large'
  /** An answer other than the one wanted (a status, a redirect to no URL). */
  | 'http-error'
  /** More redirects than allowed. */
  | 'redirect-limit'
  /** The host name not resolved, or the connection refused, reset or closed too early. */
  | 'network-error';

export class OutboundError extends Error {
  constructor(
    readonly failure: OutboundFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

/** The addresses of a host name, as `dns.lookup(name, { all: true })` gives them. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface CheckedAddress {
  address: string;
  family: number;
}

/** A URL of an allowed scheme without credentials, or an OutboundError saying why not. */
export function checkedUrl(text: string, schemes: readonly string[] = ['http:', 'https:']): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutboundError('refused-url', 'not a URL');
  }
  if (!schemes.includes(url.protocol)) {
    throw new OutboundError('refused-url', `scheme ${url.protocol} refused (${schemes.join(' or ')} only)`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new OutboundError('refused-url', `credentials in the URL refused (host ${url.host})`);
  }
  return url;
}

/** The address to connect to: the literal, or the first the name resolves to, all checked. */
export async function checkedAddress(
  url: URL,
  policy: AddressPolicy,
  signal: AbortSignal,
  resolve: Resolver = systemResolver,
): Promise<CheckedAddress> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = net.isIP(host);
  if (literal !== 0) {
    if (!policy.allows(host)) throw new OutboundError('refused-address', `address ${host} refused`);
    return { address: host, family: literal };
  }
  let addresses: ReadonlyArray<CheckedAddress>;
  try {
    addresses = await abortable(resolve(host), signal);
  } catch (error) {
    if (signal.aborted) throw timeoutOrAbort(signal);
    throw new OutboundError('network-error', `host ${host} not resolved`, { cause: error });
  }
  const first = addresses[0];
  if (first === undefined) throw new OutboundError('network-error', `host ${host} has no address`);
  // Every address: a name with one public and one private address must not get through.
  const refused = addresses.find(({ address }) => !policy.allows(address));
  if (refused !== undefined) {
    throw new OutboundError('refused-address', `host ${host} resolves to refused address ${refused.address}`);
  }
  return first;
}

/** A `lookup` for node:http that answers, whatever name Node asks about, the address that was checked. */
export function pinnedLookup(checked: CheckedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all === true) callback(null, [checked]);
    else callback(null, checked.address, checked.family);
  };
}

function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The failure of a request whose signal ended it: its deadline, or its caller giving up. */
export function timeoutOrAbort(signal: AbortSignal): OutboundError {
  const reason: unknown = signal.reason;
  const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError';
  return new OutboundError(
    timedOut ? 'timeout' : 'network-error',
    timedOut ? 'no answer in time' : 'request abandoned',
  );
}
