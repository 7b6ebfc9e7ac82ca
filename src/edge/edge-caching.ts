/**
 * What answers tell shared caches (CDNs, Varnish): how long they may keep them and under which
 * tags (./tags.ts). One per process.
 *
 * Without purging (no CACHE_PURGE_URLS) an answer says what it always said: the profile
 * `Cache-Control`, no `s-maxage`, no tags; nothing would tell a shared cache of a change.
 *
 * With purging, an answer may be kept by shared caches for `s-maxage` (a day by default), because
 * the purger drops it on every change. That holds only for answers computed from data at least
 * as new as every change the purger has purged or will purge after the answer is stored:
 *
 * - the answer's reads began while this process's change feed was live, and no change was heard
 *   between the start of its reads and its sending (every heard change moves the epoch). An
 *   answer computed around a change may show the old data and reach the cache after the purge;
 *   it goes out `private` instead, for browsers only;
 * - a change this process has not heard yet when it sends (it hears every change within about a
 *   second of its commit, or its feed is not live) is covered by the purger's second purge of the
 *   same tags, sent a little later than the first (./purge-queues.ts, SETTLE_MS).
 *
 * An answer cut to the client's remaining budget (a short search page), or whose tags would not
 * fit a cache's header limit, is not shareable either.
 *
 * Nor is any answer to a request with an API key, purging or not: its RateLimit headers are the
 * key's budget, which no other client may be shown. It goes out `private` with the `max-age`
 * browsers get of the same answer without a key, and without tags: no shared cache keeps it, so
 * there is nothing to purge.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { ALL_TAG } from './tags.js';

/** Shared caches' header lines are bounded (Varnish: 8 KB by default); both tag headers fit twice over. */
export const MAX_TAG_HEADER_BYTES = 4000;

/** Browsers keep answers at most this long when shared caches are purged: they are never purged. */
const MAX_BROWSER_AGE_WITH_PURGING = 300;

const NO_HEADERS: OutgoingHttpHeaders = Object.freeze({});
/** A keyed 404 without purging: others get no `max-age` for it, and it is for the key's client alone. */
const KEYED_MISSING: OutgoingHttpHeaders = Object.freeze({ 'Cache-Control': 'private' });

export interface EdgeCachingSettings {
  /** Whether a purger keeps shared caches fresh (CACHE_PURGE_URLS set). */
  purging: boolean;
  /** CACHE_MAX_AGE. */
  maxAgeSeconds: number;
  /** CACHE_SHARED_MAX_AGE. */
  sharedMaxAgeSeconds: number;
}

/**
 * What the caching headers depend on of a request: what it read, and whether it came with an API
 * key (the service's request, src/service/request.ts, is one).
 */
export interface EdgeRequest {
  readonly edge: EdgeReads | undefined;
  readonly apiKey?: object | undefined;
}

/**
 * Another answer's `Cache-Control` as an answer to a request with an API key gets it: `private`
 * instead of `public`, no `s-maxage`; the rest (`max-age`, `immutable`, `no-store`) as it was.
 */
export function keyedCacheControl(control: string): string {
  const directives = control
    .split(',')
    .map((directive) => directive.trim())
    .filter((directive) => directive !== '' && !/^(?:public|private|s-maxage\b.*)$/i.test(directive));
  return directives.some((directive) => /^no-store$/i.test(directive))
    ? directives.join(', ')
    : ['private', ...directives].join(', ');
}

/** What one request read, as far as shared caches care: its tags, and when it began reading. */
export class EdgeReads {
  readonly tags = new Set<string>([ALL_TAG]);
  shareable = true;

  constructor(readonly epoch: number) {}
}

export class EdgeCaching {
  private epoch = 0;
  private readonly publicControl: string;
  private readonly privateControl: string;
  private readonly plainHeaders: OutgoingHttpHeaders;
  private readonly keyedHeaders: OutgoingHttpHeaders;

  constructor(
    private readonly settings: EdgeCachingSettings,
    /** Whether this process's change feed vouches for having heard every change. */
    private readonly isLive: () => boolean,
  ) {
    const browserAge = settings.purging
      ? Math.min(settings.maxAgeSeconds, MAX_BROWSER_AGE_WITH_PURGING)
      : settings.maxAgeSeconds;
    // Shared by every answer without purging: callers copy headers, never change them.
    this.plainHeaders = Object.freeze({ 'Cache-Control': `public, max-age=${settings.maxAgeSeconds}` });
    this.publicControl = `public, max-age=${browserAge}, s-maxage=${settings.sharedMaxAgeSeconds}`;
    this.privateControl = `private, max-age=${browserAge}`;
    this.keyedHeaders = Object.freeze({ 'Cache-Control': this.privateControl });
  }

  /** `control` as an answer to a request with an API key gets it (keyedCacheControl). */
  keyed(control: string): string {
    return keyedCacheControl(control);
  }

  get purging(): boolean {
    return this.settings.purging;
  }

  /** A change was heard: answers whose reads began before it are no longer shareable. */
  changed(): void {
    this.epoch += 1;
  }

  /** The record of a request's reads, created before its first read; undefined without purging. */
  begin(existing: EdgeReads | undefined): EdgeReads | undefined {
    if (!this.settings.purging) return undefined;
    return existing ?? new EdgeReads(this.epoch);
  }

  /**
   * The caching headers of a public answer: `Cache-Control`, and with purging the tags (`xkey`
   * for Varnish, `Surrogate-Key` for Fastly-style caches). `found` false is a 404 of a name:
   * without purging it carries no caching headers, as before, unless the request has an API key.
   */
  headers(request: EdgeRequest | undefined, found = true): OutgoingHttpHeaders {
    if (request?.apiKey !== undefined) return found || this.settings.purging ? this.keyedHeaders : KEYED_MISSING;
    if (!this.settings.purging) return found ? this.plainHeaders : NO_HEADERS;
    const reads = request?.edge;
    const tags = [...(reads?.tags ?? [ALL_TAG])].join(' ');
    const vouched =
      this.isLive() &&
      (reads === undefined || (reads.shareable && reads.epoch === this.epoch)) &&
      tags.length <= MAX_TAG_HEADER_BYTES;
    if (!vouched) return { 'Cache-Control': this.privateControl };
    return { 'Cache-Control': this.publicControl, xkey: tags, 'Surrogate-Key': tags };
  }
}
