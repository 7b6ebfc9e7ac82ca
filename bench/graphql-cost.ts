/**
 * `npm run bench:graphql-cost`: what one request costs the serving thread, in CPU µs and bytes
 * allocated, and where it goes, for REST `GET /api/{name_id}` (without and with an API key, as
 * `npm run bench`'s restRandom and restRandomKeyed) and the GraphQL requests of `npm run bench`
 * (`{ __typename }`, the profile document with variables and the same with `{ name }` selected —
 * graphqlNameOnly, so that what the selection adds can be profiled apart —, the name inline).
 *
 * The service runs in this process (the app as `npm start` builds it, production settings); a
 * client in a worker thread sends one request at a time over loopback HTTP, so the main thread
 * does only that request's work, and CPU time is read for the main thread alone
 * (`process.threadCpuUsage`): the figures do not depend on how busy the shared machine is, as
 * throughput does. Allocations are what V8's GC profiler saw collected plus what the heap grew.
 *
 * 1. Over HTTP, per request: CPU and allocations, the median of alternating rounds (every
 *    scenario once per round).
 * 2. Over HTTP, by stage: the same requests with probes at the boundaries of the service's
 *    stages (app.handle entry; the engine's `getResultForParams` called and settled; the answer
 *    written with `res.end`). What is left is node:http's parsing, the event loop and the
 *    request log and metrics after the answer.
 * 3. In-process, the engine's parts: Yoga's `getResultForParams` alone, and envelop's parse,
 *    validate, context and execute called one by one, and the result's JSON text.
 * 4. `--cpu-prof`: a CPU profile of the HTTP rounds (`--cpu-prof-out <file>` keeps it whole;
 *    `--cpu-prof-in-process-out <file>` writes one of the in-process `app.handle` rounds, where no
 *    socket write hides the service's own work), self time grouped by package and the
 *    heaviest functions; `--heap-prof`: the functions that allocate, sampled by V8.
 *
 * The profiles come from the profile cache (1,000 generated profiles, all cached after the
 * warm-up), so the database is not in the figures: they are the fixed cost of each surface.
 * Except `batch100` alone (`--only batch100`): batches read the cache but do not fill it
 * (CACHE_FILL_MAX_NAMES, src/service/profiles-service.ts), so without a single-name scenario in
 * the same run its profiles come from the database every time (on PGlite, most of its figures).
 * `--database-url postgres://…` (a database `npm run bench` loaded) with `--no-cache` measures
 * the lookup from PostgreSQL too; its in-process figures are then not the HTTP figures' parts:
 * in-process requests run one at a time, each with a statement of its own (over HTTP, requests
 * of one turn share a statement), and the repeated `execute` reads its context's loader cache.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { GCProfiler } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { getOperationAST } from 'graphql';
import type { GeneratorOptions } from '../src/data/generator.js';
import type { GraphQLServer } from '../src/graphql/yoga.js';
import { benchCommandLine, median, splitLines, usageError, wholeNumberOption } from './support.js';

/** The scenarios' keys, as `--only` takes them (the scenarios are built in `scenarios`). */
const SCENARIO_KEYS = ['rest', 'restKeyed', 'typename', 'nameOnly', 'variables', 'inline', 'batch100'] as const;
const USAGE = `
npm run bench:graphql-cost -- [options]   what a request costs the serving thread (bench/README.md)
  --only <keys>              scenarios, comma-separated: ${SCENARIO_KEYS.join(', ')}
                             (default: all but batch100)
  --requests <n>             requests a round (default 3000)
  --rounds <n>               alternating rounds (default 5)
  --concurrency <n>          connections of the client thread (default 16)
  --database-url <url>       profiles from this PostgreSQL database (npm run bench's) instead of PGlite
  --no-cache                 the profile cache off: every profile from the database
  --cpu-prof, --heap-prof    CPU profile by package, allocations by function
  --cpu-prof-out <file>      the HTTP rounds' whole CPU profile, for DevTools
  --cpu-prof-in-process-out <file>  a CPU profile of the in-process app.handle rounds
  --json <file>              the figures as JSON too
`;
const { values: flags } = benchCommandLine(
  {
    options: {
      requests: { type: 'string', default: '3000' },
      rounds: { type: 'string', default: '5' },
      concurrency: { type: 'string', default: '16' },
      'database-url': { type: 'string' },
      'no-cache': { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      'heap-prof': { type: 'boolean', default: false },
      'cpu-prof-out': { type: 'string' },
      'cpu-prof-in-process-out': { type: 'string' },
      only: { type: 'string' },
      json: { type: 'string' },
    },
  },
  USAGE,
);
const REQUESTS = wholeNumberOption('--requests', flags.requests, 1, USAGE);
const ROUNDS = wholeNumberOption('--rounds', flags.rounds, 1, USAGE);
const CONCURRENCY = wholeNumberOption('--concurrency', flags.concurrency, 1, USAGE);
const unknownScenarios = (flags.only?.split(',') ?? []).filter(
  (key) => !(SCENARIO_KEYS as readonly string[]).includes(key),
);
if (unknownScenarios.length > 0) usageError(`--only: no scenario "${unknownScenarios.join('", "')}"`, USAGE);
const SELECTION = 'name description image level records { key type raw }';
const VARIABLES_QUERY = `query P($n: String!) { profile(name: $n) { ${SELECTION} } }`;
/** npm run bench's graphqlNameOnly: the same lookup, without what the selection adds. */
const NAME_ONLY_QUERY = 'query P($n: String!) { profile(name: $n) { name } }';
const BATCH_QUERY = `query B($names: [String!]!) { profiles(names: $names) { ${SELECTION} } }`;

interface Shape {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

interface Scenario {
  key: (typeof SCENARIO_KEYS)[number];
  label: string;
  requests: Shape[];
  /** The GraphQL parameters of the first request, for the in-process breakdown. */
  params?: { query: string; variables?: Record<string, unknown> };
}

function scenarios(names: string[], apiKey: string): Scenario[] {
  const post = (body: object): Shape => ({ method: 'POST', path: '/graphql', body: JSON.stringify(body) });
  const all: Scenario[] = [
    {
      key: 'rest',
      label: 'REST GET /api/{name_id}',
      requests: names.map((name) => ({ method: 'GET', path: `/api/${encodeURIComponent(name)}` })),
    },
    {
      key: 'restKeyed',
      label: 'REST GET /api/{name_id} with X-API-Key',
      requests: names.map((name) => ({
        method: 'GET',
        path: `/api/${encodeURIComponent(name)}`,
        headers: { 'x-api-key': apiKey },
      })),
    },
    {
      key: 'typename',
      label: 'GraphQL POST { __typename }',
      requests: [post({ query: '{ __typename }' })],
      params: { query: '{ __typename }' },
    },
    {
      key: 'nameOnly',
      label: 'GraphQL POST profile, name in variables, { name } selected',
      requests: names.map((name) => post({ query: NAME_ONLY_QUERY, variables: { n: name } })),
      params: { query: NAME_ONLY_QUERY, variables: { n: names[0] } },
    },
    {
      key: 'variables',
      label: 'GraphQL POST profile, name in variables',
      requests: names.map((name) => post({ query: VARIABLES_QUERY, variables: { n: name } })),
      params: { query: VARIABLES_QUERY, variables: { n: names[0] } },
    },
    {
      key: 'inline',
      label: 'GraphQL POST profile, name inline',
      requests: names.map((name) => post({ query: `{ profile(name: ${JSON.stringify(name)}) { ${SELECTION} } }` })),
      params: { query: `{ profile(name: ${JSON.stringify(names[0])}) { ${SELECTION} } }` },
    },
    {
      // Not in the default set (its cost is 30-50 times the others'): `--only batch100`.
      key: 'batch100',
      label: 'GraphQL POST profiles(names:) of 100 names',
      requests: Array.from({ length: 10 }, (_, i) =>
        post({ query: BATCH_QUERY, variables: { names: names.slice(i * 100, i * 100 + 100) } }),
      ),
      params: { query: BATCH_QUERY, variables: { names: names.slice(0, 100) } },
    },
  ];
  return all.filter((scenario) =>
    flags.only === undefined ? scenario.key !== 'batch100' : flags.only.split(',').includes(scenario.key),
  );
}

/**
 * The client: `concurrency` kept-alive connections, each sending its next request when the last
 * is answered, in a thread of its own.
 */
const CLIENT = `
const { parentPort } = require('node:worker_threads');
const http = require('node:http');
parentPort.on('message', async ({ url, requests, count, concurrency }) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  let failed = 0;
  const one = (shape) => new Promise((resolve, reject) => {
    const req = http.request(url + shape.path, {
      method: shape.method, agent,
      headers: { ...shape.headers, ...(shape.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(shape.body) }) },
    }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
    req.on('error', reject);
    req.end(shape.body);
  });
  const connection = async () => {
    while (next < count) {
      const shape = requests[next % requests.length];
      next += 1;
      if ((await one(shape)) !== 200) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, connection));
  agent.destroy();
  parentPort.postMessage({ failed });
});`;

class Client {
  readonly #worker = new Worker(CLIENT, { eval: true });
  constructor(readonly url: string) {}
  send(requests: Shape[], count: number, concurrency = CONCURRENCY): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#worker.once('message', ({ failed }: { failed: number }) =>
        failed === 0 ? resolve() : reject(new Error(`${failed} of ${count} requests did not answer 200`)),
      );
      this.#worker.postMessage({ url: this.url, requests, count, concurrency });
    });
  }
  close(): Promise<number> {
    return this.#worker.terminate();
  }
}

