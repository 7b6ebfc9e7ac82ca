/**
 * A 200 with a strong ETag, or its 304: the answer of every lookup whose body is public data
 * (profile, vCard, generated avatar, discovery pages). The body is sent in the coding the client
 * negotiates, and the ETag is that coding's (src/http/compression.ts), on the 200 and the 304;
 * a body in a compressed format of its own (an image) is sent as it is.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { codingOf, etagFor, isCompressible, sendEncoded, varyWithEncoding } from '../http/compression.js';
import { matchesIfNoneMatch } from '../http/conditional.js';
import { sendBody, sendError, sendNotModified } from '../http/respond.js';
import type { RateLimitDecision } from '../limits/rate-limit.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

export interface ValidatedAnswer {
  /** The ETag of the identity body. */
  readonly etag: string;
  /** On the 200 and the 304: Cache-Control, tags, rate limits (the ETag is added). */
  readonly validators: OutgoingHttpHeaders;
  readonly body: string | Buffer;
  /** On the 200 only: Content-Type and the like. */
  readonly contentHeaders: OutgoingHttpHeaders;
}

export function sendValidated(req: IncomingMessage, res: ServerResponse, answer: ValidatedAnswer): void {
  // An image (JPEG, PNG, WebP) is compressed already: one body, one ETag, whatever the coding.
  if (!isCompressible(String(answer.contentHeaders['Content-Type']))) {
    const validators = { ...answer.validators, ETag: answer.etag };
    if (matchesIfNoneMatch(req, answer.etag)) sendNotModified(res, validators);
    else sendBody(req, res, 200, answer.body, { ...validators, ...answer.contentHeaders });
    return;
  }
  const etag = etagFor(answer.etag, codingOf(req));
  if (matchesIfNoneMatch(req, etag)) {
    sendNotModified(res, { ...answer.validators, ETag: etag, Vary: varyWithEncoding(answer.validators.Vary) });
    return;
  }
  sendEncoded(req, res, answer.body, { ...answer.validators, ...answer.contentHeaders }, answer.etag);
}

/** A name's public document as found: the body and its validator. */
export interface FoundDocument {
  readonly etag: string;
  readonly body: string | Buffer;
  readonly contentHeaders: OutgoingHttpHeaders;
}

/**
 * The answer of a lookup of one name (profile, vCard): 404 when the name has no profile, else the
 * document with its caching headers, or its 304. Both carry the rate-limit headers; the 404 the
 * caching headers of a missing name (shared caches keep it only while they are purged).
 */
export function sendFoundDocument(
  req: IncomingMessage,
  res: ServerResponse,
  found: FoundDocument | null,
  caching: { rateLimit: RateLimitDecision | undefined; cacheHeaders: (found: boolean) => OutgoingHttpHeaders },
): void {
  const headers = rateLimitHeaders(caching.rateLimit);
  if (found === null) {
    sendError(req, res, 404, 'Profile not found', { ...headers, ...caching.cacheHeaders(false) });
    return;
  }
  sendValidated(req, res, {
    ...found,
    validators: { ...headers, ...caching.cacheHeaders(true) },
  });
}
