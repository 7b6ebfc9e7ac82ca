/**
 * Builds the rate limits of one app from the configuration: counters in Redis when REDIS_URL is
 * set (shared by every process on it, with in-memory insurance while Redis is away or hangs, see
 * redis-breaker.ts), otherwise in this process's memory.
 */
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { createMemoryLimiter } from './memory-limiter.js';
import type { RateLimitBudget, RateLimiter, RateLimits } from './rate-limit.js';
import { connectRedis } from './redis-connection.js';
import { createRedisLimiter } from './redis-limiter.js';

/** Namespaces this service's counters in a Redis that other software may share. */
export const DEFAULT_KEY_PREFIX = 'nps:rl';

export interface RateLimitsOptions {
  /**
   * Prefix of the Redis keys (`<prefix>:owner-check:<ip>`); tests isolate themselves with it.
   * Default: RATE_LIMIT_PREFIX from the configuration, else DEFAULT_KEY_PREFIX.
   */
  keyPrefix?: string;
}

export function createRateLimits(config: Config, logger: Logger, options: RateLimitsOptions = {}): RateLimits {
  const window = config.rateWindowSeconds;
  if (config.redisUrl === undefined) {
    return {
      ownerCheck: createMemoryLimiter('owner-check', config.ownerCheckLimit, window),
      profile: config.profileLimit === 0 ? null : createMemoryLimiter('profile', config.profileLimit, window),
      async close() {},
    };
  }
  const prefix = options.keyPrefix ?? config.rateLimitPrefix ?? DEFAULT_KEY_PREFIX;
  const connection = connectRedis(config.redisUrl, logger);
  const redisLimiter = (budget: RateLimitBudget, limit: number): RateLimiter =>
    createRedisLimiter(connection, { budget, keyPrefix: `${prefix}:${budget}`, limit, durationSeconds: window });
  return {
    ownerCheck: redisLimiter('owner-check', config.ownerCheckLimit),
    profile: config.profileLimit === 0 ? null : redisLimiter('profile', config.profileLimit),
    // The limiters send to Redis exactly while the connection is ready (rejectIfRedisNotReady).
    sharedStoreUp: () => connection.isReady(),
    close: () => connection.close(),
  };
}
