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
import { matchesIfNoneMatch } from '../http/conditional.js';
import { JSON_CONTENT_TYPE, sendBody, sendNotModified } from '../http/respond.js';
import type { NamePage } from '../service/discovery.js';
import type { Outcome } from '../service/request.js';
import { queryOf } from './query.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { GET_HEAD, type RestRoute } from './route.js';
import { type ServiceCall, serviceHandler } from './service-handler.js';

export const searchRoute: RestRoute = {
  pattern: '/api/search',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, (call) => {
      const query = queryOf(call.req);
      return answerPage(call, deps.config.profileCacheControl, async () => {
        const outcome = await deps.profiles.searchProfiles(call.request, {
          prefix: parameter(query, 'prefix') ?? null,
          namespace: parameter(query, 'namespace'),
          first: pageSize(parameter(query, 'limit')),
          after: parameter(query, 'cursor'),
        });
        return { ...outcome, value: { names: outcome.value.names, nextCursor: outcome.value.nextCursor } };
      });
    }),
};

export const walletRoute: RestRoute = {
  pattern: '/api/wallet/:address',
  methods: GET_HEAD,
  handler: (deps) =>
    serviceHandler(deps, (call) => {
      const query = queryOf(call.req);
      const address = call.params.address ?? '';
      return answerPage(call, deps.config.profileCacheControl, async () => {
        const outcome = await deps.profiles.profilesByWallet(call.request, {
          address,
          first: pageSize(parameter(query, 'limit')),
          after: parameter(query, 'cursor'),
        });
        return { ...outcome, value: { address, names: outcome.value.names, nextCursor: outcome.value.nextCursor } };
      });
    }),
};

type PageBody = Pick<NamePage, 'names' | 'nextCursor'> & { address?: string };

async function answerPage(
  { req, res }: ServiceCall,
  profileCacheControl: string,
  list: () => Promise<Outcome<PageBody>>,
): Promise<void> {
  const { value, rateLimit } = await list();
  const body = JSON.stringify(value);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  const headers = { ...rateLimitHeaders(rateLimit), ETag: etag, 'Cache-Control': profileCacheControl };
  if (matchesIfNoneMatch(req, etag)) sendNotModified(res, headers);
  else sendBody(req, res, 200, body, { ...headers, 'Content-Type': JSON_CONTENT_TYPE });
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
