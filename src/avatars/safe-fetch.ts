/**
 * Fetching a profile's image from its origin without letting the URL aim the service at its own
 * network (docs/security.md, "Avatar originals"). Each hop of the fetch (the URL, then at most
 * three redirects) goes through the outbound guard (src/outbound/checked-target.ts): http or
 * https only, no credentials, every address of the host checked by the address policy, and the
 * connection pinned to the address that was checked.
 *
 * The fetch as a whole ends at its deadline; a body longer than the byte cap is not read to the
 * end: the connection is destroyed as soon as the cap is passed (or at once, when Content-Length
 * says so). Connections are never pooled, so no socket outlives its checked hop.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressPolicy } from '../outbound/address-policy.js';
import {
  type CheckedAddress,
  checkedAddress,
  checkedUrl,
  OutboundError,
  pinnedLookup,
  type Resolver,
  timeoutOrAbort,
} from '../outbound/checked-target.js';

export { OutboundError, type OutboundFailure, type Resolver } from '../outbound/checked-target.js';

const MAX_REDIRECTS = 3;

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

/** The body of `url` at a public address, or an OutboundError saying why not. */
export async function safeFetch(url: string, options: SafeFetchOptions): Promise<FetchedOriginal> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal === undefined ? deadline : AbortSignal.any([deadline, options.signal]);
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const target = checkedUrl(current);
    const address = await checkedAddress(target, options.policy, signal, options.resolve);
    const answer = await request(target, address, options.maxBytes, signal, deadline);
    if (answer.kind === 'body') return { body: answer.body, url: target.href, redirects };
    if (redirects === MAX_REDIRECTS) {
      throw new OutboundError('redirect-limit', `more than ${MAX_REDIRECTS} redirects from ${hostOf(url)}`);
    }
    current = resolveRedirect(answer.location, target);
  }
}

function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : '(not a URL)';
}

function resolveRedirect(location: string, base: URL): string {
  try {
    return new URL(location, base).href;
  } catch {
    throw new OutboundError('http-error', `redirect from ${base.host} to something that is not a URL`);
  }
}

type HopAnswer = { kind: 'body'; body: Buffer } | { kind: 'redirect'; location: string };

/** One request to the checked address; a redirect is returned, not followed. */
function request(
  url: URL,
  checked: CheckedAddress,
  maxBytes: number,
  signal: AbortSignal,
  deadline: AbortSignal,
): Promise<HopAnswer> {
  const lookup = pinnedLookup(checked);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<HopAnswer>((resolve, reject) => {
    const fail = (error: OutboundError) => {
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
        : new OutboundError('network-error', `${url.host}: ${error.message}`, { cause: error });
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
        fail(new OutboundError('http-error', `${url.host} answered ${status}`));
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        fail(new OutboundError('too-large', `${url.host} declared ${declared} bytes (cap ${maxBytes})`));
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
  fail: (error: OutboundError) => void,
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
      fail(new OutboundError('too-large', `${url.host} sent more than ${body?.length ?? maxBytes} bytes`));
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
