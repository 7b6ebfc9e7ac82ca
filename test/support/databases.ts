/**
 * Test databases. Every data-layer suite runs on PGlite and, when TEST_DATABASE_URL names a
 * PostgreSQL server, also on a database of its own there that the suite creates and drops.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll } from 'vitest';
import { seedDemoData } from '../../src/data/seed.js';
import { type DatabaseHandle, type DatabaseOptions, openDatabase } from '../../src/db/database.js';
import { copyOfTemplate, type PgliteTemplate } from './pglite-templates.js';

export type DatabaseKind = 'pglite' | 'postgres';

/**
 * The kinds of database this test run covers: PGlite always, PostgreSQL when configured. The
 * second run of the GraphQL suites (TEST_GRAPHQL_HTTP_PATH=yoga, vitest.config.ts) compares two
 * HTTP paths above the same service and database layers, which the first run covers on both
 * kinds; it runs on PGlite alone.
 */
export function databaseKinds(): DatabaseKind[] {
  if (process.env.TEST_GRAPHQL_HTTP_PATH === 'yoga') return ['pglite'];
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

export interface TestDatabase {
  kind: DatabaseKind;
  /** How to reach it: a PostgreSQL URL, or undefined with `dataDir` for PGlite. */
  url: string | undefined;
  dataDir: string;
  /** On PGlite, the template it was copied from (what it already holds), if any. */
  copiedFrom: PgliteTemplate | undefined;
  /** Environment variables that point a child process (server, CLI) at this database. */
  env: Record<string, string>;
  /** Opens a handle (migrated); PGlite allows one open handle at a time per folder. */
  open(options?: Pick<DatabaseOptions, 'logger' | 'readTimeoutMs'>): Promise<DatabaseHandle>;
  /** Removes the database and its files. */
  drop(): Promise<void>;
}

/**
 * A new database of `kind`. On PGlite, `template` names the run's template folder to start from
 * (./pglite-templates.ts): `empty` (the default, as new) or `demo` (migrated, with the demo data).
 */
export async function createTestDatabase(
  kind: DatabaseKind,
  template: PgliteTemplate = 'empty',
): Promise<TestDatabase> {
  return kind === 'pglite' ? createPgliteDatabase(template) : createPostgresDatabase();
}

function createPgliteDatabase(template: PgliteTemplate): TestDatabase {
  const copy = copyOfTemplate(template);
  const dataDir = copy ?? mkdtempSync(path.join(os.tmpdir(), 'nps-pglite-'));
  return {
    kind: 'pglite',
    copiedFrom: copy === undefined ? undefined : template,
    url: undefined,
    dataDir,
    env: { DATA_DIR: dataDir },
    async open(options = {}) {
      const handle = await openDatabase({ url: undefined, dataDir, ...options });
      await handle.migrate();
      return handle;
    },
    async drop() {
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function createPostgresDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `nps_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    kind: 'postgres',
    copiedFrom: undefined,
    url: databaseUrl,
    dataDir: '',
    env: { DATABASE_URL: databaseUrl },
    async open(options = {}) {
      const handle = await openDatabase({ url: databaseUrl, dataDir: '', poolSize: 5, ...options });
      await handle.migrate();
      return handle;
    },
    async drop() {
      const dropper = postgres(serverUrl, { max: 1, onnotice: () => {} });
      await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      await dropper.end();
    },
  };
}

export interface SuiteDatabase {
  readonly testDb: TestDatabase;
  /** Open and migrated for the whole suite. */
  readonly handle: DatabaseHandle;
}

/**
 * A test database of `kind` for the surrounding suite: created (and filled by `fill`, when given)
 * before its tests, dropped after.
 */
export function useTestDatabase(
  kind: DatabaseKind,
  fill: (db: DatabaseHandle['db']) => Promise<unknown> = async () => {},
): SuiteDatabase {
  let testDb: TestDatabase | undefined;
  let handle: DatabaseHandle | undefined;
  beforeAll(async () => {
    // The demo data is in a template already; copying it is what seeding a new folder gives.
    testDb = await createTestDatabase(kind, fill === seedDemoData ? 'demo' : 'empty');
    handle = await testDb.open();
    if (!(fill === seedDemoData && testDb.copiedFrom === 'demo')) await fill(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
    await testDb?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the suite database is used before its beforeAll ran');
    return value;
  };
  return {
    get testDb() {
      return ready(testDb);
    },
    get handle() {
      return ready(handle);
    },
  };
}
