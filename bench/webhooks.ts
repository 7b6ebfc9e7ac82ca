/**
 * `npm run bench:webhooks [-- --part import|fanout]`: webhook deliveries (docs/webhooks.md)
 * against issue 62's targets, on the local PostgreSQL (BENCH_WEBHOOKS_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/nps_bench_webhooks; dropped and created again, dropped at the
 * end). The service runs as `npm start` runs it (bench/support.ts), with
 * WEBHOOK_PRIVATE_ORIGINS=127.0.0.1/32 so that it may deliver to the receivers on loopback
 * (bench/webhook-receiver.ts, a process of their own: a live one that verifies every delivery with
 * `standardwebhooks` and answers 204, a dead one that never answers). Endpoints are made with
 * the service's own query (insertEndpoint; the REST API would allow 10 per key).
 *
 * Import part. One endpoint follows namespace `bench` of 10,000 profiles. An import (importLines,
 * as `npm run import` does) changes all 10,000; the figures are the time from the import's start
 * and from its end to the last delivery, and the deliveries a second from the first to the last.
 * Meanwhile autocannon asks `GET /api/<name>` for random names of the namespace at a fixed rate
 * (`--rate`, default 200 a second); the same load without deliveries, for `--alone-seconds`
 * (default 10), is the other side of each repetition. Repetitions (`--repetitions`, default 3)
 * take turns: alone then import, import then alone. The ratio judged is each repetition's p99
 * during the deliveries over its p99 alone; the figure is their median, with their range.
 *
 * Fan-out part. 1,000 endpoints follow namespace `fan`: 999 at the live receiver (a path each),
 * one at the dead one, which holds its WEBHOOK_CONCURRENCY requests until WEBHOOK_TIMEOUT_MS
 * (15 s, the default). `--changes` (default 20) imports of one new profile each, `--gap-ms`
 * (default 2000) apart; from each import's start (before its commit: the figure errs long) to its
 * delivery at each live endpoint is one sample. The target: every live endpoint's p99 ≤ 1 s; the
 * figures are the worst endpoint's p99 and the p50, p99 and max of all samples.
 *
 * Results: bench/results/webhooks.{json,md}, with the load average before and after (the machine
 * may be shared).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { importLines } from '../src/data/importer.js';
import { insertApiKey } from '../src/db/api-key-queries.js';
import { type DatabaseHandle, openDatabase } from '../src/db/database.js';
import { insertEndpoint } from '../src/db/webhook-queries.js';
import { generateApiKey, generateApiKeyId, hashApiKey } from '../src/limits/api-key-credentials.js';
import { newSecret, SecretStore } from '../src/webhooks/secrets.js';
import {
  benchCommandLine,
  benchServiceSettings,
  freshDatabase,
  median,
  seededRandom,
  serviceCommand,
  startService,
  usageError,
  wholeNumberOption,
} from './support.js';
import type { ParentMessage, ReceivedDelivery, ReceiverMessage } from './webhook-receiver.js';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const DATABASE_URL = process.env.BENCH_WEBHOOKS_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/nps_bench_webhooks';
const IMPORT_NAMES = 10_000;
const FANOUT_ENDPOINTS = 1000;
const IMPORT_TARGET_SECONDS = 10;
const LOOKUP_TARGET_RATIO = 1.5;
const FANOUT_TARGET_P99_MS = 1000;
/** A wait for deliveries ends after this long; the figures then say how many had arrived. */
const DELIVERY_LIMIT_MS = 240_000;

const USAGE = `
npm run bench:webhooks [-- options]   webhook deliveries against issue 62's targets

  --part import|fanout      one part only (default: both)
  --repetitions N           import part: repetitions of alone and during (default 3)
  --rate N                  import part: lookups a second (default 200)
  --alone-seconds N         import part: length of the side without deliveries (default 10)
  --changes N               fan-out part: imports of one profile (default 20)
  --gap-ms N                fan-out part: time between them (default 2000)
`;

interface Options {
  parts: Array<'import' | 'fanout'>;
  repetitions: number;
  rate: number;
  aloneSeconds: number;
  changes: number;
  gapMs: number;
}

