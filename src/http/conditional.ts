/**
 * Conditional GET: `If-None-Match` compared with an answer's ETag the way RFC 9110 says (weak
 * comparison, a list of tags, or `*`).
 */
import type { IncomingMessage } from 'node:http';

export function matchesIfNoneMatch(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  return ifNoneMatchHeaderMatches(header, etag);
}

/** The same comparison for a header value read elsewhere (a fetch API request, say). */
export function ifNoneMatchHeaderMatches(header: string | null | undefined, etag: string): boolean {
  if (header == null) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
  });
}
