/**
 * One request as the service sees it: who asks (the key its budgets are counted under) and the
 * id its log lines carry. The HTTP adapters build it; the service keeps the request's loaders
 * on it, created on first use, so a request answered from the cache creates none.
 */
import type { EdgeReads } from '../edge/edge-caching.js';
import type { RateLimitDecision } from '../limits/rate-limit.js';
import type { Loaders } from '../loaders/loaders.js';

/** An answer and the budget decision it cost (undefined when that budget is switched off). */
export interface Outcome<T> {
  value: T;
  rateLimit: RateLimitDecision | undefined;
}

export class ServiceRequest {
  /** Set by the service on the first database read of this request. */
  loaders: Loaders | undefined;
  /** The database's unavailability is logged once per request, however many reads fail. */
  unavailableLogged = false;
  /** What the answer read, for shared caches' tags (set by the service when purging is on). */
  edge: EdgeReads | undefined;

  constructor(
    /** The rate-limit key of the client (its IP address, or IPv6 /64 network). */
    readonly clientKey: string,
    readonly requestId: string,
  ) {}
}
