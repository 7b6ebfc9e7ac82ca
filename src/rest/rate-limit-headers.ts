import type { OutgoingHttpHeaders } from 'node:http';
import type { RateLimitDecision } from '../limits/rate-limit.js';

/** The `RateLimit-*` headers of the contract (IETF draft names), for a rate-limited REST answer. */
export function rateLimitHeaders(decision: RateLimitDecision | undefined): OutgoingHttpHeaders {
  if (decision === undefined) return {};
  return {
    'RateLimit-Limit': decision.limit,
    'RateLimit-Remaining': decision.remaining,
    'RateLimit-Reset': decision.resetSeconds,
  };
}
