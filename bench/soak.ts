/**
 * `npm run bench:soak [-- --minutes N]`: the service under a steady mixed load for a long time
 * (30 minutes by default), with an import of changed profiles every few minutes, to see that
 * memory stays flat and answers stay fast and correct.
 *
 * 1. Loads SOAK_PROFILES generated profiles (default 100,000, the benchmark's dataset) into a
 *    database of its own on the local PostgreSQL (SOAK_DATABASE_URL, default nps_soak): the soak's
 *    imports change profiles, and `npm run bench` must keep measuring the data it generated.
 * 2. Starts the service as `npm start` runs it (as bench/run.ts does: dist/, the start flags,
 *    NODE_ENV=production, PROFILE_LIMIT=0, LOG_LEVEL=warn).
 * 3. Each minute, one autocannon run of 60 s at a fixed overall rate (SOAK_RATE, default 1,000
 *    requests/s, over SOAK_CONNECTIONS, default 10): a moderate load, so that p99 is a latency
 *    and not a queue. The mix (MIX below) covers REST, GraphQL, discovery and both batches.
 * 4. Every few minutes, 10 s into a minute, `tsx src/cli/import.ts` (what `npm run import` runs)
 *    loads a file of SOAK_IMPORT_PROFILES (default 3,000) existing profiles with a changed
 *    description and level into the same database; the service hears of them through its change
 *    feed, as in production.
 * 5. Every 5 s it reads the service's RSS (/proc) and V8 heap in use (/metrics,
 *    nodejs_heap_size_used_bytes); each minute it prints a row (requests, p50/p99/max, non-2xx,
 *    errors, RSS, heap, the import) and rewrites bench/results/soak-latest.md and .json, so an
 *    interrupted run leaves what it measured.
 * 6. At the end: the least-squares slope of RSS (and heap) after the warm-up minutes, in MB per
 *    hour, and a verdict (bench/soak-stats.ts says what counts as flat).
 *
 * Options: --minutes N (or SOAK_MINUTES), --import-every N minutes, --warm-up N minutes. Ctrl-C
 * stops the load, the import and the service (each by its PID) and writes what was measured.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { type GeneratorOptions, generatedProfile } from '../src/data/generator.js';
import { collectOutput } from '../test/support/run-node.js';
import type { SpawnedProcess } from '../test/support/server-process.js';
import { FLAT_RSS_MB_PER_HOUR, leastSquaresSlope, memoryVerdict, type Slope, type Verdict } from './soak-stats.js';
import {
  benchCommandLine,
  createDatabaseIfMissing,
  cycle,
  type DiscoveryPaths,
  discoveryPaths,
  loadDataset,
  procStatusKb,
  randomNames,
  seededRandom,
  serviceCommand,
  startService,
  wholeNumberOption,
} from './support.js';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const DATASET: GeneratorOptions = { profiles: Number(process.env.SOAK_PROFILES ?? 100_000), seed: 20261125 };
const DATABASE_URL = process.env.SOAK_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/nps_soak';
const RATE = Number(process.env.SOAK_RATE ?? 1000);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 10);
const IMPORT_PROFILES = Number(process.env.SOAK_IMPORT_PROFILES ?? 3000);
const SAMPLE_EVERY_MS = 5000;
const IMPORT_OFFSET_MS = 10_000;
const BATCH_SIZE = 25;
const GRAPHQL_SELECTION = 'name description image level records { key type raw }';
/** Marks this run's changes: without it a run would import what the previous one already did. */
const RUN_ID = new Date().toISOString();

/** Of every 100 requests, how many of each kind. */
const MIX = {
  rest: 40,
  graphqlVariables: 20,
  graphqlInline: 10,
  search: 10,
  wallet: 10,
  restBatch: 5,
  graphqlBatch: 5,
} as const;
type Kind = keyof typeof MIX;

