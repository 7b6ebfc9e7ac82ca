/**
 * The service's view of an HTTP request: the one place that decides which client the rate
 * limits count against (the API key, else the address) and which request id the logs carry. REST and `/graphql` both come
 * through here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rateLimitKey } from '../limits/client-key.js';
import { apiKeyClient, ServiceRequest } from '../service/request.js';
import { apiKeyOf } from './api-key-guard.js';
import { requestIdOf, requestIdOfAnswer } from './request-id.js';

export function serviceRequestFor(
  req: IncomingMessage,
  res: ServerResponse | undefined,
  trustProxyHops: number,
): ServiceRequest {
  // The app puts the id on the response first, so logs and the X-Request-Id header agree; a
  // WebSocket upgrade has no response.
  const requestId = (res === undefined ? undefined : requestIdOfAnswer(res)) ?? requestIdOf(req);
  // A request with a valid API key (checked by ./api-key-guard.ts before any handler) counts
  // under the key, whatever its address.
  const apiKey = apiKeyOf(req);
  if (apiKey !== undefined) return new ServiceRequest(apiKeyClient(apiKey.id), requestId, apiKey);
  return new ServiceRequest(rateLimitKey(req, trustProxyHops), requestId);
}
