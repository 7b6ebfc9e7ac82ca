/**
 * `npm run bench:symbols`: where a GraphQL lookup's CPU differs from a REST lookup's on the
 * service's serving thread, function by function — V8's builtins, its runtime and node's C++ as
 * well as JavaScript — from Linux `perf` sampling the service as `npm start` runs it (with V8's
 * perf map, `--perf-basic-prof`, so compiled JavaScript has names).
 *
 * V8's own CPU profiler (`npm run bench:graphql-cost -- --cpu-prof`) charges time in builtins and
 * the runtime to the JavaScript function that called them, or to "(program)"; under perf they have
 * their names, which is how the twenty-first round of issue 25 found V8 looking up a new object
 * shape for each field the GraphQL context got and a regular expression run on every request's
 * Accept header (bench/README.md). Needs `perf` (Debian's linux-perf) with
 * /proc/sys/kernel/perf_event_paranoid at 2 or lower, and a database `npm run bench` loaded.
 *
 * REST `GET /api/{name_id}` and GraphQL with variables (npm run bench's `restRandom` and
 * `graphqlVariables`), random existing names, autocannon from this process, one after the other:
 * µs a request are samples ÷ frequency ÷ requests answered while perf recorded. A few JavaScript
 * names can be wrong: V8 reuses the memory of code it dropped, and the perf map keeps every name an
 * address had (a module loader's function showing under load is one such).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { benchCommandLine, benchServiceSettings, serviceCommand, startService, wholeNumberOption } from './support.js';

const USAGE = `
npm run bench:symbols -- [options]   the serving thread's CPU by function, GraphQL against REST (bench/README.md)
  --database-url <url>   a database npm run bench loaded (default postgres://postgres@127.0.0.1:5432/nps_bench)
  --seconds <n>          seconds each scenario is recorded (default 10)
  --connections <n>      autocannon connections (default 50)
  --top <n>              functions listed each way (default 40)
`;
const { values: flags } = benchCommandLine(
  {
    options: {
      'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/nps_bench' },
      seconds: { type: 'string', default: '10' },
      connections: { type: 'string', default: '50' },
      top: { type: 'string', default: '40' },
    },
  },
  USAGE,
);
const SECONDS = wholeNumberOption('--seconds', flags.seconds, 2, USAGE);
const CONNECTIONS = wholeNumberOption('--connections', flags.connections, 1, USAGE);
const TOP = wholeNumberOption('--top', flags.top, 1, USAGE);
const FREQUENCY = 1999;
const SELECTION = 'name description image level records { key type raw }';
const QUERY = `query P($n: String!) { profile(name: $n) { ${SELECTION} } }`;

type Scenario = 'rest' | 'graphql';

/** µs of the serving thread a request, by function. */
type Costs = Map<string, number>;

function requestOf(scenario: Scenario, name: string): { method: 'GET' | 'POST'; path: string; body?: string } {
  if (scenario === 'rest') return { method: 'GET', path: `/api/${encodeURIComponent(name)}` };
  return { method: 'POST', path: '/graphql', body: JSON.stringify({ query: QUERY, variables: { n: name } }) };
}

