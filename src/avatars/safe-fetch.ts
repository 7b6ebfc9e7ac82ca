/**
 * Fetching a profile's image from its origin without letting the URL aim the service at its own
 * network (docs/security.md, "Avatar originals"). Each hop of the fetch (the URL, then at most
 * three redirects):
 *
 * - http or https only, no credentials in the URL;
 * - every address the host name resolves to is checked by the address policy, and the socket
 *   connects to the address that was checked: the request's `lookup` hands Node that address, so
 *   no second DNS query (which a rebinding name server could answer differently) is made;
 * - an IP-literal host (in any spelling: the URL parser has made it canonical) is checked as it is.
 *
 * The fetch as a whole ends at its deadline; a body longer than the byte cap is not read to the
 * end: the connection is destroyed as soon as the cap is passed (or at once, when Content-Length
 * says so). Connections are never pooled, so no socket outlives its checked hop.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import type { AddressPolicy } from './address-policy.js';

const MAX_REDIRECTS = 3;

/** Why a fetch gave no image bytes. */
export type FetchFailure =
  /** The URL or a redirect's: not a URL, another scheme than http(s), or credentials in it. */
  | 'refused-url'
  /** An address the policy refuses: the host's, one its name resolves to, or a redirect's. */
  | 'refused-address'
  /** Not answered in time (the whole fetch, redirects included). */
  | 'timeout'
  /** More bytes than the cap, declared or sent. */
  | 'too-large'
  /** An answer other than 200 that is not a redirect to follow, or a redirect to no URL. */
  | 'http-error'
  /** More redirects than MAX_REDIRECTS. */
  | 'redirect-limit'
  /** The host name not resolved, or the connection refused, reset or closed before the body's end. */
  | 'network-error';

export class OriginFetchError extends Error {
  constructor(
    readonly failure: FetchFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'OriginFetchError';
  }
}

/** The addresses of a host name, as `dns.lookup(name, { all: true })` gives them. */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

export interface SafeFetchOptions {
  readonly policy: AddressPolicy;
  /** Deadline of the whole fetch, redirects included. */
  readonly timeoutMs: number;
  /** The most body bytes read; a longer body fails the fetch as `too-large`. */
  readonly maxBytes: number;
  /** Host name resolution (tests replace it); the system resolver by default. */
  readonly resolve?: Resolver;
  /** Ends the fetch early (the caller gave up). */
  readonly signal?: AbortSignal;
}

export interface FetchedOriginal {
  readonly body: Buffer;
  /** The URL the bytes came from (after redirects). */
  readonly url: string;
  readonly redirects: number;
}

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** The body of `url` at a public address, or an OriginFetchError saying why not. */
export async function safeFetch(url: string, options: SafeFetchOptions): Promise<FetchedOriginal> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? deadline : AbortSignal.any([deadline, options.signal]);
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const target = checkedUrl(current);
    const address = await checkedAddress(target, options, signal);
    const answer = await request(target, address, options.maxBytes, signal, deadline);
    if (answer.kind === 'body') return { body: answer.body, url: target.href, redirects };
    if (redirects === MAX_REDIRECTS) {
      throw new OriginFetchError('redirect-limit', `more than ${MAX_REDIRECTS} redirects from ${hostOf(url)}`);
    }
    current = resolveRedirect(answer.location, target);
  }
}

function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : '(not a URL)';
}

function checkedUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OriginFetchError('refused-url', 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OriginFetchError('refused-url', `scheme ${url.protocol} refused (http and https only)`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new OriginFetchError('refused-url', `credentials in the URL refused (host ${url.host})`);
  }
  return url;
}

function resolveRedirect(location: string, base: URL): string {
  try {
    return new URL(location, base).href;
  } catch {
    throw new OriginFetchError('http-error', `redirect from ${base.host} to something that is not a URL`);
  }
}

/** The address to connect to: the literal, or the first the name resolves to, all checked. */
async function checkedAddress(
  url: URL,
  options: SafeFetchOptions,
  signal: AbortSignal,
): Promise<{ address: string; family: number }> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = net.isIP(host);
  if (literal !== 0) {
    if (!options.policy.allows(host)) throw new OriginFetchError('refused-address', `address ${host} refused`);
    return { address: host, family: literal };
  }
  const resolve = options.resolve ?? systemResolver;
  let addresses: ReadonlyArray<{ address: string; family: number }>;
  try {
    addresses = await abortable(resolve(host), signal);
  } catch (error) {
    if (signal.aborted) throw timeoutOrAbort(signal);
    throw new OriginFetchError('network-error', `host ${host} not resolved`, { cause: error });
  }
  const first = addresses[0];
  if (first === undefined) throw new OriginFetchError('network-error', `host ${host} has no address`);
  // Every address: a name with one public and one private address must not get through.
  const refused = addresses.find(({ address }) => !options.policy.allows(address));
  if (refused !== undefined) {
    throw new OriginFetchError('refused-address', `host ${host} resolves to refused address ${refused.address}`);
  }
  return first;
}

