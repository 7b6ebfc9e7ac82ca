/**
 * `npm run bench:outage`: how quickly the service answers again after a database outage under
 * load (docs/database-outages.md, "Recovery under load"). For one service process and for two on
 * a database of their own on the local PostgreSQL (TEST_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/test), twelve clients ask for profiles no cache holds while
 * BENCH_OUTAGE_ROUNDS (20) outages of BENCH_OUTAGE_SECONDS (5) each refuse connections and
 * terminate every session. Per round and process: the time from PostgreSQL accepting connections
 * again to the first successful lookup (target: at most 1 s), and the lookups answered 503 from
 * 2 s on (target: none). Prints a table and writes bench/results/outage-recovery.json.
 *
 * Run it once as it is and once with another process keeping a core busy
 * (`( while :; do :; done ) &`, then kill that PID): the targets hold for both.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { seedDemoData } from '../src/data/seed.js';
import { createTestDatabase } from '../test/support/databases.js';
import { eventually } from '../test/support/eventually.js';
import { causeOutage, LookupLoad, type Recovery, recoveries } from '../test/support/outage-under-load.js';
import { type ServerProcess, startServerProcess } from '../test/support/server-process.js';

const ROUNDS = Number(process.env.BENCH_OUTAGE_ROUNDS ?? 20);
const OUTAGE_MS = Number(process.env.BENCH_OUTAGE_SECONDS ?? 5) * 1000;
const CLIENTS = 12;
const FIRST_SUCCESS_TARGET_MS = 1000;
const NO_503_FROM_MS = 2000;
const WATCHED_MS = 3000;
const RESULTS = fileURLToPath(new URL('./results/outage-recovery.json', import.meta.url));

process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';

interface Result {
  instances: number;
  rounds: Array<Recovery & { round: number }>;
}

async function measure(instances: number): Promise<Result> {
  const testDb = await createTestDatabase('postgres');
  const handle = await testDb.open();
  try {
    await seedDemoData(handle.db);
  } finally {
    await handle.close();
  }
  const database = new URL(testDb.url ?? '').pathname.slice(1);
  const admin = postgres(process.env.TEST_DATABASE_URL ?? '', { max: 1, onnotice: () => {} });
  const services: ServerProcess[] = [];
  const rounds: Result['rounds'] = [];
  try {
    for (let i = 0; i < instances; i += 1) {
      services.push(
        await startServerProcess({
          env: { ...testDb.env, PROFILE_CACHE_SIZE: '0', PROFILE_LIMIT: '0', LOG_LEVEL: 'info' },
          startTimeoutMs: 60_000,
        }),
      );
    }
    const load = new LookupLoad(services, CLIENTS);
    try {
      await eventually(() => load.answers.some((answer) => answer.status === 404), 'the first lookups answered');
      for (let round = 0; round < ROUNDS; round += 1) {
        const backAt = await causeOutage(admin, database, OUTAGE_MS);
        await eventually(() => load.answers.some((answer) => answer.sentAt - backAt >= WATCHED_MS), {
          what: 'lookups after the outage',
          withinMs: 30_000,
        });
        for (const recovery of recoveries(load.answers, backAt, instances, NO_503_FROM_MS)) {
          rounds.push({ round, ...recovery });
          const first = recovery.firstSuccessMs === undefined ? 'none' : `${Math.round(recovery.firstSuccessMs)} ms`;
          console.log(
            `${instances} process(es), round ${round + 1}, process ${recovery.instance + 1}: first success ${first}, 503s from 2 s on: ${recovery.lateUnavailable}`,
          );
        }
      }
    } finally {
      await load.stop();
    }
  } finally {
    for (const service of services) await service.stop();
    await admin.end();
    await testDb.drop();
  }
  return { instances, rounds };
}

const [startLoad = 0] = loadavg();
const results: Result[] = [];
for (const instances of [1, 2]) results.push(await measure(instances));

const lines = ['| processes | rounds met | first success: median, max | 503s from 2 s on |', '|---|---|---|---|'];
for (const { instances, rounds } of results) {
  const firsts = rounds.map((round) => round.firstSuccessMs ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
  const missedRounds = new Set(
    rounds
      .filter((r) => (r.firstSuccessMs ?? Number.POSITIVE_INFINITY) > FIRST_SUCCESS_TARGET_MS || r.lateUnavailable > 0)
      .map((r) => r.round),
  );
  const median = firsts[Math.floor(firsts.length / 2)] ?? Number.NaN;
  const late = rounds.reduce((sum, round) => sum + round.lateUnavailable, 0);
  lines.push(
    `| ${instances} | ${ROUNDS - missedRounds.size} of ${ROUNDS} | ${Math.round(median)} ms, ${Math.round(firsts.at(-1) ?? Number.NaN)} ms | ${late} |`,
  );
}
console.log(`\nload average at the start: ${startLoad.toFixed(1)}, at the end: ${(loadavg()[0] ?? 0).toFixed(1)}`);
console.log(lines.join('\n'));
writeFileSync(RESULTS, `${JSON.stringify({ at: new Date().toISOString(), outageMs: OUTAGE_MS, results }, null, 2)}\n`);
