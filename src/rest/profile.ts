/** `GET /api/{name_id}`: the public profile document of a name ID, with ETag and 304. */
import { JSON_CONTENT_TYPE } from '../http/respond.js';
import { sendFoundDocument } from './etag-answer.js';
import { CACHEABLE, FOUND_DOCUMENT_ANSWERS, jsonContent, NAME_ID_PARAMETER } from './openapi-components.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

export const profileRoute: RestRoute = {
  pattern: '/api/:name',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, async ({ req, res, params, request }) => {
      const { value: found, rateLimit } = await deps.profiles.lookupProfile(request, params.name ?? '');
      const document = found && {
        etag: found.etag,
        body: found.document,
        contentHeaders: { 'Content-Type': JSON_CONTENT_TYPE },
      };
      sendFoundDocument(req, res, document, {
        rateLimit,
        cacheHeaders: (found) => deps.edge.headers(request, found),
      });
    }),
  openApi: {
    pathParameters: { name: NAME_ID_PARAMETER },
    get: {
      operationId: 'profile',
      summary: 'The public profile of a name ID',
      description: 'One point of the profile budget.',
      tags: ['Profiles'],
      responses: {
        '200': {
          description: 'The profile.',
          headers: CACHEABLE,
          content: jsonContent('Profile'),
        },
        ...FOUND_DOCUMENT_ANSWERS,
      },
    },
  },
};
