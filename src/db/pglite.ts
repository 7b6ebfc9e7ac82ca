/**
 * The embedded database: PGlite in a folder (or in memory for tests), behind the same Drizzle
 * schema and migrations as PostgreSQL. src/db/database.ts imports this module only when no
 * PostgreSQL URL is configured, so a service on PostgreSQL never loads PGlite or its driver.
 * Both load through CommonJS for the reason src/db/drizzle.ts gives.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { PGlite } from '@electric-sql/pglite';
import { backfillDerivedColumns } from './backfills.js';
import { listenToPglite } from './change-feed.js';
import { raiseUnavailable } from './driver-errors.js';
import { type FolderLock, lockFolder } from './folder-lock.js';
import type { DatabaseHandle, DatabaseOptions } from './handle.js';
import { soleLeadership } from './leader-lock.js';
import * as schema from './schema.js';
import { observePgliteStatements } from './statement-observer.js';

const load = createRequire(import.meta.url);
const { PGlite: PGliteClass } = load('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
const { drizzle } = load('drizzle-orm/pglite') as typeof import('drizzle-orm/pglite');
const { migrate } = load('drizzle-orm/pglite/migrator') as typeof import('drizzle-orm/pglite/migrator');

export async function openPglite(options: DatabaseOptions, migrationsFolder: string): Promise<DatabaseHandle> {
  let lock: FolderLock | undefined;
  if (!options.dataDir.startsWith('memory://')) {
    mkdirSync(options.dataDir, { recursive: true });
    lock = lockFolder(options.dataDir);
  }
  let client: PGlite;
  try {
    client = await PGliteClass.create(options.dataDir);
  } catch (error) {
    lock?.release();
    throw error;
  }
  const db = drizzle(client, { schema, logger: options.logger ?? false });
  return {
    db,
    kind: 'pglite',
    async migrate() {
      await migrate(db, { migrationsFolder });
      await backfillDerivedColumns(db);
    },
    // In-process: no network, no connections to lose, nothing to wait for but the work, and no replicas.
    readPrimary: (work) => raiseUnavailable(() => work(db)),
    writePrimary: (work) => raiseUnavailable(() => work(db)),
    readReplica: (work) => raiseUnavailable(() => work(db)),
    async ping() {
      await client.query('select 1');
    },
    leadership: (_key, handlers) => soleLeadership(handlers),
    listenForChanges: (handlers) => raiseUnavailable(() => listenToPglite(client, handlers)),
    observeStatements: (observer) => observePgliteStatements(client, observer),
    async close() {
      try {
        await client.close();
      } finally {
        lock?.release();
      }
    },
  };
}
