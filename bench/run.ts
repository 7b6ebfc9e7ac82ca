/**
 * `npm run bench`: the service against its yardsticks, in one process tree and alternating rounds.
 *
 * 1. Loads BENCH_PROFILES generated profiles (default 100,000) into a database of its own on the
 *    local PostgreSQL (BENCH_DATABASE_URL; kept between runs, reloaded only when it does not hold
 *    the expected data).
 * 2. Starts, as child processes on loopback: a static `node:http` JSON server (the ceiling), the
 *    bare `node:http` + postgres.js server with one hand-written query (the floor a service can
 *    aim at; it also reads the GraphQL request's POST body for its name, which measures what the
 *    method and body cost node:http without any GraphQL), Fastify + Mercurius with graphql-jit
 *    (bench/mercurius-server.ts), the service as `npm start` runs it (dist/ with package.json's
 *    `config.nodeFlags`; NODE_ENV=production, PROFILE_LIMIT=0, LOG_LEVEL=warn), the service with WORKERS=2, and the
 *    service with tracing on, exporting to a receiver here that discards (docs/operations.md "Tracing").
 * 3. Drives them with autocannon (BENCH_CONNECTIONS, default 50) in alternating rounds, so slow drift
 *    of a shared machine hits every figure alike: REST random names, REST one hot name, GraphQL
 *    with variables, GraphQL with the name inline (a new document text per request), and
 *    `profiles(names:)` with 100 random names (fewer connections: it is a latency figure), and
 *    discovery: prefix search (first and later pages) and the reverse lookup by wallet address,
 *    also with few connections, as latency figures. Then measures each ratio a target judges
 *    again in adjacent slices of its two scenarios (PAIRED, bench/paired-ratios.ts): the rounds'
 *    averages are a minute apart, which the drift of a shared machine does not hit alike.
 * 4. Live updates (bench/subscribers.ts, key `subscribers`): 5,000 idle SSE subscribers of one
 *    name, the service's memory per subscriber, and the time from an import's commit to the
 *    subscribers' events (p50, p99, the last). `BENCH_ONLY=subscribers` runs only this part.
 * 5. Edge (bench/edge.ts, key `edge`): Varnish with the shipped VCL in front of the service,
 *    Zipf (s = 1) lookups over every name through Varnish and to the service alone, the hit
 *    ratio, service cores per 1,000,000 lookups a second, and the time from an import's commit
 *    to the fresh answer through Varnish.
 * 6. Avatars (bench/avatars.ts, key `avatars`): a cached 64-pixel variant against the static
 *    server answering its bytes, first-time resizes of 2000×1500 JPEGs from a local origin, and
 *    REST lookups' p99 while 4 connections request new resizes. `BENCH_ONLY=avatars` runs only this part.
 * 7. Counts the SQL statements of one `profiles(names:)` request of 100 names, reads the
 *    service's peak RSS, prints every figure with its ratio and target, and writes
 *    bench/results/latest-<profiles>.json and .md.
 */
import { hash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { type GeneratorOptions, generateNdjson } from '../src/data/generator.js';
import { insertApiKey } from '../src/db/api-key-queries.js';
import { openDatabase } from '../src/db/database.js';
import { listen } from '../src/http/server.js';
import { generateApiKey, generateApiKeyId, hashApiKey } from '../src/limits/api-key-credentials.js';
import { createLogger } from '../src/logging/logger.js';
import { ServiceRequest } from '../src/service/request.js';
import { type SpawnedProcess, startServerProcess } from '../test/support/server-process.js';
import { type AvatarsFigure, avatarsSection, avatarTargets, measureAvatars } from './avatars.js';
import {
  type CpuPerRequest,
  cpuPerRequest,
  databaseServersMissing,
  type ServersScenario,
  startDatabaseServers,
  treeCpuSeconds,
} from './database-servers.js';
import { type EdgeFigure, edgeMissing, edgeSection, measureEdge } from './edge.js';
import {
  type PairedRatio,
  pairedRatio,
  type Repetition,
  repetitionOrder,
  type Side,
  type Slice,
} from './paired-ratios.js';
import { measureSubscribers, type SubscribersFigure, subscribersSection } from './subscribers.js';
import {
  benchServiceSettings,
  createDatabaseIfMissing,
  cycle,
  type DiscoveryPaths,
  discoveryPaths,
  loadDataset,
  procStatusMb,
  randomNames,
  serviceCommand,
  splitLines,
  startService,
  ZIPF_S,
  zipfNames,
} from './support.js';

const PROFILES = Number(process.env.BENCH_PROFILES ?? 100_000);
const DATASET: GeneratorOptions = { profiles: PROFILES, seed: 20261125 };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUND_SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const BATCH_CONNECTIONS = 4;
/** Repetitions of each paired measurement (bench/paired-ratios.ts), and the seconds of one slice. */
const PAIR_REPETITIONS = Number(process.env.BENCH_PAIRS ?? 4);
const PAIR_SECONDS = Number(process.env.BENCH_PAIR_SECONDS ?? 3);
/**
 * The ratios a target judges, measured in adjacent slices after the rounds (the reported ratios
 * without a target are of the rounds' averages): key, then the scenario it is judged against.
 */
const PAIRED: ReadonlyArray<readonly [key: string, base: string]> = [
  ['restRandom', 'bare'],
  ['restRandomKeyed', 'restRandom'],
  ['graphqlVariables', 'bare'],
  ['graphqlVariables', 'restRandom'],
  ['graphqlDocumentId', 'graphqlVariables'],
  ['graphqlInline', 'bare'],
  ['graphqlVariables', 'mercuriusVariables'],
  ['graphqlInline', 'mercuriusInline'],
  ['graphqlHot', 'static'],
  ['restHot', 'static'],
  ['batchHotBr', 'batchHot'],
];
/** Scenario keys to run (comma-separated), for a quick look; a partial run prints and writes nothing. */
const ONLY = process.env.BENCH_ONLY?.split(',')
  .map((key) => key.trim())
  .filter((key) => key !== '');
const POOL_SIZE = '10';
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const GRAPHQL_SELECTION = 'name description image level records { key type raw }';
/** The lookup with the name in variables; also the one trusted document of the service's manifest. */
const PROFILE_QUERY = `query P($n: String!) { profile(name: $n) { ${GRAPHQL_SELECTION} } }`;

/**
 * The manifest of trusted documents the services start with (PERSISTED_DOCUMENTS), in
 * graphql-codegen's form, holding PROFILE_QUERY: the `graphqlDocumentId` scenario sends its id.
 */
function writeManifest(): string {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'nps-bench-manifest-'));
  const file = path.join(folder, 'persisted-documents.json');
  writeFileSync(file, JSON.stringify({ [hash('sha256', PROFILE_QUERY, 'hex')]: PROFILE_QUERY }));
  return file;
}

