/**
 * `npm run bench:import`: how long a non-locking import of 1,000,000 generated profiles takes
 * into a PostgreSQL database that is serving readers, and what it does to their latency.
 *
 * 1. Generates the data file once (`npm run gen -- --profiles 1000000 --seed 1`; its size is in
 *    docs/data.md) into bench/results/ and reuses it afterwards.
 * 2. Per run: a fresh database of its own on the local PostgreSQL (`BENCH_IMPORT_DATABASE_URL`,
 *    default postgres://postgres@127.0.0.1:5432/nps_bench_import; dropped and created again),
 *    migrated and loaded with a base set of 100,000 other generated profiles (the ones readers
 *    look up).
 * 3. Starts the reader: bench/baseline-server.ts (node:http + postgres.js, one query; the
 *    service's own request path is being rebuilt), driven by autocannon at a fixed rate over
 *    random existing names of the base set. Measures its latency for a while ("before"), then
 *    runs `npm run import` (the real command, without --bulk) of the 1M file while the same load
 *    goes on ("during").
 * 4. Reports the import's duration (wall time of the command), the readers' p50/p99 before and
 *    during, and where the CPU went (the importer process, and the PostgreSQL backend of its
 *    transaction when PostgreSQL runs on this machine); min and median over the runs. Writes
 *    bench/results/import.json and bench/results/import.md.
 *
 * Settings: BENCH_RUNS (3), BENCH_READER_RATE requests/s (300), BENCH_READER_CONNECTIONS (8),
 * BENCH_BEFORE_SECONDS (15), BENCH_IMPORT_PROFILES (1000000; smaller for a quick look).
 */
