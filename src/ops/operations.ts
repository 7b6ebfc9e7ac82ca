/**
 * The operations side of one App: health and readiness endpoints, metrics, the per-request log
 * line, and the shutdown switch.
 */
import cluster from 'node:cluster';
import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { DatabaseHandle } from '../db/database.js';
import type { Router } from '../http/router.js';
import type { RateLimits } from '../limits/rate-limit.js';
import type { Logger } from '../logging/logger.js';
import type { ProfileCacheStats } from '../service/profile-cache.js';
import { clusterMetricsRenderer } from './cluster-metrics.js';
import { graphqlOperationMetrics } from './graphql-operation-metrics.js';
import { createMetrics, type Metrics } from './metrics.js';
import { observeRateLimits } from './rate-limit-metrics.js';
import { createReadiness, type Readiness } from './readiness.js';
import { createRequestObserver, type RequestObserver } from './request-log.js';
import { createRequestNotes } from './request-notes.js';
import { HEALTH_PATH, READINESS_PATH, registerOperationsRoutes } from './routes.js';

export interface Operations {
  readonly metrics: Metrics;
  readonly readiness: Readiness;
  /** Call first for every request: logs and measures it when its answer is done. */
  observe: RequestObserver;
  /** Registers /healthz, /readyz and /metrics. */
  registerRoutes(router: Router): void;
  /** Yoga plugin: GraphQL operation metrics and operation names on the request log line. */
  readonly graphqlPlugin: Plugin;
  /**
   * The same limits, with rejections counted in `rate_limit_rejections_total` and, with a shared
   * store, its state in `rate_limit_store_up`.
   */
  observeRateLimits(limits: RateLimits): RateLimits;
  /** The request's valid API key, by its id: the request log line shows it. */
  noteApiKey(req: IncomingMessage, id: string): void;
  /** Readiness turns 503 and answers ask clients to close their connections. */
  beginShutdown(): void;
}

export interface OperationsDeps {
  database: DatabaseHandle;
  logger: Logger;
  /** Figures of the profile cache, read when Prometheus scrapes. */
  cacheStats(): ProfileCacheStats;
}

export function createOperations({ database, logger, cacheStats }: OperationsDeps): Operations {
  const metrics = createMetrics(database, cacheStats);
  const readiness = createReadiness(database, logger);
  const notes = createRequestNotes();
  const logRequest = createRequestObserver({
    logger,
    metrics,
    notes,
    quietRoutes: new Set([HEALTH_PATH, READINESS_PATH]),
  });

  return {
    metrics,
    readiness,
    observe(req, res, route) {
      // While draining, keep-alive clients are told to reconnect (to another instance).
      if (readiness.shuttingDown) res.setHeader('Connection', 'close');
      logRequest(req, res, route);
    },
    registerRoutes(router) {
      registerOperationsRoutes(router, {
        readiness,
        replicas: database.replicas?.bind(database),
        renderMetrics: cluster.isWorker ? clusterMetricsRenderer(metrics.registry) : metrics.render,
        metricsContentType: metrics.contentType,
        logger,
      });
    },
    graphqlPlugin: graphqlOperationMetrics(metrics, notes),
    observeRateLimits: (limits) => observeRateLimits(limits, metrics),
    noteApiKey: (req, id) => {
      notes.of(req).apiKeyId = id;
    },
    beginShutdown: () => readiness.beginShutdown(),
  };
}
