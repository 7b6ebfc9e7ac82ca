/**
 * Reading a service's /metrics in tests, the exposition format parsed in one place: a series by
 * its name and labels, or a figure as the sum of its series.
 */

/** A label value as written unescaped: the format escapes backslash, double quote and line feed. */
const unescaped = (value: string): string => value.replace(/\\(.)/g, (_, next: string) => (next === 'n' ? '\n' : next));

/** A parsed /metrics text. */
export class Metrics {
  constructor(readonly text: string) {}

  /**
   * The value of `name` in the series whose labels include these (none given: every series), summed
   * when several match; undefined when /metrics has no such series.
   */
  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const wanted = Object.entries(labels);
    let sum: number | undefined;
    for (const series of this.series(name)) {
      if (wanted.every(([label, value]) => series.labels.get(label) === value)) sum = (sum ?? 0) + series.value;
    }
    return sum;
  }

  /** The sum of every series of `name`, 0 while it has none (a labelled counter before its first increment). */
  total(name: string): number {
    return this.value(name) ?? 0;
  }

  private *series(name: string): Generator<{ labels: Map<string, string>; value: number }> {
    const line = new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm');
    for (const match of this.text.matchAll(line)) {
      const labels = new Map<string, string>();
      for (const label of (match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
        labels.set(label[1] as string, unescaped(label[2] as string));
      }
      yield { labels, value: Number(match[2]) };
    }
  }
}

export async function readMetrics(serviceUrl: string): Promise<Metrics> {
  return new Metrics(await (await fetch(`${serviceUrl}/metrics`)).text());
}

/** A figure of a service's /metrics as the sum of its series, 0 while it has none. */
export async function metricTotal(serviceUrl: string, name: string): Promise<number> {
  return (await readMetrics(serviceUrl)).total(name);
}