import { createWriteStream, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { type GeneratorOptions, generatedName, generateNdjson } from '../src/data/generator.js';
import { importLines } from '../src/data/importer.js';
import { openDatabase } from '../src/db/database.js';
import { type ServerProcess, startServerProcess } from '../test/support/server-process.js';
import { type ImportCommandRun, runImportCommand } from './import-command.js';
import { freshDatabase, median } from './support.js';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const IMPORTED: GeneratorOptions = { profiles: Number(process.env.BENCH_IMPORT_PROFILES ?? 1_000_000), seed: 1 };
const BASE: GeneratorOptions = { profiles: 100_000, seed: 2 };
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const READER_RATE = Number(process.env.BENCH_READER_RATE ?? 300);
const READER_CONNECTIONS = Number(process.env.BENCH_READER_CONNECTIONS ?? 8);
const BEFORE_SECONDS = Number(process.env.BENCH_BEFORE_SECONDS ?? 15);
const DATABASE_URL = process.env.BENCH_IMPORT_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/nps_bench_import';

interface Latency {
  requests: number;
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
}

interface Run extends ImportCommandRun {
  before: Latency;
  during: Latency;
  loadAverage: { start: number; end: number };
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** The 1M file, generated once; a marker file says it was written completely. */
async function dataFile(): Promise<string> {
  const path = `${RESULTS_DIR}import-${IMPORTED.profiles}-seed${IMPORTED.seed}.ndjson`;
  const marker = `${path}.complete`;
  if (existsSync(marker) && readFileSync(marker, 'utf8') === String(statSync(path).size)) return path;
  log(`generating ${path} ...`);
  await pipeline(Readable.from(generateNdjson(IMPORTED)), createWriteStream(`${path}.partial`));
  renameSync(`${path}.partial`, path);
  writeFileSync(marker, String(statSync(path).size));
  return path;
}

async function loadBase(): Promise<void> {
  const handle = await openDatabase({ url: DATABASE_URL, dataDir: '' });
  try {
    await handle.migrate();
    const lines = (function* () {
      for (const chunk of generateNdjson(BASE)) yield* chunk.split('\n');
    })();
    const report = await importLines(handle.db, lines);
    if (!report.ok) throw new Error(`base import failed: ${JSON.stringify(report.problems.slice(0, 3))}`);
  } finally {
    await handle.close();
  }
}

/** Random existing names of the base set, as request paths. */
function readerPaths(count: number): string[] {
  let state = 12345;
  const paths: string[] = [];
  for (let i = 0; i < count; i += 1) {
    state = (state * 1103515245 + 12345) >>> 0;
    paths.push(`/api/${encodeURIComponent(generatedName(BASE, state % BASE.profiles))}`);
  }
  return paths;
}

/** The reader load at a fixed rate; `stop` ends it and returns its latency. */
function readers(url: string, paths: readonly string[], seconds: number) {
  let next = 0;
  let resolveResult: (result: autocannon.Result) => void = () => {};
  const result = new Promise<autocannon.Result>((resolve) => {
    resolveResult = resolve;
  });
  const instance = autocannon(
    {
      url,
      connections: READER_CONNECTIONS,
      overallRate: READER_RATE,
      duration: seconds,
      requests: [
        {
          setupRequest: (request) => {
            next = (next + 1) % paths.length;
            return { ...request, path: paths[next] ?? '/' };
          },
        },
      ],
    },
    (error, outcome) => {
      if (error) throw error;
      resolveResult(outcome);
    },
  );
  const latency = async (): Promise<Latency> => {
    const outcome = await result;
    return {
      requests: outcome.requests.total,
      p50: outcome.latency.p50,
      p99: outcome.latency.p99,
      max: outcome.latency.max,
      non2xx: outcome.non2xx,
      errors: outcome.errors + outcome.timeouts,
    };
  };
  return {
    latency,
    stop: () => {
      instance.stop();
      return latency();
    },
  };
}

async function oneRun(file: string, round: number): Promise<Run> {
  log(`run ${round}: fresh database, base load of ${BASE.profiles} profiles`);
  await freshDatabase(DATABASE_URL);
  await loadBase();
  const env = { DATABASE_URL, DB_POOL_SIZE: '10', NODE_ENV: 'production' };
  const server: ServerProcess = await startServerProcess({ env, script: 'bench/baseline-server.ts' });
  try {
    const paths = readerPaths(50_000);
    await readers(server.url, paths, 3).latency(); // warm-up
    const loadStart = loadavg()[0] ?? 0;
    const before = await readers(server.url, paths, BEFORE_SECONDS).latency();
    log(`run ${round}: readers before: p50 ${before.p50} ms, p99 ${before.p99} ms; importing ${file}`);
    const load = readers(server.url, paths, 3600);
    const imported = await runImportCommand(DATABASE_URL, file);
    const during = await load.stop();
    const run: Run = { ...imported, before, during, loadAverage: { start: loadStart, end: loadavg()[0] ?? 0 } };
    log(
      `run ${round}: import ${run.importSeconds.toFixed(1)} s (${run.importSummary}); readers during: ` +
        `p50 ${during.p50} ms, p99 ${during.p99} ms; CPU importer ${run.importerCpuSeconds} s, backend ${run.backendCpuSeconds} s`,
    );
    return run;
  } finally {
    await server.stop();
  }
}

function summary(runs: Run[], pick: (run: Run) => number | null) {
  const values = runs.map(pick).filter((value): value is number => value !== null);
  if (values.length === 0) return null;
  return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
}

function report(file: string, runs: Run[]): void {
  const figures = {
    importSeconds: summary(runs, (run) => run.importSeconds),
    importerCpuSeconds: summary(runs, (run) => run.importerCpuSeconds),
    backendCpuSeconds: summary(runs, (run) => run.backendCpuSeconds),
    readerP50Before: summary(runs, (run) => run.before.p50),
    readerP99Before: summary(runs, (run) => run.before.p99),
    readerP50During: summary(runs, (run) => run.during.p50),
    readerP99During: summary(runs, (run) => run.during.p99),
    readerP99Ratio: summary(runs, (run) => run.during.p99 / Math.max(run.before.p99, 1)),
  };
  const results = {
    date: new Date().toISOString(),
    file: file.replace(PROJECT_ROOT, ''),
    profiles: IMPORTED.profiles,
    baseProfiles: BASE.profiles,
    readerRate: READER_RATE,
    readerConnections: READER_CONNECTIONS,
    beforeSeconds: BEFORE_SECONDS,
    figures,
    runs,
  };
  const number = (value: number | null | undefined, digits = 1) => (value == null ? 'n/a' : value.toFixed(digits));
  const row = (label: string, value: { min: number; median: number; max: number } | null, digits = 1) =>
    `| ${label} | ${number(value?.min, digits)} | ${number(value?.median, digits)} | ${number(value?.max, digits)} |`;
  const markdown = [
    `# Import benchmark ${results.date}`,
    '',
    `\`npm run import\` (no --bulk) of ${IMPORTED.profiles.toLocaleString('en-US')} generated profiles (seed ${IMPORTED.seed}) into a`,
    `PostgreSQL database holding ${BASE.profiles.toLocaleString('en-US')} other profiles, while readers look up random existing`,
    `names through bench/baseline-server.ts at ${READER_RATE} requests/s over ${READER_CONNECTIONS} connections. ${runs.length} run(s);`,
    'load average (1 min) at the start of each run: ' +
      runs.map((run) => run.loadAverage.start.toFixed(1)).join(', ') +
      '.',
    '',
    '| figure | min | median | max |',
    '|---|---|---|---|',
    row('import, wall time (s)', figures.importSeconds),
    row('importer process CPU (s)', figures.importerCpuSeconds),
    row('PostgreSQL backend CPU of the import (s)', figures.backendCpuSeconds),
    row('readers p50 before (ms)', figures.readerP50Before),
    row('readers p99 before (ms)', figures.readerP99Before),
    row('readers p50 during (ms)', figures.readerP50During),
    row('readers p99 during (ms)', figures.readerP99During),
    row('readers p99 during / before', figures.readerP99Ratio, 2),
    '',
    `Readers: ${runs.map((run) => `${run.during.requests} requests, ${run.during.non2xx} non-2xx, ${run.during.errors} errors`).join('; ')} (during).`,
    '',
  ].join('\n');
  writeFileSync(`${RESULTS_DIR}import.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(`${RESULTS_DIR}import.md`, markdown);
  process.stdout.write(markdown);
  if (runs.some((run) => run.before.non2xx + run.before.errors + run.during.non2xx + run.during.errors > 0)) {
    log('some reader requests failed: see the table');
    process.exitCode = 1;
  }
}

async function main(): Promise<void> {
  const file = await dataFile();
  const runs: Run[] = [];
  for (let round = 1; round <= RUNS; round += 1) runs.push(await oneRun(file, round));
  report(file, runs);
  await freshDatabase(DATABASE_URL, false); // 2 GB of benchmark data are not worth keeping
}

main().catch((error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
