/**
 * `GET /api/owner-check?email=&name=`: whether an e-mail owns the namespace of a name ID or
 * created it. Rate-limited on a budget of its own; answers are never cached.
 */
import { sendJson } from '../http/respond.js';
import {
  CACHING,
  EVERY,
  errorAnswer,
  internalError,
  jsonContent,
  type Operation,
  RATE_LIMIT,
  tooManyRequests,
  unavailable,
} from './openapi-components.js';
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
  openApi: { get: ownerCheckOperation() },
};

function ownerCheckOperation(): Operation {
  const noStore = { ...CACHING, ...RATE_LIMIT };
  return {
    operationId: 'ownerCheck',
    summary: 'Whether an e-mail owns the namespace of a name ID or created it',
    description:
      'Rate-limited per client (10 per minute by default); every request counts, valid or not. ' +
      'Answers are never cached (`Cache-Control: no-store`).',
    tags: ['Owner check'],
    parameters: [
      {
        name: 'email',
        in: 'query',
        required: true,
        description: 'The e-mail to check; trimmed.',
        schema: { type: 'string', maxLength: 254 },
        example: 'you@example.net',
      },
      {
        name: 'name',
        in: 'query',
        required: true,
        description: 'The name ID; trimmed.',
        schema: { type: 'string' },
        example: 'demo@me',
      },
    ],
    responses: {
      '200': {
        description: 'The check was made.',
        headers: { ...EVERY, ...noStore },
        content: jsonContent('OwnerCheckResult'),
      },
      '400': errorAnswer(
        'A parameter is missing, blank, given twice, or invalid (the e-mail is checked first).',
        'Both email and name parameters are required',
        noStore,
      ),
      '429': tooManyRequests(CACHING),
      '500': internalError(CACHING),
      '503': unavailable(CACHING),
    },
  };
}
