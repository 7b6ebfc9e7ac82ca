/**
 * Every request: its request ID, route, CORS headers and log line, then its answer — within its
 * SERVER span when tracing is on. With tracing off the handler is the same as before tracing
 * existed, so it costs nothing. The routes apps call (the CORS routes: `/api/…`, `/graphql`,
 * WebFinger) are answered after their API key is checked (api-key-guard.ts); a key in the query
 * string is refused on every path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logging/logger.js';
import type { ApiKeyStore } from '../service/api-keys.js';
import { type ApiKeyGuardOptions, guardApiKey, refuseKeyInUrl, refusesKeyInUrl } from './api-key-guard.js';
import { applyCors } from './cors.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';
import type { Match, Router } from './router.js';
import { setEarlyHeader } from './service-response.js';

/** What logs and measures requests (src/ops): told each request first, with the route it matched. */
interface RequestObservation {
  /** `route` is the matched route's pattern, or `unmatchedRoute` when none matched. */
  observe(req: IncomingMessage, res: ServerResponse, route: string): void;
  /** The request's valid API key, by its id (the request log line shows it). */
  noteApiKey(req: IncomingMessage, id: string): void;
}

/** Tracing's request span (src/ops/tracing.ts), when tracing is on. */
interface RequestTracing {
  traceRequest(req: IncomingMessage, res: ServerResponse, route: string | undefined, answer: () => void): void;
}

export interface RequestHandlerDeps {
  router: Router;
  observation: RequestObservation;
  /** The route label of a request no route matched (metrics and logs). */
  unmatchedRoute: string;
  tracing: RequestTracing | undefined;
  apiKeys: ApiKeyStore;
  logger: Logger;
  /** How many proxies' X-Forwarded-For entries to trust (the client address for key lookups). */
  trustProxyHops: number;
  /** The route whose refusals are GraphQL answers (401 with code UNAUTHENTICATED). */
  graphqlPattern: string;
}

export function createRequestHandler(deps: RequestHandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { router, observation, unmatchedRoute, tracing, apiKeys } = deps;
  const onKey = (req: IncomingMessage, id: string) => observation.noteApiKey(req, id);
  const guard = (graphql: boolean): ApiKeyGuardOptions => ({
    graphql,
    logger: deps.logger,
    onKey,
    trustProxyHops: deps.trustProxyHops,
  });
  const restGuard = guard(false);
  const graphqlGuard = guard(true);
  const route = (req: IncomingMessage, res: ServerResponse): Match => {
    setEarlyHeader(res, REQUEST_ID_HEADER, requestIdOf(req));
    // No answer of the service is to be read as another type than it declares (JSON, SSE, HTML).
    setEarlyHeader(res, 'X-Content-Type-Options', 'nosniff');
    const match = router.match(req, res);
    observation.observe(req, res, match.route?.pattern ?? unmatchedRoute);
    const cors = match.route?.cors === true;
    if (cors) applyCors(res);
    if (refusesKeyInUrl(req)) return { route: match.route, answer: () => refuseKeyInUrl(req, res) };
    if (!cors || match.route === undefined) return match;
    const options = match.route.pattern === deps.graphqlPattern ? graphqlGuard : restGuard;
    return { route: match.route, answer: () => guardApiKey(apiKeys, req, res, options, match.answer) };
  };
  if (tracing === undefined) return (req, res) => route(req, res).answer();
  return (req, res) => {
    const match = route(req, res);
    tracing.traceRequest(req, res, match.route?.pattern, match.answer);
  };
}
