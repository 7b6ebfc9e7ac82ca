/**
 * The edge part of `npm run bench` (scenario key `edge`): Varnish with the shipped VCL
 * (deploy/varnish/default.vcl) in front of one service process with CACHE_PURGE_URLS, on the
 * benchmark's dataset.
 *
 * - Lookups `GET /api/{name_id}` of names drawn from a Zipf distribution (s = 1) over every name
 *   of the dataset (ranks shuffled, so popularity has nothing to do with the name's order), sent
 *   through Varnish and, in alternating rounds, to the service alone: requests per second,
 *   p50/p99, Varnish's hit ratio over the measured rounds (varnishstat), and the service's CPU per
 *   client request through Varnish, from which the service cores for 1,000,000 lookups a second
 *   at that hit ratio follow (at 60 % utilisation, as docs/scaling.md assumes).
 * - Commit to purge: BENCH_EDGE_CHANGES times, a name without a profile is read through Varnish
 *   until its 404 is cached, a profile is imported for it, and Varnish is read every 5 ms until it
 *   answers 200; then the profile is removed and read until 404. The time from the import's commit
 *   (when `importLines` returns) to the first fresh answer through Varnish: p50, p99, the worst.
 *   The dataset's profile count is unchanged afterwards.
 *
 * Load generator, Varnish, service and PostgreSQL share the machine.
 */
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import type { GeneratorOptions } from '../src/data/generator.js';
import { importLines } from '../src/data/importer.js';
import { openDatabase } from '../src/db/database.js';
import { treeCpuSeconds } from '../test/support/process-tree.js';
import type { SpawnedProcess } from '../test/support/server-process.js';
import { freePort } from '../test/support/throwaway-redis.js';
import { startVarnish, type Varnish, varnishd } from '../test/support/varnish.js';
import { ZIPF_S, zipfDrawn } from './support.js';

const CHANGES = Number(process.env.BENCH_EDGE_CHANGES ?? 20);
/** The share of a core the capacity figure plans to use (docs/scaling.md, "Capacity"). */
const UTILISATION = 0.6;

export interface EdgeFigure {
  names: number;
  connections: number;
  throughVarnish: { requestsPerSecond: number; p50: number; p99: number; errors: number };
  serviceAlone: { requestsPerSecond: number; p50: number; p99: number; errors: number };
  hitRatio: number;
  /** µs of service CPU per client request through Varnish, and per request to the service alone. */
  serviceCpuMicroseconds: { throughVarnish: number; alone: number };
  /** Service cores for 1,000,000 lookups a second through Varnish at the measured hit ratio. */
  serviceCoresPerMillion: number;
  /** µs of Varnish's CPU per request, and its cores for 1,000,000 lookups a second. */
  varnishCpuMicroseconds: number;
  varnishCoresPerMillion: number;
  /** ms from an import's commit to the first fresh answer through Varnish. */
  commitToFresh: { samples: number; p50: number; p99: number; max: number };
}

type Starter = (env: Record<string, string>) => Promise<{ process: SpawnedProcess; url: string }>;

function varnishCounters(workDir: string): { hits: number; misses: number } {
  const result = spawnSync('varnishstat', ['-n', workDir, '-1', '-f', 'MAIN.cache_hit', '-f', 'MAIN.cache_miss'], {
    encoding: 'utf8',
  });
  const read = (name: string) => Number(new RegExp(`^${name}\\s+(\\d+)`, 'm').exec(result.stdout)?.[1] ?? Number.NaN);
  return { hits: read('MAIN.cache_hit'), misses: read('MAIN.cache_miss') };
}