interface Measurement {
  requestsPerSecond: number;
  /** Requests answered in all. */
  requests: number;
  /** µs of CPU the serving process (and its workers) spent per request answered. */
  serverCpuMicroseconds?: number;
  latencyMs: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}

/** The maintenance database of the benchmark's PostgreSQL server. */
function adminUrl(): string {
  const admin = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  admin.pathname = '/postgres';
  return admin.toString();
}

async function ensureDatabase(): Promise<string> {
  const fallback = `postgres://postgres@127.0.0.1:5432/nps_bench${PROFILES === 100_000 ? '' : `_${PROFILES}`}`;
  const url = process.env.BENCH_DATABASE_URL ?? fallback;
  await createDatabaseIfMissing(url);
  return url;
}

type RequestShape = { method?: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> };

/** Runs autocannon against `baseUrl`, each request made by `next`. */
async function measure(
  baseUrl: string,
  next: () => RequestShape,
  seconds: number,
  connections = CONNECTIONS,
): Promise<Measurement> {
  const result = await autocannon({
    url: baseUrl,
    connections,
    duration: seconds,
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (request) => ({ ...request, ...next() }) }],
  });
  return {
    requestsPerSecond: result.requests.average,
    requests: result.requests.total,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99 },
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

interface Scenario {
  key: string;
  label: string;
  server: 'static' | 'bare' | 'mercurius' | 'service' | 'workers' | 'traced';
  next: () => RequestShape;
  connections?: number;
}

