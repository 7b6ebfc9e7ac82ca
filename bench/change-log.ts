/**
 * `npm run bench:change-log [-- --part import|feed]`: what the change log (issue 61,
 * drizzle/0006_change_log.sql) costs, measured against its targets: an import of 100,000 changed
 * profiles takes at most 20 % longer with the log than without it, and a page of 1,000 entries
 * of `GET /api/changes` answers within 50 ms at p99 from a log of 1,000,000 entries.
 *
 * Each part uses a database of its own on the local PostgreSQL (BENCH_CHANGE_LOG_DATABASE_URL,
 * default postgres://postgres@127.0.0.1:5432/nps_bench_change_log; dropped and created again,
 * dropped at the end), migrated and loaded with DATASET (100,000 generated profiles).
 *
 * Import part. `npm run import` (the real command, bench/import-command.ts) of a file holding
 * every profile of the database with its description and level changed, with the log's triggers
 * on `profiles` enabled ("log") and disabled ("no log": ALTER TABLE … DISABLE TRIGGER, in this
 * database only, enabled again afterwards). Two versions of the file take turns, so every import
 * changes all 100,000 profiles. This machine's speed drifts by half within tens of seconds, so
 * the sides are compared in repetitions of four adjacent imports, A B B A then B A A B
 * (repetitionOrder of bench/paired-ratios.ts); the figure is the median of the repetitions'
 * ratios, with their range. Before every import the tables imports write are vacuumed (autovacuum
 * is off on the benchmark machine) and a CHECKPOINT is taken, so each starts from the same state.
 * Beside the times, the time spent in the log's trigger functions (track_functions, on for this
 * database) and, at the end, the log's bytes on disk per entry (tables and indexes over entries).
 *
 * Feed part. The log is filled to 1,000,000 entries by real transactions through the triggers:
 * the dataset's load (one commit of 100,000), then a DO block that commits after each UPDATE of
 * profiles, in commits of the sizes of COMMIT_MIX shuffled together. The service is started as
 * `npm start` runs it (as bench/run.ts does) and autocannon asks it for pages of 1,000 after
 * cursors of real positions drawn from the log (feedScenarios): at random entries, at random
 * commits (most of them of one entry: a page then crosses many commits), and filtered by `names=`
 * and by `namespace=`, at a fixed rate. Scenarios take turns in rounds, every other round in
 * reverse order; the figures are the median of the rounds' percentiles, with their range. Beside
 * them, the same reads timed in this process straight from the database (one connection): what
 * of a page is PostgreSQL's. `--keep` keeps the database, and a later run with `--keep` uses the
 * log it finds instead of filling it again.
 *
 * Results: bench/results/change-log-import.{json,md} and change-log-feed.{json,md}.
 */
