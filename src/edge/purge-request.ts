/**
 * The purge request to one cache: `PURGE <base URL>/` with the tags in an `xkey` header, as the
 * shipped VCL (deploy/varnish/default.vcl) and Varnish's xkey vmod take it. This module is the one place the
 * service sends anything to a shared cache, and it guards what it sends:
 *
 * - only to the configured base URLs (CACHE_PURGE_URLS), never to an address taken from an
 *   answer: redirects are not followed (a 3xx is a failure), and no request carries a body;
 * - tags are printable ASCII without spaces or commas (./tags.ts percent-encodes names); any
 *   other tag is refused before sending, so nothing can add a tag, a header line or a request
 *   to a purge;
 * - one request's tags stay under the cache's header line limit (several requests otherwise);
 * - every request has a deadline, and the cache's answer body is not read beyond its status.
 *
 * A purge succeeded when the cache answered 2xx; anything else throws, with the cache, the status
 * or the cause, and the purger retries.
 */
import { MAX_TAG_HEADER_BYTES } from './edge-caching.js';

const PURGE_TIMEOUT_MS = 2000;

const VALID_TAG = /^[\x21-\x2b\x2d-\x7e]{1,1000}$/;

export class PurgeError extends Error {}

/** The tags as header values of at most MAX_TAG_HEADER_BYTES each; throws on a tag that is not safe. */
export function tagHeaderValues(tags: readonly string[]): string[] {
  const values: string[] = [];
  let current = '';
  for (const tag of tags) {
    if (!VALID_TAG.test(tag))
      throw new PurgeError(
        `refused to purge a tag with spaces, commas or control characters: ${JSON.stringify(tag.slice(0, 80))}`,
      );
    if (current !== '' && current.length + 1 + tag.length > MAX_TAG_HEADER_BYTES) {
      values.push(current);
      current = '';
    }
    current = current === '' ? tag : `${current} ${tag}`;
  }
  if (current !== '') values.push(current);
  return values;
}

/** Sends the purge of `tags` to the cache at `baseUrl` (one of CACHE_PURGE_URLS). */
export async function sendPurge(
  baseUrl: string,
  tags: readonly string[],
  timeoutMs: number = PURGE_TIMEOUT_MS,
): Promise<void> {
  const url = `${baseUrl}/`;
  for (const value of tagHeaderValues(tags)) {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'PURGE',
        headers: { xkey: value },
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new PurgeError(`purge at ${url} failed: ${(error as Error).message}`, { cause: error });
    }
    await response.body?.cancel().catch(() => {});
    if (response.status < 200 || response.status > 299) {
      throw new PurgeError(`purge at ${url} answered ${response.status}`);
    }
  }
}