const threadCpuMicros = (): number => {
  const { user, system } = process.threadCpuUsage();
  return user + system;
};

/** Bytes allocated on this thread's heap while `work` runs: collected by GCs plus growth. */
async function measured<T>(work: () => Promise<T>): Promise<{ cpu: number; bytes: number; result: T }> {
  const profiler = new GCProfiler();
  profiler.start();
  const usedBefore = process.memoryUsage().heapUsed;
  const cpuBefore = threadCpuMicros();
  const result = await work();
  const cpu = threadCpuMicros() - cpuBefore;
  const usedAfter = process.memoryUsage().heapUsed;
  const collected = (profiler.stop()?.statistics ?? []).reduce(
    (sum, gc) => sum + Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize),
    0,
  );
  return { cpu, bytes: collected + usedAfter - usedBefore, result };
}

interface Cost {
  /** µs of CPU per request or call. */
  cpu: number;
  /** Bytes allocated per request or call. */
  bytes: number;
}

/**
 * One request handed to `handle` without a socket: an IncomingMessage with its body pushed, and
 * a ServerResponse writing into a stream that discards, settled when the answer is ended.
 */
function exchange(handle: (req: IncomingMessage, res: ServerResponse) => void, shape: Shape): Promise<number> {
  const socket = new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
    },
  });
  Object.defineProperty(socket, 'remoteAddress', { value: '127.0.0.1' });
  const req = new IncomingMessage(socket as Socket);
  req.method = shape.method;
  req.url = shape.path;
  req.headers =
    shape.body === undefined
      ? { host: 'localhost', ...shape.headers }
      : {
          host: 'localhost',
          ...shape.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(shape.body)),
        };
  if (shape.body !== undefined) req.push(Buffer.from(shape.body));
  req.push(null);
  // As node:http's parser marks a request whose body arrived whole. Without it the request counts
  // as aborted when it is destroyed after its body was read, and node:http builds a premature-close
  // error for it (with its stack): 15 % of a GraphQL POST's in-process time, absent over HTTP.
  req.complete = true;
  const res = new ServerResponse(req);
  res.assignSocket(socket as Socket);
  return new Promise((resolve) => {
    // 'prefinish': with this socket, an answer of the GraphQL route never reaches 'finish'.
    res.once('prefinish', () => resolve(res.statusCode));
    handle(req, res);
  });
}

