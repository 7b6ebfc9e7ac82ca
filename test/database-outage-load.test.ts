/**
 * Recovery from a database outage while lookups keep coming (docs/database-outages.md,
 * "Recovery under load"): connections to the database refused and every session terminated for a
 * few seconds, then allowed again, while twelve clients keep asking for profiles no cache holds
 * (test/support/outage-under-load.ts). After PostgreSQL accepts connections again the first lookup
 * must succeed within a second, and no lookup may answer 503 from two seconds on; afterwards every
 * connection the pool counts is a session the server has. On one service process and on two.
 *
 * Before the postgres.js patch (patches/postgres+3.4.9.patch) connections whose session died
 * under a statement never sent their next startup message: the pool counted them as open, the
 * server had no session for them, and the reads and probes handed to them waited for their
 * deadline, seconds after PostgreSQL was back (test/postgres-reconnect.test.ts shows the
 * mechanism on its own). `npm run bench:outage` runs the same outage for 20 rounds.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../src/data/seed.js';
import { APPLICATION_NAME } from '../src/db/postgres-client.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';
import { readMetrics } from './support/metrics.js';
import { causeOutage, LookupLoad, type Recovery, recoveries } from './support/outage-under-load.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

const postgresUrl = process.env.TEST_DATABASE_URL;

const CLIENTS = 12;
const ROUNDS = 3;
/** Long enough for every connection to fail and the outage gate to close. */
const OUTAGE_MS = 3000;
const FIRST_SUCCESS_WITHIN_MS = 1000;
const NO_503_FROM_MS = 2000;
/** Watched after each outage: past the time from which no 503 may come. */
const WATCHED_MS = 3000;

describe.skipIf(postgresUrl === undefined).each([1, 2])(
  'recovery from an outage under load, %i service process(es)',
  (instances) => {
    let testDb: TestDatabase;
    let database: string;
    let admin: postgres.Sql;
    const services: ServerProcess[] = [];

    beforeAll(async () => {
      testDb = await createTestDatabase('postgres');
      const handle = await testDb.open();
      try {
        await seedDemoData(handle.db);
      } finally {
        await handle.close();
      }
      database = new URL(testDb.url ?? '').pathname.slice(1);
      admin = postgres(postgresUrl ?? '', { max: 1, onnotice: () => {} });
      for (let i = 0; i < instances; i += 1) {
        services.push(
          await startServerProcess({
            // Every lookup a database read: no profile cache, no rate limit.
            env: { ...testDb.env, PROFILE_CACHE_SIZE: '0', PROFILE_LIMIT: '0', LOG_LEVEL: 'info' },
            startTimeoutMs: 60_000,
          }),
        );
      }
    }, 120_000);
    afterAll(async () => {
      for (const service of services.splice(0)) await service.stop();
      await admin?.end();
      await testDb?.drop();
    });

    it('answers within a second of the database accepting connections again, and no 503 from two seconds on', async () => {
      const load = new LookupLoad(services, CLIENTS);
      const missed: Array<Recovery & { round: number }> = [];
      try {
        await eventually(() => load.answers.some((answer) => answer.status === 404), 'the first lookups answered');
        for (let round = 0; round < ROUNDS; round += 1) {
          const backAt = await causeOutage(admin, database, OUTAGE_MS);
          await eventually(
            () => load.answers.some((answer) => answer.sentAt - backAt >= WATCHED_MS),
            `lookups sent ${WATCHED_MS} ms after the outage answered`,
          );
          for (const recovery of recoveries(load.answers, backAt, instances, NO_503_FROM_MS)) {
            const { firstSuccessMs, lateUnavailable } = recovery;
            if (firstSuccessMs === undefined || firstSuccessMs > FIRST_SUCCESS_WITHIN_MS || lateUnavailable > 0) {
              missed.push({ round, ...recovery });
            }
          }
        }
      } finally {
        await load.stop();
      }
      // Nothing but 404 (read) and 503 (unavailable): never a 500, never a hang.
      expect(new Set(load.answers.map((answer) => answer.status))).toEqual(new Set([404, 503]));
      expect(missed).toEqual([]);
    }, 120_000);

    it('counts as open only the connections the server has sessions for', async () => {
      const sessions = async () => {
        const [row] = await admin<{ count: number }[]>`
          select count(*)::int as count from pg_stat_activity
          where datname = ${database} and application_name = ${APPLICATION_NAME}`;
        return row?.count ?? -1;
      };
      const counted = async () => {
        let open = 0;
        for (const service of services) open += (await readMetrics(service.url)).total('database_connections_open');
        return open;
      };
      await eventually(async () => (await counted()) === (await sessions()), {
        what: "the pool's open connections equal to the server's sessions",
        withinMs: 10_000,
      });
    });
  },
);
