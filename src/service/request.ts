/**
 * One request as the service sees it: who asks (the key its budgets are counted under) and the
 * id its log lines carry. The HTTP adapters build it; the service keeps the request's loaders
 * on it, created on first use, so a request answered from the cache creates none.
 */
import type { EdgeReads } from '../edge/edge-caching.js';
import type { RateLimitBudget, RateLimitDecision } from '../limits/rate-limit.js';
import type { Loaders } from '../loaders/loaders.js';

/** An answer and the budget decision it cost (undefined when that budget is switched off). */
export interface Outcome<T> {
  value: T;
  rateLimit: RateLimitDecision | undefined;
}

/** An app's valid API key as the rate limits need it: its id and its own limits per minute. */
export interface ApiKeyGrant {
  /** The key's public id (never the key). */
  readonly id: string;
  readonly limits: Readonly<Record<RateLimitBudget, number>>;
  /** Whether it may run only persisted documents (`keys create --documents-only`, docs/api-keys.md). */
  readonly documentsOnly: boolean;
}

const KEY_CLIENT_PREFIX = 'key:';

/** The budget key of requests with API key `id`; no IP address looks like it. */
export const apiKeyClient = (id: string): string => `${KEY_CLIENT_PREFIX}${id}`;

/** The API key id of a budget key, undefined for an address. */
export const apiKeyIdOf = (clientKey: string): string | undefined =>
  clientKey.startsWith(KEY_CLIENT_PREFIX) ? clientKey.slice(KEY_CLIENT_PREFIX.length) : undefined;

export class ServiceRequest {
  /** Set by the service on the first database read of this request. */
  loaders: Loaders | undefined;
  /** The database's unavailability is logged once per request, however many reads fail. */
  unavailableLogged = false;
  /** What the answer read, for shared caches' tags (set by the service when purging is on). */
  edge: EdgeReads | undefined;

  constructor(
    /**
     * The rate-limit key of the client: its IP address (or IPv6 /64 network), or, with an API
     * key, `key:<key id>`.
     */
    readonly clientKey: string,
    readonly requestId: string,
    /** The request's API key; undefined without one (the per-IP limits apply). */
    readonly apiKey?: ApiKeyGrant,
  ) {}
}