/**
 * CPU and allocations per call of `run`, after a warm-up, as the median of ROUNDS runs. With
 * `settle`, the event loop turns every 64 calls and after the last: an exchange settles in
 * microtasks, so without a turn the `process.nextTick` work it queues (the answer's 'close', the
 * request log and metrics after it) would pile up unrun for the whole round, outside the figure
 * and in the heap (a few KB a request: 5 rounds of 5,000 exhausted the 256 MB heap).
 */
async function perCall(run: (index: number) => unknown, settle = false): Promise<Cost> {
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const calls = async (count: number) => {
    for (let i = 0; i < count; i += 1) {
      await run(i);
      if (settle && i % 64 === 63) await turn();
    }
    if (settle) await turn();
  };
  await calls(500);
  const rounds: Cost[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const { cpu, bytes } = await measured(() => calls(REQUESTS));
    rounds.push({ cpu: cpu / REQUESTS, bytes: bytes / REQUESTS });
  }
  return { cpu: median(rounds.map((r) => r.cpu)), bytes: median(rounds.map((r) => r.bytes)) };
}

export interface Figure {
  key: string;
  label: string;
  /** Over HTTP, on CONCURRENCY connections. */
  http: Cost;
  /** `app.handle` in-process, without sockets, less what making the fake request costs. */
  handle: Cost;
  engine?: EngineParts;
}

