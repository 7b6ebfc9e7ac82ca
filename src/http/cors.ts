/**
 * The one CORS policy of the service, for every route that browsers may call (`/api/…`,
 * `/graphql`, WebFinger): any origin, no credentials (the API has none to share), the same
 * exposed headers everywhere, and preflights answered for a day.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setEarlyHeader } from './service-response.js';

/** Response headers a browser script may read. */
const EXPOSED_HEADERS = [
  'ETag',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'X-Request-Id',
] as const;

/**
 * Request headers a browser script may send beyond the CORS-safelisted ones: W3C trace context
 * and baggage (browser instrumentation adds them to every request; a preflight that does not
 * allow them fails the request), and the API key's headers.
 */
const ALLOWED_HEADERS = [
  'Content-Type',
  'If-None-Match',
  'X-Request-Id',
  'traceparent',
  'tracestate',
  'baggage',
  'Authorization',
  'X-API-Key',
] as const;

const EXPOSE = EXPOSED_HEADERS.join(', ');
const ALLOW_HEADERS = ALLOWED_HEADERS.join(', ');
const PREFLIGHT_MAX_AGE_SECONDS = '86400';

/** Adds the policy's headers to an answer of a CORS route. */
export function applyCors(res: ServerResponse): void {
  setEarlyHeader(res, 'Access-Control-Allow-Origin', '*');
  setEarlyHeader(res, 'Access-Control-Expose-Headers', EXPOSE);
}

export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}

export function answerPreflight(res: ServerResponse, methods: readonly string[]): void {
  const allowed = methods.join(', ');
  res.writeHead(204, {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Methods': allowed,
    'Access-Control-Allow-Headers': ALLOW_HEADERS,
    'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
    Allow: allowed,
  });
  res.end();
}
