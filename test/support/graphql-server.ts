/**
 * `/graphql` over a test database without an HTTP server: Yoga on the profiles service, as the
 * app builds it, with fresh rate-limit budgets. The profile cache is off, so every lookup reaches
 * the loaders and counted statements mean what they say; the cache has suites of its own.
 */
import { loadConfig } from '../../src/config/config.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { createGraphQLServer, type GraphQLServer, type GraphQLServerDeps } from '../../src/graphql/yoga.js';
import { createRateLimits } from '../../src/limits/create-rate-limits.js';
import type { RateLimits } from '../../src/limits/rate-limit.js';
import { createLogger, type Logger } from '../../src/ops/logger.js';
import { createAvatarService } from '../../src/service/avatars.js';
import { Links } from '../../src/service/links.js';
import { ProfileCache } from '../../src/service/profile-cache.js';
import { createProfilesService, type ProfilesService } from '../../src/service/profiles-service.js';

export interface InProcessService {
  profiles: ProfilesService;
  limits: RateLimits;
  yoga: GraphQLServer;
  close(): Promise<void>;
}

/** GraphQL server settings a test may choose (its document caches, compiled execution). */
export type GraphQLOptions = Pick<GraphQLServerDeps, 'documents' | 'compiledExecution'>;

/** The service and its GraphQL server on `database`, configured by `env` (NODE_ENV=test unless given). */
export function serviceOn(
  database: DatabaseHandle,
  env: Record<string, string> = {},
  logger: Logger = createLogger('silent', { pretty: false }),
  graphql: GraphQLOptions = {},
): InProcessService {
  const config = loadConfig({ NODE_ENV: 'test', ...env });
  const limits = createRateLimits(config, logger);
  const cache = new ProfileCache(0, () => false);
  const profiles = createProfilesService({ database, limits, cache, logger });
  const avatars = createAvatarService(profiles, new Links(config.publicUrl));
  const yoga = createGraphQLServer({ profiles, avatars, config, logger, ...graphql });
  return { profiles, limits, yoga, close: () => limits.close() };
}
