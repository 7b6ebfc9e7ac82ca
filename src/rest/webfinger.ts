/**
 * `GET /.well-known/webfinger?resource=acct:<name_id>&rel=…` (RFC 7033): the WebFinger service's
 * JRD, open to any origin (RFC 7033 §5 asks for `Access-Control-Allow-Origin: *`).
 */
import { sendEncoded } from '../http/compression.js';
import { sendError } from '../http/respond.js';
import { RESOURCE_REQUIRED_MESSAGE } from '../service/webfinger.js';
import {
  CACHING,
  EVERY,
  errorAnswer,
  LOOKUP_ERRORS,
  PROFILE_NOT_FOUND,
  RATE_LIMIT,
  schemaRef,
} from './openapi-components.js';
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

const JRD_CONTENT_TYPE = 'application/jrd+json';

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
        sendError(req, res, 404, 'Profile not found', { ...headers, ...deps.edge.headers(request, false) });
        return;
      }
      sendEncoded(req, res, JSON.stringify(jrd), {
        ...headers,
        ...deps.edge.headers(request),
        'Content-Type': JRD_CONTENT_TYPE,
      });
    }),
  openApi: {
    get: {
      operationId: 'webfinger',
      summary: 'WebFinger (RFC 7033): links of an acct: name ID',
      description: 'One point of the profile budget.',
      tags: ['WebFinger'],
      parameters: [
        {
          name: 'resource',
          in: 'query',
          required: true,
          description: '`acct:<name_id>` (the account may be percent-encoded, RFC 7565).',
          schema: { type: 'string' },
          example: 'acct:demo@me',
        },
        {
          name: 'rel',
          in: 'query',
          description: 'Only links of these relations (RFC 7033 §4.3); may be repeated.',
          style: 'form',
          explode: true,
          schema: { type: 'array', items: { type: 'string' } },
        },
      ],
      responses: {
        '200': {
          description: 'The JSON Resource Descriptor.',
          headers: { ...EVERY, ...CACHING, ...RATE_LIMIT },
          content: { 'application/jrd+json': { schema: schemaRef('Jrd') } },
        },
        '400': errorAnswer(
          'No resource, or not an `acct:` URI of a valid name ID.',
          RESOURCE_REQUIRED_MESSAGE,
          RATE_LIMIT,
        ),
        '404': PROFILE_NOT_FOUND,
        ...LOOKUP_ERRORS,
      },
    },
  },
};
