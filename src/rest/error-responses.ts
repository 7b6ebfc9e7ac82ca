/**
 * How the service's errors become REST answers: the status code and body of the contract, with
 * `Retry-After` where a client should come back later and the RateLimit-* headers whenever
 * the failed call drew on a budget. Anything that is not a service error is a 500 without
 * details, logged once with the request id.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { requestIdOfAnswer } from '../http/request-id.js';
import { sendError, sendJson } from '../http/respond.js';
import type { Logger } from '../logging/logger.js';
import {
  asServiceError,
  CursorExpiredError,
  describeFailure,
  INTERNAL_SERVER_ERROR_MESSAGE,
  InvalidInputError,
  RateLimitedError,
  type ServiceError,
  UnavailableError,
} from '../service/errors.js';
import { ApiKeyRequiredError, TooManyWebhooksError, WebhookNotFoundError } from '../service/webhooks.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

interface ErrorAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: OutgoingHttpHeaders;
}

function answerFor(error: ServiceError): ErrorAnswer {
  const headers = rateLimitHeaders(error.rateLimit);
  if (error instanceof RateLimitedError || error instanceof UnavailableError) {
    const status = error instanceof RateLimitedError ? 429 : 503;
    return { status, body: { error: error.message }, headers: { ...headers, 'Retry-After': error.retryAfterSeconds } };
  }
  if (error instanceof CursorExpiredError) return { status: 410, body: { error: error.message }, headers };
  if (error instanceof ApiKeyRequiredError) {
    // As the answer to a refused key says it: send a valid key (src/http/api-key-guard.ts).
    return { status: 401, body: { error: error.message }, headers: { ...headers, 'WWW-Authenticate': 'Bearer' } };
  }
  if (error instanceof WebhookNotFoundError) return { status: 404, body: { error: error.message }, headers };
  if (error instanceof TooManyWebhooksError) return { status: 409, body: { error: error.message }, headers };
  // A batch names the first invalid name, as the client gave it.
  const name = error instanceof InvalidInputError ? error.details.name : undefined;
  return {
    status: 400,
    body: typeof name === 'string' ? { error: error.message, name } : { error: error.message },
    headers,
  };
}

export function sendServiceError(
  req: IncomingMessage,
  res: ServerResponse,
  error: unknown,
  headers: OutgoingHttpHeaders,
  logger: Logger,
): void {
  const serviceError = asServiceError(error);
  if (serviceError === undefined) {
    // The innermost cause only: Drizzle's wrapper repeats the SQL and its parameters.
    logger.error({ requestId: requestIdOfAnswer(res), reason: describeFailure(error) }, 'REST request failed');
    if (res.headersSent) res.destroy();
    else sendError(req, res, 500, INTERNAL_SERVER_ERROR_MESSAGE, headers);
    return;
  }
  const answer = answerFor(serviceError);
  sendJson(req, res, answer.status, answer.body, { ...headers, ...answer.headers });
}
