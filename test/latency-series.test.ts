/**
 * The service's latency histograms and request counter (src/ops/latency-series.ts) against
 * prom-client's own Histogram and Counter given the same observations: the Prometheus text, the
 * JSON the cluster's aggregation reads, and the aggregated text of two workers must be the same,
 * so that Prometheus and dashboards cannot tell which one counted.
 */
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LatencyHistogram, ObservationCounter } from '../src/ops/latency-series.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const LABELS = ['method', 'route', 'status'] as const;
const HELP = { histogram: 'Time to answer, by method, route and status.', counter: 'Requests answered.' };

interface Observation {
  labels: readonly [string, string, string];
  seconds: number;
}

/** The same observations counted by prom-client's metrics and by ours, each in a registry of its own. */
function bothCounted(observations: readonly Observation[]) {
  const theirs = new Registry();
  const counter = new Counter({ name: 'requests_total', help: HELP.counter, labelNames: LABELS, registers: [theirs] });
  const histogram = new Histogram({
    name: 'request_duration_seconds',
    help: HELP.histogram,
    labelNames: LABELS,
    buckets: BUCKETS,
    registers: [theirs],
  });
  const ours = new Registry();
  const latency = new LatencyHistogram({
    name: 'request_duration_seconds',
    help: HELP.histogram,
    labelNames: LABELS,
    buckets: BUCKETS,
  });
  new ObservationCounter({ name: 'requests_total', help: HELP.counter }, latency).register(ours);
  latency.register(ours);
  for (const { labels, seconds } of observations) {
    const [method, route, status] = labels;
    counter.inc({ method, route, status });
    histogram.observe({ method, route, status }, seconds);
    latency.series(method, route, status).observe(seconds);
  }
  return { theirs, ours };
}

/** Observations under several label combinations, on and beside every bound and beyond the last. */
function observations(): Observation[] {
  const combinations: Observation['labels'][] = [
    ['GET', '/api/:name', '200'],
    ['POST', '/graphql', '200'],
    ['GET', '/api/:name', '404'],
    ['GET', 'unmatched', 'aborted'],
    ['GET', '/api/:name', '503'],
    ['POST', '/graphql', 'say "hi"\\\n'],
  ];
  const seconds = [0, 1e-6, ...BUCKETS, ...BUCKETS.map((bound) => bound * 1.0001), 45, 0.1 + 0.2, 3.3333];
  const made: Observation[] = [];
  let index = 0;
  for (const value of seconds) {
    for (let repeat = 0; repeat < 3; repeat += 1) {
      made.push({
        labels: combinations[(index * 7 + repeat) % combinations.length] ?? combinations[0]!,
        seconds: value,
      });
      index += 1;
    }
  }
  return made;
}

describe('latency series against prom-client', () => {
  it('writes the same Prometheus text', async () => {
    const { theirs, ours } = bothCounted(observations());
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    // Not two empty texts: the observations are in it.
    expect(text).toMatch(/^requests_total\{method="POST",route="\/graphql",status="200"\} [1-9]/m);
    expect(text).toContain(
      'request_duration_seconds_bucket{le="+Inf",method="GET",route="unmatched",status="aborted"}',
    );
  });

  it('gives the cluster aggregation the same JSON, and sums two workers the same way', async () => {
    const first = bothCounted(observations());
    const second = bothCounted(observations().slice(5));
    expect(await first.ours.getMetricsAsJSON()).toEqual(await first.theirs.getMetricsAsJSON());
    const summed = async (a: Registry, b: Registry) =>
      AggregatorRegistry.aggregate([await a.getMetricsAsJSON(), await b.getMetricsAsJSON()]).metrics();
    const ourSum = await summed(first.ours, second.ours);
    expect(ourSum).toBe(await summed(first.theirs, second.theirs));
    expect(ourSum).toMatch(/^requests_total\{method="POST",route="\/graphql",status="200"\} [1-9]/m);
  });

  it('starts again from nothing when the registry resets its metrics, as prom-client does', async () => {
    const { theirs, ours } = bothCounted(observations());
    theirs.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).not.toContain('status="200"');
  });

  it('survives Registry.merge, which the service uses to add the process metrics', async () => {
    const { theirs, ours } = bothCounted(observations());
    const merged = (registry: Registry) => Registry.merge([registry, new Registry()]).metrics();
    expect(await merged(ours)).toBe(await merged(theirs));
  });

  it('refuses what prom-client refuses: a duration that is not a finite number, a bucket label', () => {
    const latency = new LatencyHistogram({ name: 'x_seconds', help: 'x', labelNames: LABELS, buckets: BUCKETS });
    const series = latency.series('GET', '/', '200');
    expect(() => series.observe(Number.NaN)).toThrow(TypeError);
    expect(() => series.observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(series.count).toBe(0);
    expect(
      () => new LatencyHistogram({ name: 'y_seconds', help: 'y', labelNames: ['le', 'a', 'b'], buckets: BUCKETS }),
    ).toThrow(/le/);
  });

  it('keeps one series per combination of label values', () => {
    const latency = new LatencyHistogram({ name: 'z_seconds', help: 'z', labelNames: LABELS, buckets: BUCKETS });
    expect(latency.series('GET', '/a', '200')).toBe(latency.series('GET', '/a', '200'));
    expect(latency.series('GET', '/a', '200')).not.toBe(latency.series('GET', '/a', '404'));
    // The same values in other places are other combinations.
    expect(latency.series('a', 'b', 'c')).not.toBe(latency.series('b', 'a', 'c'));
    expect(latency.allSeries()).toHaveLength(4);
  });
});
