/**
 * The API-key check of every request to a route apps call (`/api/…`, `/graphql`, WebFinger), run
 * before the route's handler: an invalid, unknown or revoked key answers 401 (GraphQL's answer on
 * `/graphql`), never the per-IP limits instead; a valid key is remembered for the request
 * (`apiKeyOf`), so the service counts it under the key's limits, and its answers are for the one
 * client that sent it (`Cache-Control: private` unless the answer says more, see below). A key in
 * the query string answers 400 on every path, apps' or not (`refusesKeyInUrl`).
 * Which key a request presents is src/limits/api-key-credentials.ts's rule; which keys are valid,
 * src/service/api-keys.ts's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  API_KEY_IN_URL_MESSAGE,
  apiKeyInQuery,
  type Credential,
  credentialOf,
  credentialOfKey,
  INVALID_API_KEY_MESSAGE,
} from '../limits/api-key-credentials.js';
import { rateLimitKey } from '../limits/client-key.js';
import type { Logger } from '../logging/logger.js';
import type { ApiKeyStore } from '../service/api-keys.js';
import {
  asServiceError,
  describeFailure,
  INTERNAL_SERVER_ERROR_MESSAGE,
  RateLimitedError,
  SERVICE_UNAVAILABLE_MESSAGE,
  UNAVAILABLE_RETRY_AFTER_SECONDS,
} from '../service/errors.js';
import type { ApiKeyGrant } from '../service/request.js';
import { isPreflight } from './cors.js';
import { requestIdOfAnswer } from './request-id.js';
import { sendError, sendJson } from './respond.js';
import { setEarlyHeader } from './service-response.js';

/** Answers about a key are for the one client that sent it. */
const NO_STORE = { 'Cache-Control': 'no-store' };

/**
 * A request's valid key rides on the request under a symbol only this module holds, rather than
 * in a WeakMap: an entry per keyed request in a WeakMap costs the garbage collector more than the
 * rest of the key's path (docs/decisions.md, "Request notes on the request").
 */
const GRANT = Symbol('api key grant');
type CheckedRequest = IncomingMessage & { [GRANT]?: ApiKeyGrant };

/** The valid API key the request was checked with; undefined without one. */
export const apiKeyOf = (req: IncomingMessage): ApiKeyGrant | undefined => (req as CheckedRequest)[GRANT];

const remember = (req: IncomingMessage, grant: ApiKeyGrant): void => {
  (req as CheckedRequest)[GRANT] = grant;
};

export interface ApiKeyGuardOptions {
  /** How many proxies' X-Forwarded-For entries to trust (the client address, see client-ip.ts). */
  trustProxyHops: number;
  /** Whether the route answers GraphQL (401 as a GraphQL error with code UNAUTHENTICATED). */
  graphql: boolean;
  logger: Logger;
  /** Told the id of each valid key (the request log line shows it). */
  onKey?: (req: IncomingMessage, id: string) => void;
}

/**
 * Whether the request has a key in its query string, which is answered 400 whatever the path: a
 * key in a URL ends up in access logs, proxies, browser histories and caches. A CORS preflight
 * passes, so that a browser's request after it gets the 400 with its message.
 */
export function refusesKeyInUrl(req: IncomingMessage): boolean {
  return req.url !== undefined && apiKeyInQuery(req.url) && !isPreflight(req);
}

export function refuseKeyInUrl(req: IncomingMessage, res: ServerResponse): void {
  sendError(req, res, 400, API_KEY_IN_URL_MESSAGE, NO_STORE);
}

/**
 * Checks the request's key and calls `next` when it may go on (no key, or a valid one); answers
 * the request itself otherwise. Synchronous for requests without a key and for keys in the cache.
 */
