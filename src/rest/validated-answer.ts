/**
 * A 200 with a strong ETag, or its 304: the answer of every lookup whose body is public data
 * (profile, vCard, generated avatar, discovery pages).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { matchesIfNoneMatch } from '../http/conditional.js';
import { sendBody, sendError, sendNotModified } from '../http/respond.js';
import type { RateLimitDecision } from '../limits/rate-limit.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

export interface ValidatedAnswer {
  readonly etag: string;
  /** On the 200 and the 304: ETag, Cache-Control, rate limits. */
  readonly validators: OutgoingHttpHeaders;
  readonly body: string | Buffer;
  /** On the 200 only: Content-Type and the like. */
  readonly contentHeaders: OutgoingHttpHeaders;
}

export function sendValidated(req: IncomingMessage, res: ServerResponse, answer: ValidatedAnswer): void {
  if (matchesIfNoneMatch(req, answer.etag)) sendNotModified(res, answer.validators);
  else sendBody(req, res, 200, answer.body, { ...answer.validators, ...answer.contentHeaders });
}

/** A name's public document as found: the body and its validator. */
export interface FoundDocument {
  readonly etag: string;
  readonly body: string | Buffer;
  readonly contentHeaders: OutgoingHttpHeaders;
}

/**
 * The answer of a lookup of one name (profile, vCard): 404 when the name has no profile, else the
 * document with the profile `Cache-Control`, or its 304. Both carry the rate-limit headers.
 */
export function sendFoundDocument(
  req: IncomingMessage,
  res: ServerResponse,
  found: FoundDocument | null,
  caching: { rateLimit: RateLimitDecision | undefined; cacheControl: string },
): void {
  const headers = rateLimitHeaders(caching.rateLimit);
  if (found === null) {
    sendError(req, res, 404, 'Profile not found', headers);
    return;
  }
  sendValidated(req, res, {
    ...found,
    validators: { ...headers, ETag: found.etag, 'Cache-Control': caching.cacheControl },
  });
}