const percentile = (sorted: number[], share: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? Number.NaN;

async function load(baseUrl: string, paths: () => string, seconds: number, connections: number) {
  const result = await autocannon({
    url: baseUrl,
    connections,
    duration: seconds,
    requests: [{ setupRequest: (request) => ({ ...request, path: paths() }) }],
  });
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

/** Why the edge part cannot run here, or undefined. */
export function edgeMissing(): string | undefined {
  try {
    varnishd();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

export async function measureEdge(options: {
  url: string;
  dataset: GeneratorOptions;
  serviceEnv: Record<string, string>;
  start: Starter;
  rounds: number;
  seconds: number;
  connections: number;
}): Promise<EdgeFigure> {
  const varnishPort = await freePort();
  const service = await options.start({ ...options.serviceEnv, CACHE_PURGE_URLS: `http://127.0.0.1:${varnishPort}` });
  let varnish: Varnish | undefined;
  try {
    varnish = await startVarnish(Number(new URL(service.url).port), varnishPort);
    const { names, next } = zipfDrawn(options.dataset, 777);
    const nextPath = () => `/api/${encodeURIComponent(next())}`;

    console.log('edge: warm-up through Varnish');
    await load(varnish.url, nextPath, options.seconds * 2, options.connections);
    const before = varnishCounters(varnish.workDir);
    const through: Array<Awaited<ReturnType<typeof load>>> = [];
    const alone: Array<Awaited<ReturnType<typeof load>>> = [];
    const cpu = { through: 0, throughRequests: 0, alone: 0, aloneRequests: 0, varnish: 0 };
    for (let round = 1; round <= options.rounds; round += 1) {
      let cpuBefore = treeCpuSeconds(service.process.pid);
      const varnishBefore = treeCpuSeconds(varnish.pid);
      const viaVarnish = await load(varnish.url, nextPath, options.seconds, options.connections);
      cpu.through += treeCpuSeconds(service.process.pid) - cpuBefore;
      cpu.varnish += treeCpuSeconds(varnish.pid) - varnishBefore;
      cpu.throughRequests += viaVarnish.requests;
      through.push(viaVarnish);
      cpuBefore = treeCpuSeconds(service.process.pid);
      const direct = await load(service.url, nextPath, options.seconds, options.connections);
      cpu.alone += treeCpuSeconds(service.process.pid) - cpuBefore;
      cpu.aloneRequests += direct.requests;
      alone.push(direct);
      console.log(
        `edge round ${round}: through Varnish ${Math.round(viaVarnish.requestsPerSecond)}/s, service alone ${Math.round(direct.requestsPerSecond)}/s`,
      );
    }
    const after = varnishCounters(varnish.workDir);
    const hits = after.hits - before.hits;
    const misses = after.misses - before.misses;
    const mean = (list: typeof through) => ({
      requestsPerSecond: Math.round(list.reduce((sum, m) => sum + m.requestsPerSecond, 0) / list.length),
      p50: Math.max(...list.map((m) => m.p50)),
      p99: Math.max(...list.map((m) => m.p99)),
      errors: list.reduce((sum, m) => sum + m.errors, 0),
    });
    const throughCpu = (cpu.through * 1e6) / Math.max(cpu.throughRequests, 1);
    const aloneCpu = (cpu.alone * 1e6) / Math.max(cpu.aloneRequests, 1);
    const varnishCpu = (cpu.varnish * 1e6) / Math.max(cpu.throughRequests, 1);
    const commitToFresh = await measureCommitToFresh(options.url, varnish, names[0] as string);
    return {
      names: names.length,
      connections: options.connections,
      throughVarnish: mean(through),
      serviceAlone: mean(alone),
      hitRatio: Math.round((hits / Math.max(hits + misses, 1)) * 1000) / 1000,
      serviceCpuMicroseconds: { throughVarnish: Math.round(throughCpu * 10) / 10, alone: Math.round(aloneCpu) },
      serviceCoresPerMillion: Math.round((throughCpu / UTILISATION) * 10) / 10,
      varnishCpuMicroseconds: Math.round(varnishCpu * 10) / 10,
      varnishCoresPerMillion: Math.round((varnishCpu / UTILISATION) * 10) / 10,
      commitToFresh,
    };
  } finally {
    await varnish?.stop();
    await service.process.stop();
  }
}

/** Import, then read through Varnish every 5 ms until the change shows; removal likewise. */
async function measureCommitToFresh(
  url: string,
  varnish: Varnish,
  someName: string,
): Promise<EdgeFigure['commitToFresh']> {
  const namespace = someName.slice(someName.lastIndexOf('@') + 1);
  const handle = await openDatabase({ url, dataDir: '', poolSize: 2 });
  const samples: number[] = [];
  const statusOf = async (path: string) => {
    const response = await fetch(`${varnish.url}${path}`);
    await response.arrayBuffer();
    return { status: response.status, hit: String(response.headers.get('x-varnish')).split(' ').length === 2 };
  };
  const until = async (path: string, status: number, committed: number) => {
    while ((await statusOf(path)).status !== status) {
      if (Date.now() - committed > 30_000) throw new Error(`bench edge: ${path} never answered ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    samples.push(Date.now() - committed);
  };
  const cachedAs = async (path: string, status: number) => {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const answer = await statusOf(path);
      if (answer.status === status && answer.hit) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`bench edge: ${path} was not cached`);
  };
  try {
    for (let index = 0; index < CHANGES; index += 1) {
      const name = `edge-bench-${index}@${namespace}`;
      const path = `/api/${encodeURIComponent(name)}`;
      await cachedAs(path, 404);
      const line = JSON.stringify({
        kind: 'profile',
        name,
        creatorEmail: 'edge-bench@example.org',
        description: `${index}`,
      });
      await importLines(handle.db, [line]);
      await until(path, 200, Date.now());
      // Past the second purge of the same tags, so that the next read is cached for good.
      await new Promise((resolve) => setTimeout(resolve, 2200));
      await cachedAs(path, 200);
      await importLines(handle.db, [JSON.stringify({ kind: 'remove', name })]);
      await until(path, 404, Date.now());
    }
  } finally {
    await handle.close();
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    samples: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? 0,
  };
}

export function edgeSection(edge: EdgeFigure | string | undefined): string[] {
  if (edge === undefined) return [];
  if (typeof edge === 'string') return ['## Edge (Varnish in front)', '', `Not run: ${edge}`, ''];
  return [
    '## Edge (Varnish in front)',
    '',
    `Zipf (s = ${ZIPF_S}) lookups over ${edge.names.toLocaleString('en-US')} names, ${edge.connections} connections; ` +
      'Varnish with deploy/varnish/default.vcl in front of one service process.',
    '',
    '| figure | value |',
    '|---|---|',
    `| through Varnish | ${edge.throughVarnish.requestsPerSecond} req/s, p50 ${edge.throughVarnish.p50} ms, p99 ${edge.throughVarnish.p99} ms |`,
    `| service alone | ${edge.serviceAlone.requestsPerSecond} req/s, p50 ${edge.serviceAlone.p50} ms, p99 ${edge.serviceAlone.p99} ms |`,
    `| Varnish hit ratio | ${edge.hitRatio} |`,
    `| service CPU per lookup: through Varnish / alone | ${edge.serviceCpuMicroseconds.throughVarnish} µs / ${edge.serviceCpuMicroseconds.alone} µs |`,
    `| service cores for 1,000,000 lookups/s through Varnish (60 % busy) | ${edge.serviceCoresPerMillion} |`,
    `| Varnish CPU per lookup, and its cores for 1,000,000 lookups/s (60 % busy) | ${edge.varnishCpuMicroseconds} µs, ${edge.varnishCoresPerMillion} |`,
    `| commit to fresh answer through Varnish (${edge.commitToFresh.samples} changes) | p50 ${edge.commitToFresh.p50} ms, p99 ${edge.commitToFresh.p99} ms, worst ${edge.commitToFresh.max} ms |`,
    '',
  ];
}
