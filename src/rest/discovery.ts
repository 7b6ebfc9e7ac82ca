/**
 * The REST paths of discovery: `GET /api/search?prefix=&namespace=&limit=&cursor=` and
 * `GET /api/wallet/{address}?limit=&cursor=`. Each reads its parameters, calls the profiles
 * service (the functions the GraphQL fields call) and writes the answer.
 *
 * Answers read public data only: they carry the profile `Cache-Control` and a strong ETag of the
 * body, and a matching `If-None-Match` gets a 304 (the page was read, and paid for, all the same).
 * An empty parameter counts as absent (forms send `cursor=` for a first page); a parameter given
 * twice is invalid, as for the owner check.
 */
import { createHash } from 'node:crypto';
import type { EdgeCaching } from '../edge/edge-caching.js';
import { JSON_CONTENT_TYPE } from '../http/respond.js';
import {
  DEFAULT_PAGE_SIZE,
  INVALID_ADDRESS_MESSAGE,
  MAX_ADDRESS_LENGTH,
  MAX_PAGE_SIZE,
  MISSING_PREFIX_MESSAGE,
  type NamePage,
} from '../service/discovery.js';
import type { Outcome } from '../service/request.js';
import { sendValidated } from './etag-answer.js';
import {
  CACHEABLE,
  errorAnswer,
  jsonContent,
  LOOKUP_ERRORS,
  notModified,
  type Operation,
  type Parameter,
  RATE_LIMIT,
} from './openapi-components.js';
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { type ServiceCall, serviceHandler } from './service-handler.js';

const PAGE_PARAMETERS: readonly Parameter[] = [
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

const LISTING_BUDGET =
  'Costs one point of the profile budget per name returned, at least one, like looking the names up one by one.';

/** A page of names: search and reverse lookup answer alike. */
function listing(
  operation: Omit<Operation, 'tags' | 'responses'>,
  invalid: { description: string; example: string },
  schema: string,
): Operation {
  return {
    ...operation,
    tags: ['Discovery'],
    responses: {
      '200': {
        description: 'A page of names in Unicode code-point order.',
        headers: CACHEABLE,
        content: jsonContent(schema),
      },
      '304': notModified(),
      '400': errorAnswer(invalid.description, invalid.example, RATE_LIMIT),
      ...LOOKUP_ERRORS,
    },
  };
}

export const searchRoute: RestRoute = {
  pattern: '/api/search',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, (call) => {
      const query = queryOf(call.req);
      return answerPage(call, deps.edge, async () => {
        const outcome = await deps.profiles.searchProfiles(call.request, {
          prefix: parameter(query, 'prefix') ?? null,
          namespace: parameter(query, 'namespace'),
          first: pageSize(parameter(query, 'limit')),
          after: parameter(query, 'cursor'),
        });
        return { ...outcome, value: { names: outcome.value.names, nextCursor: outcome.value.nextCursor } };
      });
    }),
  openApi: {
    get: listing(
      {
        operationId: 'searchProfiles',
        summary: 'Names whose local part starts with a prefix',
        description: `Ordered by canonical name in Unicode code-point order, a page at a time. ${LISTING_BUDGET}`,
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
          ...PAGE_PARAMETERS,
        ],
      },
      { description: 'No prefix, an invalid prefix, namespace, limit or cursor.', example: MISSING_PREFIX_MESSAGE },
      'NamePage',
    ),
  },
};

export const walletRoute: RestRoute = {
  pattern: '/api/wallet/:address',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, (call) => {
      const query = queryOf(call.req);
      const address = call.params.address ?? '';
      return answerPage(call, deps.edge, async () => {
        const outcome = await deps.profiles.profilesByWallet(call.request, {
          address,
          first: pageSize(parameter(query, 'limit')),
          after: parameter(query, 'cursor'),
        });
        return { ...outcome, value: { address, names: outcome.value.names, nextCursor: outcome.value.nextCursor } };
      });
    }),
  openApi: {
    pathParameters: {
      address: {
        name: 'address',
        in: 'path',
        required: true,
        description: `The address, 1 to ${MAX_ADDRESS_LENGTH} characters, percent-encoded where needed.`,
        schema: { type: 'string' },
        example: '0x0000000000000000000000000000000000de0000',
      },
    },
    get: listing(
      {
        operationId: 'profilesByWallet',
        summary: 'Names of the profiles whose crypto records list an address',
        description:
          '`0x` (EVM) addresses match without regard to case, others exactly. These are claims the profiles make, ' +
          `not verified ownership. Ordered by name in Unicode code-point order. ${LISTING_BUDGET}`,
        parameters: PAGE_PARAMETERS,
      },
      { description: 'An invalid address, limit or cursor.', example: INVALID_ADDRESS_MESSAGE },
      'WalletPage',
    ),
  },
};

type PageBody = Pick<NamePage, 'names' | 'nextCursor'> & { address?: string };

async function answerPage(
  { req, res, request }: ServiceCall,
  edge: EdgeCaching,
  list: () => Promise<Outcome<PageBody>>,
): Promise<void> {
  const { value, rateLimit } = await list();
  const body = JSON.stringify(value);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const headers = { ...rateLimitHeaders(rateLimit), ...edge.headers(request) };
  sendValidated(req, res, { etag, validators: headers, body, contentHeaders: { 'Content-Type': JSON_CONTENT_TYPE } });
}

/**
 * A parameter's value; undefined when absent or empty. Values given twice are joined with a
 * comma, which no prefix, namespace, page size or cursor holds, so the service refuses them.
 */
function parameter(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  return values.length === 0 || (values.length === 1 && values[0] === '') ? undefined : values.join(',');
}

/** The page size as a number for the service to check; NaN (refused there) when it is not digits. */
function pageSize(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN;
}
