/**
 * The rate limits' metrics, without the limits module knowing about metrics: rejections are
 * counted by wrapping the app's limiters once, so REST and GraphQL consumers are counted alike;
 * the shared store's state is read when Prometheus scrapes.
 */
import type { RateLimiter, RateLimits } from '../limits/rate-limit.js';
import { type Metrics, type RateLimitBudget, registerRateLimitStoreMetric } from './metrics.js';

function counted(limiter: RateLimiter, budget: RateLimitBudget, metrics: Metrics): RateLimiter {
  return {
    budget: limiter.budget,
    limit: limiter.limit,
    async consume(key, points, limit) {
      const decision = await limiter.consume(key, points, limit);
      if (!decision.allowed) metrics.rateLimitRejections.inc({ budget });
      return decision;
    },
  };
}

export function countRateLimitRejections(limits: RateLimits, metrics: Metrics): RateLimits {
  // Both budgets appear from the first scrape, at 0.
  metrics.rateLimitRejections.inc({ budget: 'owner_check' }, 0);
  if (limits.profile !== null) metrics.rateLimitRejections.inc({ budget: 'profile' }, 0);
  return {
    ownerCheck: counted(limits.ownerCheck, 'owner_check', metrics),
    profile: limits.profile === null ? null : counted(limits.profile, 'profile', metrics),
    ...(limits.sharedStoreUp === undefined ? {} : { sharedStoreUp: limits.sharedStoreUp }),
    close: () => limits.close(),
  };
}

/** Rejections counted (as above) and, with a shared store, `rate_limit_store_up`. */
export function observeRateLimits(limits: RateLimits, metrics: Metrics): RateLimits {
  if (limits.sharedStoreUp !== undefined) registerRateLimitStoreMetric(metrics.registry, limits.sharedStoreUp);
  return countRateLimitRejections(limits, metrics);
}
