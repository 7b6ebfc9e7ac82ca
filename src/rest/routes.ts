/**
 * The REST paths of the contract: `GET /api/{name_id}` and `GET /api/owner-check`, the OpenAPI
 * document, and the additions for apps that are not GraphQL clients (batch lookup, avatar,
 * vCard, WebFinger; each in a module of its own). Each handler reads its parameters, calls the profiles service (the same
 * functions the GraphQL resolvers call) and writes the contract's exact answer.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Config } from '../config/config.js';
import { matchesIfNoneMatch } from '../http/conditional.js';
import { applyCors } from '../http/cors.js';
import { JSON_CONTENT_TYPE, sendBody, sendError, sendJson, sendNotModified } from '../http/respond.js';
import type { Router } from '../http/router.js';
import { serviceRequestFor } from '../http/service-request.js';
import { INVALID_NAME_MESSAGE } from '../names/name-id.js';
import type { Logger } from '../ops/logger.js';
import type { AvatarService } from '../service/avatars.js';
import { INVALID_ADDRESS_MESSAGE } from '../service/discovery.js';
import type { LiveUpdates } from '../service/live-updates.js';
import type { ProfilesService } from '../service/profiles-service.js';
import type { VCardService } from '../service/vcard.js';
import type { WebFingerService } from '../service/webfinger.js';
import { registerAvatarRoute } from './avatar.js';
import { registerBatchRoutes } from './batch.js';
import { registerDiscoveryRoutes } from './discovery.js';
import { sendServiceError } from './error-responses.js';
import { registerEventsRoute } from './events.js';
import { openApiDocument } from './openapi.js';
import { queryOf, singleParameter } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { registerVCardRoute } from './vcard.js';
import { registerWebFingerRoute } from './webfinger.js';

export interface RestDependencies {
  profiles: ProfilesService;
  avatars: AvatarService;
  vcards: VCardService;
  webfinger: WebFingerService;
  live: LiveUpdates;
  config: Config;
  logger: Logger;
}

const GET_HEAD = ['GET', 'HEAD'] as const;

export function registerRestRoutes(router: Router, deps: RestDependencies): void {
  const openApiJson = JSON.stringify(openApiDocument({ publicUrl: deps.config.publicUrl }));
  router.on(GET_HEAD, '/api/openapi.json', (req, res) => sendBody(req, res, 200, openApiJson, JSON_HEADERS), {
    cors: true,
  });
  router.on(GET_HEAD, '/api/owner-check', (req, res) => void ownerCheck(req, res, deps), { cors: true });
  registerDiscoveryRoutes(router, deps);
  registerEventsRoute(router, deps);
  router.on(GET_HEAD, '/api/:name', (req, res, params) => void profile(req, res, deps, params.name ?? ''), {
    cors: true,
  });
  registerBatchRoutes(router, deps);
  registerAvatarRoute(router, deps);
  registerVCardRoute(router, deps);
  registerWebFingerRoute(router, deps);
  // Any other path under /api/ is a 404 for GET and HEAD; other methods get the 405 (and CORS
  // preflights) that the router gives every route for the methods it does not serve.
  router.on(GET_HEAD, '/api/*', (req, res) => sendError(req, res, 404, 'Not found'), { cors: true });
}

const JSON_HEADERS: OutgoingHttpHeaders = { 'Content-Type': JSON_CONTENT_TYPE };

/**
 * A path under /api/ whose percent-encoding cannot be decoded names no valid name ID: a 400 for
 * a lookup, a 405 for other methods. The router hands such URLs here (see RouterOptions).
 */
export function answerUndecodableApiUrl(req: IncomingMessage, res: ServerResponse): boolean {
  if (!req.url?.startsWith('/api/')) return false;
  applyCors(res);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendError(req, res, 405, 'Method not allowed', { Allow: GET_HEAD.join(', ') });
  } else {
    // The only other parameter in an /api/ path is the reverse lookup's address.
    sendError(req, res, 400, req.url.startsWith('/api/wallet/') ? INVALID_ADDRESS_MESSAGE : INVALID_NAME_MESSAGE);
  }
  return true;
}

async function profile(req: IncomingMessage, res: ServerResponse, deps: RestDependencies, name: string): Promise<void> {
  const request = serviceRequestFor(req, res, deps.config.trustProxyHops);
  try {
    const { value: found, rateLimit } = await deps.profiles.lookupProfile(request, name);
    const headers = rateLimitHeaders(rateLimit);
    if (found === null) {
      sendError(req, res, 404, 'Profile not found', headers);
      return;
    }
    const cacheHeaders = { ...headers, ETag: found.etag, 'Cache-Control': deps.config.profileCacheControl };
    if (matchesIfNoneMatch(req, found.etag)) sendNotModified(res, cacheHeaders);
    else sendBody(req, res, 200, found.document, { ...cacheHeaders, 'Content-Type': JSON_CONTENT_TYPE });
  } catch (error) {
    sendServiceError(req, res, error, {}, deps.logger);
  }
}

async function ownerCheck(req: IncomingMessage, res: ServerResponse, deps: RestDependencies): Promise<void> {
  const request = serviceRequestFor(req, res, deps.config.trustProxyHops);
  const query = queryOf(req);
  const noStore = { 'Cache-Control': 'no-store' };
  try {
    const input = { email: singleParameter(query, 'email'), name: singleParameter(query, 'name') };
    const { value, rateLimit } = await deps.profiles.checkOwner(request, input);
    sendJson(req, res, 200, value, { ...noStore, ...rateLimitHeaders(rateLimit) });
  } catch (error) {
    sendServiceError(req, res, error, noStore, deps.logger);
  }
}