import { createWriteStream, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { type GeneratorOptions, generatedProfile } from '../src/data/generator.js';
import { type LogPage, type LogPosition, readLog, readLogOfNames, readLogOfNamespace } from '../src/db/change-log.js';
import { openDatabase } from '../src/db/database.js';
import type { Database } from '../src/db/schema.js';
import { encodeChangeCursor } from '../src/service/change-cursors.js';
import { MAX_CHANGES_PAGE, NAMESPACE_SCAN } from '../src/service/changes.js';
import { cpuSecondsOf } from '../test/support/process-tree.js';
import type { SpawnedProcess } from '../test/support/server-process.js';
import { type ImportCommandRun, runImportCommand } from './import-command.js';
import { repetitionOrder, type Side } from './paired-ratios.js';
import {
  benchCommandLine,
  benchServiceSettings,
  cycle,
  freshDatabase,
  loadDataset,
  median,
  randomNames,
  serviceCommand,
  startService,
  usageError,
  wholeNumberOption,
} from './support.js';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const DATABASE_URL =
  process.env.BENCH_CHANGE_LOG_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/nps_bench_change_log';
const DATASET: GeneratorOptions = { profiles: 100_000, seed: 61 };
/** The triggers that write the log (drizzle/0006_change_log.sql); the commit trigger only follows them. */
const LOG_TRIGGERS = ['change_log_on_insert', 'change_log_on_update', 'change_log_on_delete'];
/** The tables an import writes, vacuumed before each one. */
const IMPORT_TABLES = 'profiles, records, wallet_addresses, change_log, change_log_commits';
const IMPORT_TARGET_RATIO = 1.2;
const PAGE_TARGET_P99_MS = 50;
/** Names per request of the `names` scenario. */
const NAMES_PER_PAGE = 5;
/** Cursors (and name sets) drawn per scenario, about. */
const CURSORS = 2000;

/**
 * The log's commits after the dataset's own (one of 100,000 entries), shuffled together: whole
 * re-imports, imports of a batch of changed profiles (the soak's size), smaller ones, and single
 * edits. With the dataset's commit: 1,000,000 entries in 101,104 commits.
 */
const COMMIT_MIX: ReadonlyArray<{ entries: number; commits: number }> = [
  { entries: 100_000, commits: 3 },
  { entries: 3_000, commits: 100 },
  { entries: 200, commits: 1_000 },
  { entries: 1, commits: 100_000 },
];
const LOG_ENTRIES = COMMIT_MIX.reduce((sum, { entries, commits }) => sum + entries * commits, DATASET.profiles);
const LOG_COMMITS = COMMIT_MIX.reduce((sum, { commits }) => sum + commits, 1);

const USAGE = `
npm run bench:change-log [-- options]   the change log's costs against issue 61's targets (bench/README.md, "Change log")

  --part import|feed   only one part (default: both; each takes about 15 minutes)
  --repetitions N      import part: repetitions of four imports, A B B A / B A A B (default 12)
  --rounds N           feed part: rounds of every scenario (default 7)
  --seconds N          feed part: seconds of each scenario in a round (default 10)
  --connections N      feed part: autocannon connections (default 4)
  --rate N             feed part: pages a second over all connections (default 40; 0: as fast as they go)
  --keep               keep the database afterwards; the feed part then uses a log it finds complete
`;

interface Options {
  parts: Array<'import' | 'feed'>;
  repetitions: number;
  rounds: number;
  seconds: number;
  connections: number;
  rate: number;
  keep: boolean;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function readOptions(): Options {
  const { values } = benchCommandLine(
    {
      options: {
        part: { type: 'string' },
        repetitions: { type: 'string', default: '12' },
        rounds: { type: 'string', default: '7' },
        seconds: { type: 'string', default: '10' },
        connections: { type: 'string', default: '4' },
        rate: { type: 'string', default: '40' },
        keep: { type: 'boolean', default: false },
      },
      strict: true,
    },
    USAGE,
  );
  if (values.part !== undefined && values.part !== 'import' && values.part !== 'feed') {
    usageError(`--part takes import or feed, not "${values.part}".`, USAGE);
  }
  return {
    parts: values.part === undefined ? ['import', 'feed'] : [values.part],
    repetitions: wholeNumberOption('--repetitions', values.repetitions, 1, USAGE),
    rounds: wholeNumberOption('--rounds', values.rounds, 1, USAGE),
    seconds: wholeNumberOption('--seconds', values.seconds, 1, USAGE),
    connections: wholeNumberOption('--connections', values.connections, 1, USAGE),
    rate: wholeNumberOption('--rate', values.rate, 0, USAGE),
    keep: values.keep,
  };
}

const count = (value: number) => value.toLocaleString('en-US');
const fixed = (value: number, digits = 1) => value.toFixed(digits);

/** A median and the lowest and highest values. */
interface Spread {
  median: number;
  lowest: number;
  highest: number;
}

function spread(values: readonly number[]): Spread {
  return { median: median(values), lowest: Math.min(...values), highest: Math.max(...values) };
}

async function withSql<T>(work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    return await work(sql);
  } finally {
    await sql.end();
  }
}

/** The log's size on disk: its two tables with their indexes, over its entries. */
interface LogSize {
  entries: number;
  commits: number;
  logTableBytes: number;
  logIndexBytes: number;
  commitsBytes: number;
  bytesPerEntry: number;
}

async function logSize(sql: postgres.Sql): Promise<LogSize> {
  const [row] = await sql<
    { entries: string; commits: string; log_table: string; log_indexes: string; commits_total: string }[]
  >`
    select (select count(*) from change_log) as entries,
           (select count(*) from change_log_commits) as commits,
           pg_table_size('change_log') as log_table,
           pg_indexes_size('change_log') as log_indexes,
           pg_total_relation_size('change_log_commits') as commits_total`;
  if (row === undefined) throw new Error('no size of the change log');
  const size = {
    entries: Number(row.entries),
    commits: Number(row.commits),
    logTableBytes: Number(row.log_table),
    logIndexBytes: Number(row.log_indexes),
    commitsBytes: Number(row.commits_total),
  };
  const bytes = size.logTableBytes + size.logIndexBytes + size.commitsBytes;
  return { ...size, bytesPerEntry: bytes / Math.max(size.entries, 1) };
}

function sizeLines(size: LogSize): string[] {
  const mb = (bytes: number) => fixed(bytes / 1024 / 1024);
  const entries = Math.max(size.entries, 1);
  return [
    `Log on disk: ${count(size.entries)} entries in ${count(size.commits)} commits; change_log ${mb(size.logTableBytes)} MB ` +
      `and its indexes ${mb(size.logIndexBytes)} MB, change_log_commits with its indexes ${mb(size.commitsBytes)} MB: ` +
      `**${fixed(size.bytesPerEntry, 0)} bytes per entry** (${fixed(size.logTableBytes / entries, 0)} table, ` +
      `${fixed(size.logIndexBytes / entries, 0)} indexes, ${fixed(size.commitsBytes / entries, 1)} commits).`,
  ];
}

// ---------------------------------------------------------------------------------------------
// Import part

interface ImportSample extends ImportCommandRun {
  side: 'log' | 'noLog';
  repetition: number;
  /** The command's own time ("in 5.2 s" of its summary), without the process start. */
  ownSeconds: number;
  changeLogEntries: number;
  /** Time in the log's trigger functions (pg_stat_user_functions, their statements included). */
  logTriggerSeconds: number;
}

/** The dataset with every profile's description and level changed: version 1 and 2 take turns. */
async function writeChangedFile(version: number): Promise<string> {
  const file = path.join(tmpdir(), `nps-bench-change-log-${process.pid}-v${version}.ndjson`);
  const chunks = function* () {
    let chunk = '';
    for (let index = 0; index < DATASET.profiles; index += 1) {
      const profile = generatedProfile(DATASET, index);
      profile.description = `${profile.description ?? ''} Version ${version}.`.trim();
      profile.level = ((profile.level ?? 0) + version) % 10;
      chunk += `${JSON.stringify(profile)}\n`;
      if (index % 1000 === 999) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk !== '') yield chunk;
  };
  await pipeline(Readable.from(chunks()), createWriteStream(file));
  return file;
}

async function setLogTriggers(sql: postgres.Sql, enabled: boolean): Promise<void> {
  const action = enabled ? 'enable' : 'disable';
  await sql.unsafe(`alter table profiles ${LOG_TRIGGERS.map((name) => `${action} trigger ${name}`).join(', ')}`);
}

/**
 * Milliseconds spent so far in the log's trigger functions, by every session of the database
 * (track_functions is on for it). After an import, first waits for its session to end: a
 * session's statistics are counted when it ends.
 */
async function logTriggerMs(sql: postgres.Sql, afterImport = false): Promise<number> {
  while (afterImport) {
    const [row] = await sql<{ others: number }[]>`
      select count(*)::int as others from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
    if (row?.others === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await sql`select pg_stat_clear_snapshot()`;
  const [row] = await sql<{ ms: number }[]>`
    select coalesce(sum(self_time), 0)::float8 as ms from pg_stat_user_functions
    where funcname in ('change_log_profiles_inserted', 'change_log_profiles_updated', 'change_log_profiles_deleted',
                       'change_log_note_transaction', 'change_log_commit')`;
  return row?.ms ?? 0;
}

function numberIn(summary: string, pattern: RegExp): number {
  const match = pattern.exec(summary);
  if (match?.[1] === undefined) throw new Error(`unexpected import summary: ${summary}`);
  return Number(match[1].replaceAll(',', ''));
}

async function oneImport(
  sql: postgres.Sql,
  file: string,
  side: 'log' | 'noLog',
  repetition: number,
): Promise<ImportSample> {
  await setLogTriggers(sql, side === 'log');
  await sql.unsafe(`vacuum ${IMPORT_TABLES}`);
  await sql`checkpoint`;
  const triggersBefore = await logTriggerMs(sql);
  const run = await runImportCommand(DATABASE_URL, file);
  const logTriggerSeconds = ((await logTriggerMs(sql, true)) - triggersBefore) / 1000;
  const changed = numberIn(run.importSummary, /([\d,]+) profiles \(([\d,]+) new or changed\)/);
  const profilesChanged = numberIn(run.importSummary, /profiles \(([\d,]+) new or changed\)/);
  const changeLogEntries = numberIn(run.importSummary, /([\d,]+) change-log entries/);
  const expectedEntries = side === 'log' ? DATASET.profiles : 0;
  if (changed !== DATASET.profiles || profilesChanged !== DATASET.profiles || changeLogEntries !== expectedEntries) {
    throw new Error(`the import did not change every profile as planned (${side}): ${run.importSummary}`);
  }
  const sample: ImportSample = {
    ...run,
    side,
    repetition,
    ownSeconds: numberIn(run.importSummary, / in ([\d.]+) s$/),
    changeLogEntries,
    logTriggerSeconds,
  };
  log(
    `repetition ${repetition} ${side}: ${fixed(sample.ownSeconds)} s (wall ${fixed(sample.importSeconds)} s, ` +
      `importer CPU ${sample.importerCpuSeconds} s, backend CPU ${sample.backendCpuSeconds} s, ` +
      `log triggers ${fixed(logTriggerSeconds, 2)} s)`,
  );
  return sample;
}

interface ImportRatios {
  /** The command's own time, log / no log. */
  own: Spread;
  wall: Spread;
  backendCpu: Spread | undefined;
  perRepetition: Array<{ own: number; wall: number; backendCpu: number | null }>;
}

function importRatios(samples: readonly ImportSample[], repetitions: number): ImportRatios {
  const sum = (rows: ImportSample[], pick: (sample: ImportSample) => number | null) =>
    rows.reduce((total, sample) => total + (pick(sample) ?? Number.NaN), 0);
  const perRepetition = Array.from({ length: repetitions }, (_, repetition) => {
    const inRepetition = samples.filter((sample) => sample.repetition === repetition + 1);
    const withLog = inRepetition.filter((sample) => sample.side === 'log');
    const withoutLog = inRepetition.filter((sample) => sample.side === 'noLog');
    const ratio = (pick: (sample: ImportSample) => number | null) => sum(withLog, pick) / sum(withoutLog, pick);
    const backendCpu = ratio((sample) => sample.backendCpuSeconds);
    return {
      own: ratio((sample) => sample.ownSeconds),
      wall: ratio((sample) => sample.importSeconds),
      backendCpu: Number.isFinite(backendCpu) ? backendCpu : null,
    };
  });
  const cpu = perRepetition.map((r) => r.backendCpu).filter((value): value is number => value !== null);
  return {
    own: spread(perRepetition.map((r) => r.own)),
    wall: spread(perRepetition.map((r) => r.wall)),
    backendCpu: cpu.length === 0 ? undefined : spread(cpu),
    perRepetition,
  };
}

async function importPart(options: Options): Promise<void> {
  log(`import part: fresh database, ${count(DATASET.profiles)} profiles`);
  await freshDatabase(DATABASE_URL);
  // For logTriggerMs: the time of the log's trigger functions, in every session of this database.
  const databaseName = new URL(DATABASE_URL).pathname.slice(1).replaceAll('"', '""');
  await withSql((sql) => sql.unsafe(`alter database "${databaseName}" set track_functions = 'pl'`));
  await loadDataset(DATABASE_URL, DATASET);
  const files = [await writeChangedFile(1), await writeChangedFile(2)];
  const samples: ImportSample[] = [];
  const loadAverages: number[] = [];
  try {
    await withSql(async (sql) => {
      try {
        let imports = 0;
        for (let repetition = 1; repetition <= options.repetitions; repetition += 1) {
          loadAverages.push(loadavg()[0] ?? 0);
          for (const side of repetitionOrder(repetition - 1)) {
            const file = files[imports % 2] as string;
            imports += 1;
            samples.push(await oneImport(sql, file, sideOf(side), repetition));
          }
        }
      } finally {
        await setLogTriggers(sql, true);
      }
      await sql.unsafe(`vacuum analyze change_log, change_log_commits`);
      reportImport(options, samples, importRatios(samples, options.repetitions), await logSize(sql), loadAverages);
    });
  } finally {
    for (const file of files) rmSync(file, { force: true });
  }
}

/** The log is the scenario the target judges ("key"), its absence the base. */
function sideOf(side: Side): 'log' | 'noLog' {
  return side === 'key' ? 'log' : 'noLog';
}

function reportImport(
  options: Options,
  samples: ImportSample[],
  ratios: ImportRatios,
  size: LogSize,
  loadAverages: number[],
): void {
  const date = new Date().toISOString();
  const of = (side: 'log' | 'noLog', pick: (sample: ImportSample) => number | null) =>
    median(
      samples
        .filter((sample) => sample.side === side)
        .map(pick)
        .filter((value): value is number => value !== null),
    );
  const ratioCell = (value: Spread | undefined) =>
    value === undefined ? 'n/a' : `${fixed(value.median, 3)} (${fixed(value.lowest, 3)}-${fixed(value.highest, 3)})`;
  const verdict = ratios.own.median <= IMPORT_TARGET_RATIO ? 'met' : 'MISSED';
  const markdown = [
    `# Change log: import cost ${date}`,
    '',
    `\`npm run import\` of ${count(DATASET.profiles)} changed profiles (every profile of the database, description and`,
    'level changed; two versions take turns) with the change log triggers on `profiles` enabled (log) and disabled',
    `(no log), in ${options.repetitions} repetitions of four adjacent imports (A B B A, then B A A B). Each import`,
    'starts after a VACUUM and a CHECKPOINT. Load average (1 min) at the start of each repetition: ' +
      `${loadAverages.map((value) => fixed(value)).join(', ')}.`,
    '',
    '| figure | no log (median) | log (median) | log / no log: median of the repetitions (range) |',
    '|---|---|---|---|',
    `| import, the command's own time (s) | ${fixed(of('noLog', (s) => s.ownSeconds))} | ${fixed(of('log', (s) => s.ownSeconds))} | **${ratioCell(ratios.own)}** |`,
    `| import, wall time of the process (s) | ${fixed(of('noLog', (s) => s.importSeconds))} | ${fixed(of('log', (s) => s.importSeconds))} | ${ratioCell(ratios.wall)} |`,
    `| PostgreSQL backend CPU of the import (s) | ${fixed(of('noLog', (s) => s.backendCpuSeconds))} | ${fixed(of('log', (s) => s.backendCpuSeconds))} | ${ratioCell(ratios.backendCpu)} |`,
    `| importer process CPU (s) | ${fixed(of('noLog', (s) => s.importerCpuSeconds))} | ${fixed(of('log', (s) => s.importerCpuSeconds))} | |`,
    `| in the log's trigger functions (s) | | ${fixed(
      of('log', (s) => s.logTriggerSeconds),
      2,
    )} | |`,
    '',
    `Target: at most ${fixed(IMPORT_TARGET_RATIO, 2)}× (the log adds at most 20 %): **${verdict}**.`,
    '',
    ...sizeLines(size),
    '',
    `Per repetition, log / no log (own time): ${ratios.perRepetition.map((r) => fixed(r.own, 3)).join(', ')}.`,
    '',
  ].join('\n');
  const results = {
    date,
    part: 'import',
    profiles: DATASET.profiles,
    repetitions: options.repetitions,
    targetRatio: IMPORT_TARGET_RATIO,
    ratios,
    logSize: size,
    loadAverages,
    samples,
  };
  writeFileSync(`${RESULTS_DIR}change-log-import.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(`${RESULTS_DIR}change-log-import.md`, markdown);
  process.stdout.write(markdown);
}

// ---------------------------------------------------------------------------------------------
// Feed part

/** Whether the database holds the log buildLog makes (a run with --keep left it). */
async function logComplete(sql: postgres.Sql): Promise<boolean> {
  try {
    const size = await logSize(sql);
    return size.entries === LOG_ENTRIES && size.commits === LOG_COMMITS;
  } catch {
    return false;
  }
}

/** Fills the log with COMMIT_MIX in shuffled order: real transactions through the triggers. */
async function buildLog(sql: postgres.Sql): Promise<number> {
  const started = performance.now();
  const sizes = COMMIT_MIX.map(({ entries, commits }) => `array_fill(${entries}, array[${commits}])`).join(' || ');
  // Building, not measuring: commits need not wait for the disk.
  await sql`set synchronous_commit = off`;
  await sql
    .unsafe(
      `do $$
      declare
        size int;
        low int;
        total int := (select count(*) from profiles);
      begin
        perform setseed(0.61);
        for size in select s from unnest(${sizes}) as s order by random() loop
          low := 1 + floor(random() * (total - size + 1))::int;
          -- A new content hash is a change the log records (ids run from 1 without gaps).
          update profiles set content_hash = md5(content_hash) where id >= low and id < low + size;
          commit;
        end loop;
      end $$`,
    )
    .simple();
  await sql`vacuum analyze profiles, change_log, change_log_commits`;
  return (performance.now() - started) / 1000;
}

interface Scenario {
  key: string;
  label: string;
  paths: string[];
  /** The same pages read straight from the database, for the database's share. */
  read: Array<(db: Database) => Promise<LogPage>>;
}

async function feedScenarios(sql: postgres.Sql): Promise<Scenario[]> {
  const atEntries = await sql<{ commit_seq: string; seq: string }[]>`
    select c.commit_seq, e.seq
    from change_log as e tablesample bernoulli (${(CURSORS / LOG_ENTRIES) * 100}) repeatable (61)
    join change_log_commits as c on c.xid = e.xid`;
  const atCommits = await sql<{ commit_seq: string; seq: string }[]>`
    select c.commit_seq, (select min(seq) from change_log as e where e.xid = c.xid) as seq
    from change_log_commits as c tablesample bernoulli (${(CURSORS / LOG_COMMITS) * 100}) repeatable (61)`;
  const positions = (rows: readonly { commit_seq: string; seq: string }[]) =>
    shuffled(rows.map((row) => ({ commitSeq: Number(row.commit_seq), seq: Number(row.seq) })));
  const entries = positions(atEntries);
  const commits = positions(atCommits);
  const namespaces = (await sql<{ name: string }[]>`select name from namespaces order by name`).map((row) => row.name);
  const names = randomNames(DATASET, CURSORS * NAMES_PER_PAGE, 6161);
  const nameSets = entries.map((_, index) => names.slice(index * NAMES_PER_PAGE, (index + 1) * NAMES_PER_PAGE));
  const page = (after: LogPosition, extra = '') =>
    `/api/changes?after=${encodeChangeCursor(after)}&limit=${MAX_CHANGES_PAGE}${extra}`;
  const namespaceOf = (index: number) => namespaces[index % namespaces.length] as string;
  return [
    {
      key: 'page',
      label: 'a page of 1,000 after a random entry',
      paths: entries.map((after) => page(after)),
      read: entries.map((after) => (db) => readLog(db, after, MAX_CHANGES_PAGE)),
    },
    {
      key: 'pageAfterCommit',
      label: 'a page of 1,000 after a random commit (most of one entry)',
      paths: commits.map((after) => page(after)),
      read: commits.map((after) => (db) => readLog(db, after, MAX_CHANGES_PAGE)),
    },
    {
      key: 'names',
      label: `\`names=\` (${NAMES_PER_PAGE} random names) after a random entry`,
      paths: entries.map((after, index) =>
        page(after, `&names=${(nameSets[index] ?? []).map(encodeURIComponent).join(',')}`),
      ),
      read: entries.map((after, index) => (db) => readLogOfNames(db, after, nameSets[index] ?? [], MAX_CHANGES_PAGE)),
    },
    {
      key: 'namespace',
      label: `\`namespace=\` (one of ${namespaces.length}, in turn) after a random entry`,
      paths: entries.map((after, index) => page(after, `&namespace=${encodeURIComponent(namespaceOf(index))}`)),
      read: entries.map(
        (after, index) => (db) => readLogOfNamespace(db, after, namespaceOf(index), MAX_CHANGES_PAGE, NAMESPACE_SCAN),
      ),
    },
  ];
}