export function guardApiKey(
  store: ApiKeyStore,
  req: IncomingMessage,
  res: ServerResponse,
  options: ApiKeyGuardOptions,
  next: () => void,
): void {
  const credential = credentialOf(req);
  if (credential.kind === 'none') {
    next();
    return;
  }
  if (credential.kind === 'invalid') {
    refuse(req, res, options);
    return;
  }
  const admit = (grant: ApiKeyGrant | null) => {
    if (grant === null) {
      refuse(req, res, options);
      return;
    }
    remember(req, grant);
    // Every answer to it shows the key's budget: for its client alone, whatever the answer is (an
    // error, a GraphQL POST). Answers that say more replace it: public data gets `private` with
    // its max-age (src/edge/edge-caching.ts), answers never to be kept keep `no-store`.
    setEarlyHeader(res, 'Cache-Control', 'private');
    options.onKey?.(req, grant.id);
    next();
  };
  let found: ReturnType<ApiKeyStore['resolve']>;
  try {
    found = store.resolve(credential.hash, () => rateLimitKey(req, options.trustProxyHops));
  } catch (error) {
    unavailable(req, res, error, options.logger);
    return;
  }
  if (found instanceof Promise) found.then(admit, (error: unknown) => unavailable(req, res, error, options.logger));
  else admit(found);
}

/**
 * The key of a graphql-ws connection: the `apiKey` field of its `connection_init` payload, or the
 * upgrade request's headers (both: they must agree). True when the connection may go on (no
 * key, or a valid one, then remembered for the upgrade request its operations run with); false
 * for an invalid, unknown or revoked key, and for an `apiKey` that is not a string (a number, an
 * object, null: JSON that is no key). Rejects when the database cannot tell.
 */
export async function admitConnection(
  store: ApiKeyStore,
  req: IncomingMessage,
  payloadKey: unknown,
  trustProxyHops: number,
): Promise<boolean> {
  const fromHeaders = credentialOf(req);
  const fromPayload = payloadCredential(payloadKey) ?? fromHeaders;
  if (fromHeaders.kind === 'invalid' || fromPayload.kind === 'invalid') return false;
  if (fromHeaders.kind === 'key' && fromPayload.kind === 'key' && fromHeaders.hash !== fromPayload.hash) return false;
  const credential = fromPayload.kind === 'key' ? fromPayload : fromHeaders;
  if (credential.kind === 'none') return true;
  const grant = await store.resolve(credential.hash, () => rateLimitKey(req, trustProxyHops));
  if (grant === null) return false;
  remember(req, grant);
  return true;
}

/**
 * The `apiKey` of a `connection_init` payload; undefined when there is none. Only a string can
 * be a key: anything else is invalid as it is, never converted (`String()` of an object runs its
 * `toString`, which a client's JSON may have made anything).
 */
function payloadCredential(payloadKey: unknown): Credential | undefined {
  if (payloadKey === undefined) return undefined;
  return typeof payloadKey === 'string' ? credentialOfKey(payloadKey) : { kind: 'invalid' };
}

/** The answer to an invalid, unknown or revoked key; the WebSocket transport closes with 4401 instead. */
function refuse(req: IncomingMessage, res: ServerResponse, { graphql }: ApiKeyGuardOptions): void {
  if (!graphql) {
    sendError(req, res, 401, INVALID_API_KEY_MESSAGE, { ...NO_STORE, 'WWW-Authenticate': 'Bearer' });
    return;
  }
  const body = { errors: [{ message: INVALID_API_KEY_MESSAGE, extensions: { code: 'UNAUTHENTICATED' } }] };
  sendJson(req, res, 401, body, { ...NO_STORE, 'WWW-Authenticate': 'Bearer' });
}

/**
 * Whether the key is valid cannot be told: the database cannot answer (503, as any read of the
 * request), or this address sent too many unknown keys (429). Answering as if there were no key
 * would be the silent fall-back the contract forbids.
 */
function unavailable(req: IncomingMessage, res: ServerResponse, error: unknown, logger: Logger): void {
  if (res.headersSent) return;
  if (error instanceof RateLimitedError) {
    // Too many unknown keys from this address (src/service/api-keys.ts).
    sendError(req, res, 429, error.message, { ...NO_STORE, 'Retry-After': error.retryAfterSeconds });
    return;
  }
  if (asServiceError(error) !== undefined) {
    sendError(req, res, 503, SERVICE_UNAVAILABLE_MESSAGE, { 'Retry-After': UNAVAILABLE_RETRY_AFTER_SECONDS });
    return;
  }
  logger.error({ requestId: requestIdOfAnswer(res), reason: describeFailure(error) }, 'API key lookup failed');
  sendError(req, res, 500, INTERNAL_SERVER_ERROR_MESSAGE);
}
