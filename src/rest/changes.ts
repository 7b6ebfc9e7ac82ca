/**
 * `GET /api/changes?after=&limit=&names=&namespace=`: a page of the change log, oldest first
 * (src/service/changes.ts, the function GraphQL's `changes` calls). `names` is a comma-separated
 * list, as for the batch lookup (several `names` parameters are one list). An empty parameter
 * counts as absent; `after`, `limit` or `namespace` given twice is invalid. Never cached: the
 * answer changes with every commit.
 */
import { sendJson } from '../http/respond.js';
import {
  CURRENT_END_CURSOR,
  DEFAULT_CHANGES_PAGE,
  INVALID_CHANGE_CURSOR_MESSAGE,
  MAX_CHANGES_PAGE,
} from '../service/changes.js';
import { MAX_NAMES_PER_REQUEST } from '../service/profiles-service.js';
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
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { serviceHandler } from './service-handler.js';

const NO_STORE = { 'Cache-Control': 'no-store' } as const;

export const changesRoute: RestRoute = {
  pattern: '/api/changes',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(
      deps,
      async ({ req, res, request }) => {
        const query = queryOf(req);
        const names = query.getAll('names').filter((value) => value !== '');
        const { value, rateLimit } = await deps.profiles.changes(request, {
          after: single(query, 'after'),
          first: pageSize(single(query, 'limit')),
          // A name ID cannot contain a comma, so splitting on commas loses nothing.
          names: names.length === 0 ? undefined : names.join(',').split(','),
          namespace: single(query, 'namespace'),
        });
        const body = {
          changes: value.changes.map((change) => ({
            cursor: change.cursor,
            name: change.name,
            kind: change.kind,
            at: change.at.toISOString(),
          })),
          next: value.next,
          hasMore: value.hasMore,
        };
        sendJson(req, res, 200, body, { ...NO_STORE, ...rateLimitHeaders(rateLimit) });
      },
      { errorHeaders: () => NO_STORE },
    ),
  openApi: { get: changesOperation() },
};

/**
 * A parameter's value; undefined when absent or empty. Values given twice are joined with a
 * comma, which no cursor, page size or namespace holds, so the service refuses them.
 */
function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  return values.length === 0 || (values.length === 1 && values[0] === '') ? undefined : values.join(',');
}

/** The page size as a number for the service to check; NaN (refused there) when it is not digits. */
function pageSize(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN;
}

function changesOperation(): Operation {
  const noStore = { ...CACHING, ...RATE_LIMIT };
  return {
    operationId: 'changes',
    summary: 'What changed since a cursor: the change log, oldest first',
    description:
      'One entry per change of a profile (created, updated in what `GET /api/{name_id}` answers, removed), in ' +
      'commit order. Follow `next`: it is past every entry the page looked at, matching a filter or not, and a ' +
      'consumer that follows it never misses an entry, however writers interleave. Entries are kept for ' +
      '`CHANGE_LOG_RETENTION_DAYS` (30 by default). Costs one point of the profile budget. Never cached.',
    tags: ['Change feed'],
    parameters: [
      {
        name: 'after',
        in: 'query',
        required: false,
        description:
          'A `cursor` or `next` from an earlier page or stream event: entries after it. `now`: no entries, and `next` ' +
          'at the current end of the log (where a new consumer starts). Absent: from the oldest entry kept.',
        schema: { type: 'string', maxLength: 64 },
        example: CURRENT_END_CURSOR,
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: `Entries per page, 1 to ${MAX_CHANGES_PAGE} (default ${DEFAULT_CHANGES_PAGE}).`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_CHANGES_PAGE, default: DEFAULT_CHANGES_PAGE },
      },
      {
        name: 'names',
        in: 'query',
        required: false,
        description: `Only changes of these name IDs: comma-separated, 1 to ${MAX_NAMES_PER_REQUEST}, validated as for the batch lookup.`,
        schema: { type: 'string' },
        example: 'demo@me,empty@me',
      },
      {
        name: 'namespace',
        in: 'query',
        required: false,
        description:
          'Only changes of names in this namespace. A page looks at no more than 10,000 entries of the log: it may ' +
          'come back short, or empty, with `hasMore` true; follow `next`.',
        schema: { type: 'string' },
        example: 'me',
      },
    ],
    responses: {
      '200': {
        description: 'A page of the change log.',
        headers: { ...EVERY, ...noStore },
        content: jsonContent('ChangePage'),
      },
      '400': errorAnswer(
        'An invalid cursor, page size, name or namespace, or both names and a namespace.',
        INVALID_CHANGE_CURSOR_MESSAGE,
        noStore,
      ),
      '410': errorAnswer(
        'The cursor is older than the change log keeps: its entries were pruned. Read the profiles again, then follow ' +
          '`after=now`.',
        'Cursor is older than the change log keeps',
        noStore,
      ),
      '429': tooManyRequests(CACHING),
      '500': internalError(CACHING),
      '503': unavailable(CACHING),
    },
  };
}