/** A seeded shuffle, so cursors next to each other in the log are not asked for one after another. */
function shuffled<T>(items: T[]): T[] {
  let state = 61;
  for (let index = items.length - 1; index > 0; index -= 1) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const other = state % (index + 1);
    [items[index], items[other]] = [items[other] as T, items[index] as T];
  }
  return items;
}

/** What the service answers to the first pages of a scenario: all 200, and how full the pages are. */
async function samplePages(url: string, scenario: Scenario): Promise<{ meanEntries: number; fullPages: number }> {
  const sampled = scenario.paths.slice(0, 50);
  let entries = 0;
  let full = 0;
  for (const pathOf of sampled) {
    const response = await fetch(`${url}${pathOf}`);
    if (response.status !== 200) throw new Error(`${pathOf}: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { changes: unknown[] };
    entries += body.changes.length;
    if (body.changes.length === MAX_CHANGES_PAGE) full += 1;
  }
  return { meanEntries: entries / sampled.length, fullPages: full / sampled.length };
}

/** The pages read in this process straight from the database, one after another: the database's share. */
async function databaseTimes(db: Database, scenario: Scenario): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (const read of scenario.read.slice(0, 300)) {
    const started = performance.now();
    await read(db);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length * 0.5)] ?? 0, p99: times[Math.floor(times.length * 0.99)] ?? 0 };
}

interface Slice {
  round: number;
  /** The machine's load average (1 min) when the slice began. */
  loadAverage: number;
  requests: number;
  requestsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
  /** Bytes a response, on average. */
  bytesPerResponse: number;
  /** CPU of the service process per request (ms). */
  serviceCpuMsPerRequest: number | null;
}

async function slice(
  service: { process: SpawnedProcess; url: string },
  next: () => string,
  options: Options,
  seconds: number,
  round: number,
): Promise<Slice> {
  const cpuBefore = cpuSecondsOf(service.process.pid);
  const loadAverage = loadavg()[0] ?? 0;
  const result = await autocannon({
    url: service.url,
    connections: options.connections,
    duration: seconds,
    ...(options.rate > 0 ? { overallRate: options.rate } : {}),
    requests: [{ setupRequest: (request) => ({ ...request, path: next() }) }],
  });
  const cpuAfter = cpuSecondsOf(service.process.pid);
  const total = result.requests.total;
  return {
    round,
    loadAverage,
    requests: total,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    bytesPerResponse: total === 0 ? 0 : result.throughput.total / total,
    serviceCpuMsPerRequest:
      cpuBefore === undefined || cpuAfter === undefined || total === 0 ? null : ((cpuAfter - cpuBefore) * 1000) / total,
  };
}

interface ScenarioResult {
  key: string;
  label: string;
  sample: { meanEntries: number; fullPages: number };
  database: { p50: number; p99: number };
  slices: Slice[];
  p99: Spread;
  p50: Spread;
}

async function feedPart(options: Options): Promise<void> {
  let buildSeconds: number | null = null;
  if (!(options.keep && (await withSql(logComplete)))) {
    log(`feed part: fresh database, ${count(DATASET.profiles)} profiles`);
    await freshDatabase(DATABASE_URL);
    await loadDataset(DATABASE_URL, DATASET);
    log('feed part: filling the log (about ten minutes)');
    buildSeconds = await withSql(buildLog);
  }
  const { size, scenarios } = await withSql(async (sql) => {
    const size = await logSize(sql);
    log(`feed part: ${count(size.entries)} entries in ${count(size.commits)} commits`);
    return { size, scenarios: await feedScenarios(sql) };
  });
  const handle = await openDatabase({ url: DATABASE_URL, dataDir: '' });
  const database = new Map<string, { p50: number; p99: number }>();
  try {
    for (const scenario of scenarios) database.set(scenario.key, await databaseTimes(handle.db, scenario));
  } finally {
    await handle.close();
  }
  const service = await startService(serviceCommand(), {
    DATABASE_URL,
    DB_POOL_SIZE: '10',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PROFILE_LIMIT: '0',
    ...benchServiceSettings(),
  });
  const results: ScenarioResult[] = [];
  try {
    const samples = new Map<string, { meanEntries: number; fullPages: number }>();
    for (const scenario of scenarios) samples.set(scenario.key, await samplePages(service.url, scenario));
    const nexts = new Map(scenarios.map((scenario) => [scenario.key, cycle(scenario.paths)]));
    const nextOf = (scenario: Scenario) => nexts.get(scenario.key) ?? (() => '/');
    for (const scenario of scenarios) await slice(service, nextOf(scenario), options, 5, 0); // warm-up
    const slices = new Map<string, Slice[]>(scenarios.map((scenario) => [scenario.key, []]));
    for (let round = 1; round <= options.rounds; round += 1) {
      const order = round % 2 === 1 ? scenarios : [...scenarios].reverse();
      for (const scenario of order) {
        const measured = await slice(service, nextOf(scenario), options, options.seconds, round);
        slices.get(scenario.key)?.push(measured);
        log(
          `round ${round} ${scenario.key}: ${fixed(measured.requestsPerSecond)} pages/s, p50 ${measured.p50} ms, ` +
            `p99 ${measured.p99} ms, max ${measured.max} ms, service CPU ${fixed(measured.serviceCpuMsPerRequest ?? Number.NaN, 2)} ms a page`,
        );
      }
    }
    for (const scenario of scenarios) {
      const measured = slices.get(scenario.key) ?? [];
      results.push({
        key: scenario.key,
        label: scenario.label,
        sample: samples.get(scenario.key) ?? { meanEntries: 0, fullPages: 0 },
        database: database.get(scenario.key) ?? { p50: 0, p99: 0 },
        slices: measured,
        p99: spread(measured.map((s) => s.p99)),
        p50: spread(measured.map((s) => s.p50)),
      });
    }
  } finally {
    await service.process.stop();
  }
  reportFeed(options, results, size, buildSeconds);
}

function reportFeed(options: Options, results: ScenarioResult[], size: LogSize, buildSeconds: number | null): void {
  const date = new Date().toISOString();
  const load =
    options.rate > 0
      ? `${options.rate} pages a second over ${options.connections} connections`
      : `${options.connections} connections, each asking again as soon as it is answered`;
  const rows = results.map((result) => {
    const cpu = median(
      result.slices.map((s) => s.serviceCpuMsPerRequest).filter((value): value is number => value !== null),
    );
    const within = result.p99.median <= PAGE_TARGET_P99_MS ? 'met' : 'MISSED';
    return (
      `| ${result.label} | ${fixed(result.sample.meanEntries, 0)} | ${result.p50.median} | ` +
      `**${result.p99.median}** (${result.p99.lowest}-${result.p99.highest}) | ${within} | ` +
      `${fixed(result.database.p50)} / ${fixed(result.database.p99)} | ${fixed(cpu, 2)} | ` +
      `${fixed(median(result.slices.map((s) => s.bytesPerResponse)) / 1024, 0)} |`
    );
  });
  const failures = results.flatMap((result) => result.slices).reduce((sum, s) => sum + s.non2xx + s.errors, 0);
  const markdown = [
    `# Change log: feed pages ${date}`,
    '',
    `\`GET /api/changes?after=<cursor>&limit=${MAX_CHANGES_PAGE}\` of the service (as \`npm start\` runs it) on PostgreSQL, with`,
    `a log of ${count(size.entries)} entries in ${count(size.commits)} commits (built through the triggers${buildSeconds === null ? ' by an earlier run' : ` in ${fixed(buildSeconds, 0)} s`}).`,
    `Load: ${load}; ${options.rounds} rounds of ${options.seconds} s a scenario, scenarios in turn (every other round`,
    'reversed). p50 and p99: median over the rounds (lowest-highest of the rounds for p99). Database alone: the same reads',
    'timed in the benchmark process on one connection, one after another (p50 / p99 ms).',
    '',
    `| scenario | entries a page (mean of 50) | p50 (ms) | p99 (ms) | target p99 ≤ ${PAGE_TARGET_P99_MS} ms | database alone p50 / p99 (ms) | service CPU a page (ms) | KB a page |`,
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...sizeLines(size),
    '',
    'p99 by round (ms), with the load average (1 min) when the slice began:',
    '',
    ...results.map(
      (result) => `- ${result.key}: ${result.slices.map((s) => `${s.p99} (${fixed(s.loadAverage)})`).join(', ')}`,
    ),
    '',
    `Non-2xx answers and errors: ${failures}.`,
    '',
  ].join('\n');
  const json = {
    date,
    part: 'feed',
    options,
    commitMix: COMMIT_MIX,
    targetP99Ms: PAGE_TARGET_P99_MS,
    buildSeconds,
    logSize: size,
    results,
  };
  writeFileSync(`${RESULTS_DIR}change-log-feed.json`, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(`${RESULTS_DIR}change-log-feed.md`, markdown);
  process.stdout.write(markdown);
  if (failures > 0) {
    log('some requests failed: see the table');
    process.exitCode = 1;
  }
}

async function main(): Promise<void> {
  const options = readOptions();
  try {
    for (const part of options.parts) {
      if (part === 'import') await importPart(options);
      else await feedPart(options);
    }
  } finally {
    // A million entries and their profiles are not worth keeping, unless asked.
    if (!options.keep) await freshDatabase(DATABASE_URL, false);
  }
}

main().catch((error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