async function drive(url: string, scenario: Scenario, names: readonly string[], seconds: number): Promise<number> {
  let index = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    requests: [
      {
        setupRequest: (request) => ({ ...request, ...requestOf(scenario, names[index++ % names.length] as string) }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${scenario}: ${result.non2xx} answers were not 2xx and ${result.errors} failed`);
  }
  return result.requests.total;
}

/** Records the serving thread (the process's first, `pid`) while `work` runs. */
async function recorded(pid: number, file: string, work: () => Promise<number>): Promise<{ requests: number }> {
  const perf = spawn('perf', ['record', '-F', String(FREQUENCY), '-t', String(pid), '-o', file], { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const requests = await work();
  const exited = new Promise((resolve) => perf.once('exit', resolve));
  perf.kill('SIGINT');
  await exited;
  return { requests };
}

function costsOf(file: string, requests: number): Costs {
  const report = spawnSync(
    'perf',
    ['report', '-i', file, '--no-children', '--sort', 'sym', '-F', 'sample,sym', '--stdio'],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  if (report.status !== 0) throw new Error(`perf report failed: ${report.stderr}`);
  const costs: Costs = new Map();
  const perRequest = 1e6 / FREQUENCY / requests;
  for (const line of report.stdout.split('\n')) {
    const match = /^\s*(\d+)\s+\[[.k]\]\s+(.*)$/.exec(line);
    if (match === null) continue;
    // A compiled function's name carries its tier (`*` optimised, `^` baseline…) and offset.
    const symbol = (match[2] as string).replace(/\+0x[0-9a-f]+$/, '').replace(/^JS:[*^+~]'?/, 'JS:');
    costs.set(symbol, (costs.get(symbol) ?? 0) + Number(match[1]) * perRequest);
  }
  return costs;
}

const total = (costs: Costs) => [...costs.values()].reduce((sum, value) => sum + value, 0);

function table(rows: Array<[string, number, number]>): string[] {
  return [
    '| GraphQL − REST | REST | GraphQL | function |',
    '|---|---|---|---|',
    ...rows.map(
      ([symbol, rest, graphql]) =>
        `| ${(graphql - rest).toFixed(2)} | ${rest.toFixed(2)} | ${graphql.toFixed(2)} | ${symbol.slice(0, 140).replaceAll('|', '\\|')} |`,
    ),
  ];
}

async function main(): Promise<void> {
  if (spawnSync('perf', ['--version']).status !== 0) {
    process.stderr.write('perf is not installed (Debian: apt-get install linux-perf)\n');
    process.exit(2);
  }
  const sql = postgres(flags['database-url'], { max: 1, onnotice: () => {} });
  const names = (await sql<{ name: string }[]>`select name from profiles order by random() limit 20000`).map(
    (row) => row.name,
  );
  await sql.end();
  if (names.length === 0) throw new Error(`no profiles in ${flags['database-url']}: run npm run bench first`);

  const [executable, ...args] = serviceCommand();
  const env = {
    DATABASE_URL: flags['database-url'],
    DB_POOL_SIZE: '10',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    PROFILE_LIMIT: '0',
    ...benchServiceSettings(),
  };
  const service = await startService([executable, '--perf-basic-prof', ...args], env);
  const temporary = mkdtempSync(path.join(os.tmpdir(), 'nps-symbols-'));
  const pid = service.process.pid;
  try {
    for (const scenario of ['rest', 'graphql'] as const) await drive(service.url, scenario, names, 3);
    const costs = {} as Record<Scenario, Costs>;
    for (const scenario of ['rest', 'graphql'] as const) {
      const file = path.join(temporary, `${scenario}.data`);
      const { requests } = await recorded(pid, file, () => drive(service.url, scenario, names, SECONDS));
      process.stderr.write(`${scenario}: ${requests} requests recorded\n`);
      costs[scenario] = costsOf(file, requests);
    }
    const symbols = new Set([...costs.rest.keys(), ...costs.graphql.keys()]);
    const rows = [...symbols].map((symbol): [string, number, number] => [
      symbol,
      costs.rest.get(symbol) ?? 0,
      costs.graphql.get(symbol) ?? 0,
    ]);
    rows.sort((a, b) => b[2] - b[1] - (a[2] - a[1]));
    console.log(
      [
        `The serving thread's CPU a request, sampled by perf at ${FREQUENCY} Hz: REST ${total(costs.rest).toFixed(1)} µs, ` +
          `GraphQL ${total(costs.graphql).toFixed(1)} µs (${(total(costs.graphql) / total(costs.rest)).toFixed(2)}×).`,
        '',
        `Where GraphQL costs more (µs a request, the ${TOP} largest differences):`,
        '',
        ...table(rows.slice(0, TOP)),
        '',
        `Where REST costs more (the ${TOP} largest):`,
        '',
        ...table(rows.slice(-TOP).reverse()),
      ].join('\n'),
    );
  } finally {
    await service.process.stop();
    rmSync(temporary, { recursive: true, force: true });
    // V8's perf map of the service process (--perf-basic-prof writes it there).
    rmSync(`/tmp/perf-${pid}.map`, { force: true });
  }
}

await main();