function options(): Options {
  const { values } = benchCommandLine(
    {
      options: {
        part: { type: 'string' },
        repetitions: { type: 'string', default: '3' },
        rate: { type: 'string', default: '200' },
        'alone-seconds': { type: 'string', default: '10' },
        changes: { type: 'string', default: '20' },
        'gap-ms': { type: 'string', default: '2000' },
      },
    },
    USAGE,
  );
  const part = values.part;
  if (part !== undefined && part !== 'import' && part !== 'fanout') usageError(`unknown part: ${part}`, USAGE);
  return {
    parts: part === undefined ? ['import', 'fanout'] : [part],
    repetitions: wholeNumberOption('--repetitions', values.repetitions, 1, USAGE),
    rate: wholeNumberOption('--rate', values.rate, 1, USAGE),
    aloneSeconds: wholeNumberOption('--alone-seconds', values['alone-seconds'], 1, USAGE),
    changes: wholeNumberOption('--changes', values.changes, 1, USAGE),
    gapMs: wholeNumberOption('--gap-ms', values['gap-ms'], 0, USAGE),
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round1 = (value: number) => Math.round(value * 10) / 10;
const load = () => loadavg().map((value) => round1(value));

function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))] ?? 0;
}

/** The receivers' process and the questions the benchmark asks it. */
class Receivers {
  readonly #child: ChildProcess;
  readonly live: number;
  readonly dead: number;

  private constructor(child: ChildProcess, live: number, dead: number) {
    this.#child = child;
    this.live = live;
    this.dead = dead;
  }

