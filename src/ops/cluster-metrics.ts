/**
 * /metrics under WORKERS > 1. Each worker counts only its own requests, and the load balancer
 * sends each scrape to some worker, so a worker's own numbers would jump between scrapes. A
 * worker therefore asks the primary, which gathers every worker's registry with prom-client's
 * AggregatorRegistry (counters and histograms summed) and sends the total back.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const REQUEST = 'nps:cluster-metrics-request';
const RESPONSE = 'nps:cluster-metrics-response';
/** prom-client gives up on silent workers after 5 s; the asking worker waits a little longer. */
const ANSWER_TIMEOUT_MS = 6000;

interface MetricsRequest {
  type: typeof REQUEST;
  id: number;
}

interface MetricsResponse {
  type: typeof RESPONSE;
  id: number;
  text?: string;
  error?: string;
}

function isMessage<T extends { type: string }>(message: unknown, type: T['type']): message is T {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;
}

/** In the primary: answers workers' requests for the whole cluster's metrics. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isMessage<MetricsRequest>(message, REQUEST)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: RESPONSE, id: message.id, text } satisfies MetricsResponse),
      (error: unknown) =>
        worker.send({ type: RESPONSE, id: message.id, error: String(error) } satisfies MetricsResponse),
    );
  });
}

/** In a worker: offers `registry` to the primary's aggregation and renders the cluster's total. */
export function clusterMetricsRenderer(registry: Registry): () => Promise<string> {
  // Constructing one makes prom-client answer the primary's collection requests in this worker.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  let nextId = 0;
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const onMessage = (message: unknown) => {
        if (!isMessage<MetricsResponse>(message, RESPONSE) || message.id !== id) return;
        done();
        if (message.text !== undefined) resolve(message.text);
        else reject(new Error(`cluster metrics failed: ${message.error ?? 'no answer'}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`cluster metrics: no answer from the primary within ${ANSWER_TIMEOUT_MS} ms`));
      }, ANSWER_TIMEOUT_MS);
      const done = () => {
        clearTimeout(timer);
        process.off('message', onMessage);
      };
      process.on('message', onMessage);
      process.send?.({ type: REQUEST, id } satisfies MetricsRequest);
    });
}
