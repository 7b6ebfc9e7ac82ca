/**
 * `GET /api/{name_id}/avatar?size=&fallback=&v=`: the avatar service's answer as HTTP. A
 * redirect or SVG asked for with the current version (`v=`, what `avatarUrl` writes) may be
 * cached for good; otherwise it gets the profile `Cache-Control`. Only the SVG has an ETag and
 * 304s: conditional requests do not apply to redirects (RFC 9110 §13.2.1).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { matchesIfNoneMatch } from '../http/conditional.js';
import { sendBody, sendError, sendNotModified } from '../http/respond.js';
import type { AvatarAnswer } from '../service/avatars.js';
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
export const SVG_CONTENT_TYPE = 'image/svg+xml';
/** Whatever a browser makes of the SVG, it runs nothing and loads nothing (inline styles only). */
export const SVG_SECURITY_HEADERS: OutgoingHttpHeaders = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
  'X-Content-Type-Options': 'nosniff',
};

export const avatarRoute: RestRoute = {
  pattern: '/api/:name/avatar',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, async ({ req, res, params, request }) => {
      const query = queryOf(req);
      const { value, rateLimit } = await deps.avatars.lookupAvatar(request, params.name ?? '', {
        size: query.getAll('size'),
        fallback: query.getAll('fallback'),
        version: query.getAll('v'),
      });
      send(req, res, value, { ...rateLimitHeaders(rateLimit) }, deps.config.profileCacheControl);
    }),
};

function send(
  req: IncomingMessage,
  res: ServerResponse,
  answer: AvatarAnswer,
  headers: OutgoingHttpHeaders,
  profileCacheControl: string,
): void {
  if (answer.kind === 'missing') {
    sendError(req, res, 404, answer.message, headers);
    return;
  }
  const caching = { 'Cache-Control': answer.currentVersion ? IMMUTABLE_CACHE_CONTROL : profileCacheControl };
  if (answer.kind === 'redirect') {
    sendBody(req, res, 302, '', { ...headers, ...caching, Location: answer.location });
    return;
  }
  const validators = { ...headers, ...caching, ETag: answer.etag };
  if (matchesIfNoneMatch(req, answer.etag)) sendNotModified(res, validators);
  else
    sendBody(req, res, 200, answer.svg, { ...validators, ...SVG_SECURITY_HEADERS, 'Content-Type': SVG_CONTENT_TYPE });
}
