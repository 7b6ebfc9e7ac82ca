/**
 * The operations side of one App: health and readiness endpoints, metrics, the per-request log
 * line, and the shutdown switch. `src/app.ts` creates it right after the router, before any
 * route is registered, so that every route's pattern is known to the logs and metrics.
 */
import cluster from 'node:cluster';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { DatabaseHandle } from '../db/database.js';
import type { AppRouter } from '../http/router.js';
import type { RateLimits } from '../limits/rate-limit.js';
import { clusterMetricsRenderer } from './cluster-metrics.js';
import { graphqlOperationMetrics } from './graphql-operation-metrics.js';
import type { Logger } from './logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { countRateLimitRejections } from './rate-limit-metrics.js';
import { createReadiness, type Readiness } from './readiness.js';
import { createRequestObserver } from './request-log.js';
import { createRequestNotes } from './request-notes.js';
import { trackRoutePatterns } from './route-patterns.js';
import { registerOperationsRoutes } from './routes.js';

export interface Operations {
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  /** Call first for every request: logs and measures it when its answer is done. */
  observe(req: IncomingMessage, res: ServerResponse): void;
  /** Yoga plugin: GraphQL operation metrics and operation names on the request log line. */
  readonly graphqlPlugin: Plugin;
  /** The same limits, with rejections counted in `rate_limit_rejections_total`. */
  countRateLimitRejections(limits: RateLimits): RateLimits;
  /** Readiness turns 503 and answers ask clients to close their connections. */
  beginShutdown(): void;
}

export interface OperationsDeps {
  router: AppRouter;
  database: DatabaseHandle;
  logger: Logger;
}

export function createOperations({ router, database, logger }: OperationsDeps): Operations {
  const routes = trackRoutePatterns(router);
  const metrics = createMetrics(database);
  const readiness = createReadiness(database, logger);
  const notes = createRequestNotes();
  const logRequest = createRequestObserver({ logger, metrics, routes, notes });

  registerOperationsRoutes(router, {
    readiness,
    renderMetrics: cluster.isWorker ? clusterMetricsRenderer(metrics.registry) : metrics.render,
    metricsContentType: metrics.contentType,
    logger,
  });

  return {
    metrics,
    readiness,
    observe(req, res) {
      // While draining, keep-alive clients are told to reconnect (to another instance).
      if (readiness.shuttingDown) res.setHeader('Connection', 'close');
      logRequest(req, res);
    },
    graphqlPlugin: graphqlOperationMetrics(metrics, notes),
    countRateLimitRejections: (limits) => countRateLimitRejections(limits, metrics),
    beginShutdown: () => readiness.beginShutdown(),
  };
}
