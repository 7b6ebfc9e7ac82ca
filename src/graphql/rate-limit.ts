/**
 * Drawing on a rate-limit budget from a resolver: the decision is kept in the context (REST turns
 * it into RateLimit-* headers) and a refusal is a RATE_LIMITED error on the field that asked.
 */
import type { RateLimiter } from '../limits/rate-limit.js';
import type { RequestContext } from './context.js';
import { rateLimitedError } from './errors.js';

export type Budget = keyof RequestContext['rateLimitDecisions'];

/** Takes `points` from the client's `budget`; throws RATE_LIMITED when the budget is spent. */
export async function consumeBudget(context: RequestContext, budget: Budget, points = 1): Promise<void> {
  const limiter: RateLimiter | null = context.limits[budget];
  if (limiter === null) return; // this budget is switched off
  const decision = await limiter.consume(context.clientIp, points);
  context.rateLimitDecisions[budget] = decision;
  if (!decision.allowed) throw rateLimitedError(decision.resetSeconds);
}