function scenarios(
  names: string[],
  popular: string[],
  hotName: string,
  discovery: DiscoveryPaths,
  apiKey: string,
): Scenario[] {
  const paths = names.map((name) => `/api/${encodeURIComponent(name)}`);
  const query = PROFILE_QUERY;
  /** POST bodies of `document` asking for each of `list` by the variable `n`. */
  const bodiesOf = (document: string, list: string[]) =>
    list.map((name) => JSON.stringify({ query: document, variables: { n: name } }));
  const withVariables = bodiesOf(query, names);
  const byDocumentId = names.map((name) =>
    JSON.stringify({ documentId: `sha256:${hash('sha256', query, 'hex')}`, variables: { n: name } }),
  );
  const nameOnly = bodiesOf('query P($n: String!) { profile(name: $n) { name } }', names);
  const popularPaths = popular.map((name) => `/api/${encodeURIComponent(name)}`);
  const popularWithVariables = bodiesOf(query, popular);
  const inline = names.map((name) =>
    JSON.stringify({ query: `{ profile(name: ${JSON.stringify(name)}) { ${GRAPHQL_SELECTION} } }` }),
  );
  const hotGraphQL = JSON.stringify({ query, variables: { n: hotName } });
  const hotBatch = `/api/profiles?names=${names.slice(0, 20).map(encodeURIComponent).join(',')}`;
  const batches = Array.from({ length: 500 }, (_, i) =>
    JSON.stringify({
      query: `query B($names: [String!]!) { profiles(names: $names) { ${GRAPHQL_SELECTION} } }`,
      variables: { names: names.slice(i * 100, i * 100 + 100) },
    }),
  );
  const post = (bodies: string[]) => {
    const nextBody = cycle(bodies);
    return (): RequestShape => ({ method: 'POST', path: '/graphql', body: nextBody() });
  };
  const get = (list: string[], headers?: Record<string, string>) => {
    const nextPath = cycle(list);
    return (): RequestShape => ({ method: 'GET', path: nextPath(), ...(headers === undefined ? {} : { headers }) });
  };
  return [
    { key: 'static', label: 'static JSON from node:http (ceiling)', server: 'static', next: get(['/']) },
    { key: 'bare', label: 'bare node:http + postgres.js, one query (floor)', server: 'bare', next: get(paths) },
    {
      key: 'barePost',
      label: "bare node:http + postgres.js, the GraphQL request's POST body read for its name (no GraphQL)",
      server: 'bare',
      next: post(withVariables),
    },
    {
      key: 'mercuriusVariables',
      label: 'Fastify + Mercurius (graphql-jit), same statement and selection, name in variables',
      server: 'mercurius',
      next: post(withVariables),
    },
    {
      key: 'mercuriusInline',
      label: 'Fastify + Mercurius (graphql-jit), name inline (new document)',
      server: 'mercurius',
      next: post(inline),
    },
    { key: 'restRandom', label: 'service GET /api/{name_id}, random names', server: 'service', next: get(paths) },
    {
      key: 'restRandomKeyed',
      label: 'service GET /api/{name_id}, random names, with an API key (X-API-Key)',
      server: 'service',
      next: get(paths, { 'x-api-key': apiKey }),
    },
    {
      key: 'restHot',
      label: 'service GET /api/{name_id}, one hot name',
      server: 'service',
      next: get([`/api/${encodeURIComponent(hotName)}`]),
    },
    {
      key: 'batchHot',
      label: 'service GET /api/profiles, one hot batch of 20 names',
      server: 'service',
      next: get([hotBatch]),
    },
    {
      key: 'batchHotBr',
      label: 'service GET /api/profiles, the same hot batch, Accept-Encoding: br, gzip',
      server: 'service',
      next: () => ({ method: 'GET', path: hotBatch, headers: { 'accept-encoding': 'br, gzip' } }),
    },
    {
      key: 'graphqlVariables',
      label: 'service GraphQL profile, name in variables',
      server: 'service',
      next: post(withVariables),
    },
    {
      key: 'graphqlDocumentId',
      label: 'service GraphQL profile, name in variables, the document sent by `documentId` (trusted documents)',
      server: 'service',
      next: post(byDocumentId),
    },
    {
      key: 'graphqlNameOnly',
      label: 'service GraphQL profile, name in variables, `{ name }` selected (the lookup without the records)',
      server: 'service',
      next: post(nameOnly),
    },
    {
      key: 'restZipf',
      label: `service GET /api/{name_id}, Zipf names (s = ${ZIPF_S}: a few popular, most rare)`,
      server: 'service',
      next: get(popularPaths),
    },
    {
      key: 'graphqlZipf',
      label: `service GraphQL profile, name in variables, Zipf names (s = ${ZIPF_S})`,
      server: 'service',
      next: post(popularWithVariables),
    },
    {
      key: 'graphqlTypename',
      label: 'service GraphQL `{ __typename }` (the fixed cost of a GraphQL request)',
      server: 'service',
      next: post([JSON.stringify({ query: '{ __typename }' })]),
    },
    {
      key: 'graphqlHot',
      label: 'service GraphQL profile, one hot document and name',
      server: 'service',
      next: post([hotGraphQL]),
    },
    {
      key: 'graphqlInline',
      label: 'service GraphQL profile, name inline (new document)',
      server: 'service',
      next: post(inline),
    },
    {
      key: 'profiles100',
      label: `service GraphQL profiles(names:) x100, ${BATCH_CONNECTIONS} connections`,
      server: 'service',
      next: post(batches),
      connections: BATCH_CONNECTIONS,
    },
    { key: 'workers', label: 'service WORKERS=2, REST random names', server: 'workers', next: get(paths) },
    {
      key: 'restRandomTraced',
      label: 'service with tracing on (OTLP to a receiver that discards), REST random names',
      server: 'traced',
      next: get(paths),
    },
    {
      key: 'graphqlVariablesTraced',
      label: 'service with tracing on, GraphQL profile, name in variables',
      server: 'traced',
      next: post(withVariables),
    },
    {
      key: 'search',
      label: `service GET /api/search, 20 names a page (first and later pages), ${BATCH_CONNECTIONS} connections`,
      server: 'service',
      next: get(discovery.search),
      connections: BATCH_CONNECTIONS,
    },
    {
      key: 'wallet',
      label: `service GET /api/wallet/{address}, random addresses, ${BATCH_CONNECTIONS} connections`,
      server: 'service',
      next: get(discovery.wallet),
      connections: BATCH_CONNECTIONS,
    },
  ];
}

/**
 * A key for the keyed REST scenario, made as `npm run keys -- create` makes one (a new one each
 * run). PROFILE_LIMIT=0 switches the profile budget off for keys too, so the pair measures what a
 * key adds: reading the header, hashing it, and finding it in the key cache.
 */
async function createBenchApiKey(url: string): Promise<string> {
  const database = await openDatabase({ url, dataDir: '', poolSize: 1 });
  try {
    const key = generateApiKey();
    await insertApiKey(database.db, {
      id: generateApiKeyId(),
      name: 'npm run bench',
      keyHash: hashApiKey(key),
      profileLimit: null,
      ownerCheckLimit: null,
    });
    return key;
  } finally {
    await database.close();
  }
}