function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function timeoutOrAbort(signal: AbortSignal): OriginFetchError {
  const reason: unknown = signal.reason;
  const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError';
  return new OriginFetchError(
    timedOut ? 'timeout' : 'network-error',
    timedOut ? 'no answer in time' : 'fetch abandoned',
  );
}

type HopAnswer = { kind: 'body'; body: Buffer } | { kind: 'redirect'; location: string };

/** One request to the checked address; a redirect is returned, not followed. */
function request(
  url: URL,
  checked: { address: string; family: number },
  maxBytes: number,
  signal: AbortSignal,
  deadline: AbortSignal,
): Promise<HopAnswer> {
  // Whatever name Node asks about, the answer is the address that was checked.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all === true) callback(null, [checked]);
    else callback(null, checked.address, checked.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<HopAnswer>((resolve, reject) => {
    const fail = (error: OriginFetchError) => {
      req.destroy();
      reject(error);
    };
    const req = client.request(url, {
      method: 'GET',
      agent: false,
      lookup,
      signal,
      headers: {
        Accept: 'image/avif,image/webp,image/png,image/jpeg,image/*;q=0.8',
        'User-Agent': 'name-profile-service avatars',
      },
    });
    const failed = (error: Error) =>
      signal.aborted
        ? timeoutOrAbort(deadline.aborted ? deadline : signal)
        : new OriginFetchError('network-error', `${url.host}: ${error.message}`, { cause: error });
    req.once('error', (error) => reject(failed(error)));
    req.once('response', (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status >= 300 && status < 400 && status !== 304 && location !== undefined) {
        res.destroy();
        resolve({ kind: 'redirect', location });
        return;
      }
      if (status !== 200) {
        fail(new OriginFetchError('http-error', `${url.host} answered ${status}`));
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        fail(new OriginFetchError('too-large', `${url.host} declared ${declared} bytes (cap ${maxBytes})`));
        return;
      }
      readCapped(res, maxBytes, Number.isFinite(declared) ? declared : undefined, url, resolve, fail);
      res.once('error', (error) => fail(failed(error)));
      res.once('close', () => {
        if (!res.complete) fail(failed(new Error('connection closed before the end of the body')));
      });
    });
    req.end();
  });
}

function readCapped(
  res: http.IncomingMessage,
  maxBytes: number,
  declared: number | undefined,
  url: URL,
  resolve: (answer: HopAnswer) => void,
  fail: (error: OriginFetchError) => void,
): void {
  // With a declared length (at most the cap, checked above) the bytes go straight into one buffer
  // of that size: each chunk is then garbage at once, and no second copy of the whole original is
  // made (an original is hundreds of kilobytes, and the memory the collector sees churning is what
  // brings on its full pauses). Without one, chunks are gathered and joined at the end.
  const body = declared === undefined ? undefined : Buffer.allocUnsafe(declared);
  const chunks: Buffer[] = [];
  let length = 0;
  let failed = false;
  res.on('data', (chunk: Buffer) => {
    if (failed) return;
    const next = length + chunk.length;
    // Not read to the end: the connection goes as soon as the cap is passed.
    if (next > maxBytes) failed = true;
    // Node's parser ends a body at its Content-Length, so this cannot happen; never written past.
    else if (body !== undefined && next > body.length) failed = true;
    if (failed) {
      fail(new OriginFetchError('too-large', `${url.host} sent more than ${body?.length ?? maxBytes} bytes`));
      return;
    }
    if (body === undefined) chunks.push(chunk);
    else chunk.copy(body, length);
    length = next;
  });
  res.once('end', () => {
    if (failed) return;
    // Never the unwritten tail of the buffer, should the body have ended short of its length.
    const whole = body === undefined ? Buffer.concat(chunks, length) : body.subarray(0, length);
    resolve({ kind: 'body', body: whole });
  });
}
