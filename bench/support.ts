/**
 * What `npm run bench` (bench/run.ts) and `npm run bench:soak` (bench/soak.ts) share: a generated
 * dataset in a database of their own on the local PostgreSQL, random existing names and discovery
 * paths drawn from it, the service started as `npm start` runs it, and its memory read from /proc;
 * and what every bench tool's command line shares (`--help`, mistakes said without a stack trace).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ParseArgsConfig, parseArgs } from 'node:util';
import postgres from 'postgres';
import { asksForHelp, parseArguments, UsageError, wholeNumber } from '../src/cli/command.js';
import { type GeneratorOptions, generatedName, generateNdjson } from '../src/data/generator.js';
import { analyzeDataTables, importLines } from '../src/data/importer.js';
import { openDatabase } from '../src/db/database.js';
import { type SpawnedProcess, spawnServerProcess, startFlags } from '../test/support/server-process.js';
import { freePort } from '../test/support/throwaway-redis.js';

/** Creates the database of `url` on its server unless it exists. */
export async function createDatabaseIfMissing(url: string): Promise<void> {
  const target = new URL(url);
  const databaseName = target.pathname.slice(1);
  const admin = new URL(target);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    const [exists] = await sql`select 1 from pg_database where datname = ${databaseName}`;
    if (!exists) await sql.unsafe(`create database "${databaseName.replaceAll('"', '""')}"`);
  } finally {
    await sql.end();
  }
}

/** Drops the database of `url` (closing its sessions) and, unless `andCreate` is false, creates it empty. */
export async function freshDatabase(url: string, andCreate = true): Promise<void> {
  const target = new URL(url);
  const admin = new URL(target);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    const quoted = `"${target.pathname.slice(1).replaceAll('"', '""')}"`;
    await sql.unsafe(`drop database if exists ${quoted} with (force)`);
    if (andCreate) await sql.unsafe(`create database ${quoted}`);
  } finally {
    await sql.end();
  }
}

/** Loads the dataset unless the database already holds its profiles (same count, same last name). */
export async function loadDataset(url: string, dataset: GeneratorOptions): Promise<void> {
  const handle = await openDatabase({ url, dataDir: '', statementTimeoutMs: 600_000 });
  try {
    await handle.migrate();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from profiles`;
    const [lastRow] = await sql`select 1 from profiles where name = ${generatedName(dataset, dataset.profiles - 1)}`;
    if (row?.n === dataset.profiles && lastRow) {
      // A dataset loaded by an importer from before imports analyzed (or with autovacuum off,
      // as on the benchmark machine) would leave the planner guessing.
      await analyzeDataTables(handle.db);
      // A migration's backfill may have rewritten every row (0005's records text): without
      // autovacuum the old versions would stay in the tables and their indexes.
      await sql`vacuum profiles`;
      await sql.end();
      console.log(`dataset: ${dataset.profiles} profiles already loaded`);
      return;
    }
    await sql`truncate namespaces, profiles, records restart identity cascade`;
    await sql.end();
    const started = Date.now();
    const report = await importLines(handle.db, splitLines(generateNdjson(dataset)), { bulk: true });
    if (!report.ok) throw new Error(`dataset import failed: ${JSON.stringify(report.problems.slice(0, 3))}`);
    console.log(`dataset: imported ${report.profiles} profiles in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await handle.close();
  }
}

export function* splitLines(chunks: Iterable<string>): Generator<string> {
  for (const chunk of chunks) yield* chunk.split('\n');
}

/**
 * A deterministic generator of numbers in [0, 1): mulberry32. Math.imul keeps the arithmetic in
 * 32 bits (a product of doubles above 2^53 loses its low bits, and an earlier generator drew only
 * about 3,000 distinct names from 50,000).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Ranks 1..n drawn with probability ∝ 1/rank^s: the cumulative weights, searched by bisection. */
function zipfSampler(n: number, s: number, random: () => number): () => number {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let rank = 1; rank <= n; rank += 1) {
    total += 1 / rank ** s;
    cumulative[rank - 1] = total;
  }
  return () => {
    const target = random() * total;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] ?? 0) < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

/** Every name of the dataset, in a seeded shuffled order (index 0 is the most popular). */
function shuffledNames(dataset: GeneratorOptions): string[] {
  const names = Array.from({ length: dataset.profiles }, (_, index) => generatedName(dataset, index));
  const random = seededRandom(424242);
  for (let index = names.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [names[index], names[other]] = [names[other] as string, names[index] as string];
  }
  return names;
}

/** The popularity skew of the benchmark's Zipf scenarios (s = 1: the k-th name is asked for 1/k as often as the first). */
export const ZIPF_S = 1;

/** Names drawn from a Zipf distribution: every name of the dataset, the most popular first, and the next draw. */
export interface ZipfNames {
  names: string[];
  next(): string;
}

/**
 * A Zipf distribution (ZIPF_S) over every name of the dataset in a seeded shuffled order (so
 * popularity has nothing to do with the name's order): traffic where a few names are popular and
 * most are rare. The same seed draws the same names.
 */
export function zipfDrawn(dataset: GeneratorOptions, seed: number): ZipfNames {
  const names = shuffledNames(dataset);
  const draw = zipfSampler(names.length, ZIPF_S, seededRandom(seed));
  return { names, next: () => names[draw()] as string };
}

/** `count` names drawn as zipfDrawn draws them. */
export function zipfNames(dataset: GeneratorOptions, count: number, seed: number): string[] {
  const { next } = zipfDrawn(dataset, seed);
  return Array.from({ length: count }, next);
}

