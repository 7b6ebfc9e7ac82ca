/** `GET /api/{name_id}`: the public profile document of a name ID, with ETag and 304. */
import { matchesIfNoneMatch } from '../http/conditional.js';
import { JSON_CONTENT_TYPE, sendBody, sendError, sendNotModified } from '../http/respond.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

export const profileRoute: RestRoute = {
  pattern: '/api/:name',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, async ({ req, res, params, request }) => {
      const { value: found, rateLimit } = await deps.profiles.lookupProfile(request, params.name ?? '');
      const headers = rateLimitHeaders(rateLimit);
      if (found === null) {
        sendError(req, res, 404, 'Profile not found', headers);
        return;
      }
      const cacheHeaders = { ...headers, ETag: found.etag, 'Cache-Control': deps.config.profileCacheControl };
      if (matchesIfNoneMatch(req, found.etag)) sendNotModified(res, cacheHeaders);
      else sendBody(req, res, 200, found.document, { ...cacheHeaders, 'Content-Type': JSON_CONTENT_TYPE });
    }),
};