  static async start(): Promise<Receivers> {
    const child = fork(fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = await new Promise<{ live: number; dead: number }>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the receivers exited (${code}) before they were ready`)));
      child.once('message', (message: ReceiverMessage) => {
        if ('ready' in message) resolve(message);
      });
    });
    return new Receivers(child, ready.live, ready.dead);
  }

  #tags = 0;

  #ask<T extends ReceiverMessage>(
    message: (tag: string) => ParentMessage,
    answers: (reply: ReceiverMessage, tag: string) => boolean,
  ) {
    this.#tags += 1;
    const tag = String(this.#tags);
    return new Promise<T>((resolve) => {
      const listener = (reply: ReceiverMessage) => {
        if (!answers(reply, tag)) return;
        this.#child.off('message', listener);
        resolve(reply as T);
      };
      this.#child.on('message', listener);
      this.#child.send(message(tag));
    });
  }

  secrets(secrets: Record<string, string>): void {
    this.#child.send({ secrets } satisfies ParentMessage);
  }

  /** Forgets what arrived; resolves once the receivers have. */
  async reset(): Promise<void> {
    this.#child.send({ reset: 'now' } satisfies ParentMessage);
    await this.count();
  }

  async count(): Promise<number> {
    const reply = await this.#ask<{ counted: string; count: number }>(
      (tag) => ({ count: tag }),
      (answer, tag) => 'counted' in answer && answer.counted === tag,
    );
    return reply.count;
  }

  async report(): Promise<{ deliveries: ReceivedDelivery[]; unverified: number }> {
    return this.#ask<{ reported: string; deliveries: ReceivedDelivery[]; unverified: number }>(
      (tag) => ({ report: tag }),
      (answer, tag) => 'reported' in answer && answer.reported === tag,
    );
  }

  /** Resolves once `count` verified deliveries arrived since the last reset, or DELIVERY_LIMIT_MS passed. */
  async awaitCount(count: number): Promise<void> {
    const deadline = Date.now() + DELIVERY_LIMIT_MS;
    let said = Date.now();
    for (;;) {
      const arrived = await this.count();
      if (arrived >= count) return;
      if (Date.now() > deadline) {
        console.log(`  ${arrived} of ${count} delivered within ${DELIVERY_LIMIT_MS} ms: the figures count those`);
        return;
      }
      if (Date.now() - said >= 5000) {
        said = Date.now();
        console.log(`  ${arrived} of ${count} delivered`);
      }
      await pause(20);
    }
  }

  stop(): void {
    this.#child.kill();
  }
}

/** Lookups at a fixed rate from now until `stop`, as autocannon measures them. */
function startLookups(serviceUrl: string, rate: number, names: readonly string[], seed: number) {
  const random = seededRandom(seed);
  let done: (result: autocannon.Result) => void = () => {};
  let failed: (error: unknown) => void = () => {};
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    done = resolve;
    failed = reject;
  });
  const instance = autocannon(
    {
      url: serviceUrl,
      connections: 10,
      duration: 3600,
      overallRate: rate,
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            path: `/api/${encodeURIComponent(names[Math.floor(random() * names.length)] ?? '')}`,
          }),
        },
      ],
    },
    (error, result) => (error ? failed(error) : done(result)),
  );
  const started = performance.now();
  return {
    async stop(): Promise<LookupSide> {
      instance.stop();
      const result = await finished;
      return {
        seconds: round1((performance.now() - started) / 1000),
        requests: result.requests.total,
        p50: result.latency.p50,
        p99: result.latency.p99,
        max: result.latency.max,
        non2xx: result.non2xx,
        errors: result.errors + result.timeouts,
      };
    },
  };
}

interface LookupSide {
  seconds: number;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
}

interface ImportRepetition {
  order: string;
  /** Deliveries that arrived (all of IMPORT_NAMES unless the wait ran out). */
  delivered: number;
  importSeconds: number;
  /** From the import's start to the last delivery. */
  startToLastSeconds: number;
  /** From the import's end (its commit) to the last delivery. */
  endToLastSeconds: number;
  /** Deliveries a second, from the first delivery to the last. */
  deliveriesPerSecond: number;
  alone: LookupSide;
  during: LookupSide;
  p99Ratio: number;
  loadAverage: number[];
}

async function apiKey(handle: DatabaseHandle, n: number): Promise<string> {
  const id = generateApiKeyId();
  await insertApiKey(handle.db, {
    id,
    name: `bench app ${n}`,
    keyHash: hashApiKey(generateApiKey()),
    profileLimit: null,
    ownerCheckLimit: null,
  });
  return id;
}

/** An endpoint of `apiKeyId` at `url` following `namespace`; its secret, as shown to the app. */
async function endpoint(handle: DatabaseHandle, apiKeyId: string, id: string, url: string, namespace: string) {
  const secret = newSecret();
  const created = await insertEndpoint(
    handle.db,
    {
      id,
      apiKeyId,
      url,
      events: 7,
      description: null,
      secret: new SecretStore(undefined).seal(secret, id),
      names: [],
      namespaces: [namespace],
    },
    Number.MAX_SAFE_INTEGER,
  );
  if (created === 'too-many') throw new Error('the endpoint was refused');
  return secret.shown;
}

const profileLine = (name: string, description: string) =>
  JSON.stringify({ kind: 'profile', name, creatorEmail: 'bench@example.com', description });
const namespaceLine = (name: string) =>
  JSON.stringify({ kind: 'namespace', name, ownerEmail: `owner@${name}.example` });

async function apply(handle: DatabaseHandle, lines: string[]): Promise<void> {
  const report = await importLines(handle.db, lines);
  if (!report.ok) throw new Error(`the import failed: ${JSON.stringify(report.problems.slice(0, 3))}`);
}

async function importPart(
  handle: DatabaseHandle,
  serviceUrl: string,
  receivers: Receivers,
  options: Options,
): Promise<ImportRepetition[]> {
  const names = Array.from({ length: IMPORT_NAMES }, (_, i) => `p${i}@bench`);
  await apply(handle, [namespaceLine('bench'), ...names.map((name) => profileLine(name, 'start'))]);
  const key = await apiKey(handle, 0);
  receivers.secrets({
    '/import': await endpoint(handle, key, 'wh_benchimport', `http://127.0.0.1:${receivers.live}/import`, 'bench'),
  });
  // Warm-up: the service's caches and the database's plans, both sides.
  const warm = startLookups(serviceUrl, options.rate, names, 0);
  await pause(3000);
  await warm.stop();
  const repetitions: ImportRepetition[] = [];
  for (let repetition = 1; repetition <= options.repetitions; repetition += 1) {
    const loadBefore = load();
    const aloneFirst = repetition % 2 === 1;
    const alone = async () => {
      const lookups = startLookups(serviceUrl, options.rate, names, repetition * 2);
      await pause(options.aloneSeconds * 1000);
      return lookups.stop();
    };
    const during = async () => {
      await receivers.reset();
      const lookups = startLookups(serviceUrl, options.rate, names, repetition * 2 + 1);
      const started = Date.now();
      await apply(
        handle,
        names.map((name) => profileLine(name, `repetition ${repetition}`)),
      );
      const ended = Date.now();
      await receivers.awaitCount(IMPORT_NAMES);
      const side = await lookups.stop();
      const { deliveries } = await receivers.report();
      const arrivals = deliveries.map((delivery) => delivery.at);
      const first = Math.min(...arrivals);
      const last = Math.max(...arrivals);
      return {
        side,
        delivered: deliveries.length,
        importSeconds: (ended - started) / 1000,
        startToLastSeconds: (last - started) / 1000,
        endToLastSeconds: (last - ended) / 1000,
        deliveriesPerSecond: Math.round(deliveries.length / Math.max((last - first) / 1000, 0.001)),
      };
    };
    const aloneSide = aloneFirst ? await alone() : undefined;
    const measured = await during();
    const aloneAfter = aloneSide ?? (await alone());
    const row: ImportRepetition = {
      order: aloneFirst ? 'alone, during' : 'during, alone',
      delivered: measured.delivered,
      importSeconds: round1(measured.importSeconds),
      startToLastSeconds: round1(measured.startToLastSeconds),
      endToLastSeconds: round1(measured.endToLastSeconds),
      deliveriesPerSecond: measured.deliveriesPerSecond,
      alone: aloneAfter,
      during: measured.side,
      p99Ratio: Math.round((measured.side.p99 / Math.max(aloneAfter.p99, 1)) * 100) / 100,
      loadAverage: [...loadBefore, ...load()],
    };
    console.log(`import ${repetition}: ${JSON.stringify(row)}`);
    repetitions.push(row);
  }
  return repetitions;
}