/** Deterministic random existing names of the dataset. */
export function randomNames(dataset: GeneratorOptions, count: number, seed: number): string[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => generatedName(dataset, Math.floor(next() * dataset.profiles)));
}

/** Request paths of the discovery scenarios, made from the dataset (see discoveryPaths). */
export interface DiscoveryPaths {
  search: string[];
  wallet: string[];
}

/**
 * Discovery requests made from the dataset: prefixes of 2 to 6 characters of random names (with
 * their namespace half of the time), each as a first page and as the page after it (its cursor
 * asked from the service), and wallet addresses sampled from the index, in the case stored or
 * upper-cased (0x addresses match in any case).
 */
export async function discoveryPaths(url: string, serviceUrl: string, names: string[]): Promise<DiscoveryPaths> {
  const firstPages = names.slice(0, 400).map((name, index) => {
    const [local = '', namespace = ''] = name.split('@');
    const prefix = [...local].slice(0, 2 + (index % 5)).join('');
    const query = `prefix=${encodeURIComponent(prefix)}${index % 2 === 0 ? `&namespace=${encodeURIComponent(namespace)}` : ''}`;
    return `/api/search?${query}&limit=20`;
  });
  const laterPages: string[] = [];
  for (const path of firstPages) {
    const page = (await (await fetch(`${serviceUrl}${path}`)).json()) as { nextCursor: string | null };
    if (page.nextCursor !== null) laterPages.push(`${path}&cursor=${page.nextCursor}`);
  }
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const rows = await sql<{ address: string }[]>`
    select address_key as address from wallet_addresses tablesample system (5) repeatable (7) limit 2000`;
  await sql.end();
  if (rows.length === 0) throw new Error('the dataset has no wallet addresses: is the discovery migration applied?');
  const wallet = rows.map(
    ({ address }, index) =>
      `/api/wallet/${encodeURIComponent(index % 2 === 0 && address.startsWith('0x') ? `0x${address.slice(2).toUpperCase()}` : address)}`,
  );
  return { search: [...firstPages, ...laterPages], wallet };
}

/** The middle value, or the mean of the two middle values; 0 for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** The items in turn, forever: what a load generator sends next. */
export function cycle<T>(items: readonly T[]): () => T {
  let index = 0;
  return () => {
    index = (index + 1) % items.length;
    return items[index] as T;
  };
}

/** A field of /proc/<pid>/status in MB: VmRSS (resident now) or VmHWM (the largest it has been). */
export function procStatusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  const kb = procStatusKb(pid, field);
  return kb === undefined ? undefined : Math.round(kb / 1024);
}

/** The same in kB, as the kernel gives it (the soak fits a slope to it: MB steps would be coarse). */
export function procStatusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function waitUntilReady(baseUrl: string, timeoutMs = 60_000): Promise<void> {
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

/**
 * Settings a run gives the benchmark's service processes, from `BENCH_SERVICE_ENV`
 * (`NAME=value,NAME=value`): the service's own variables of the shell are not passed on
 * (SERVICE_VARIABLES in test/support/server-process.ts), so settings to compare come this way.
 */
export function benchServiceSettings(): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const pair of (process.env.BENCH_SERVICE_ENV ?? '').split(',')) {
    const equals = pair.indexOf('=');
    if (equals > 0) settings[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return settings;
}

/**
 * The service as `npm start` runs it: compiled JavaScript with the V8 flags of package.json's
 * `config.nodeFlags` (built first when dist/ is stale), without npm's own process in between.
 */
export function serviceCommand(): [string, ...string[]] {
  const build = spawnSync(
    process.execPath,
    [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url)), '--if-stale'],
    { stdio: 'inherit' },
  );
  if (build.status !== 0) throw new Error('npm run build failed: the benchmark needs dist/');
  return [process.execPath, ...startFlags(), 'dist/main.js'];
}

export async function startService(
  command: readonly [string, ...string[]],
  env: Record<string, string>,
): Promise<{ process: SpawnedProcess; url: string }> {
  const port = await freePort();
  // The "listening" line is info, which LOG_LEVEL=warn hides, so readiness is polled instead.
  const process = spawnServerProcess({ command, env: { ...env, PORT: String(port) } });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(url);
  } catch (error) {
    await process.stop();
    throw error;
  }
  return { process, url };
}

/**
 * A bench tool's command line, by the commands' own rules (src/cli/command.ts): `--help` or `-h`
 * before any `--` prints `usage`; an unknown or malformed option says which and prints `usage`
 * too (exit 2), without a stack trace. Flags after `--` are the tool's to pass on.
 */
export function benchCommandLine<T extends ParseArgsConfig>(config: T, usage: string): ReturnType<typeof parseArgs<T>> {
  const args = process.argv.slice(2);
  if (asksForHelp(args)) {
    process.stdout.write(`${usage.trim()}\n`);
    process.exit(0);
  }
  return orUsageError(() => parseArguments({ args }, config), usage);
}

/** Ends a bench tool on a mistake in its command line: the mistake, then the usage (exit 2). */
export function usageError(message: string, usage: string): never {
  process.stderr.write(`${message}\n\n${usage.trim()}\n`);
  process.exit(2);
}

/** The whole number `text` stands for, at least `min` (the commands' `wholeNumber`); a usage error otherwise. */
export function wholeNumberOption(flag: string, text: string, min: number, usage: string): number {
  return orUsageError(() => wholeNumber(flag, text, min), usage);
}

function orUsageError<T>(read: () => T, usage: string): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof UsageError) return usageError(error.message, usage);
    throw error;
  }
}
