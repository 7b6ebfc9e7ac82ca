/**
 * Webhook deliveries in /metrics (src/webhooks/dispatcher.ts): attempts by outcome, how long each
 * took, and the events waiting in the outbox (all processes together, as this process's last pass
 * counted them).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DeliveryOutcome, DispatcherObserver } from '../webhooks/dispatcher.js';

const OUTCOMES: readonly DeliveryOutcome[] = ['delivered', 'retrying', 'failed', 'disabled', 'superseded'];

export function registerWebhookMetrics(registry: Registry, waiting: () => number): DispatcherObserver {
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help:
      'Webhook delivery attempts by outcome: delivered (2xx), retrying (failed, tried again later), failed (the ' +
      'schedule is over), disabled (the endpoint was disabled by it), superseded (the profile was removed since).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of OUTCOMES) deliveries.inc({ outcome }, 0);
  const seconds = new Histogram({
    name: 'webhook_delivery_seconds',
    help: 'Time of one webhook delivery attempt, from its start to the answer of the receiver or the failure.',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  new Gauge({
    name: 'webhook_events_waiting',
    help: 'Webhook events waiting for delivery or being delivered, all processes together.',
    registers: [registry],
    collect() {
      this.set(waiting());
    },
  });
  return {
    delivered(outcome, elapsed) {
      deliveries.inc({ outcome });
      if (outcome !== 'superseded') seconds.observe(elapsed);
    },
  };
}
