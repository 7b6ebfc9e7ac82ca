/**
 * Composition root: opens the database, builds every part of the service from the configuration
 * and wires their routes into one request handler. Tests build an App the same way `main` does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from './config/config.js';
import type { DatabaseHandle } from './db/database.js';
import { openConfiguredDatabase } from './db/open-configured.js';
import type { GraphQLServices } from './graphql/context.js';
import { contextForNodeRequest, createGraphQLServer, GRAPHQL_ENDPOINT, schema } from './graphql/yoga.js';
import { requestIdOf } from './http/request-id.js';
import { createRouter } from './http/router.js';
import { createRateLimits } from './limits/create-rate-limits.js';
import type { Logger } from './ops/logger.js';
import { createOperations, type Operations } from './ops/operations.js';
import { answerBadApiUrl, registerRestRoutes } from './rest/routes.js';

export interface App {
  config: Config;
  database: DatabaseHandle;
  logger: Logger;
  /** What every request shares: database, rate limits, logger, configuration. */
  services: GraphQLServices;
  /** Health, readiness, metrics, request logs, and the shutdown switch. */
  operations: Operations;
  handle(req: IncomingMessage, res: ServerResponse): void;
  close(): Promise<void>;
}

export interface AppOptions {
  /** An already open, migrated database (tests); otherwise one is opened from the config. */
  database?: DatabaseHandle;
}

export async function createApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  const database = options.database ?? (await openConfiguredDatabase(config));
  const router = createRouter({ answerBadUrl: answerBadApiUrl });
  // Before any route: it learns the route patterns for the request logs and metrics.
  const operations = createOperations({ router, database, logger });
  const limits = operations.countRateLimitRejections(createRateLimits(config, logger));
  const services: GraphQLServices = { db: database.db, guard: (work) => database.guard(work), limits, logger, config };
  const graphql = createGraphQLServer(services, { plugins: [operations.graphqlPlugin] });
  router.on(['GET', 'POST', 'OPTIONS'], GRAPHQL_ENDPOINT, (req, res) => {
    // Yoga's Node listener answers on `res` itself and hands `{ req, res }` to the context factory.
    void graphql.requestListener(req, res);
  });
  registerRestRoutes(router, {
    schema,
    config,
    logger,
    contextFor: (req, res) => contextForNodeRequest(services, req, res),
  });

  return {
    config,
    database,
    logger,
    services,
    operations,
    handle(req, res) {
      res.setHeader('X-Request-Id', requestIdOf(req));
      operations.observe(req, res);
      router.lookup(req, res);
    },
    async close() {
      await limits.close();
      if (options.database === undefined) await database.close();
    },
  };
}
