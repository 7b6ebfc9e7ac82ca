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
import type { IncomingMessage, ServerResponse } from 'node:http';
import { matchesIfNoneMatch } from '../http/conditional.js';
import { JSON_CONTENT_TYPE, sendBody, sendNotModified } from '../http/respond.js';
import type { Router } from '../http/router.js';
import { serviceRequestFor } from '../http/service-request.js';
import type { NamePage } from '../service/discovery.js';
import type { Outcome } from '../service/request.js';
import { sendServiceError } from './error-responses.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import type { RestDependencies } from './routes.js';

export const SEARCH_PATH = '/api/search';
export const WALLET_PATH = '/api/wallet/:address';

export function registerDiscoveryRoutes(router: Router, deps: RestDependencies): void {
  router.on(['GET', 'HEAD'], SEARCH_PATH, (req, res) => void search(req, res, deps), { cors: true });
  router.on(['GET', 'HEAD'], WALLET_PATH, (req, res, params) => void wallet(req, res, deps, params.address ?? ''), {
    cors: true,
  });
}

async function search(req: IncomingMessage, res: ServerResponse, deps: RestDependencies): Promise<void> {
  const query = queryOf(req);
  await answerPage(req, res, deps, async (request) => {
    const outcome = await deps.profiles.searchProfiles(request, {
      prefix: parameter(query, 'prefix') ?? null,
      namespace: parameter(query, 'namespace'),
      first: pageSize(parameter(query, 'limit')),
      after: parameter(query, 'cursor'),
    });
    return { ...outcome, value: { names: outcome.value.names, nextCursor: outcome.value.nextCursor } };
  });
}

async function wallet(req: IncomingMessage, res: ServerResponse, deps: RestDependencies, address: string) {
  const query = queryOf(req);
  await answerPage(req, res, deps, async (request) => {
    const outcome = await deps.profiles.profilesByWallet(request, {
      address,
      first: pageSize(parameter(query, 'limit')),
      after: parameter(query, 'cursor'),
    });
    return { ...outcome, value: { address, names: outcome.value.names, nextCursor: outcome.value.nextCursor } };
  });
}

type PageBody = Pick<NamePage, 'names' | 'nextCursor'> & { address?: string };

async function answerPage(
  req: IncomingMessage,
  res: ServerResponse,
  deps: RestDependencies,
  list: (request: ReturnType<typeof serviceRequestFor>) => Promise<Outcome<PageBody>>,
): Promise<void> {
  const request = serviceRequestFor(req, res, deps.config.trustProxyHops);
  try {
    const { value, rateLimit } = await list(request);
    const body = JSON.stringify(value);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    const headers = { ...rateLimitHeaders(rateLimit), ETag: etag, 'Cache-Control': deps.config.profileCacheControl };
    if (matchesIfNoneMatch(req, etag)) sendNotModified(res, headers);
    else sendBody(req, res, 200, body, { ...headers, 'Content-Type': JSON_CONTENT_TYPE });
  } catch (error) {
    sendServiceError(req, res, error, {}, deps.logger);
  }
}

function queryOf(req: IncomingMessage): URLSearchParams {
  const url = req.url ?? '';
  const at = url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
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