interface FanoutResult {
  endpoints: number;
  changes: number;
  gapMs: number;
  samples: number;
  missing: number;
  unverified: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The highest of the live endpoints' own p99s. */
  worstEndpointP99Ms: number;
  medianEndpointP99Ms: number;
  loadAverage: number[];
}

async function fanoutPart(handle: DatabaseHandle, receivers: Receivers, options: Options): Promise<FanoutResult> {
  await apply(handle, [namespaceLine('fan')]);
  const secrets: Record<string, string> = {};
  let key = '';
  for (let i = 0; i < FANOUT_ENDPOINTS; i += 1) {
    if (i % 100 === 0) key = await apiKey(handle, 1 + i / 100);
    const dead = i === 0;
    const path = `/fan/${i}`;
    const url = `http://127.0.0.1:${dead ? receivers.dead : receivers.live}${path}`;
    const secret = await endpoint(handle, key, `wh_benchfan${String(i).padStart(4, '0')}`, url, 'fan');
    if (!dead) secrets[path] = secret;
  }
  receivers.secrets(secrets);
  await receivers.reset();
  const loadBefore = load();
  const startedAt = new Map<string, number>();
  for (let change = 0; change < options.changes; change += 1) {
    const name = `c${change}@fan`;
    startedAt.set(name, Date.now());
    await apply(handle, [profileLine(name, 'new')]);
    await pause(options.gapMs);
  }
  const live = FANOUT_ENDPOINTS - 1;
  const expected = live * options.changes;
  await receivers.awaitCount(expected).catch(() => {});
  const { deliveries, unverified } = await receivers.report();
  const byEndpoint = new Map<string, number[]>();
  const samples: number[] = [];
  for (const delivery of deliveries) {
    const start = startedAt.get(delivery.name);
    if (start === undefined) continue;
    const latency = delivery.at - start;
    samples.push(latency);
    const own = byEndpoint.get(delivery.path) ?? [];
    own.push(latency);
    byEndpoint.set(delivery.path, own);
  }
  const endpointP99s = [...byEndpoint.values()].map((own) => percentile(own, 0.99));
  return {
    endpoints: FANOUT_ENDPOINTS,
    changes: options.changes,
    gapMs: options.gapMs,
    samples: samples.length,
    missing: expected - samples.length,
    unverified,
    p50Ms: percentile(samples, 0.5),
    p99Ms: percentile(samples, 0.99),
    maxMs: Math.max(0, ...samples),
    worstEndpointP99Ms: Math.max(0, ...endpointP99s),
    medianEndpointP99Ms: median(endpointP99s),
    loadAverage: [...loadBefore, ...load()],
  };
}

