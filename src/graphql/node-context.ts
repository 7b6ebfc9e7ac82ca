/**
 * The request context for a Node HTTP request: the one place that decides which client IP the
 * rate limits count against and which request id the logs carry. `/graphql` and the REST shim
 * both come through here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestIdOf } from '../http/request-id.js';
import { rateLimitKey } from '../limits/client-key.js';
import { createRequestContext, type GraphQLServices, type RequestContext } from './context.js';

/** The key of requests whose peer address is gone (the client hung up before we looked). */
export const UNKNOWN_CLIENT_IP = 'unknown';

export function contextForNodeRequest(
  services: GraphQLServices,
  req: IncomingMessage,
  res: ServerResponse | undefined,
): RequestContext {
  return createRequestContext(services, {
    clientIp: rateLimitKey(req, services.config.trustProxyHops),
    requestId: requestIdFor(req, res),
  });
}

/** The id the app already put on the response (X-Request-Id), so logs and headers agree. */
function requestIdFor(req: IncomingMessage, res: ServerResponse | undefined): string {
  const given = res?.getHeader('x-request-id');
  return typeof given === 'string' ? given : requestIdOf(req);
}
