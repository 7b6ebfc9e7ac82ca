/**
 * `GET /api/owner-check?email=&name=`: whether an e-mail owns the namespace of a name ID or
 * created it. Rate-limited on a budget of its own; answers are never cached.
 */
import { sendJson } from '../http/respond.js';
import { queryOf, singleParameter } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

const NO_STORE = { 'Cache-Control': 'no-store' } as const;

export const ownerCheckRoute: RestRoute = {
  pattern: '/api/owner-check',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(
      deps,
      async ({ req, res, request }) => {
        const query = queryOf(req);
        const input = { email: singleParameter(query, 'email'), name: singleParameter(query, 'name') };
        const { value, rateLimit } = await deps.profiles.checkOwner(request, input);
        sendJson(req, res, 200, value, { ...NO_STORE, ...rateLimitHeaders(rateLimit) });
      },
      { errorHeaders: () => NO_STORE },
    ),
};