const MIX_LABELS: Record<Kind, string> = {
  rest: '`GET /api/{name_id}`, random names',
  graphqlVariables: 'GraphQL `profile(name:)`, name in variables',
  graphqlInline: 'GraphQL `profile(name:)`, name inline (a new document each)',
  search: '`GET /api/search`, prefixes, first and later pages',
  wallet: '`GET /api/wallet/{address}`',
  restBatch: `\`POST /api/profiles\`, ${BATCH_SIZE} names`,
  graphqlBatch: `GraphQL \`profiles(names:)\`, ${BATCH_SIZE} names`,
};

interface Options {
  minutes: number;
  importEvery: number;
  warmUp: number;
}

interface Sample {
  /** Seconds since the load began. */
  t: number;
  rssMb: number;
  heapMb: number | undefined;
}

interface ImportRun {
  minute: number;
  profiles: number;
  seconds: number;
  exitCode: number | null;
  /** The command's summary line, or the end of its stderr when it failed. */
  output: string;
  /** Ended by the soak's own stop (Ctrl-C). */
  stopped: boolean;
}

interface MinuteRow {
  minute: number;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  /** Answers by status code other than 200, e.g. {"503": 4}, to tell what the non-2xx were. */
  otherStatuses: Record<string, number>;
  errors: number;
  rssMb: number;
  rssMaxMb: number;
  heapMb: number | undefined;
  /** The machine's 1-minute load average at the end of the minute: it is shared, and this says how much. */
  load: number;
  import: ImportRun | 'running' | undefined;
}

type RequestShape = { method: 'GET' | 'POST'; path: string; body?: string };

/** What Ctrl-C has to stop. */
const running: {
  stopping: boolean;
  interrupted: boolean;
  load: autocannon.Instance | undefined;
  importers: Set<ChildProcess>;
  service: SpawnedProcess | undefined;
} = { stopping: false, interrupted: false, load: undefined, importers: new Set(), service: undefined };

const USAGE = `
npm run bench:soak -- [options]   the service under a steady mixed load with imports (bench/README.md)
  --minutes <n>        how long (default SOAK_MINUTES, or 30)
  --import-every <n>   minutes between imports (default 5, fewer in a short run)
  --warm-up <n>        minutes left out of the memory slope (default 5, fewer in a short run)
`;

function readOptions(): Options {
  const { values } = benchCommandLine(
    {
      options: {
        minutes: { type: 'string' },
        'import-every': { type: 'string' },
        'warm-up': { type: 'string' },
      },
      strict: true,
    },
    USAGE,
  );
  const minutes = wholeNumberOption('--minutes', values.minutes ?? process.env.SOAK_MINUTES ?? '30', 1, USAGE);
  // Every 5 minutes in a long run; a short run still gets two or three imports.
  const importEvery = wholeNumberOption(
    '--import-every',
    values['import-every'] ?? String(Math.min(5, Math.max(1, Math.floor(minutes / 3)))),
    1,
    USAGE,
  );
  // The first minutes fill caches and let V8 size its heap: 5 of 30, at least 1.
  const warmUp = wholeNumberOption(
    '--warm-up',
    values['warm-up'] ?? String(Math.min(5, Math.max(1, Math.round(minutes / 6)))),
    1,
    USAGE,
  );
  return { minutes, importEvery, warmUp };
}

/** The request kinds, each a function giving the next request of that kind. */
function requestMakers(names: string[], discovery: DiscoveryPaths): Record<Kind, () => RequestShape> {
  const query = `query P($n: String!) { profile(name: $n) { ${GRAPHQL_SELECTION} } }`;
  const batchQuery = `query B($names: [String!]!) { profiles(names: $names) { ${GRAPHQL_SELECTION} } }`;
  const name = cycle(names);
  const batch = () => Array.from({ length: BATCH_SIZE }, name);
  const search = cycle(discovery.search);
  const wallet = cycle(discovery.wallet);
  const graphql = (body: unknown): RequestShape => ({ method: 'POST', path: '/graphql', body: JSON.stringify(body) });
  return {
    rest: () => ({ method: 'GET', path: `/api/${encodeURIComponent(name())}` }),
    graphqlVariables: () => graphql({ query, variables: { n: name() } }),
    graphqlInline: () => graphql({ query: `{ profile(name: ${JSON.stringify(name())}) { ${GRAPHQL_SELECTION} } }` }),
    search: () => ({ method: 'GET', path: search() }),
    wallet: () => ({ method: 'GET', path: wallet() }),
    restBatch: () => ({ method: 'POST', path: '/api/profiles', body: JSON.stringify({ names: batch() }) }),
    graphqlBatch: () => graphql({ query: batchQuery, variables: { names: batch() } }),
  };
}

