/**
 * The purger's figures in /metrics (src/edge/purge-queues.ts): purges sent and failed per cache, tags
 * waiting per cache, whether this process leads, and the time from a change's commit to its
 * first purge.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PurgeObserver, PurgerStats } from '../edge/purge-queues.js';

const COMMIT_TO_PURGE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

export function registerPurgeMetrics(registry: Registry, stats: () => PurgerStats): PurgeObserver {
  const sent = new Counter({
    name: 'edge_purges_sent_total',
    help: 'Purge requests a shared cache accepted, by cache.',
    labelNames: ['cache'] as const,
    registers: [registry],
  });
  const failed = new Counter({
    name: 'edge_purges_failed_total',
    help: 'Purge requests that failed (and are retried), by cache.',
    labelNames: ['cache'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'edge_purge_pending_tags',
    help: 'Tags waiting to be purged, by cache (a purge of the whole cache counts one).',
    labelNames: ['cache'] as const,
    registers: [registry],
    collect() {
      for (const [cache, pending] of Object.entries(stats().pending)) this.set({ cache }, pending);
    },
  });
  new Gauge({
    name: 'edge_purge_leader',
    help: '1 when this process purges shared caches for the deployment.',
    registers: [registry],
    collect() {
      this.set(stats().leading ? 1 : 0);
    },
  });
  const commitToPurge = new Histogram({
    name: 'edge_commit_to_purge_seconds',
    help: "Time from a change's commit (its writer's clock) to its first purge accepted by a cache.",
    buckets: COMMIT_TO_PURGE_BUCKETS,
    registers: [registry],
  });
  return {
    sent: (cache) => sent.inc({ cache }),
    failed: (cache) => failed.inc({ cache }),
    commitToPurge: (seconds) => commitToPurge.observe(seconds),
  };
}
