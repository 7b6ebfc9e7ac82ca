/**
 * The one database module. With a PostgreSQL URL it connects through postgres.js; without one it
 * opens the embedded PGlite database in a folder (src/db/pglite.ts). Both sit behind the same Drizzle schema and
 * migrations, so the rest of the code only sees `Database`.
 */
import { fileURLToPath } from 'node:url';
import { DATABASE_DEFAULTS } from '../config/config.js';
import { backfillDerivedColumns } from './backfills.js';
import { listenToPostgres } from './change-feed.js';
import { raiseUnavailable } from './driver-errors.js';
import { drizzlePostgres } from './drizzle.js';
import { Freshness } from './freshness.js';
import type { DatabaseHandle, DatabaseOptions } from './handle.js';
import { advisoryLeadership } from './leader-lock.js';
import { migrateWithLock } from './migrations.js';
import { OUTAGE_PROBE_INTERVAL_MS, OutageGate } from './outage-gate.js';
import { APPLICATION_NAME, type ServicePool, servicePool, singleSession } from './postgres-client.js';
import { withDeadline } from './postgres-deadlines.js';
import { containLostTransactions } from './postgres-transactions.js';
import { ReplicaSet } from './replicas.js';
import type { Read } from './schema.js';
import * as schema from './schema.js';
import { observePostgresStatements, statementServer } from './statement-observer.js';

export type { DatabaseHandle, DatabaseOptions, DatabaseStats } from './handle.js';
export type { Database } from './schema.js';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url !== undefined) return openPostgres(options.url, options);
  const { openPglite } = await import('./pglite.js');
  return openPglite(options, MIGRATIONS_FOLDER);
}

async function openPostgres(url: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  const settings = {
    poolSize: options.poolSize ?? DATABASE_DEFAULTS.poolSize,
    connectTimeoutSeconds: options.connectTimeoutSeconds ?? DATABASE_DEFAULTS.connectTimeoutSeconds,
    statementTimeoutMs: options.statementTimeoutMs ?? DATABASE_DEFAULTS.statementTimeoutMs,
    poolMode: options.poolMode ?? DATABASE_DEFAULTS.poolMode,
  };
  // connect_timeout and statement_timeout leave waits unbounded, and a stall shorter than the
  // silence bound would hold every request; see postgres-deadlines.ts.
  const deadlineMs = options.readTimeoutMs ?? DATABASE_DEFAULTS.readTimeoutMs;
  const pool = servicePool(url, settings);
  const client = pool.sql;
  const gate = new OutageGate(OUTAGE_PROBE_INTERVAL_MS);
  containLostTransactions(client);
  const drizzleOptions = { schema, logger: options.logger ?? false };
  const db = drizzlePostgres(client, drizzleOptions);
  const onPrimary = <T>(work: Read<T>) => gate.run(() => withDeadline(() => work(db), deadlineMs));
  const freshness = new Freshness();
  const replicaPools: ReplicaPool[] = [];
  const replicas = await openReplicas(options, settings, { sql: client, read: onPrimary }, freshness, replicaPools);
  const observed = [{ sql: client, url }, ...replicaPools];
  return {
    db,
    kind: 'postgres',
    migrate: () =>
      migrateWithLock(url, {
        migrationsFolder: MIGRATIONS_FOLDER,
        connectTimeoutSeconds: settings.connectTimeoutSeconds,
        poolMode: settings.poolMode,
        log: options.log,
        lockTimeoutMs: options.migrationLockTimeoutMs,
        // Under the same lock: a second process finds the work done.
        afterMigrations: (migrating) => backfillDerivedColumns(drizzlePostgres(migrating, { schema })),
      }),
    readPrimary: (work) => raiseUnavailable(() => onPrimary(work)),
    writePrimary: (work) => raiseUnavailable(() => onPrimary(work)),
    readReplica: (work) => raiseUnavailable(() => (replicas === undefined ? onPrimary(work) : replicas.read(work))),
    async ping() {
      // Not refused by the gate (readiness must ask the server), but a success reopens it.
      await gate.observe(() => withDeadline(() => client`select 1`, deadlineMs));
    },
    leadership: (key, handlers) =>
      advisoryLeadership(
        {
          // Directly on the primary, like the LISTEN: a pooler would keep the lock after the process died.
          connect: () =>
            singleSession(options.listenUrl ?? url, { ...settings, poolMode: 'session' }, `${APPLICATION_NAME} leader`),
          key,
        },
        handlers,
      ),
    listenForChanges: (handlers) =>
      raiseUnavailable(() =>
        listenToPostgres(
          {
            // A session of its own, directly on the primary: a pooler would not pass LISTEN on.
            connectListener: () =>
              singleSession(
                options.listenUrl ?? url,
                { ...settings, poolMode: 'session' },
                `${APPLICATION_NAME} listen`,
              ),
            freshness,
          },
          handlers,
        ),
      ),
    replicas: replicas === undefined ? undefined : () => replicas.status(),
    observeStatements(observer) {
      const detaches = observed.map(({ sql, url: serverUrl }) =>
        observePostgresStatements(sql, observer, statementServer(serverUrl)),
      );
      return () => {
        for (const detach of detaches) detach();
      };
    },
    stats: () => ({
      openConnections: pool.sockets.open,
      maxConnections: settings.poolSize,
      failedQueries: gate.failures,
    }),
    async close() {
      await replicas?.close();
      await pool.end();
    },
  };
}

/** A replica's client and URL, for observing its statements. */
interface ReplicaPool {
  sql: ServicePool['sql'];
  url: string;
}

/**
 * The replicas of DATABASE_REPLICA_URLS, probed once before the first read; undefined without
 * any. Each replica's client is added to `pools`.
 */
async function openReplicas(
  options: DatabaseOptions,
  settings: Parameters<typeof servicePool>[1],
  primary: ConstructorParameters<typeof ReplicaSet>[0]['primary'],
  freshness: Freshness,
  pools: ReplicaPool[],
): Promise<ReplicaSet | undefined> {
  const urls = options.replicaUrls ?? [];
  if (urls.length === 0) return undefined;
  const set = new ReplicaSet({
    primary,
    replicas: urls.map((replicaUrl) => {
      const { sql, end } = servicePool(replicaUrl, settings);
      pools.push({ sql, url: replicaUrl });
      const db = drizzlePostgres(sql, { schema, logger: options.logger ?? false });
      return { label: serverLabel(replicaUrl), sql, db, end };
    }),
    freshness,
    maxLagMs: options.replicaMaxLagMs ?? DATABASE_DEFAULTS.replicaMaxLagMs,
    log: options.log,
  });
  await set.probe();
  return set;
}

/** `host:port/database` of a PostgreSQL URL: no user, no password. */
function serverLabel(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}
