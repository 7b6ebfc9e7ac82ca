/**
 * `/graphql` of a whole App over a test database, on a port of its own, with fresh rate-limit
 * budgets. The profile cache is off, so every lookup reaches the loaders and counted statements
 * mean what they say; the cache has suites of its own.
 */
import type { DatabaseHandle } from '../../src/db/database.js';
import type { GraphQLServerDeps } from '../../src/graphql/yoga.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { startTestServer, type TestServer, type TestServerOptions } from './app-server.js';

/** GraphQL server settings a test may choose (its document caches, compiled execution). */
export type GraphQLOptions = Pick<GraphQLServerDeps, 'documents' | 'compiledExecution' | 'keptAnswers'>;

export interface GraphQLTestService extends TestServer {
  /** The service's `/graphql` URL. */
  graphqlUrl: string;
}

/** The service on `database`, configured by `env` (NODE_ENV=test unless given). */
export async function serviceOn(
  database: DatabaseHandle,
  env: Record<string, string> = {},
  logger: Logger = createLogger('silent', { pretty: false }),
  options: TestServerOptions = {},
): Promise<GraphQLTestService> {
  const server = await startTestServer(database, { PROFILE_CACHE_SIZE: '0', ...env }, logger, options);
  return { ...server, graphqlUrl: `${server.url}/graphql` };
}
