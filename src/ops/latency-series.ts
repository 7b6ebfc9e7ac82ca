/**
 * The latency histograms observed on every request (HTTP requests, GraphQL operations) and the
 * request counter, kept as series found once per combination of their three label values.
 *
 * Why not prom-client's Histogram and Counter: they validate, hash and copy the labels of every
 * observation, which showed in CPU profiles of lookups under load (docs/decisions.md, "Latency
 * histograms of our own, in prom-client's registry"). Here an observation is three lookups in
 * small maps, a bucket found among twelve and two additions.
 *
 * They stay prom-client metrics for everything else: registered in its Registry, which writes
 * their Prometheus text, and summed by its AggregatorRegistry under WORKERS, both from the `get()`
 * output prom-client's own Histogram and Counter give for the same observations
 * (test/latency-series.test.ts compares the text and that output with prom-client's).
 */
import type { Aggregator, Metric, Registry } from 'prom-client';

/** One combination of label values: what was observed under it. */
class Series {
  /** Observations per bucket (not cumulative), the last one for values above every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite number of seconds: ${value}`);
    const { bounds } = this;
    let bucket = 0;
    while (bucket < bounds.length && value > (bounds[bucket] as number)) bucket += 1;
    this.counts[bucket] = (this.counts[bucket] ?? 0) + 1;
    this.sum += value;
    this.count += 1;
  }
}

/** A value of prom-client's metric output (`get()`): the labels, and `metricName` for a histogram's lines. */
interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
  exemplar?: null;
  sharedLabels?: Readonly<Record<string, string>>;
}

/** What prom-client's Registry and AggregatorRegistry read of a metric. */
interface MetricOutput {
  name: string;
  help: string;
  type: 'histogram' | 'counter';
  values: MetricValue[];
  aggregator: Aggregator;
}

/** A metric as prom-client's Registry holds it: name and type, its output, and a reset. */
abstract class RegisteredMetric {
  readonly aggregator: Aggregator = 'sum';
  abstract readonly type: 'histogram' | 'counter';

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** The output prom-client's `get()` gives, which the Registry writes and the aggregator sums. */
  abstract get(): Promise<MetricOutput>;

  abstract reset(): void;

  register(registry: Registry): void {
    // The Registry's type names its own classes; what it calls on a metric is the members above.
    registry.registerMetric(this as unknown as Metric);
  }
}

/** A histogram of durations in seconds by three labels; `series` finds where one combination is kept. */
export class LatencyHistogram<L extends string> extends RegisteredMetric {
  readonly type = 'histogram';
  readonly #labelNames: readonly [L, L, L];
  readonly #bounds: readonly number[];
  /** The series by their first, second and third label value; in order of first observation. */
  #byLabels = new Map<string, Map<string, Map<string, Series>>>();
  #all: Series[] = [];

  constructor(config: { name: string; help: string; labelNames: readonly [L, L, L]; buckets: readonly number[] }) {
    super(config.name, config.help);
    if (config.labelNames.includes('le' as L)) throw new Error('le is the bucket label of a histogram');
    this.#labelNames = config.labelNames;
    this.#bounds = [...config.buckets].sort((a, b) => a - b);
  }

  /** The series of one combination of label values (made on first use), to observe on. */
  series(first: string, second: string, third: string): Series {
    let seconds = this.#byLabels.get(first);
    if (seconds === undefined) {
      seconds = new Map();
      this.#byLabels.set(first, seconds);
    }
    let thirds = seconds.get(second);
    if (thirds === undefined) {
      thirds = new Map();
      seconds.set(second, thirds);
    }
    let series = thirds.get(third);
    if (series === undefined) {
      series = new Series(this.#labelsOf(first, second, third), this.#bounds);
      thirds.set(third, series);
      this.#all.push(series);
    }
    return series;
  }

  /** Every series, in order of first observation (the order of their lines). */
  allSeries(): readonly Series[] {
    return this.#all;
  }

  #labelsOf(first: string, second: string, third: string): Record<string, string> {
    const [a, b, c] = this.#labelNames;
    return { [a]: first, [b]: second, [c]: third };
  }

  async get(): Promise<MetricOutput> {
    const values = this.#lines().map(({ labels, sharedLabels, ...line }) => ({
      ...line,
      labels: { ...labels, ...sharedLabels },
    }));
    return this.#output(values);
  }

  /** As prom-client's histogram gives it to the Registry's text: each series' labels shared by its lines. */
  async getForPromString(): Promise<MetricOutput> {
    return this.#output(this.#lines());
  }

  reset(): void {
    this.#byLabels = new Map();
    this.#all = [];
  }

  #output(values: MetricValue[]): MetricOutput {
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Cumulative buckets, then `+Inf`, sum and count, per series (prom-client's lines and order). */
  #lines(): MetricValue[] {
    const bucketName = `${this.name}_bucket`;
    const lines: MetricValue[] = [];
    for (const series of this.#all) {
      const sharedLabels = series.labels;
      let cumulative = 0;
      this.#bounds.forEach((bound, index) => {
        cumulative += series.counts[index] ?? 0;
        lines.push({ labels: { le: bound }, sharedLabels, value: cumulative, metricName: bucketName, exemplar: null });
      });
      lines.push(
        { labels: { le: '+Inf' }, sharedLabels, value: series.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return lines;
  }
}

/**
 * A counter of a histogram's observations by its labels, as `<name>_total` counts what
 * `<name>_duration_seconds` measures: the count of each series, with no work per observation.
 */
export class ObservationCounter extends RegisteredMetric {
  readonly type = 'counter';

  constructor(
    config: { name: string; help: string },
    private readonly histogram: LatencyHistogram<string>,
  ) {
    super(config.name, config.help);
  }

  async get(): Promise<MetricOutput> {
    const values = this.histogram.allSeries().map((series) => ({ value: series.count, labels: { ...series.labels } }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Its counts are the histogram's: resetting the histogram resets them. */
  reset(): void {}
}
