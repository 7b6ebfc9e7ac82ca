/**
 * What answers under /api/ when no route does: a 404 for any other path, and, for a path whose
 * percent-encoding cannot be decoded, the 400 a lookup gives an invalid parameter.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyCors } from '../http/cors.js';
import { sendError } from '../http/respond.js';
import { INVALID_NAME_MESSAGE } from '../names/name-id.js';
import { INVALID_ADDRESS_MESSAGE } from '../service/discovery.js';
import { WEBHOOK_NOT_FOUND_MESSAGE } from '../service/webhooks.js';
import { GET_HEAD, type RestRoute } from './route.js';

/**
 * Any other path under /api/ is a 404 for GET and HEAD; other methods get the 405 (and CORS
 * preflights) that the router gives every route for the methods it does not serve.
 */
export const unknownApiPathRoute: RestRoute = {
  pattern: '/api/*',
  methods: GET_HEAD,
  handler: () => (req, res) => sendError(req, res, 404, 'Not found'),
};

/**
 * A path under /api/ whose percent-encoding cannot be decoded names no valid name ID: a 400 for
 * a lookup, a 405 for other methods; and no webhook endpoint (whose ids are ASCII): a 404 for
 * any method. The router hands such URLs here (see RouterOptions).
 */
export function answerUndecodableApiUrl(req: IncomingMessage, res: ServerResponse): boolean {
  if (!req.url?.startsWith('/api/')) return false;
  applyCors(res);
  if (req.url.startsWith('/api/webhooks/')) {
    sendError(req, res, 404, WEBHOOK_NOT_FOUND_MESSAGE, { 'Cache-Control': 'no-store' });
  } else if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendError(req, res, 405, 'Method not allowed', { Allow: GET_HEAD.join(', ') });
  } else {
    // The only other parameter in an /api/ path is the reverse lookup's address.
    sendError(req, res, 400, req.url.startsWith('/api/wallet/') ? INVALID_ADDRESS_MESSAGE : INVALID_NAME_MESSAGE);
  }
  return true;
}
