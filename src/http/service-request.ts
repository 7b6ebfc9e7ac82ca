/**
 * The service's view of an HTTP request: the one place that decides which client the rate
 * limits count against and which request id the logs carry. REST and `/graphql` both come
 * through here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rateLimitKey } from '../limits/client-key.js';
import { ServiceRequest } from '../service/request.js';
import { requestIdOf } from './request-id.js';

export function serviceRequestFor(
  req: IncomingMessage,
  res: ServerResponse | undefined,
  trustProxyHops: number,
): ServiceRequest {
  // The app puts the id on the response first, so logs and the X-Request-Id header agree; a
  // WebSocket upgrade has no response.
  const given = res?.getHeader('x-request-id');
  const requestId = typeof given === 'string' ? given : requestIdOf(req);
  return new ServiceRequest(rateLimitKey(req, trustProxyHops), requestId);
}