/** The next request of the mix: a kind drawn by MIX's weights (seeded, so runs draw alike). */
function mixedRequests(makers: Record<Kind, () => RequestShape>): () => RequestShape {
  const kinds = Object.keys(MIX) as Kind[];
  const total = kinds.reduce((sum, kind) => sum + MIX[kind], 0);
  const random = seededRandom(7);
  return () => {
    let draw = random() * total;
    for (const kind of kinds) {
      draw -= MIX[kind];
      if (draw < 0) return makers[kind]();
    }
    return makers.rest();
  };
}

/** One minute of load; resolves with autocannon's figures (early when Ctrl-C stops it). */
function loadFor(url: string, seconds: number, next: () => RequestShape): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    running.load = autocannon(
      {
        url,
        connections: CONNECTIONS,
        overallRate: RATE > 0 ? RATE : undefined,
        duration: seconds,
        // Fresh headers for every request: autocannon writes a POST's Content-Length into the
        // headers object it was given, and a GET sent with it hangs or breaks the connection.
        requests: [{ setupRequest: (request) => withHeaders({ ...request, ...next() }) }],
      },
      (error: unknown, result: autocannon.Result) => {
        running.load = undefined;
        if (error) reject(error instanceof Error ? error : new Error(String(error)));
        else resolve(result);
      },
    );
  });
}

function withHeaders<T extends { method: string; body?: unknown }>(
  request: T,
): T & { headers: Record<string, string> } {
  return { ...request, headers: request.method === 'POST' ? { 'content-type': 'application/json' } : {} };
}

/** The service's V8 heap in use, from its /metrics (prom-client's default metrics), in MB. */
async function heapUsedMb(url: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const match = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})? ([\d.e+]+)$/m.exec(text);
    return match ? Number(match[1]) / 1024 / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Samples RSS and heap every SAMPLE_EVERY_MS into `samples` until the returned function is called. */
function startSampling(pid: number, url: string, startedAt: number, samples: Sample[]): () => void {
  const take = async () => {
    const kb = procStatusKb(pid, 'VmRSS');
    const heapMb = await heapUsedMb(url);
    if (kb !== undefined) samples.push({ t: (Date.now() - startedAt) / 1000, rssMb: kb / 1024, heapMb });
  };
  void take();
  const timer = setInterval(() => void take(), SAMPLE_EVERY_MS);
  return () => clearInterval(timer);
}

/**
 * An import file of `count` distinct existing profiles, drawn at random, each with its
 * description and level changed (records untouched, so the wallet addresses the load asks for
 * stay), written to a temporary file.
 */
