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
  MAX_RECONNECT_DELAY_SECONDS,
  parseTextArray,
  queryDeadlineMs,
  reconnectDelaySeconds,
  silenceTimeoutMs,
  TEXT_ARRAY_OID,
  textArrayLiteral,
  withDeadline,
} from './postgres-deadlines.js';
import { postgresSockets } from './postgres-sockets.js';
import { containLostTransactions } from './postgres-transactions.js';
import * as schema from './schema.js';
import { backfillSkeletons } from './skeleton-backfill.js';

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

/** The shape of `DatabaseHandle.guard`. */
export type DatabaseGuard = <T>(work: () => Promise<T>) => Promise<T>;

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
  /**
   * Applies the committed migrations under drizzle/, then computes what they cannot (the name
   * skeletons, see skeleton-backfill.ts). Idempotent, safe from several processes.
   */
  migrate(): Promise<void>;
  /**
   * Runs one read of the request path. On PostgreSQL it is refused at once while the database is
   * known to be down (the OutageGate) and rejects when it has not finished within the deadline
   * (reconnect delay + connect timeout + statement timeout); every such failure is one that
   * `isDatabaseUnavailable()` recognises. On PGlite it just runs the work.
   */
  guard<T>(work: () => Promise<T>): Promise<T>;
  /** Cheap reachability probe for readiness checks; bounded by the same deadline, never refused. */
  ping(): Promise<void>;
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
  const poolSize = options.poolSize ?? 10;
  let closing = false;
  const sockets = postgresSockets({
    silenceMs: silenceTimeoutMs(connectTimeout, statementTimeout),
    youngMs: connectTimeout * 1000,
    maxStarts: poolSize,
    closing: () => closing,
  });
  const client = postgres(url, {
    max: poolSize,
    connect_timeout: connectTimeout,
    idle_timeout: 60,
    backoff: reconnectDelaySeconds,
    // The array types would be fetched with one more round trip on every new connection: on a
    // slow link that alone pushed a new connection's first read past the deadline. Our only
    // array parameter is text[], serialised below; array results would come back as text.
    fetch_types: false,
    types: {
      textArray: { to: TEXT_ARRAY_OID, from: [TEXT_ARRAY_OID], serialize: textArrayLiteral, parse: parseTextArray },
    },
    onnotice: () => {},
    connection: {
      statement_timeout: statementTimeout,
      application_name: 'name-profile-service',
      // Every statement here is an index lookup or a batch of them. PostgreSQL compiles a plan
      // whose estimated cost passes jit_above_cost, and a misestimate (tables not analyzed yet)
      // made a lookup of 100 names take 35 ms instead of 4 ms, compiling on every execution.
      jit: 'off',
    },
    // A documented postgres.js option that its type declarations lack.
    ...({ socket: sockets.socket } as object),
  });
  const gate = new OutageGate(MAX_RECONNECT_DELAY_SECONDS * 1000);
  containLostTransactions(client);
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
        const migrating = drizzlePostgres(migrator, { schema });
        await migratePostgres(migrating, { migrationsFolder: MIGRATIONS_FOLDER });
        // Under the same lock: a second process finds the work done.
        await backfillSkeletons(migrating);
      } finally {
        await migrator.end({ timeout: 5 });
      }
    },
    guard(work) {
      return gate.run(() => withDeadline(work, deadlineMs));
    },
    async ping() {
      // Not refused by the gate (readiness must ask the server), but a success reopens it.
      await gate.observe(() => withDeadline(() => client`select 1`, deadlineMs));
    },
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
      closing = true;
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
      await backfillSkeletons(db);
    },
    guard(work) {
      // In-process: no network, no connections to lose, nothing to wait for but the work.
      return work();
    },
    async ping() {
      await client.query('select 1');
    },
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
