/**
 * `GET /.well-known/webfinger?resource=acct:<name_id>&rel=…` (RFC 7033): the WebFinger service's
 * JRD, open to any origin (RFC 7033 §5 asks for `Access-Control-Allow-Origin: *`).
 */
import { sendBody, sendError } from '../http/respond.js';
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

export const JRD_CONTENT_TYPE = 'application/jrd+json';

export const webfingerRoute: RestRoute = {
  pattern: '/.well-known/webfinger',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, async ({ req, res, request }) => {
      const query = queryOf(req);
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
    }),
};
