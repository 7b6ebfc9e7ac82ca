import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitBudget, RateLimitDecision, RateLimiter } from './rate-limit.js';

/**
 * Per-process limiter: a fixed window of `durationSeconds` holding `limit` points per key. A
 * different limit (an API key's) gets a limiter of its own; there are as many as distinct limits.
 */
export function createMemoryLimiter(budget: RateLimitBudget, limit: number, durationSeconds: number): RateLimiter {
  const byLimit = limitersByLimit(
    (points) => new RateLimiterMemory({ keyPrefix: budget, points, duration: durationSeconds }),
  );
  return {
    budget,
    limit,
    async consume(key, points = 1, keyLimit = limit) {
      try {
        return decision(keyLimit, true, await byLimit(keyLimit).consume(key, points));
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decision(keyLimit, false, rejection);
        throw rejection;
      }
    },
  };
}

/**
 * One rate-limiter-flexible limiter per distinct limit, made on first use. A limiter's points
 * are fixed when it is made; the counters of a key are the store's, so a key always drawn with
 * the same limit (an API key's never changes) counts the same whichever limiter reads it.
 */
export function limitersByLimit<T>(make: (points: number) => T): (limit: number) => T {
  const limiters = new Map<number, T>();
  return (limit) => {
    let limiter = limiters.get(limit);
    if (limiter === undefined) {
      limiter = make(limit);
      limiters.set(limit, limiter);
    }
    return limiter;
  };
}

export function decision(limit: number, allowed: boolean, res: RateLimiterRes): RateLimitDecision {
  return {
    allowed,
    limit,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}