async function main(): Promise<void> {
  const {
    createApp,
    loadConfig,
    generatedName,
    generateNdjson,
    importLines,
    openDatabase,
    listen,
    createLogger,
    insertApiKey,
    apiKeys,
  } = await serviceModules();
  const dataset: GeneratorOptions = { profiles: 1000, seed: 20261125 };
  const names = Array.from({ length: dataset.profiles }, (_, index) => generatedName(dataset, index));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nps-graphql-cost-'));
  const url = flags['database-url'];
  const database = await openDatabase({ url, dataDir });
  await database.migrate();
  if (url === undefined) {
    const report = await importLines(database.db, splitLines(generateNdjson(dataset)), { bulk: true });
    if (!report.ok) throw new Error(`generating the profiles failed: ${JSON.stringify(report.problems.slice(0, 3))}`);
  }
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PROFILE_LIMIT: '0',
    DATA_DIR: dataDir,
    ...(url === undefined ? {} : { DATABASE_URL: url }),
    ...(flags['no-cache'] ? { PROFILE_CACHE_SIZE: '0' } : {}),
  });
  // The key of the keyed REST scenario (a new one each run, as `npm run keys -- create` makes it).
  const apiKey = apiKeys.generateApiKey();
  await insertApiKey(database.db, {
    id: apiKeys.generateApiKeyId(),
    name: 'npm run bench:graphql-cost',
    keyHash: apiKeys.hashApiKey(apiKey),
    profileLimit: null,
    ownerCheckLimit: null,
  });
  const app = await createApp(config, createLogger('warn', { pretty: false }), { database });
  const running = await listen(app, 0, '127.0.0.1');
  const client = new Client(running.url);
  const list = scenarios(url === undefined ? names : await namesIn(url, names), apiKey);
  try {
    for (const scenario of list) await client.send(scenario.requests, Math.max(REQUESTS, scenario.requests.length));
    const session = flags['cpu-prof'] || flags['cpu-prof-out'] !== undefined ? await startProfile() : undefined;
    const heapSession = flags['heap-prof'] ? await startHeapSampling() : undefined;
    const rounds = new Map<string, Cost[]>(list.map((s) => [s.key, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const scenario of list) {
        const { cpu, bytes } = await measured(() => client.send(scenario.requests, REQUESTS));
        rounds.get(scenario.key)?.push({ cpu: cpu / REQUESTS, bytes: bytes / REQUESTS });
      }
    }
    const profile = session === undefined ? undefined : await stopProfile(session);
    const allocations = heapSession === undefined ? undefined : await stopHeapSampling(heapSession);
    console.error('over HTTP: done; in-process');
    const harness = await perCall(() => exchange((_req, res) => res.end(), { method: 'GET', path: '/' }), true);
    const figures: Figure[] = [];
    const inProcessProfile = flags['cpu-prof-in-process-out'];
    for (const scenario of list) {
      console.error(`in-process: ${scenario.key}`);
      const profiling = inProcessProfile === undefined ? undefined : await startProfile();
      const handled = await perCall(
        (i) => exchange(app.handle, scenario.requests[i % scenario.requests.length] as Shape),
        true,
      );
      if (profiling !== undefined) {
        await endProfile(profiling, list.length === 1 ? inProcessProfile : `${inProcessProfile}.${scenario.key}`);
      }
      const httpRounds = rounds.get(scenario.key) ?? [];
      figures.push({
        key: scenario.key,
        label: scenario.label,
        http: { cpu: median(httpRounds.map((r) => r.cpu)), bytes: median(httpRounds.map((r) => r.bytes)) },
        handle: { cpu: handled.cpu - harness.cpu, bytes: handled.bytes - harness.bytes },
        engine: scenario.params === undefined ? undefined : await measureEngine(app.graphql, scenario.params),
      });
    }
    console.log(formatReport(figures, harness, profile));
    if (allocations !== undefined) {
      console.log('\nWhere the HTTP rounds allocated (sampled, share of bytes, %)\n');
      for (const { name, share } of allocations) console.log(`- ${share} ${name}`);
    }
    if (flags.json !== undefined)
      writeFileSync(flags.json, `${JSON.stringify({ figures, harness, profile }, null, 2)}\n`);
  } finally {
    await client.close();
    await running.close();
    await app.close();
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The service's modules as `npm start` runs them: compiled dist/ (built first when stale), so
 * that the figures are those of the JavaScript the service runs, not of tsx's transform.
 */
async function serviceModules() {
  const build = spawnSync(
    process.execPath,
    [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url)), '--if-stale'],
    {
      stdio: 'inherit',
    },
  );
  if (build.status !== 0) throw new Error('npm run build failed: the cost breakdown measures dist/');
  const dist = (file: string) => new URL(`../dist/${file}`, import.meta.url).href;
  const [app, config, generator, importer, db, server, logger, keyQueries, apiKeys] = await Promise.all([
    import(dist('app.js')) as Promise<typeof import('../src/app.js')>,
    import(dist('config/config.js')) as Promise<typeof import('../src/config/config.js')>,
    import(dist('data/generator.js')) as Promise<typeof import('../src/data/generator.js')>,
    import(dist('data/importer.js')) as Promise<typeof import('../src/data/importer.js')>,
    import(dist('db/database.js')) as Promise<typeof import('../src/db/database.js')>,
    import(dist('http/server.js')) as Promise<typeof import('../src/http/server.js')>,
    import(dist('logging/logger.js')) as Promise<typeof import('../src/logging/logger.js')>,
    import(dist('db/api-key-queries.js')) as Promise<typeof import('../src/db/api-key-queries.js')>,
    import(dist('limits/api-key-credentials.js')) as Promise<typeof import('../src/limits/api-key-credentials.js')>,
  ]);
  return {
    createApp: app.createApp,
    loadConfig: config.loadConfig,
    generatedName: generator.generatedName,
    generateNdjson: generator.generateNdjson,
    importLines: importer.importLines,
    openDatabase: db.openDatabase,
    listen: server.listen,
    createLogger: logger.createLogger,
    insertApiKey: keyQueries.insertApiKey,
    apiKeys,
  };
}