function writeImportFile(importNumber: number, count: number): string {
  const random = seededRandom(1000 + importNumber);
  const indexes = new Set<number>();
  const wanted = Math.min(count, DATASET.profiles);
  while (indexes.size < wanted) indexes.add(Math.floor(random() * DATASET.profiles));
  const lines = [...indexes].map((index) => {
    const profile = generatedProfile(DATASET, index);
    profile.description = `${profile.description ?? ''} Changed by soak import ${importNumber} of ${RUN_ID}.`.trim();
    profile.level = ((profile.level ?? 0) + importNumber) % 10;
    return JSON.stringify(profile);
  });
  const file = path.join(tmpdir(), `nps-soak-${process.pid}-${importNumber}.ndjson`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** `npm run import -- FILE` into the soak's database, as its own process (tsx, no npm between). */
function runImport(minute: number, importNumber: number): Promise<ImportRun> {
  const file = writeImportFile(importNumber, IMPORT_PROFILES);
  const started = Date.now();
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL, LOG_LEVEL: 'warn' };
  delete env.DATA_DIR;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/import.ts', file], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.importers.add(child);
  const written = collectOutput(child);
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      running.importers.delete(child);
      rmSync(file, { force: true });
      // "3,000 profiles (3,000 new or changed) in 1.6 s" of the summary line is what the table needs.
      const summary = /[\d,]+ profiles \([^)]*\) in .+?(?=\.?$)/m.exec(written.stdout)?.[0] ?? written.stdout.trim();
      const output = code === 0 ? summary : written.stderr.trim().split('\n').slice(-3).join(' / ');
      const seconds = (Date.now() - started) / 1000;
      resolve({ minute, profiles: IMPORT_PROFILES, seconds, exitCode: code, output, stopped: running.stopping });
    });
  });
}

function rowOf(minute: number, result: autocannon.Result, samples: Sample[], imports: ImportRun[]): MinuteRow {
  const inMinute = samples.filter((sample) => sample.t > (minute - 1) * 60 && sample.t <= minute * 60 + 1);
  const last = inMinute.at(-1) ?? samples.at(-1);
  const done = imports.find((run) => run.minute === minute);
  return {
    minute,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    otherStatuses: otherStatuses(result),
    errors: result.errors,
    rssMb: round(last?.rssMb ?? 0),
    rssMaxMb: round(Math.max(0, ...inMinute.map((sample) => sample.rssMb))),
    heapMb: last?.heapMb === undefined ? undefined : round(last.heapMb),
    load: round(loadavg()[0] ?? 0),
    import: done,
  };
}

function otherStatuses(result: autocannon.Result): Record<string, number> {
  return Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => status !== '200')
      .map(([status, stats]) => [status, stats.count ?? 0]),
  );
}

function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

const TABLE_HEADER = [
  '| min | requests | p50 ms | p99 ms | max ms | non-2xx | errors | RSS MB | RSS max MB | heap MB | load | import |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
];

function tableRow(row: MinuteRow): string {
  const imported =
    row.import === undefined
      ? ''
      : row.import === 'running'
        ? 'running'
        : row.import.exitCode === 0
          ? `${row.import.profiles.toLocaleString('en-US')} profiles, ${round(row.import.seconds)} s`
          : row.import.stopped
            ? 'stopped'
            : `**failed** (exit ${row.import.exitCode})`;
  return `| ${row.minute} | ${row.requests} | ${row.p50} | ${row.p99} | ${row.max} | ${row.non2xx} | ${row.errors} | ${row.rssMb} | ${row.rssMaxMb} | ${row.heapMb ?? '?'} | ${row.load} | ${imported} |`;
}

interface Summary {
  rssSlope: Slope | undefined;
  /** The same over the later half of the time after the warm-up: tells a step from a trend. */
  laterRssSlope: Slope | undefined;
  heapSlope: Slope | undefined;
  verdict: Verdict;
  requests: number;
  non2xx: number;
  errors: number;
  importsFailed: number;
  /** Minutes run, when Ctrl-C stopped the run before its end. */
  interruptedAfter: number | undefined;
}

