/**
 * Live-update figures (src/service/live-updates.ts) in /metrics, read from the hub when
 * Prometheus scrapes: open subscriptions by transport, clients holding slots, names watched, and counters of events,
 * shared reads, drops and refusals.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LiveTransport, LiveUpdateStats } from '../service/live-updates.js';

const TRANSPORTS: readonly LiveTransport[] = ['sse', 'websocket', 'rest'];

/** A counter that follows a running total of the hub. */
function totalCounter(registry: Registry, name: string, help: string, read: () => number): void {
  let counted = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      this.inc(Math.max(now - counted, 0));
      counted = Math.max(now, counted);
    },
  });
}

export function registerLiveUpdateMetrics(registry: Registry, stats: () => LiveUpdateStats): void {
  new Gauge({
    name: 'live_subscriptions',
    help: 'Open live-update subscriptions (GraphQL profileChanged over SSE or WebSocket, REST events), by transport.',
    labelNames: ['transport'] as const,
    registers: [registry],
    collect() {
      const { open } = stats();
      for (const transport of TRANSPORTS) this.set({ transport }, open[transport]);
    },
  });
  new Gauge({
    name: 'live_subscription_clients',
    help: 'Client keys (an IP, an IPv6 /64) holding at least one live-update subscription slot.',
    registers: [registry],
    collect() {
      this.set(stats().clients);
    },
  });
  new Gauge({
    name: 'live_watched_names',
    help: 'Distinct names with at least one live-update subscriber.',
    registers: [registry],
    collect() {
      this.set(stats().watchedNames);
    },
  });
  totalCounter(registry, 'live_events_total', 'Live-update events handed to subscribers.', () => stats().events);
  totalCounter(
    registry,
    'live_reads_total',
    'Reads of changed profiles for live updates (one per batch of changed names, shared by all subscribers).',
    () => stats().reads,
  );
  totalCounter(
    registry,
    'live_subscribers_dropped_total',
    'Subscribers dropped because they did not read their events.',
    () => stats().dropped,
  );
  totalCounter(
    registry,
    'live_subscriptions_refused_total',
    'Subscriptions refused because the client or the process had as many open as allowed.',
    () => stats().refused,
  );
}