function average(measurements: Measurement[]): Measurement {
  const mean = (pick: (m: Measurement) => number) =>
    measurements.reduce((sum, m) => sum + pick(m), 0) / measurements.length;
  return {
    requestsPerSecond: Math.round(mean((m) => m.requestsPerSecond)),
    requests: measurements.reduce((sum, m) => sum + m.requests, 0),
    latencyMs: {
      p50: Math.round(mean((m) => m.latencyMs.p50) * 10) / 10,
      p99: Math.round(mean((m) => m.latencyMs.p99) * 10) / 10,
    },
    non2xx: measurements.reduce((sum, m) => sum + m.non2xx, 0),
    errors: measurements.reduce((sum, m) => sum + m.errors, 0),
    serverCpuMicroseconds: Math.round(mean((m) => m.serverCpuMicroseconds ?? 0)),
  };
}

/** Statements one `profiles(names:)` request of 100 names costs, counted in-process on the same data. */
async function statementsOfOneBatch(url: string, names: string[]): Promise<number> {
  const statements: string[] = [];
  const database = await openDatabase({ url, dataDir: '', logger: { logQuery: (query) => statements.push(query) } });
  const config = loadConfig({ DATABASE_URL: url, PROFILE_LIMIT: '0', PROFILE_CACHE_SIZE: '0', NODE_ENV: 'production' });
  const app = await createApp(config, createLogger('silent', { pretty: false }), { database });
  const running = await listen(app, 0, '127.0.0.1');
  try {
    statements.length = 0;
    const response = await fetch(`${running.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `query B($names: [String!]!) { profiles(names: $names) { ${GRAPHQL_SELECTION} } }`,
        variables: { names: names.slice(0, 100) },
      }),
    });
    if (!response.ok) throw new Error(`profiles(names:) answered ${response.status}`);
    await response.text();
    return statements.length;
  } finally {
    await running.close();
    await database.close();
  }
}

/** The largest resident set the process has had (VmHWM), in MB. */
function peakRssMb(pid: number): number | undefined {
  return procStatusMb(pid, 'VmHWM');
}

/** The process's resident set now (VmRSS), in MB. */
function currentRssMb(pid: number): number | undefined {
  return procStatusMb(pid, 'VmRSS');
}

/**
 * The service with tracing on (every request sampled), exporting to a receiver that discards,
 * when a traced scenario is to run.
 */
async function startTracedService(
  command: readonly [string, ...string[]],
  serviceEnv: Record<string, string>,
): Promise<{ process: SpawnedProcess; url: string; stopReceiver(): Promise<void> } | undefined> {
  if (ONLY !== undefined && !ONLY.some((key) => key.endsWith('Traced'))) return undefined;
  const receiver = await startDiscardingReceiver();
  const { process, url } = await startService(command, { ...serviceEnv, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  return { process, url, stopReceiver: receiver.close };
}

async function main(): Promise<void> {
  const subscribers =
    ONLY === undefined || ONLY.includes('subscribers')
      ? await measureSubscribers(
          adminUrl(),
          (env) => startService(serviceCommand(), env),
          (pid) => currentRssMb(pid),
        )
      : undefined;
  const avatars =
    ONLY === undefined || ONLY.includes('avatars')
      ? await measureAvatars({
          adminUrl: adminUrl(),
          start: (env) => startService(serviceCommand(), env),
          peakRssMb,
          rounds: ROUNDS,
          seconds: ROUND_SECONDS,
          connections: CONNECTIONS,
        })
      : undefined;
  if (ONLY?.every((key) => key === 'subscribers' || key === 'avatars')) {
    console.log([...subscribersSection(subscribers), ...avatarsSection(avatars)].join('\n'));
    return;
  }
  const url = await ensureDatabase();
  await loadDataset(url, DATASET);
  const names = randomNames(DATASET, 50_000, 12345);
  const popular = zipfNames(DATASET, 100_000, 777);
  const hotName = names[0] as string;
  const serviceEnv = {
    DATABASE_URL: url,
    DB_POOL_SIZE: POOL_SIZE,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PROFILE_LIMIT: '0',
    PERSISTED_DOCUMENTS: writeManifest(),
    ...benchServiceSettings(),
  };
  const statements = await statementsOfOneBatch(url, names);
  const apiKey = await createBenchApiKey(url);

  const started: SpawnedProcess[] = [];
  let stopReceiver: (() => Promise<void>) | undefined;
  try {
    const hotDocument = await fetchDocument(url, hotName);
    const staticServer = await startServerProcess({
      env: { STATIC_BODY: hotDocument },
      script: 'bench/static-server.ts',
    });
    started.push(staticServer);
    const bare = await startServerProcess({
      env: { DATABASE_URL: url, DB_POOL_SIZE: POOL_SIZE },
      script: 'bench/baseline-server.ts',
    });
    started.push(bare);
    const mercurius = await startServerProcess({
      env: { DATABASE_URL: url, DB_POOL_SIZE: POOL_SIZE, NODE_ENV: 'production' },
      script: 'bench/mercurius-server.ts',
    });
    started.push(mercurius);
    const command = serviceCommand();
    const service = await startService(command, serviceEnv);
    started.push(service.process);
    const workers = await startService(command, { ...serviceEnv, WORKERS: '2' });
    started.push(workers.process);
    const traced = await startTracedService(command, serviceEnv);
    if (traced !== undefined) {
      started.push(traced.process);
      stopReceiver = traced.stopReceiver;
    }
    const baseUrls = {
      static: staticServer.url,
      bare: bare.url,
      mercurius: mercurius.url,
      service: service.url,
      workers: workers.url,
      traced: traced?.url ?? '',
    };
    const pids = {
      static: staticServer.pid,
      bare: bare.pid,
      mercurius: mercurius.pid,
      service: service.process.pid,
      workers: workers.process.pid,
      traced: traced?.process.pid,
    };

    // Idle: ready, a moment for start-up garbage to be collected, no request served yet.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const idleRssMb = currentRssMb(service.process.pid);
    const list = scenarios(names, popular, hotName, await discoveryPaths(url, service.url, names), apiKey).filter(
      (scenario) => ONLY === undefined || ONLY.includes(scenario.key),
    );
    console.log('warm-up');
    for (const scenario of list) {
      await measure(baseUrls[scenario.server], scenario.next, 2, scenario.connections);
    }
    /** `scenario` for `seconds`, with the CPU its server's process tree spent meanwhile. */
    const measureWithCpu = async (scenario: Scenario, seconds: number) => {
      const cpuBefore = treeCpuSeconds(pids[scenario.server]);
      const measured = await measure(baseUrls[scenario.server], scenario.next, seconds, scenario.connections);
      return { measured, cpuSeconds: treeCpuSeconds(pids[scenario.server]) - cpuBefore };
    };
    const results = new Map<string, Measurement[]>(list.map((scenario) => [scenario.key, []]));
    for (let round = 1; round <= ROUNDS; round += 1) {
      // Every other round in reverse (A B, B A, …): a scenario that always ran right after another
      // (a keyed lookup after the keyless one, say) would carry what that one left behind.
      for (const scenario of round % 2 === 0 ? [...list].reverse() : list) {
        const { measured, cpuSeconds } = await measureWithCpu(scenario, ROUND_SECONDS);
        measured.serverCpuMicroseconds = Math.round((cpuSeconds * 1e6) / Math.max(measured.requests, 1));
        results.get(scenario.key)?.push(measured);
      }
      console.log(
        `round ${round}: ${list.map((s) => `${s.key} ${Math.round(results.get(s.key)?.at(-1)?.requestsPerSecond ?? 0)}`).join(', ')}`,
      );
    }
    const averaged = Object.fromEntries(
      list.map((scenario) => [scenario.key, average(results.get(scenario.key) ?? [])]),
    );
    const paired = await measurePairs(list, async (scenario) => {
      const { measured, cpuSeconds } = await measureWithCpu(scenario, PAIR_SECONDS);
      return { requests: measured.requests, seconds: PAIR_SECONDS, cpuSeconds };
    });
    const servers =
      ONLY === undefined || ONLY.includes('servers') ? await measureDatabaseServers(names, serviceEnv) : undefined;
    const edge =
      ONLY === undefined || ONLY.includes('edge')
        ? (edgeMissing() ??
          (await measureEdge({
            url,
            dataset: DATASET,
            serviceEnv,
            start: (env) => startService(command, env),
            rounds: ROUNDS,
            seconds: ROUND_SECONDS,
            connections: CONNECTIONS,
          })))
        : undefined;
    report(list, averaged, {
      paired,
      statements,
      peakRssMb: peakRssMb(service.process.pid),
      idleRssMb,
      servers,
      subscribers,
      edge,
      avatars,
    });
  } finally {
    await Promise.all(started.map((process) => process.stop()));
    await stopReceiver?.();
  }
}

/** The ratios of PAIRED whose two scenarios this run measures, each in adjacent slices. */
async function measurePairs(
  list: Scenario[],
  slice: (scenario: Scenario) => Promise<Slice>,
): Promise<Map<string, PairedRatio>> {
  const byKey = new Map(list.map((scenario) => [scenario.key, scenario]));
  const paired = new Map<string, PairedRatio>();
  for (const [key, base] of PAIRED) {
    const keyScenario = byKey.get(key);
    const baseScenario = byKey.get(base);
    if (keyScenario === undefined || baseScenario === undefined) continue;
    const sides: Record<Side, Scenario> = { key: keyScenario, base: baseScenario };
    const repetitions: Repetition[] = [];
    for (let repetition = 0; repetition < PAIR_REPETITIONS; repetition += 1) {
      const slices: Repetition = { key: [], base: [] };
      for (const side of repetitionOrder(repetition)) {
        slices[side].push(await slice(sides[side]));
      }
      repetitions.push(slices);
    }
    const ratio = pairedRatio(repetitions);
    if (ratio === undefined) continue;
    paired.set(pairName(key, base), ratio);
    console.log(
      `paired ${key} / ${base}: throughput ${ratio.throughput.median.toFixed(3)}, CPU ${ratio.cpu.median.toFixed(3)}`,
    );
  }
  return paired;
}

function pairName(key: string, base: string): string {
  return `${key} / ${base}`;
}

/**
 * REST random names against the service on servers of the benchmark's own: primary only, reads
 * on a streaming replica, transaction mode without and with PgBouncer (bench/database-servers.ts),
 * in alternating rounds, with the CPU each server spends per request.
 */
async function measureDatabaseServers(
  names: string[],
  serviceEnv: Record<string, string>,
): Promise<ServersFigure[] | string> {
  const missing = databaseServersMissing();
  if (missing !== undefined) return `not measured: ${missing}`;
  console.log('several database servers: loading the dataset into a primary of its own and its replica');
  const servers = await startDatabaseServers(splitLines(generateNdjson(DATASET)), POOL_SIZE);
  const services: Array<{ scenario: ServersScenario; process: SpawnedProcess; url: string }> = [];
  try {
    const command = serviceCommand();
    for (const scenario of servers.scenarios) {
      const started = await startService(command, { ...serviceEnv, ...scenario.env });
      services.push({ scenario, ...started });
    }
    const paths = names.map((name) => `/api/${encodeURIComponent(name)}`);
    const next = () => {
      const nextPath = cycle(paths);
      return (): RequestShape => ({ method: 'GET', path: nextPath() });
    };
    for (const service of services) await measure(service.url, next(), 2);
    const results = new Map<string, { measured: Measurement[]; cpu: CpuPerRequest[] }>(
      services.map((service) => [service.scenario.key, { measured: [], cpu: [] }]),
    );
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const service of services) {
        const before = servers.cpuSeconds(service.process);
        const measured = await measure(service.url, next(), ROUND_SECONDS);
        const after = servers.cpuSeconds(service.process);
        const entry = results.get(service.scenario.key);
        entry?.measured.push(measured);
        entry?.cpu.push(cpuPerRequest(before, after, measured.requests));
      }
      console.log(
        `servers round ${round}: ${services.map((s) => `${s.scenario.key} ${Math.round(results.get(s.scenario.key)?.measured.at(-1)?.requestsPerSecond ?? 0)}`).join(', ')}`,
      );
    }
    return services.map(({ scenario }) => {
      const entry = results.get(scenario.key) ?? { measured: [], cpu: [] };
      const meanCpu = (key: keyof CpuPerRequest) =>
        Math.round(entry.cpu.reduce((sum, cpu) => sum + cpu[key], 0) / Math.max(entry.cpu.length, 1));
      return {
        key: scenario.key,
        label: scenario.label,
        ...average(entry.measured),
        cpuMicroseconds: {
          service: meanCpu('service'),
          primary: meanCpu('primary'),
          standby: meanCpu('standby'),
          pgbouncer: meanCpu('pgbouncer'),
        },
      };
    });
  } finally {
    await Promise.all(services.map((service) => service.process.stop()));
    await servers.close();
  }
}

/** The hot name's document, from the service's own query, so the static server answers the same bytes. */
async function fetchDocument(url: string, name: string): Promise<string> {
  const database = await openDatabase({ url, dataDir: '' });
  const config = loadConfig({ DATABASE_URL: url, PROFILE_LIMIT: '0', NODE_ENV: 'production' });
  const app = await createApp(config, createLogger('silent', { pretty: false }), { database });
  try {
    const { value } = await app.profiles.lookupProfile(new ServiceRequest('bench', 'bench'), name);
    if (value === null) throw new Error(`${name} is not in the dataset`);
    return value.document.toString('utf8');
  } finally {
    await app.close();
    await database.close();
  }
}

interface ServersFigure extends Measurement {
  key: string;
  label: string;
  cpuMicroseconds: CpuPerRequest;
}

interface Extras {
  /** The ratios of PAIRED, measured in adjacent slices, by pairName. */
  paired: Map<string, PairedRatio>;
  /** The several-database-servers part, or why it did not run. */
  servers?: ServersFigure[] | string;
  /** The live-updates part (bench/subscribers.ts). */
  subscribers?: SubscribersFigure;
  /** The edge part (bench/edge.ts), or why it did not run. */
  edge?: EdgeFigure | string;
  /** The avatar part (bench/avatars.ts). */
  avatars?: AvatarsFigure;
  statements: number;
  peakRssMb: number | undefined;
  /** RSS of the service on PostgreSQL once ready, before any load. */
  idleRssMb: number | undefined;
}

function report(list: Scenario[], figures: Record<string, Measurement>, extras: Extras): void {
  const rps = (key: string) => figures[key]?.requestsPerSecond ?? 0;
  const cpu = (key: string) => figures[key]?.serverCpuMicroseconds ?? 0;
  const paired = (key: string, base: string) => extras.paired.get(pairName(key, base));
  // A paired pair's ratio is its paired median; the others' the ratio of the rounds' averages.
  const ratio = (key: string, base: string) => hundredths(paired(key, base)?.throughput.median ?? rps(key) / rps(base));
  const cpuRatio = (key: string, base: string) => hundredths(paired(key, base)?.cpu.median ?? cpu(key) / cpu(base));
  // The value shown: a paired ratio with its repetitions' range and the rounds' ratio beside it.
  const shown = (value: number, key: string, base: string, which: 'throughput' | 'cpu') => {
    const pair = paired(key, base);
    if (pair === undefined) return `${value}×`;
    const rounds = which === 'cpu' ? cpu(key) / cpu(base) : rps(key) / rps(base);
    const { lowest, highest } = pair[which];
    return `${value}× (paired, ${pair.repetitions} repetitions ${hundredths(lowest)}-${hundredths(highest)}×; rounds ${hundredths(rounds)}×)`;
  };
  type Target = { label: string; value: string; target: string; met: boolean };
  const measured = (key: string) => figures[key] !== undefined;
  // A partial run (BENCH_ONLY) shows the targets of what it measured.
  const atLeast = (label: string, key: string, base: string, target: number): Target[] =>
    measured(key) && measured(base)
      ? [
          {
            label,
            value: shown(ratio(key, base), key, base, 'throughput'),
            target: `≥ ${target}×`,
            met: ratio(key, base) >= target,
          },
        ]
      : [];
  const atMost = (label: string, value: number | undefined, unit: string, target: number): Target[] =>
    value === undefined
      ? []
      : [{ label, value: `${value} ${unit}`, target: `≤ ${target} ${unit}`, met: value <= target }];
  const cpuAtMost = (label: string, key: string, base: string, target: number): Target[] => {
    if (!measured(key) || !measured(base)) return [];
    const value = cpuRatio(key, base);
    return [{ label, value: shown(value, key, base, 'cpu'), target: `≤ ${target}×`, met: value <= target }];
  };
  const cpuReported = (label: string, key: string, base: string): Target[] =>
    measured(key) && measured(base) ? [{ label, value: `${cpuRatio(key, base)}×`, target: 'reported', met: true }] : [];
  const edge = typeof extras.edge === 'object' ? extras.edge : undefined;
  const targets: Target[] = [
    ...atLeast('REST random names / bare', 'restRandom', 'bare', 1.0),
    ...atLeast('REST random names with an API key / without', 'restRandomKeyed', 'restRandom', 0.95),
    ...atLeast('GraphQL with variables / bare', 'graphqlVariables', 'bare', 0.8),
    ...atLeast('GraphQL with variables / REST random names', 'graphqlVariables', 'restRandom', 0.85),
    ...atLeast('GraphQL inline / bare', 'graphqlInline', 'bare', 0.5),
    ...atLeast('GraphQL with variables / Mercurius', 'graphqlVariables', 'mercuriusVariables', 0.9),
    ...atLeast('GraphQL inline / Mercurius inline', 'graphqlInline', 'mercuriusInline', 0.85),
    ...cpuAtMost('CPU per request: GraphQL with variables / REST random names', 'graphqlVariables', 'restRandom', 1.2),
    // No more than the same text sent as `query`: the margin over 1 is the paired slices' noise, not a cost.
    ...cpuAtMost(
      'CPU per request: GraphQL by documentId / the same document as query',
      'graphqlDocumentId',
      'graphqlVariables',
      1.05,
    ),
    ...cpuReported(
      'CPU per request: bare POST / bare GET (what the method and body cost node:http)',
      'barePost',
      'bare',
    ),
    ...cpuReported('CPU per request: GraphQL with variables / bare POST', 'graphqlVariables', 'barePost'),
    ...cpuReported(
      'CPU per request: GraphQL `{ name }` / REST random names (the engine and a lookup, no records)',
      'graphqlNameOnly',
      'restRandom',
    ),
    ...cpuReported(
      'CPU per request: GraphQL with variables / GraphQL `{ name }` (what the selection adds)',
      'graphqlVariables',
      'graphqlNameOnly',
    ),
    ...cpuReported(
      'CPU per request: GraphQL with variables / REST, Zipf names (mostly the profile cache)',
      'graphqlZipf',
      'restZipf',
    ),
    ...atLeast('GraphQL hot document and name / static', 'graphqlHot', 'static', 0.6),
    ...atLeast('REST hot name / static', 'restHot', 'static', 0.7),
    ...atLeast('hot batch of 20 compressed (br) / identity', 'batchHotBr', 'batchHot', 0.9),
    ...atMost('profiles(names:) x100: SQL statements', extras.statements, 'statements', 3),
    ...atMost('profiles(names:) x100: p99', figures.profiles100?.latencyMs.p99, 'ms', 25),
    ...atMost('prefix search: p99', figures.search?.latencyMs.p99, 'ms', 20),
    ...atMost('reverse lookup by wallet: p99', figures.wallet?.latencyMs.p99, 'ms', 20),
    ...atMost('service peak RSS under the benchmark', extras.peakRssMb, 'MB', 200),
    ...atMost('service idle RSS on PostgreSQL', extras.idleRssMb, 'MB', 100),
    ...tracingCost(measured, ratio),
    ...atMost('edge: commit to fresh answer through Varnish, p99', edge?.commitToFresh.p99, 'ms', 1000),
    ...avatarTargets(extras.avatars),
    ...(measured('workers') && measured('restRandom')
      ? [
          {
            label: 'WORKERS=2 / WORKERS=1, REST random',
            value: `${ratio('workers', 'restRandom')}×`,
            target: 'reported',
            met: true,
          },
        ]
      : []),
  ];
  const other = PROFILES === 100_000 ? undefined : readPrevious(100_000);
  if (other !== undefined) {
    const change = Math.round((rps('restRandom') / other.restRandom - 1) * 1000) / 10;
    targets.push({
      label: `REST random at ${PROFILES.toLocaleString('en-US')} vs 100,000 profiles`,
      value: `${change > 0 ? '+' : ''}${change} %`,
      target: 'within 10 %',
      met: Math.abs(change) <= 10,
    });
  }
  const date = new Date().toISOString();
  const markdown = [
    `# Benchmark ${date}`,
    '',
    `${PROFILES.toLocaleString('en-US')} generated profiles on the local PostgreSQL; autocannon with ${CONNECTIONS} connections ` +
      `(profiles x100, search, wallet: ${BATCH_CONNECTIONS}), ${ROUNDS} alternating rounds of ${ROUND_SECONDS} s; load generator, servers ` +
      'and PostgreSQL share the machine. ' +
      `Ratios with a target are paired: the median of ${PAIR_REPETITIONS} repetitions of four adjacent ` +
      `${PAIR_SECONDS}-second slices (A B B A, then B A A B) after the rounds (bench/paired-ratios.ts); the reported ones are of the rounds' averages.`,
    '',
    '| server | req/s | p50 ms | p99 ms | µs CPU/request | non-2xx | errors |',
    '|---|---|---|---|---|---|---|',
    ...list.map((scenario) => {
      const m = figures[scenario.key];
      return `| ${scenario.label} | ${m?.requestsPerSecond} | ${m?.latencyMs.p50} | ${m?.latencyMs.p99} | ${m?.serverCpuMicroseconds} | ${m?.non2xx} | ${m?.errors} |`;
    }),
    '',
    '| figure | value | target | met |',
    '|---|---|---|---|',
    ...targets.map((t) => `| ${t.label} | ${t.value} | ${t.target} | ${t.met ? 'yes' : '**no**'} |`),
    '',
    ...serversSection(extras.servers),
    ...subscribersSection(extras.subscribers),
    ...edgeSection(extras.edge),
    ...avatarsSection(extras.avatars),
  ].join('\n');
  const json = {
    date,
    profiles: PROFILES,
    rounds: ROUNDS,
    roundSeconds: ROUND_SECONDS,
    connections: CONNECTIONS,
    figures,
    ...extras,
    paired: Object.fromEntries(extras.paired),
    targets,
  };
  if (ONLY === undefined) {
    writeFileSync(`${RESULTS_DIR}latest-${PROFILES}.json`, `${JSON.stringify(json, null, 2)}\n`);
    writeFileSync(`${RESULTS_DIR}latest-${PROFILES}.md`, markdown);
  }
  console.log(markdown);
  const failed = Object.values(figures).reduce((sum, m) => sum + m.errors, 0);
  if (failed > 0) {
    console.error('some requests failed: the figures above are not comparable');
    process.exitCode = 1;
  }
}

function hundredths(value: number): number {
  return Math.round(value * 100) / 100;
}

/** Tracing on / off, for REST and GraphQL: reported, no target (tracing off is the default). */
function tracingCost(
  measured: (key: string) => boolean,
  ratio: (key: string, base: string) => number,
): Array<{ label: string; value: string; target: string; met: boolean }> {
  return [
    ['REST random names', 'restRandomTraced', 'restRandom'],
    ['GraphQL with variables', 'graphqlVariablesTraced', 'graphqlVariables'],
  ]
    .filter(([, traced = '', off = '']) => measured(traced) && measured(off))
    .map(([label, traced = '', off = '']) => ({
      label: `tracing on / off, ${label}`,
      value: `${ratio(traced, off)}×`,
      target: 'reported',
      met: true,
    }));
}

/**
 * An OTLP/HTTP receiver that reads each export and throws it away: the traced service pays for
 * making and sending its spans, as it would with a collector beside it.
 */
async function startDiscardingReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function serversSection(servers: Extras['servers']): string[] {
  if (servers === undefined) return [];
  const heading = "## Several database servers: REST random names, 50 connections, servers of the benchmark's own";
  if (typeof servers === 'string') return [heading, '', servers, ''];
  const primaryOnly = servers.find((figure) => figure.key === 'serversPrimary')?.requestsPerSecond ?? 0;
  return [
    heading,
    '',
    '| setup | req/s | vs primary only | p99 ms | µs CPU/request: service | primary | replica | PgBouncer |',
    '|---|---|---|---|---|---|---|---|',
    ...servers.map(
      (f) =>
        `| ${f.label} | ${f.requestsPerSecond} | ${Math.round((f.requestsPerSecond / primaryOnly) * 100) / 100}× | ${f.latencyMs.p99} | ` +
        `${f.cpuMicroseconds.service} | ${f.cpuMicroseconds.primary} | ${f.cpuMicroseconds.standby} | ${f.cpuMicroseconds.pgbouncer} |`,
    ),
    '',
  ];
}

function readPrevious(profiles: number): { restRandom: number } | undefined {
  try {
    const previous = JSON.parse(readFileSync(`${RESULTS_DIR}latest-${profiles}.json`, 'utf8')) as {
      figures: Record<string, Measurement>;
    };
    const restRandom = previous.figures.restRandom?.requestsPerSecond;
    return restRandom === undefined ? undefined : { restRandom };
  } catch {
    return undefined;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