/** Slopes over the samples after the warm-up, in MB per hour. */
function summarize(rows: MinuteRow[], samples: Sample[], imports: ImportRun[], warmUp: number): Summary {
  const after = samples.filter((sample) => sample.t >= warmUp * 60);
  const perHour = (slope: Slope | undefined): Slope | undefined =>
    slope && {
      slope: slope.slope * 3600,
      standardError: slope.standardError === undefined ? undefined : slope.standardError * 3600,
      points: slope.points,
    };
  const rssSlope = perHour(leastSquaresSlope(after.map((sample) => [sample.t, sample.rssMb])));
  const middle = ((after[0]?.t ?? 0) + (after.at(-1)?.t ?? 0)) / 2;
  const laterRssSlope = perHour(
    leastSquaresSlope(after.filter((sample) => sample.t >= middle).map((sample) => [sample.t, sample.rssMb])),
  );
  const heapPoints = after.flatMap((sample) =>
    sample.heapMb === undefined ? [] : [[sample.t, sample.heapMb] as const],
  );
  const sum = (pick: (row: MinuteRow) => number) => rows.reduce((total, row) => total + pick(row), 0);
  const errors = sum((row) => row.errors);
  const non2xx = sum((row) => row.non2xx);
  // An import the soak itself stopped (Ctrl-C) did not fail.
  const importsFailed = imports.filter((run) => run.exitCode !== 0 && !run.stopped).length;
  const memory = memoryVerdict(rssSlope, laterRssSlope);
  return {
    rssSlope,
    laterRssSlope,
    heapSlope: perHour(leastSquaresSlope(heapPoints)),
    verdict: memory,
    requests: sum((row) => row.requests),
    non2xx,
    errors,
    importsFailed,
    interruptedAfter: running.interrupted ? rows.length : undefined,
  };
}

function slopeText(slope: Slope | undefined): string {
  if (slope === undefined) return 'not enough samples';
  const error = slope.standardError === undefined ? '' : ` ± ${round(slope.standardError)}`;
  return `${slope.slope >= 0 ? '+' : ''}${round(slope.slope)}${error} MB/h (${slope.points} samples)`;
}

function verdictLine(summary: Summary): string {
  const answers =
    summary.errors === 0 && summary.non2xx === 0 && summary.importsFailed === 0
      ? 'every request answered 2xx, every import succeeded'
      : `${summary.errors} errors, ${summary.non2xx} non-2xx, ${summary.importsFailed} failed imports`;
  const interrupted =
    summary.interruptedAfter === undefined ? '' : `Interrupted after ${summary.interruptedAfter} minutes: `;
  return `${interrupted}Verdict: memory ${summary.verdict} (flat: RSS slope ≤ ${FLAT_RSS_MB_PER_HOUR} MB/h after warm-up); ${answers}.`;
}

