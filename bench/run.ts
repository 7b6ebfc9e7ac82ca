/**
 * `npm run bench`: the REST profile lookup against its yardstick.
 *
 * 1. Loads a generated dataset of 100,000 profiles into a database of its own on the local
 *    PostgreSQL (`BENCH_DATABASE_URL`, default postgres://postgres@127.0.0.1:5432/nps_bench; kept
 *    between runs and reloaded only when it does not hold the expected data).
 * 2. Starts (a) bench/baseline-server.ts, node:http + postgres.js with one hand-written query,
 *    and (b) the service itself (`src/main.ts`, rate limits off), both as child processes on
 *    loopback with the same pool size.
 * 3. Drives both with autocannon over random existing names, in alternating rounds so drift of a
 *    shared machine hits both alike, and reports requests per second, latency percentiles and the
 *    ratio b/a. Every request reaches the database: neither server caches across requests.
 * 4. Writes bench/results/latest.json and bench/results/latest.md.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { type GeneratorOptions, generatedName, generateNdjson } from '../src/data/generator.js';
import { importLines } from '../src/data/importer.js';
import { openDatabase } from '../src/db/database.js';
import {
  type ServerProcess,
  type SpawnedProcess,
  spawnServerProcess,
  startServerProcess,
} from '../test/support/server-process.js';

const DATASET: GeneratorOptions = { profiles: 100_000, seed: 20261125 };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const POOL_SIZE = '10';
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

interface Measurement {
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  requests: number;
  non2xx: number;
  errors: number;
}

async function ensureDatabase(): Promise<string> {
  const target = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/nps_bench');
  const databaseName = target.pathname.slice(1);
  const admin = new URL(target);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  const [exists] = await sql`select 1 from pg_database where datname = ${databaseName}`;
  if (!exists) await sql.unsafe(`create database "${databaseName.replaceAll('"', '""')}"`);
  await sql.end();
  return target.toString();
}

/** Loads the dataset unless the database already holds exactly it. */
async function loadDataset(url: string): Promise<void> {
  const handle = await openDatabase({ url, dataDir: '' });
  try {
    await handle.migrate();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from profiles`;
    const last = generatedName(DATASET, DATASET.profiles - 1);
    const [lastRow] = await sql`select 1 from profiles where name = ${last}`;
    if (row?.n === DATASET.profiles && lastRow) {
      await sql.end();
      console.log(`dataset: ${DATASET.profiles} profiles already loaded`);
      return;
    }
    await sql`truncate namespaces, profiles, records restart identity cascade`;
    await sql.end();
    const started = Date.now();
    const report = await importLines(handle.db, splitLines(generateNdjson(DATASET)));
    if (!report.ok) throw new Error(`dataset import failed: ${JSON.stringify(report.problems.slice(0, 3))}`);
    console.log(`dataset: imported ${report.profiles} profiles in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await handle.close();
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

async function waitUntilReady(baseUrl: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the service at ${baseUrl} was not ready within ${timeoutMs} ms`);
}

function* splitLines(chunks: Iterable<string>): Generator<string> {
  for (const chunk of chunks) yield* chunk.split('\n');
}

/** Deterministic random names of the dataset, percent-encoded for the path. */
function randomPaths(count: number): string[] {
  let state = 12345;
  const paths: string[] = [];
  for (let i = 0; i < count; i += 1) {
    state = (state * 1103515245 + 12345) >>> 0;
    paths.push(`/api/${encodeURIComponent(generatedName(DATASET, state % DATASET.profiles))}`);
  }
  return paths;
}

async function measure(baseUrl: string, paths: string[], seconds: number): Promise<Measurement> {
  let next = 0;
  const result = await autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          next = (next + 1) % paths.length;
          return { ...request, path: paths[next]! };
        },
      },
    ],
  });
  return {
    requestsPerSecond: result.requests.average,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

function average(measurements: Measurement[]): Measurement {
  const mean = (pick: (m: Measurement) => number) =>
    measurements.reduce((sum, m) => sum + pick(m), 0) / measurements.length;
  return {
    requestsPerSecond: Math.round(mean((m) => m.requestsPerSecond)),
    latencyMs: {
      p50: mean((m) => m.latencyMs.p50),
      p90: mean((m) => m.latencyMs.p90),
      p99: mean((m) => m.latencyMs.p99),
      max: Math.max(...measurements.map((m) => m.latencyMs.max)),
    },
    requests: measurements.reduce((sum, m) => sum + m.requests, 0),
    non2xx: measurements.reduce((sum, m) => sum + m.non2xx, 0),
    errors: measurements.reduce((sum, m) => sum + m.errors, 0),
  };
}

async function main(): Promise<void> {
  const url = await ensureDatabase();
  await loadDataset(url);
  const paths = randomPaths(50_000);
  // Production mode for both, as deployed (graphql-js checks less in production).
  const env = { DATABASE_URL: url, DB_POOL_SIZE: POOL_SIZE, NODE_ENV: 'production' };
  const servers: SpawnedProcess[] = [];
  try {
    const baseline: ServerProcess = await startServerProcess({ env, script: 'bench/baseline-server.ts' });
    servers.push(baseline);
    // Request logs at warn: the baseline writes none either. The "listening" line is info, so
    // readiness is polled instead.
    const port = await freePort();
    const spawned = spawnServerProcess({ env: { ...env, PORT: String(port), LOG_LEVEL: 'warn', PROFILE_LIMIT: '0' } });
    servers.push(spawned);
    const service = { url: `http://127.0.0.1:${port}` };
    await waitUntilReady(service.url);

    console.log('warm-up');
    await measure(baseline.url, paths, 3);
    await measure(service.url, paths, 3);

    const a: Measurement[] = [];
    const b: Measurement[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      a.push(await measure(baseline.url, paths, ROUND_SECONDS));
      b.push(await measure(service.url, paths, ROUND_SECONDS));
      console.log(`round ${round}: a ${a.at(-1)!.requestsPerSecond} req/s, b ${b.at(-1)!.requestsPerSecond} req/s`);
    }
    report(average(a), average(b));
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

function report(a: Measurement, b: Measurement): void {
  const ratio = Number((b.requestsPerSecond / a.requestsPerSecond).toFixed(3));
  const results = {
    date: new Date().toISOString(),
    dataset: DATASET,
    rounds: ROUNDS,
    roundSeconds: ROUND_SECONDS,
    connections: CONNECTIONS,
    baseline: a,
    service: b,
    ratio,
  };
  const row = (label: string, m: Measurement) =>
    `| ${label} | ${m.requestsPerSecond} | ${m.latencyMs.p50.toFixed(1)} | ${m.latencyMs.p90.toFixed(1)} | ${m.latencyMs.p99.toFixed(1)} | ${m.non2xx} | ${m.errors} |`;
  const markdown = [
    `# Benchmark ${results.date}`,
    '',
    `${DATASET.profiles} generated profiles on the local PostgreSQL; ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s each; random existing names.`,
    '',
    '| server | req/s | p50 ms | p90 ms | p99 ms | non-2xx | errors |',
    '|---|---|---|---|---|---|---|',
    row('(a) node:http + postgres.js, one query', a),
    row('(b) the service, GET /api/{name_id}', b),
    '',
    `Ratio b/a: **${ratio}** (target >= 0.8).`,
    '',
  ].join('\n');
  writeFileSync(`${RESULTS_DIR}latest.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(`${RESULTS_DIR}latest.md`, markdown);
  console.log(markdown);
  if (a.non2xx + a.errors + b.non2xx + b.errors > 0) {
    console.error('some requests failed: the figures above are not comparable');
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
