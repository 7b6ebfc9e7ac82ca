/**
 * What a call to the webhook endpoints API costs (docs/webhooks.md, "Rate limits"): the call needs
 * an API key, and draws one point of that key's profile budget, whatever it asks (list, create,
 * replay…) and whether it succeeds or not, as any lookup does. The endpoints service
 * (./webhooks.ts) knows nothing of budgets; the REST routes ask here first.
 */
import type { RateLimitDecision, RateLimiter } from '../limits/rate-limit.js';
import { spend } from './profiles-service.js';
import type { ServiceRequest } from './request.js';
import { ApiKeyRequiredError } from './webhooks.js';

export interface WebhookBudget {
  /**
   * Throws ApiKeyRequiredError without a key. Nothing is drawn then: the request is answered
   * before anything is read, as the API-key guard answers a refused key.
   */
  requireKey(request: ServiceRequest): void;
  /** One point of the key's profile budget; RateLimitedError when it is spent. */
  draw(request: ServiceRequest): Promise<RateLimitDecision | undefined>;
}

export function webhookBudget(profileBudget: RateLimiter | null): WebhookBudget {
  const requireKey = (request: ServiceRequest): void => {
    if (request.apiKey === undefined) throw new ApiKeyRequiredError();
  };
  return {
    requireKey,
    draw: async (request) => {
      requireKey(request);
      return spend(profileBudget, request, 1);
    },
  };
}
