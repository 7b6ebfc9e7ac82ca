/**
 * Migrations on PostgreSQL, serialised across processes by an advisory lock that a pooler cannot
 * keep.
 *
 * A session-level lock (`pg_advisory_lock`) is released when the session ends, but through a
 * transaction-mode pooler the session is the pooler's server connection, which outlives the
 * process: the lock stayed granted after the service stopped, and every later start waited on it
 * forever. So the lock is transaction-level (`pg_advisory_xact_lock`), taken in a transaction that
 * one session holds open while another runs the migrations, and released when that transaction
 * ends — committed, or rolled back when the process dies and the pooler drops the connection.
 *
 * Waiting is visible and bounded: after LOCK_WAIT_NOTICE_MS of waiting, a warn line says which
 * session holds the lock; after MIGRATION_LOCK_TIMEOUT_MS start-up gives up with one line that
 * names it.
 */

import type { Logger } from 'pino';
import type postgres from 'postgres';
import type { DatabasePoolMode } from '../config/config.js';
import { drizzlePostgres as drizzle, migratePostgres as migrate } from './drizzle.js';
import { APPLICATION_NAME, singleSession } from './postgres-client.js';

/** Arbitrary constant: the advisory lock that serialises migrations across processes. */
export const MIGRATION_LOCK_ID = 7_240_431;
/** Waiting longer than this is logged at warn, with the session that holds the lock. */
const LOCK_WAIT_NOTICE_MS = 5000;
/** Start-up gives up after waiting this long for the lock. */
const MIGRATION_LOCK_TIMEOUT_MS = 60_000;
const RETRY_MS = 250;

export interface MigrationSettings {
  migrationsFolder: string;
  connectTimeoutSeconds: number;
  poolMode: DatabasePoolMode;
  log: Logger | undefined;
  lockTimeoutMs?: number;
  /** Work that must follow the migrations under the same lock (filling a column they added). */
  afterMigrations?: (migrator: postgres.Sql) => Promise<void>;
}

/** The migration lock is held by another session for longer than start-up waits. */
export class MigrationLockTimeoutError extends Error {
  constructor(waitedMs: number, holder: string) {
    super(
      `waited ${Math.round(waitedMs / 1000)} s for the migration lock (advisory lock ${MIGRATION_LOCK_ID}), ` +
        `held by ${holder}. If that process is not migrating, end its session with pg_terminate_backend(pid) and start again.`,
    );
    this.name = 'MigrationLockTimeoutError';
  }
}

export async function migrateWithLock(url: string, settings: MigrationSettings): Promise<void> {
  const role = `${APPLICATION_NAME} migrate`;
  // statement_timeout 0: a migration, and the wait for another's, may take long.
  const holder = singleSession(url, settings, role, '0');
  const migrator = singleSession(url, settings, role, '0');
  try {
    await holder.begin(async (transaction) => {
      await waitForLock(transaction, settings);
      await migrate(drizzle(migrator), { migrationsFolder: settings.migrationsFolder });
      await settings.afterMigrations?.(migrator);
    });
  } finally {
    await Promise.all([migrator.end({ timeout: 5 }), holder.end({ timeout: 5 })]);
  }
}

async function waitForLock(transaction: postgres.TransactionSql, settings: MigrationSettings): Promise<void> {
  const bound = settings.lockTimeoutMs ?? MIGRATION_LOCK_TIMEOUT_MS;
  const started = Date.now();
  let noticed = false;
  for (;;) {
    const [row] = await transaction<
      { locked: boolean }[]
    >`select pg_try_advisory_xact_lock(${MIGRATION_LOCK_ID}) as locked`;
    if (row?.locked === true) return;
    const waited = Date.now() - started;
    if (waited >= bound) throw new MigrationLockTimeoutError(waited, await lockHolder(transaction));
    if (!noticed && waited >= Math.min(LOCK_WAIT_NOTICE_MS, bound / 2)) {
      noticed = true;
      settings.log?.warn(
        { lock: MIGRATION_LOCK_ID, holder: await lockHolder(transaction), waitedMs: waited, giveUpAfterMs: bound },
        'waiting for the migration lock held by another session',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

/** The session holding the lock, in words: pid, application, client address, since when. */
async function lockHolder(sql: postgres.TransactionSql): Promise<string> {
  const [row] = await sql<{ pid: number; application: string; client: string | null; since: Date | null }[]>`
    select a.pid, a.application_name as application, a.client_addr::text as client, a.xact_start as since
    from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.objid = ${MIGRATION_LOCK_ID} and l.granted
    limit 1`;
  if (row === undefined) return 'a session this user cannot see';
  const client = row.client === null ? 'a local socket' : row.client;
  return `pid ${row.pid} ("${row.application}" from ${client}${row.since === null ? '' : `, since ${row.since.toISOString()}`})`;
}
