import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitDecision, RateLimiter } from './rate-limit.js';

/** Per-process limiter: a fixed window of `durationSeconds` holding `limit` points per key. */
export function createMemoryLimiter(keyPrefix: string, limit: number, durationSeconds: number): RateLimiter {
  const limiter = new RateLimiterMemory({ keyPrefix, points: limit, duration: durationSeconds });
  return {
    limit,
    async consume(key, points = 1) {
      try {
        return decision(limit, true, await limiter.consume(key, points));
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decision(limit, false, rejection);
        throw rejection;
      }
    },
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
