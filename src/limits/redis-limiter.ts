/**
 * A limiter whose counters live in Redis, so every process on the same Redis draws on one budget.
 *
 * rate-limiter-flexible's own insurance mechanism keeps it answering when Redis is not: any
 * store error (not ready, refused, timed out) makes `RateLimiterRedis` run the same `consume` on
 * the `insuranceLimiter`, an in-memory limiter of the same size. The next call tries Redis again,
 * so limits are shared again as soon as the connection is back. A Redis that hangs costs each
 * request the command timeout only until the breaker drops its connection (redis-breaker.ts);
 * from then on it counts as not ready, and requests go to the insurance at once. While Redis is
 * away each process counts on its own, which can let a client through up to one budget per
 * process; that is the price of answering instead of failing.
 */
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { decision, limitersByLimit } from './memory-limiter.js';
import type { RateLimitBudget, RateLimiter } from './rate-limit.js';
import type { RedisConnection } from './redis-connection.js';

export interface RedisLimiterOptions {
  budget: RateLimitBudget;
  /** Namespaces the counters, e.g. `rl:owner-check`; different budgets need different prefixes. */
  keyPrefix: string;
  limit: number;
  durationSeconds: number;
}

export function createRedisLimiter(connection: RedisConnection, options: RedisLimiterOptions): RateLimiter {
  const { budget, keyPrefix, limit, durationSeconds } = options;
  // An API key's limit gets limiters of its own (see limitersByLimit), on the same Redis keys.
  const byLimit = limitersByLimit(
    (points) =>
      new RateLimiterRedis({
        storeClient: connection.client,
        keyPrefix,
        points,
        duration: durationSeconds,
        // Check the connection state before every call and go to the insurance at once when it is
        // not ready, instead of handing ioredis a command it can only reject.
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds }),
      }),
  );

  return {
    budget,
    limit,
    async consume(key, points = 1, keyLimit = limit) {
      await connection.started;
      try {
        return decision(keyLimit, true, await byLimit(keyLimit).consume(key, points));
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decision(keyLimit, false, rejection);
        throw rejection;
      }
    },
  };
}
