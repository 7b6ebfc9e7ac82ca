/**
 * The REST shim: `GET /api/{name_id}` and `GET /api/owner-check`, answered by executing the fixed
 * GraphQL operations of ./operations.ts with the same per-request context as `/graphql`, then
 * shaping the exact JSON of the contract.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ExecutionResult, GraphQLSchema } from 'graphql';
import type { Config } from '../config/config.js';
import type { RequestContext } from '../graphql/context.js';
import { sendError, sendJson } from '../http/respond.js';
import type { AppRouter } from '../http/router.js';
import { INVALID_NAME_MESSAGE } from '../names/name-id.js';
import type { Logger } from '../ops/logger.js';
import { type RestError, restErrorOf } from './errors.js';
import { etagOf, matchesIfNoneMatch } from './http-caching.js';
import { openApiDocument } from './openapi.js';
import { prepareRestOperations, type RestOperations } from './operations.js';
import { toRestProfile } from './profile-json.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

export interface RestDependencies {
  schema: GraphQLSchema;
  config: Config;
  logger: Logger;
  /** The per-request GraphQL context, the same that `/graphql` uses. */
  contextFor(req: IncomingMessage, res: ServerResponse): RequestContext;
}

const ALLOWED_METHODS = 'GET, HEAD';
const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT'] as const;

const CORS_HEADERS: OutgoingHttpHeaders = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'ETag, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Request-Id',
};

export function registerRestRoutes(router: AppRouter, deps: RestDependencies): void {
  const operations = prepareRestOperations(deps.schema);
  const openApiJson = openApiDocument();

  router.on(['GET', 'HEAD'], '/api/openapi.json', (req, res) => sendJson(req, res, 200, openApiJson, CORS_HEADERS));
  router.on(['GET', 'HEAD'], '/api/owner-check', (req, res) => {
    void answer(req, res, deps.logger, () => ownerCheck(req, res, deps, operations));
  });
  router.on(['GET', 'HEAD'], '/api/:name', (req, res, params) => {
    void answer(req, res, deps.logger, () => profile(req, res, deps, operations, params.name ?? ''));
  });
  router.on([...OTHER_METHODS], '/api/*', (req, res) => {
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      preflight(req, res);
      return;
    }
    sendError(req, res, 405, 'Method not allowed', { ...CORS_HEADERS, Allow: ALLOWED_METHODS });
  });
}

/**
 * A path under /api/ whose percent-encoding cannot be decoded names no valid name ID. The router
 * reports such URLs here instead of calling a route.
 */
export function answerBadApiUrl(req: IncomingMessage, res: ServerResponse): boolean {
  if (!req.url?.startsWith('/api/')) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendError(req, res, 405, 'Method not allowed', { ...CORS_HEADERS, Allow: ALLOWED_METHODS });
  } else {
    sendError(req, res, 400, INVALID_NAME_MESSAGE, CORS_HEADERS);
  }
  return true;
}

async function profile(
  req: IncomingMessage,
  res: ServerResponse,
  deps: RestDependencies,
  operations: RestOperations,
  name: string,
): Promise<void> {
  const context = deps.contextFor(req, res);
  const result = await operations.profile(context, { name });
  const headers = { ...CORS_HEADERS, ...rateLimitHeaders(context.rateLimitDecisions.profile) };

  if (result.errors?.length) return sendRestError(req, res, deps, restErrorOf(result.errors), headers, result);
  const found = result.data?.profile;
  if (!found) return sendError(req, res, 404, 'Profile not found', headers);

  const etag = etagOf(found.version);
  const cacheHeaders = { ETag: etag, 'Cache-Control': `public, max-age=${deps.config.cacheMaxAgeSeconds}` };
  if (matchesIfNoneMatch(req, etag)) {
    res.writeHead(304, { ...headers, ...cacheHeaders });
    res.end();
    return;
  }
  sendJson(req, res, 200, toRestProfile(found), { ...headers, ...cacheHeaders });
}

async function ownerCheck(
  req: IncomingMessage,
  res: ServerResponse,
  deps: RestDependencies,
  operations: RestOperations,
): Promise<void> {
  const query = new URLSearchParams(queryStringOf(req.url ?? ''));
  const context = deps.contextFor(req, res);
  const result = await operations.ownerCheck(context, {
    email: singleParameter(query, 'email'),
    name: singleParameter(query, 'name'),
  });
  const headers = {
    ...CORS_HEADERS,
    'Cache-Control': 'no-store',
    ...rateLimitHeaders(context.rateLimitDecisions.ownerCheck),
  };

  if (result.errors?.length) return sendRestError(req, res, deps, restErrorOf(result.errors), headers, result);
  const check = result.data?.ownerCheck;
  if (!check) throw new Error('owner check answered neither data nor errors');
  sendJson(req, res, 200, { hasCreated: check.hasCreated, email: check.email, name: check.name }, headers);
}

function queryStringOf(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at + 1);
}

/**
 * A parameter's value, or null when it is absent. A repeated parameter is invalid: its values are
 * joined with a comma, which no valid e-mail or name ID contains, so the shared validation rejects
 * it with the same message as any other invalid value.
 */
function singleParameter(query: URLSearchParams, name: string): string | null {
  const values = query.getAll(name);
  return values.length === 0 ? null : values.join(',');
}

function sendRestError(
  req: IncomingMessage,
  res: ServerResponse,
  deps: RestDependencies,
  error: RestError,
  headers: OutgoingHttpHeaders,
  result: Pick<ExecutionResult, 'errors'>,
): void {
  if (error.status >= 500) {
    const [first] = result.errors ?? [];
    deps.logger.error(
      { status: error.status, path: first?.path, reason: first?.originalError?.name ?? first?.message },
      'REST request failed',
    );
  }
  const retryAfter = error.retryAfterSeconds === undefined ? {} : { 'Retry-After': error.retryAfterSeconds };
  sendError(req, res, error.status, error.message, { ...headers, ...retryAfter });
}

function preflight(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(204, {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': 'If-None-Match, X-Request-Id',
    'Access-Control-Max-Age': '86400',
    Allow: ALLOWED_METHODS,
  });
  res.end();
}

/** Runs a handler; anything it throws becomes a 500 without details, logged once. */
async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  logger: Logger,
  handler: () => Promise<void>,
): Promise<void> {
  try {
    await handler();
  } catch (error) {
    logger.error({ reason: error instanceof Error ? error.message : String(error) }, 'REST handler failed');
    if (!res.headersSent) sendError(req, res, 500, 'Internal server error', CORS_HEADERS);
    else res.destroy();
  }
}
