/**
 * Counts rate-limit rejections without the limits module knowing about metrics: the app's
 * limiters are wrapped once, so REST and GraphQL consumers are counted alike.
 */
import type { RateLimiter, RateLimits } from '../limits/rate-limit.js';
import type { Metrics, RateLimitBudget } from './metrics.js';

function counted(limiter: RateLimiter, budget: RateLimitBudget, metrics: Metrics): RateLimiter {
  return {
    limit: limiter.limit,
    async consume(key, points) {
      const decision = await limiter.consume(key, points);
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
    close: () => limits.close(),
  };
}
