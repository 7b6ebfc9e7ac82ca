/**
 * The one database module. With a PostgreSQL URL it connects through postgres.js; without one it
 * opens the embedded PGlite database in a folder. Both sit behind the same Drizzle schema and
 * migrations, so the rest of the code only sees `Database`.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type { Logger as DrizzleLogger } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { type ChangeFeed, type ChangeFeedHandlers, listenToPglite, listenToPostgres } from './change-feed.js';
import { type FolderLock, lockFolder } from './folder-lock.js';
import { OutageGate, type QueryFailureKind } from './outage-gate.js';
import {
  boundUnsafeQueries,
  MAX_RECONNECT_DELAY_SECONDS,
  queryDeadlineMs,
  reconnectDelaySeconds,
  watchdogSockets,
  withDeadline,
} from './postgres-deadlines.js';
import * as schema from './schema.js';

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseOptions {
  /** PostgreSQL URL; undefined opens PGlite in `dataDir`. */
  url: string | undefined;
  /** Folder of the embedded database; `memory://` keeps it in memory (tests). */
  dataDir: string;
  poolSize?: number;
  connectTimeoutSeconds?: number;
  statementTimeoutMs?: number;
  /** Sees every SQL statement; tests use it to count round trips. */
  logger?: DrizzleLogger;
}

export interface DatabaseHandle {
  db: Database;
  kind: 'postgres' | 'pglite';
  /** Applies the committed migrations under drizzle/ (idempotent, safe from several processes). */
  migrate(): Promise<void>;
  /** Cheap reachability probe for readiness checks. */
  ping(): Promise<void>;
  /**
   * Runs one read of the request path within the database's bounds; rejects with an error that
   * `isDatabaseUnavailable` recognises when the database cannot answer in time.
   */
  guard<T>(work: () => Promise<T>): Promise<T>;
  /** Starts hearing which profiles change (see change-feed.ts). */
  listenForChanges(handlers: ChangeFeedHandlers): Promise<ChangeFeed>;
  /** Figures for metrics: connections, and failed queries by kind (PostgreSQL only). */
  stats?(): DatabaseStats;
  close(): Promise<void>;
}

export interface DatabaseStats {
  openConnections: number;
  maxConnections: number;
  failedQueries: Readonly<Record<QueryFailureKind, number>>;
}

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Arbitrary constant: the advisory lock that serialises migrations across processes. */
const MIGRATION_LOCK_ID = 7_240_431;

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  return options.url === undefined ? openPglite(options) : openPostgres(options.url, options);
}

function openPostgres(url: string, options: DatabaseOptions): DatabaseHandle {
  const statementTimeout = options.statementTimeoutMs ?? 5000;
  const connectTimeout = options.connectTimeoutSeconds ?? 5;
  // connect_timeout and statement_timeout leave waits unbounded; see postgres-deadlines.ts.
  const deadlineMs = queryDeadlineMs(connectTimeout, statementTimeout);
  const sockets = watchdogSockets(statementTimeout + 1000);
  const poolSize = options.poolSize ?? 10;
  const client = postgres(url, {
    max: poolSize,
    connect_timeout: connectTimeout,
    idle_timeout: 60,
    backoff: reconnectDelaySeconds,
    onnotice: () => {},
    connection: {
      statement_timeout: statementTimeout,
      application_name: 'name-profile-service',
    },
    // A documented postgres.js option that its type declarations lack.
    ...({ socket: sockets.socket } as object),
  });
  const gate = new OutageGate(MAX_RECONNECT_DELAY_SECONDS * 1000);
  boundUnsafeQueries(client, deadlineMs, gate);
  const db = drizzlePostgres(client, { schema, logger: options.logger ?? false });
  return {
    db,
    kind: 'postgres',
    async migrate() {
      // A connection of its own without the API's statement timeout: a migration may run long,
      // and so may the wait for another process's migration lock. Ending the session releases
      // the lock.
      const migrator = postgres(url, {
        max: 1,
        connect_timeout: connectTimeout,
        onnotice: () => {},
        connection: { statement_timeout: 0, application_name: 'name-profile-service migrate' },
      });
      try {
        await migrator`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
        await migratePostgres(drizzlePostgres(migrator), { migrationsFolder: MIGRATIONS_FOLDER });
      } finally {
        await migrator.end({ timeout: 5 });
      }
    },
    async ping() {
      // Not refused by the gate (readiness must ask the server), but a success reopens it.
      await gate.observe(() => withDeadline(client`select 1`, deadlineMs));
    },
    // Every query Drizzle sends is bounded already (boundUnsafeQueries).
    guard: (work) => work(),
    listenForChanges: (handlers) =>
      listenToPostgres(
        {
          pool: client,
          connectListener: () =>
            postgres(url, {
              max: 1,
              connect_timeout: connectTimeout,
              onnotice: () => {},
              connection: { application_name: 'name-profile-service listen' },
            }),
        },
        handlers,
      ),
    stats: () => ({ openConnections: sockets.open, maxConnections: poolSize, failedQueries: gate.failures }),
    async close() {
      await client.end({ timeout: 5 });
    },
  };
}

async function openPglite(options: DatabaseOptions): Promise<DatabaseHandle> {
  let lock: FolderLock | undefined;
  if (!options.dataDir.startsWith('memory://')) {
    mkdirSync(options.dataDir, { recursive: true });
    lock = lockFolder(options.dataDir);
  }
  let client: PGlite;
  try {
    client = await PGlite.create(options.dataDir);
  } catch (error) {
    lock?.release();
    throw error;
  }
  const db = drizzlePglite(client, { schema, logger: options.logger ?? false });
  return {
    db,
    kind: 'pglite',
    async migrate() {
      await migratePglite(db, { migrationsFolder: MIGRATIONS_FOLDER });
    },
    async ping() {
      await client.query('select 1');
    },
    guard: (work) => work(),
    listenForChanges: (handlers) => listenToPglite(client, handlers),
    async close() {
      try {
        await client.close();
      } finally {
        lock?.release();
      }
    },
  };
}
