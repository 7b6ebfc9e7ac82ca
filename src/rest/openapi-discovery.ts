/**
 * The OpenAPI description of the discovery paths (src/rest/discovery-routes.ts), merged into the
 * document of ./openapi.ts. Like the rest of it, test/openapi.test.ts validates real answers of
 * every documented status against it.
 */
import { INVALID_CURSOR_MESSAGE } from '../service/cursors.js';
import {
  DEFAULT_PAGE_SIZE,
  INVALID_ADDRESS_MESSAGE,
  MAX_ADDRESS_LENGTH,
  MAX_PAGE_SIZE,
  MISSING_PREFIX_MESSAGE,
} from '../service/discovery.js';

type ErrorBody = (example: string) => Record<string, unknown>;

interface Shared {
  errorBody: ErrorBody;
  rateLimitHeaders: Record<string, unknown>;
  retryAfter: Record<string, unknown>;
}

const pageParameters = [
  {
    name: 'limit',
    in: 'query',
    required: false,
    description: `Names per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}). A page is cut short when the profile budget has fewer points left.`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
  {
    name: 'cursor',
    in: 'query',
    required: false,
    description: 'The `nextCursor` of the previous page of the same query; absent or empty for the first page.',
    schema: { type: 'string' },
  },
];

function listingResponses({ errorBody, rateLimitHeaders, retryAfter }: Shared, badInput: string, schema: string) {
  return {
    '200': {
      description: 'A page of names in code-point order.',
      headers: {
        ...rateLimitHeaders,
        ETag: { schema: { type: 'string' }, description: 'Strong validator of this answer.' },
        'Cache-Control': { schema: { type: 'string' }, example: 'public, max-age=60' },
      },
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
    },
    '304': { description: 'Not modified: `If-None-Match` matched the current ETag.' },
    '400': errorBody(badInput),
    '405': errorBody('Method not allowed'),
    '429': { ...errorBody('Too many requests, retry in 42 seconds'), headers: { ...rateLimitHeaders, ...retryAfter } },
    '500': errorBody('Internal server error'),
    '503': { ...errorBody('Service unavailable'), headers: retryAfter },
  };
}

const BUDGET =
  'Costs one point of the profile rate limit per name returned, at least one, like looking the names up one by one.';

export function discoveryPaths(shared: Shared): Record<string, unknown> {
  return {
    '/api/search': {
      get: {
        operationId: 'searchProfiles',
        summary: 'Names whose local part starts with a prefix',
        description: `Ordered by canonical name in Unicode code-point order, a page at a time. ${BUDGET}`,
        parameters: [
          {
            name: 'prefix',
            in: 'query',
            required: true,
            description:
              '1 to 63 letters, digits, `.`, `_` or `-`, starting with a letter or digit; canonicalised like a name (NFC, lower case).',
            schema: { type: 'string' },
            example: 'de',
          },
          {
            name: 'namespace',
            in: 'query',
            required: false,
            description: 'Only names in this namespace; all when absent.',
            schema: { type: 'string' },
            example: 'me',
          },
          ...pageParameters,
        ],
        responses: listingResponses(shared, MISSING_PREFIX_MESSAGE, 'NamePage'),
      },
    },
    '/api/wallet/{address}': {
      get: {
        operationId: 'profilesByWallet',
        summary: 'Names of the profiles whose crypto records list an address',
        description:
          '`0x` (EVM) addresses match without regard to case, others exactly. These are claims the profiles make, ' +
          `not verified ownership. Ordered by name in Unicode code-point order. ${BUDGET}`,
        parameters: [
          {
            name: 'address',
            in: 'path',
            required: true,
            description: `The address, 1 to ${MAX_ADDRESS_LENGTH} characters, percent-encoded where needed.`,
            schema: { type: 'string' },
            example: '0x0000000000000000000000000000000000de0000',
          },
          ...pageParameters,
        ],
        responses: listingResponses(shared, INVALID_ADDRESS_MESSAGE, 'WalletPage'),
      },
    },
  };
}

const names = {
  type: 'array',
  items: { type: 'string', description: 'A canonical name ID.' },
  maxItems: MAX_PAGE_SIZE,
};
const nextCursor = {
  type: ['string', 'null'],
  description: `Pass it as \`cursor\` for the next page; null on the last page. Opaque; a cursor of another query is refused (400 "${INVALID_CURSOR_MESSAGE}").`,
};

export const discoverySchemas: Record<string, unknown> = {
  NamePage: {
    type: 'object',
    required: ['names', 'nextCursor'],
    additionalProperties: false,
    properties: { names, nextCursor },
  },
  WalletPage: {
    type: 'object',
    required: ['address', 'names', 'nextCursor'],
    additionalProperties: false,
    properties: { address: { type: 'string', description: 'The address as given.' }, names, nextCursor },
  },
};
