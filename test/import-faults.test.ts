/**
 * An import that is cut off half-way leaves the data exactly as it was: its backend terminated
 * (the command then fails with one line, no stack trace), or the importer killed with SIGKILL,
 * in plain and bulk mode, on PostgreSQL and on the embedded database.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateNdjson } from '../src/data/generator.js';
import { seedDemoData } from '../src/data/seed.js';
import type { Database } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import { type RunningCli, STACK_LINE, startCli } from './support/cli.js';
import { snapshotDatabase } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';

const SLOW = 180_000;
/** Big enough that the import is still writing when its first progress line (after 2 s) appears. */
const PROFILES = 120_000;
const FIRST_PROGRESS = /^\.\.\. \d+% /m;

let folder: string;
let dataFile: string;
beforeAll(() => {
  folder = mkdtempSync(path.join(os.tmpdir(), 'nps-faults-'));
  dataFile = path.join(folder, 'big.ndjson');
  writeFileSync(dataFile, [...generateNdjson({ profiles: PROFILES, seed: 31, namespaces: 4 })].join(''));
});
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

/** Everything stored, and the reference checks (bulk mode switches them off for its transaction). */
async function state(db: Database) {
  const checks = await db
    .select({ name: sql<string>`tgname::text`, enabled: sql<string>`tgenabled::text` })
    .from(sql`pg_trigger`)
    .where(sql`not tgisinternal`)
    .orderBy(sql`tgname`);
  return { ...(await snapshotDatabase(db)), checks };
}

async function seeded(kind: 'pglite' | 'postgres'): Promise<{ testDb: TestDatabase; before: unknown }> {
  const testDb = await createTestDatabase(kind);
  const handle = await testDb.open();
  try {
    await seedDemoData(handle.db);
    return { testDb, before: await state(handle.db) };
  } finally {
    await handle.close();
  }
}

async function stateOf(testDb: TestDatabase) {
  const handle = await testDb.open();
  try {
    return await state(handle.db);
  } finally {
    await handle.close();
  }
}

describe.skipIf(!databaseKinds().includes('postgres'))('an import cut off on PostgreSQL', () => {
  /** The import's backend, once its transaction runs. */
  async function importBackend(admin: postgres.Sql, database: string): Promise<number> {
    const [row] = await admin<{ pid: number }[]>`
      select pid from pg_stat_activity
      where datname = ${database} and application_name = 'name-profile-service' and xact_start is not null`;
    if (row === undefined) throw new Error('no import transaction is running');
    return row.pid;
  }

  /** Waits until no session of the service is left on the database (a killed client's backend ends). */
  async function backendsGone(admin: postgres.Sql, database: string): Promise<void> {
    const gone = async () => {
      const [row] = await admin<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = ${database} and application_name = 'name-profile-service'`;
      return row?.n === 0;
    };
    await eventually(gone, { what: "the import's backends gone", withinMs: 30_000, everyMs: 100 });
  }

  /**
   * Starts an import (`flags`) of the data file into a seeded database, lets `cut` break it off
   * once it writes, and expects the data exactly as before once the service's sessions are gone.
   */
  async function cutOff(
    flags: string[],
    cut: (running: RunningCli, admin: postgres.Sql, database: string) => Promise<void>,
  ): Promise<void> {
    const { testDb, before } = await seeded('postgres');
    const admin = postgres(process.env.TEST_DATABASE_URL ?? '', { max: 1, onnotice: () => {} });
    const database = new URL(testDb.url ?? '').pathname.slice(1);
    try {
      const running = startCli('import', [...flags, dataFile], { env: testDb.env });
      await running.waitForStderr(FIRST_PROGRESS);
      await cut(running, admin, database);
      await backendsGone(admin, database);
      expect(await stateOf(testDb)).toEqual(before);
    } finally {
      await admin.end();
      await testDb.drop();
    }
  }

  it.each([[[]], [['--bulk']]])(
    'terminating the backend (%j) fails with one line and no stack trace, and writes nothing',
    (flags: string[]) =>
      cutOff(flags, async (running, admin, database) => {
        await admin`select pg_terminate_backend(${await importBackend(admin, database)})`;
        const result = await running.done;
        expect(result.code, result.stderr).toBe(1);
        const failures = result.stderr.split('\n').filter((line) => line.startsWith('Failed:'));
        expect(failures, result.stderr).toHaveLength(1);
        expect(failures[0]).toMatch(
          /^Failed: (57P01: terminating connection due to administrator command|ECONNRESET|EPIPE|CONNECTION_CLOSED)/,
        );
        expect(result.stderr).not.toMatch(STACK_LINE);
        expect(result.stderr).not.toContain('TypeError');
      }),
    SLOW,
  );

  it.each([[[]], [['--bulk']]])(
    'killing the importer (%j) half-way leaves the data exactly as before',
    (flags: string[]) =>
      cutOff(flags, async (running) => {
        running.child.kill('SIGKILL');
        expect((await running.done).signal).toBe('SIGKILL');
      }),
    SLOW,
  );
});

describe('an import cut off on the embedded database', () => {
  it.each([[[]], [['--bulk']]])(
    'kill -9 of the importer (%j) half-way leaves the data exactly as before',
    async (flags: string[]) => {
      const { testDb, before } = await seeded('pglite');
      try {
        const running = startCli('import', [...flags, dataFile], { env: testDb.env });
        await running.waitForStderr(FIRST_PROGRESS);
        running.child.kill('SIGKILL');
        expect((await running.done).signal).toBe('SIGKILL');
        // The lock file of the killed process is stale and taken over; PGlite recovers its WAL.
        expect(await stateOf(testDb)).toEqual(before);
      } finally {
        await testDb.drop();
      }
    },
    SLOW,
  );
});
