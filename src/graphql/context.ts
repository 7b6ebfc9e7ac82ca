/**
 * The per-request context of every resolver, for `/graphql` and for the REST shim alike. It holds
 * nothing Yoga-specific, so the REST shim can run operations with graphql-js's `execute`.
 */
import type { Config } from '../config/config.js';
import type { Database, DatabaseGuard } from '../db/database.js';
import type { RateLimitDecision, RateLimits } from '../limits/rate-limit.js';
import type { Logger } from '../ops/logger.js';
import { createLoaders, type Loaders } from './loaders.js';

/** What the app builds once and every request shares. */
export interface GraphQLServices {
  db: Database;
  /** `DatabaseHandle.guard`: bounds each loader query (deadline, outage gate). */
  guard?: DatabaseGuard;
  limits: RateLimits;
  logger: Logger;
  config: Config;
}

export interface RequestContext {
  loaders: Loaders;
  /** The key of the per-IP rate limits. */
  clientIp: string;
  limits: RateLimits;
  /** The last decision per budget in this request, so REST can write the RateLimit-* headers. */
  rateLimitDecisions: { ownerCheck?: RateLimitDecision; profile?: RateLimitDecision };
  requestId: string;
}

export interface RequestIdentity {
  clientIp: string;
  requestId: string;
}

export function createRequestContext(services: GraphQLServices, identity: RequestIdentity): RequestContext {
  return {
    loaders: createLoaders(services.db, services.logger, services.guard),
    clientIp: identity.clientIp,
    limits: services.limits,
    rateLimitDecisions: {},
    requestId: identity.requestId,
  };
}
