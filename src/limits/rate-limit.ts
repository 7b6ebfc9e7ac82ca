/**
 * The rate-limit vocabulary the rest of the service uses. The GraphQL resolvers consume budget
 * through `RateLimiter`; how and where the counters live (memory, Redis) is the limits module's
 * business.
 */

export interface RateLimitDecision {
  allowed: boolean;
  /** Budget per window. */
  limit: number;
  /** What is left of the budget in the current window after this request. */
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

/** The budgets a client draws on; an API key has a limit of its own for each. */
export type RateLimitBudget = 'profile' | 'owner-check';

export interface RateLimiter {
  readonly budget: RateLimitBudget;
  /** The budget per window of a client without an API key. */
  readonly limit: number;
  /**
   * Takes `points` (default 1) from `key`'s budget of `limit` points per window (default: the
   * limiter's). Never rejects: a store failure is handled inside.
   */
  consume(key: string, points?: number, limit?: number): Promise<RateLimitDecision>;
}

export interface RateLimits {
  /** Owner checks per client IP, shared by REST and GraphQL. */
  ownerCheck: RateLimiter;
  /** Profile lookups per client IP; null when switched off (`PROFILE_LIMIT=0`). */
  profile: RateLimiter | null;
  /**
   * Only with a shared store (REDIS_URL): whether the counters are kept there right now, false
   * while each process counts on its own (Redis down, unreachable or not answering).
   */
  readonly sharedStoreUp?: () => boolean;
  close(): Promise<void>;
}

export const tooManyRequestsMessage = (retryAfterSeconds: number): string =>
  `Too many requests, retry in ${retryAfterSeconds} seconds`;