/** Names that exist in a database loaded by `npm run bench` (its own generated set). */
async function namesIn(url: string, fallback: string[]): Promise<string[]> {
  const postgres = (await import('postgres')).default;
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ name: string }[]>`select name from profiles order by id limit 1000`;
    return rows.length === 0 ? fallback : rows.map((row) => row.name);
  } finally {
    await sql.end();
  }
}

interface EngineParts {
  /** Yoga's `getResultForParams`: onParams hooks, parse, validate, context, execute, onExecutionResult. */
  getResultForParams: Cost;
  parse: Cost;
  validate: Cost;
  context: Cost;
  execute: Cost;
  stringify: Cost;
}

/**
 * The engine's parts in-process, each run REQUESTS times on its own: Yoga's whole
 * `getResultForParams`, then envelop's parse, validate, context factory and execute called
 * directly with the same document, and the result written as Yoga's result processor writes it
 * (its own `stringify` when it has one, as a profile's kept answer does; else `JSON.stringify`).
 */
async function measureEngine(graphql: GraphQLServer, params: NonNullable<Scenario['params']>): Promise<EngineParts> {
  const engine = graphql.yoga;
  const request = { method: 'POST', url: 'http://localhost/graphql', headers: new Headers() } as unknown as Request;
  const serverContext = () => ({ waitUntil: () => {} }) as NonNullable<Parameters<typeof engine.getResultForParams>[1]>;
  const part = perCall;
  const getResultForParams = await part(() =>
    engine.getResultForParams({ params: structuredClone(params), request }, serverContext()),
  );
  const enveloped = engine.getEnveloped({ request, params, ...serverContext() });
  const document = enveloped.parse(params.query);
  const parse = await part(() => enveloped.parse(params.query));
  const validate = await part(() => enveloped.validate(enveloped.schema, document));
  const context = await part(() => enveloped.contextFactory());
  const contextValue = await enveloped.contextFactory();
  const args = {
    schema: enveloped.schema,
    document,
    contextValue,
    variableValues: params.variables,
    operationName: getOperationAST(document)?.name?.value,
  };
  const execute = await part(() => enveloped.execute(args));
  const result = await enveloped.execute(args);
  const write = (result as { stringify?: (result: unknown) => string }).stringify ?? JSON.stringify;
  const stringify = await part(() => write(result));
  return { getResultForParams, parse, validate, context, execute, stringify };
}