function writeResults(
  options: Options,
  rows: MinuteRow[],
  imports: ImportRun[],
  samples: Sample[],
  summary: Summary | undefined,
): void {
  const date = new Date().toISOString();
  const mix = (Object.keys(MIX) as Kind[]).map((kind) => `${MIX[kind]} % ${MIX_LABELS[kind]}`).join('; ');
  const markdown = [
    `# Soak ${date}`,
    '',
    `${options.minutes} minutes planned, ${rows.length} run; ${DATASET.profiles.toLocaleString('en-US')} generated profiles on the local ` +
      `PostgreSQL; autocannon at ${RATE > 0 ? `${RATE} requests/s` : 'full speed'} over ${CONNECTIONS} connections; ` +
      `an import of ${IMPORT_PROFILES.toLocaleString('en-US')} changed profiles every ${options.importEvery} min (10 s into the minute); ` +
      `warm-up ${options.warmUp} min. Load generator, service, importer and PostgreSQL share the machine.`,
    '',
    `Mix: ${mix}.`,
    '',
    ...TABLE_HEADER,
    ...rows.map(tableRow),
    '',
    ...(summary === undefined
      ? []
      : [
          `RSS slope after warm-up: ${slopeText(summary.rssSlope)}; in its later half: ${slopeText(summary.laterRssSlope)}; ` +
            `V8 heap in use: ${slopeText(summary.heapSlope)}.`,
          '',
          verdictLine(summary),
          '',
        ]),
    ...imports.map(
      (run) => `- import in minute ${run.minute}: exit ${run.exitCode}, ${round(run.seconds)} s: ${run.output}`,
    ),
    '',
  ].join('\n');
  const json = { date, options, rate: RATE, connections: CONNECTIONS, mix: MIX, rows, imports, summary, samples };
  writeFileSync(`${RESULTS_DIR}soak-latest.json`, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(`${RESULTS_DIR}soak-latest.md`, markdown);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Stops whatever is still running, each by its own handle (PID), never by name. */
async function stopEverything(): Promise<void> {
  running.stopping = true;
  running.load?.stop();
  for (const importer of running.importers) importer.kill('SIGTERM');
  await running.service?.stop();
}

function onInterrupt(): void {
  if (running.stopping) return;
  console.log('\ninterrupted: stopping the load, the import and the service');
  process.exitCode = 130;
  running.interrupted = true;
  void stopEverything();
}

async function main(): Promise<void> {
  const options = readOptions();
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  await createDatabaseIfMissing(DATABASE_URL);
  await loadDataset(DATABASE_URL, DATASET);
  const names = randomNames(DATASET, 50_000, 4242);
  const service = await startService(serviceCommand(), {
    DATABASE_URL,
    DB_POOL_SIZE: '10',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PROFILE_LIMIT: '0',
  });
  running.service = service.process;
  const rows: MinuteRow[] = [];
  const imports: ImportRun[] = [];
  const pendingImports: Promise<void>[] = [];
  const samples: Sample[] = [];
  try {
    const next = mixedRequests(requestMakers(names, await discoveryPaths(DATABASE_URL, service.url, names)));
    console.log(
      `soak: ${options.minutes} min, ${RATE} requests/s over ${CONNECTIONS} connections, service pid ${service.process.pid}`,
    );
    console.log(TABLE_HEADER.join('\n'));
    const startedAt = Date.now();
    const stopSampling = startSampling(service.process.pid, service.url, startedAt, samples);
    for (let minute = 1; minute <= options.minutes && !running.stopping; minute += 1) {
      const importDue = minute > 1 && (minute - 1) % options.importEvery === 0;
      if (importDue) pendingImports.push(scheduleImport(minute, pendingImports.length + 1, imports));
      const result = await loadFor(service.url, 60, next);
      if (running.stopping && result.duration < 59) break;
      const row = rowOf(minute, result, samples, imports);
      if (importDue && row.import === undefined) row.import = 'running';
      rows.push(row);
      console.log(tableRow(row));
      writeResults(options, rows, imports, samples, undefined);
    }
    stopSampling();
    await Promise.all(pendingImports);
    // An import that outlasted its minute is filled in now.
    for (const row of rows) if (row.import === 'running') row.import = imports.find((run) => run.minute === row.minute);
    const summary = summarize(rows, samples, imports, options.warmUp);
    writeResults(options, rows, imports, samples, summary);
    console.log(
      `\nRSS slope after warm-up (${options.warmUp} min): ${slopeText(summary.rssSlope)}; later half: ` +
        `${slopeText(summary.laterRssSlope)}; heap: ${slopeText(summary.heapSlope)}`,
    );
    console.log(verdictLine(summary));
    console.log('written to bench/results/soak-latest.md and .json');
    // Every request asks for something that exists, so a non-2xx answer is a failure too.
    const failed =
      summary.verdict === 'growing' || summary.errors > 0 || summary.non2xx > 0 || summary.importsFailed > 0;
    if (failed && process.exitCode === undefined) process.exitCode = 1;
  } finally {
    await stopEverything();
  }
}

/** Starts an import IMPORT_OFFSET_MS into the minute, unless the run is stopped first. */
async function scheduleImport(minute: number, importNumber: number, imports: ImportRun[]): Promise<void> {
  await sleep(IMPORT_OFFSET_MS);
  if (running.stopping) return;
  const run = await runImport(minute, importNumber);
  imports.push(run);
  console.log(
    `import ${importNumber} (minute ${minute}): exit ${run.exitCode} in ${round(run.seconds)} s: ${run.output}`,
  );
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  await stopEverything();
  process.exit(1);
});