function markdown(
  imports: ImportRepetition[] | undefined,
  fanout: FanoutResult | undefined,
  options: Options,
  at: string,
): string {
  const lines = [`# Webhooks (npm run bench:webhooks), ${at}`, ''];
  if (imports !== undefined && imports.length > 0) {
    const ratios = imports.map((row) => row.p99Ratio);
    const all = imports.every((row) => row.delivered === IMPORT_NAMES);
    const slowest = Math.max(...imports.map((row) => row.endToLastSeconds));
    const slowestRate = Math.min(...imports.map((row) => row.deliveriesPerSecond));
    const ratio = median(ratios);
    lines.push(
      `## Import of ${IMPORT_NAMES.toLocaleString('en')} names, one endpoint; lookups at ${options.rate}/s`,
      '',
      '| repetition | order | delivered | import s | start→last s | end→last s | deliveries/s | p99 alone ms | p99 during ms | ratio | load |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ...imports.map(
        (row, i) =>
          `| ${i + 1} | ${row.order} | ${row.delivered} | ${row.importSeconds} | ${row.startToLastSeconds} | ${row.endToLastSeconds} | ${row.deliveriesPerSecond} | ${row.alone.p99} | ${row.during.p99} | ${row.p99Ratio} | ${row.loadAverage.slice(0, 1).join('')}→${row.loadAverage.slice(3, 4).join('')} |`,
      ),
      '',
      `- All delivered within ${IMPORT_TARGET_SECONDS} s of the import's end: ${all ? `slowest ${slowest} s` : `not all within ${DELIVERY_LIMIT_MS / 1000} s`}, ${all && slowest <= IMPORT_TARGET_SECONDS ? 'met' : 'missed'}.`,
      `- ≥ 1,000 deliveries a second: slowest ${slowestRate}/s, ${slowestRate >= 1000 ? 'met' : 'missed'}.`,
      `- Lookups' p99 during / alone ≤ ${LOOKUP_TARGET_RATIO}: median ${ratio} (${Math.min(...ratios)} to ${Math.max(...ratios)}), ${ratio <= LOOKUP_TARGET_RATIO ? 'met' : 'missed'}.`,
      '',
    );
  }
  if (fanout !== undefined) {
    lines.push(
      `## ${fanout.endpoints} endpoints, one never answering; ${fanout.changes} changes ${fanout.gapMs} ms apart`,
      '',
      `- Samples ${fanout.samples} (missing ${fanout.missing}, unverified ${fanout.unverified}); import start → delivery: p50 ${fanout.p50Ms} ms, p99 ${fanout.p99Ms} ms, max ${fanout.maxMs} ms.`,
      `- Worst live endpoint's p99 ${fanout.worstEndpointP99Ms} ms (median endpoint ${fanout.medianEndpointP99Ms} ms): target ≤ ${FANOUT_TARGET_P99_MS} ms, ${fanout.worstEndpointP99Ms <= FANOUT_TARGET_P99_MS && fanout.missing === 0 ? 'met' : 'missed'}.`,
      `- Load average ${fanout.loadAverage.slice(0, 3).join(' ')} before, ${fanout.loadAverage.slice(3).join(' ')} after.`,
      '',
    );
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const chosen = options();
  await freshDatabase(DATABASE_URL);
  const handle = await openDatabase({ url: DATABASE_URL, dataDir: '', statementTimeoutMs: 600_000 });
  await handle.migrate();
  const receivers = await Receivers.start();
  const service = await startService(serviceCommand(), {
    DATABASE_URL,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PROFILE_LIMIT: '0',
    WEBHOOK_PRIVATE_ORIGINS: '127.0.0.1/32',
    ...benchServiceSettings(),
  });
  const at = new Date().toISOString();
  let imports: ImportRepetition[] | undefined;
  let fanout: FanoutResult | undefined;
  try {
    if (chosen.parts.includes('import')) imports = await importPart(handle, service.url, receivers, chosen);
    if (chosen.parts.includes('fanout')) fanout = await fanoutPart(handle, receivers, chosen);
  } finally {
    await service.process.stop();
    receivers.stop();
    await handle.close();
    await freshDatabase(DATABASE_URL, false);
  }
  const result = { at, options: chosen, imports, fanout };
  writeFileSync(`${RESULTS_DIR}webhooks.json`, `${JSON.stringify(result, null, 2)}\n`);
  const text = markdown(imports, fanout, chosen, at);
  writeFileSync(`${RESULTS_DIR}webhooks.md`, text);
  process.stdout.write(text);
}

await main();
