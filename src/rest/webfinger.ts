/**
 * `GET /.well-known/webfinger?resource=acct:<name_id>&rel=…` (RFC 7033): the WebFinger service's
 * JRD, open to any origin (RFC 7033 §5 asks for `Access-Control-Allow-Origin: *`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendBody, sendError } from '../http/respond.js';
import type { Router } from '../http/router.js';
import { serviceRequestFor } from '../http/service-request.js';
import { sendServiceError } from './error-responses.js';
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import type { RestDependencies } from './routes.js';

export const WEBFINGER_PATH = '/.well-known/webfinger';
export const JRD_CONTENT_TYPE = 'application/jrd+json';

export function registerWebFingerRoute(router: Router, deps: RestDependencies): void {
  router.on(['GET', 'HEAD'], WEBFINGER_PATH, (req, res) => void webfinger(req, res, deps), { cors: true });
}

async function webfinger(req: IncomingMessage, res: ServerResponse, deps: RestDependencies): Promise<void> {
  const request = serviceRequestFor(req, res, deps.config.trustProxyHops);
  const query = queryOf(req);
  try {
    const { value: jrd, rateLimit } = await deps.webfinger.lookup(request, {
      resource: query.getAll('resource'),
      rel: query.getAll('rel'),
    });
    const headers = rateLimitHeaders(rateLimit);
    if (jrd === null) {
      sendError(req, res, 404, 'Profile not found', headers);
      return;
    }
    sendBody(req, res, 200, JSON.stringify(jrd), {
      ...headers,
      'Cache-Control': deps.config.profileCacheControl,
      'Content-Type': JRD_CONTENT_TYPE,
    });
  } catch (error) {
    sendServiceError(req, res, error, {}, deps.logger);
  }
}