interface ProfileSummary {
  /** Share of samples by group, in percent. */
  groups: Record<string, number>;
  /** The heaviest functions by self time, in percent. */
  functions: Array<{ name: string; share: number }>;
}

/**
 * V8's sampling heap profiler over the HTTP rounds: which functions allocate. Objects collected
 * before the profile is taken are counted too (`includeObjectsCollectedByMajorGC/MinorGC`).
 */
async function startHeapSampling(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    // Every sample is kept to the end (collected objects included): one each 256 bytes, as this
    // tool first sampled, outgrew the 256 MB heap of package.json's flags on long runs; one each
    // 8 KB is still a few a request, and V8 draws them at random, so the shares stay unbiased.
    samplingInterval: 8192,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return session;
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

async function stopHeapSampling(session: Session): Promise<Array<{ name: string; share: number }>> {
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  const bytes = new Map<string, number>();
  let total = 0;
  const walk = (node: SamplingNode) => {
    const where = node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(?:src|dist)\//, 'src/');
    const name = `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`;
    bytes.set(name, (bytes.get(name) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head as SamplingNode);
  return [...bytes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 30)
    .map(([name, size]) => ({ name, share: Math.round((size / Math.max(total, 1)) * 1000) / 10 }));
}

async function startProfile(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return session;
}

/** Ends a profile; `file` keeps it whole, to open in Chrome DevTools (Performance, "Load profile") or to walk by call tree. */
async function endProfile(session: Session, file: string | undefined) {
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  if (file !== undefined) writeFileSync(file, JSON.stringify(profile));
  return profile;
}

async function stopProfile(session: Session): Promise<ProfileSummary> {
  const profile = await endProfile(session, flags['cpu-prof-out']);
  const hits = new Map<number, number>();
  for (const id of profile.samples ?? []) hits.set(id, (hits.get(id) ?? 0) + 1);
  const total = profile.samples?.length ?? 1;
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const node of profile.nodes) {
    const count = hits.get(node.id) ?? 0;
    if (count === 0) continue;
    const group = groupOf(node.callFrame.url, node.callFrame.functionName);
    groups.set(group, (groups.get(group) ?? 0) + count);
    const where = node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(?:src|dist)\//, 'src/');
    const name = `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + count);
  }
  const share = (count: number) => Math.round((count / total) * 1000) / 10;
  return {
    groups: Object.fromEntries([...groups].sort((a, b) => b[1] - a[1]).map(([group, n]) => [group, share(n)])),
    functions: [...functions]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([name, n]) => ({ name, share: share(n) })),
  };
}

/** A sample's group: the package or the service's folder it ran in, or what V8 calls it. */
function groupOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : `native ${functionName}`;
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1] ?? url;
  // dist/ is the compiled src/: its folders are the service's.
  const inService = /\/(?:src|dist)\/((?:[^/]+\/)?[^/]+)\/[^/]+$/.exec(url) ?? /\/(?:src|dist)\/([^/]+)$/.exec(url);
  if (inService) return `src/${inService[1]}`;
  if (url.startsWith('node:')) return url.replace(/^node:internal\/([^/]+).*$/, 'node:$1');
  return url.replace(/^.*\//, '');
}

function formatReport(figures: Figure[], harness: Cost, profile: ProfileSummary | undefined): string {
  const us = (value: number) => value.toFixed(1);
  const kb = (value: number) => (value / 1024).toFixed(1);
  const cell = (cost: Cost) => `${us(cost.cpu)} / ${kb(cost.bytes)}`;
  const less = (a: Cost, ...others: Cost[]): Cost => ({
    cpu: a.cpu - others.reduce((sum, o) => sum + o.cpu, 0),
    bytes: a.bytes - others.reduce((sum, o) => sum + o.bytes, 0),
  });
  const lines = [
    `µs CPU / KB allocated per request, the serving thread, median of ${ROUNDS} alternating rounds of ${REQUESTS}`,
    '',
    `- over HTTP: ${CONCURRENCY} kept-alive connections from a client thread`,
    `- app.handle: the same request in-process without a socket (the fake request's own ${cell(harness)} taken off)`,
    "- node:http and sockets: the difference (parsing the request, the socket's syscalls, the event loop's turns)",
    '',
    '| request | over HTTP | node:http and sockets | app.handle |',
    '|---|---|---|---|',
    ...figures.map((f) => `| ${f.label} | ${cell(f.http)} | ${cell(less(f.http, f.handle))} | ${cell(f.handle)} |`),
    '',
    "app.handle by stage: the engine (Yoga's getResultForParams) and its parts called one by one in-process;",
    '"HTTP layer" is app.handle less the engine (route, log, metrics, body read, parameters, result hooks, JSON text, res.end);',
    '"hooks" is the engine less its parts (onParams, onExecutionResult, envelop\'s per-request orchestration, promises)',
    '',
    '| request | HTTP layer | engine | parse (cache) | validate (cache) | context | execute | hooks | the result written (its `stringify` or JSON.stringify) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...figures.flatMap((f) => {
      const e = f.engine;
      if (e === undefined) return [];
      return [
        `| ${f.key} | ${[
          less(f.handle, e.getResultForParams),
          e.getResultForParams,
          e.parse,
          e.validate,
          e.context,
          e.execute,
          less(e.getResultForParams, e.parse, e.validate, e.context, e.execute),
          e.stringify,
        ]
          .map(cell)
          .join(' | ')} |`,
      ];
    }),
  ];
  if (profile !== undefined) {
    lines.push('', 'CPU profile of the HTTP rounds, self time by group (%)', '');
    for (const [group, share] of Object.entries(profile.groups).slice(0, 25)) lines.push(`- ${group}: ${share}`);
    lines.push('', 'Heaviest functions (self time, %)', '');
    for (const { name, share } of profile.functions) lines.push(`- ${share} ${name}`);
  }
  return lines.join('\n');
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
