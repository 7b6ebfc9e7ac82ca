/**
 * Reading a service's /metrics in tests: one figure as the sum of its series (every label set),
 * 0 while it has none (a labelled counter shows no series before its first increment).
 */
export async function metricTotal(serviceUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  let total = 0;
  for (const match of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) {
    total += Number(match[1]);
  }
  return total;
}
