/**
 * The Prometheus metrics of one App. Each App has a registry of its own (tests build several
 * apps in one process); the process-wide default metrics (CPU, memory, event loop, GC) live in
 * one shared registry and are shown with every app's.
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { DatabaseHandle, DatabaseStats } from '../db/database.js';
import type { ReplicaStatus } from '../db/replicas.js';
import type { ProfileCacheStats } from '../service/profile-cache.js';
import { LatencyHistogram, ObservationCounter } from './latency-series.js';

/** Seconds; from a cache hit to a request that waited for a database timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type RateLimitBudget = 'owner_check' | 'profile';

export interface Metrics {
  readonly registry: Registry;
  /** Requests answered and their durations (`http_request_duration_seconds`; `http_requests_total` counts its observations). */
  readonly httpRequestDuration: LatencyHistogram<'method' | 'route' | 'status'>;
  /** Requests received and not answered yet (`http_requests_in_flight`). */
  readonly httpRequestsInFlight: Gauge;
  /** Requests (or GraphQL fields) refused because a rate-limit budget was used up. */
  readonly rateLimitRejections: Counter<'budget'>;
  readonly graphqlOperationDuration: LatencyHistogram<'operation' | 'type' | 'outcome'>;
  /** The Prometheus text of this app and the process. */
  render(): Promise<string>;
  readonly contentType: string;
}

let processRegistry: Registry | undefined;

/** Created once: the default metrics observe the process, whichever app asks. */
function defaultMetricsRegistry(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetrics(database: DatabaseHandle, cacheStats: () => ProfileCacheStats): Metrics {
  const own = new Registry();
  // Latency histograms of our own rather than prom-client's: see ./latency-series.ts.
  const httpRequestDuration = new LatencyHistogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its answer, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
  });
  // The counter's lines come first, as they did when it was a counter of its own.
  new ObservationCounter(
    { name: 'http_requests_total', help: 'HTTP requests answered, by method, route pattern and status code.' },
    httpRequestDuration,
  ).register(own);
  httpRequestDuration.register(own);
  const httpRequestsInFlight = new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests received whose answer is not done yet (this one included, when read over HTTP).',
    registers: [own],
  });
  const rateLimitRejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests or GraphQL fields refused because the client used up a rate-limit budget.',
    labelNames: ['budget'] as const,
    registers: [own],
  });
  const graphqlOperationDuration = new LatencyHistogram({
    name: 'graphql_operation_duration_seconds',
    help: 'GraphQL operations executed, by operation name (capped), type and outcome.',
    labelNames: ['operation', 'type', 'outcome'],
    buckets: LATENCY_BUCKETS,
  });
  graphqlOperationDuration.register(own);
  registerCacheMetrics(own, cacheStats);
  // The embedded database (PGlite) has no pool and no network to fail.
  if (database.stats !== undefined) registerDatabaseMetrics(own, database.stats.bind(database));
  if (database.replicas !== undefined) registerReplicaMetrics(own, database.replicas.bind(database));

  const registry = Registry.merge([own, defaultMetricsRegistry()]);
  return {
    registry,
    httpRequestDuration,
    httpRequestsInFlight,
    rateLimitRejections,
    graphqlOperationDuration,
    render: () => registry.metrics(),
    contentType: registry.contentType,
  };
}

/**
 * `rate_limit_store_up`, for services with a shared store (REDIS_URL): read when Prometheus
 * scrapes. Under WORKERS the cluster's value is the lowest of the workers', so 1 means every
 * worker shares its counters.
 */
export function registerRateLimitStoreMetric(registry: Registry, isUp: () => boolean): void {
  new Gauge({
    name: 'rate_limit_store_up',
    help: '1 while rate limits are counted in Redis, 0 while each process counts on its own (Redis down, unreachable or not answering).',
    aggregator: 'min',
    registers: [registry],
    collect() {
      this.set(isUp() ? 1 : 0);
    },
  });
}

/** Pool and error figures, read from the database handle when Prometheus scrapes. */
function registerDatabaseMetrics(registry: Registry, stats: () => DatabaseStats): void {
  const counted = new Map<string, number>();
  new Gauge({
    name: 'database_connections_open',
    help: 'Connections to the database open now.',
    registers: [registry],
    collect() {
      this.set(stats().openConnections);
    },
  });
  new Gauge({
    name: 'database_connections_max',
    help: 'The most connections the pool opens (DB_POOL_SIZE).',
    registers: [registry],
    collect() {
      this.set(stats().maxConnections);
    },
  });
  new Counter({
    name: 'database_errors_total',
    help:
      'Failed database queries: unavailable (connection lost or refused, no answer in time), ' +
      'statement_timeout, refused (not sent while the database was down), query (any other error).',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      // The handle keeps running totals; a counter is set by adding what it does not have yet.
      for (const [kind, total] of Object.entries(stats().failedQueries)) {
        const known = counted.get(kind) ?? 0;
        // Adding 0 makes every kind visible from the first scrape.
        this.inc({ kind }, Math.max(total - known, 0));
        counted.set(kind, Math.max(total, known));
      }
    },
  });
}

/** Each read replica: in use or not (and why), lag, reads; read from the replica set when Prometheus scrapes. */
function registerReplicaMetrics(registry: Registry, replicas: () => ReplicaStatus[]): void {
  const counted = new Map<string, number>();
  new Gauge({
    name: 'database_replica_in_use',
    help: '1 while reads go to this replica; 0 while it is unreachable, not a standby, lagging, or replaying a change this process heard of (label reason).',
    labelNames: ['replica', 'reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const status of replicas())
        this.set({ replica: status.replica, reason: status.reason }, status.inUse ? 1 : 0);
    },
  });
  new Gauge({
    name: 'database_replica_lag_seconds',
    help: 'How far the replica is behind the primary (how long ago the primary was where it has replayed to); absent while unknown.',
    labelNames: ['replica'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const status of replicas()) {
        if (status.lagMs !== null) this.set({ replica: status.replica }, status.lagMs / 1000);
      }
    },
  });
  new Counter({
    name: 'database_replica_reads_total',
    help: 'Reads of the request path answered by the replica.',
    labelNames: ['replica'] as const,
    registers: [registry],
    collect() {
      for (const status of replicas()) {
        const known = counted.get(status.replica) ?? 0;
        this.inc({ replica: status.replica }, Math.max(status.reads - known, 0));
        counted.set(status.replica, Math.max(status.reads, known));
      }
    },
  });
}

/** The profile cache's figures, read from the cache when Prometheus scrapes. */
function registerCacheMetrics(registry: Registry, stats: () => ProfileCacheStats): void {
  const counted = { hits: 0, misses: 0 };
  new Counter({
    name: 'profile_cache_lookups_total',
    help: 'Profile lookups asked of the in-memory cache while it was answering, by result (hit or miss).',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      const now = stats();
      this.inc({ result: 'hit' }, now.hits - counted.hits);
      this.inc({ result: 'miss' }, now.misses - counted.misses);
      counted.hits = now.hits;
      counted.misses = now.misses;
    },
  });
  new Gauge({
    name: 'profile_cache_entries',
    help: 'Profiles (and names without one) held by the in-memory cache (PROFILE_CACHE_SIZE is the bound).',
    registers: [registry],
    collect() {
      this.set(stats().entries);
    },
  });
  new Gauge({
    name: 'profile_cache_answering',
    help: '1 while the profile cache answers (its change feed is live), 0 while it is bypassed or off.',
    registers: [registry],
    collect() {
      this.set(stats().answering ? 1 : 0);
    },
  });
}
