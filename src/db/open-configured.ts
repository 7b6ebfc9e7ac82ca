/**
 * Opening the database the configuration names, and explaining why that failed in terms of the
 * setting the operator has to fix (DATABASE_URL or DATA_DIR) rather than a raw ECONNREFUSED or
 * EROFS. The data commands use it; the server's start-up can use the same explanation.
 */

import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { innermostCause, stringField } from '../errors/cause-chain.js';
import { type DatabaseHandle, openDatabase } from './database.js';
import { sql } from './drizzle.js';
import { FolderInUseError } from './folder-lock.js';

/** The setting that decides which database is opened. */
export type DatabaseSetting = 'DATABASE_URL' | 'DATA_DIR';

/** The configured database could not be opened for a reason the operator fixes in `setting`. */
export class DatabaseOpenError extends Error {
  constructor(
    readonly setting: DatabaseSetting,
    /** Which database, for people: the URL without its password, or the folder. */
    readonly target: string,
    /** Why, in a sentence that ends by naming the setting. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${target} could not be opened: ${reason}`, options);
    this.name = 'DatabaseOpenError';
  }
}

export interface OpenConfiguredOptions {
  /** Where the database layer reports to operators (a lock waited for, a replica out of use). */
  log?: Logger;
  /** Open DATABASE_REPLICA_URLS for reads (the server); the data commands write, and need none. */
  replicas?: boolean;
}

/** The database the configuration names, opened and migrated: what the server and the CLIs use. */
export async function openConfiguredDatabase(
  config: Config,
  options: OpenConfiguredOptions = {},
): Promise<DatabaseHandle> {
  let database: DatabaseHandle | undefined;
  try {
    database = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.dbPoolSize,
      connectTimeoutSeconds: config.dbConnectTimeoutSeconds,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      readTimeoutMs: config.dbReadTimeoutMs,
      replicaUrls: options.replicas === true ? config.databaseReplicaUrls : [],
      listenUrl: config.databaseListenUrl,
      poolMode: config.databasePoolMode,
      replicaMaxLagMs: config.replicaMaxLagMs,
      log: options.log,
    });
    // The first statement: for PostgreSQL, where a wrong URL shows.
    await database.migrate();
    if (config.databasePoolMode === 'transaction' && options.log !== undefined) {
      await warnOfServerDefaults(database, options.log, config.dbStatementTimeoutMs);
    }
    return database;
  } catch (error) {
    await database?.close().catch(() => {});
    throw explainOpenFailure(config, error) ?? error;
  }
}

/**
 * Through a transaction-mode pooler the service sends no start-up parameters, so the server's
 * own settings apply: say so when they are not what the service would have set.
 */
async function warnOfServerDefaults(database: DatabaseHandle, log: Logger, statementTimeoutMs: number): Promise<void> {
  const [row] = (await database.db.execute(
    sql`select current_setting('statement_timeout') as timeout, current_setting('jit') as jit`,
  )) as unknown as Array<{ timeout: string; jit: string }>;
  if (row === undefined) return;
  const advice: string[] = [];
  if (row.timeout === '0') advice.push(`ALTER ROLE … SET statement_timeout = '${statementTimeoutMs}ms'`);
  if (row.jit === 'on') advice.push('ALTER ROLE … SET jit = off');
  if (advice.length === 0) return;
  log.warn(
    { statementTimeout: row.timeout, jit: row.jit, advice },
    'DATABASE_POOL_MODE=transaction: the server runs with its own statement_timeout and jit settings; set them for the service role (or in the pooler connect_query)',
  );
}

/** Where the data lives, for messages: the URL without its password, or the folder. */
export function databaseLabel(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (config.databaseUrl === undefined) return `The embedded database in ${config.dataDir}`;
  const url = new URL(config.databaseUrl);
  if (url.password !== '') url.password = '***';
  return `The PostgreSQL database ${url.toString()}`;
}

/**
 * The failure to open the configured database as a DatabaseOpenError naming the setting to fix,
 * or undefined when the cause is not one a setting fixes (a failed migration, say).
 */
export function explainOpenFailure(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbConnectTimeoutSeconds'>,
  error: unknown,
): DatabaseOpenError | undefined {
  const target = databaseLabel(config);
  if (config.databaseUrl === undefined) {
    const reason = dataDirProblem(config.dataDir, error);
    return reason === undefined ? undefined : new DatabaseOpenError('DATA_DIR', target, reason, { cause: error });
  }
  const reason = databaseUrlProblem(new URL(config.databaseUrl), config.dbConnectTimeoutSeconds, error);
  return reason === undefined ? undefined : new DatabaseOpenError('DATABASE_URL', target, reason, { cause: error });
}

function databaseUrlProblem(url: URL, connectTimeoutSeconds: number, error: unknown): string | undefined {
  const cause = innermostCause(error);
  const code = stringField(cause, 'code');
  const host = url.hostname || 'localhost';
  const where = `${host}:${url.port || '5432'}`;
  const user = decodeURIComponent(url.username) || 'the default user';
  const database = decodeURIComponent(url.pathname.slice(1)) || 'the default database';
  switch (code) {
    case 'ECONNREFUSED':
      return `nothing accepts connections at ${where} (connection refused). Is PostgreSQL running there? Check DATABASE_URL.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host "${host}" is unknown. Check the host name in DATABASE_URL.`;
    case 'CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no answer from ${where} within ${connectTimeoutSeconds} s. Check the host and port in DATABASE_URL, and the network.`;
    case '28P01':
      return `password authentication failed for user "${user}". Check the user and password in DATABASE_URL.`;
    case '28000':
      return `PostgreSQL refused user "${user}" (${messageOf(cause)}). Check the user in DATABASE_URL.`;
    case '3D000':
      return `the database "${database}" does not exist on ${where}. Create it (createdb) or fix the database name in DATABASE_URL.`;
    default:
      return undefined;
  }
}

function dataDirProblem(dataDir: string, error: unknown): string | undefined {
  if (error instanceof FolderInUseError) {
    const who = error.holder === undefined ? 'another process' : `another process (${error.holder})`;
    return `it is in use by ${who}; stop that process first, or point DATA_DIR at another folder.`;
  }
  // Drivers and Drizzle wrap errors: the innermost one says what happened.
  switch (stringField(innermostCause(error), 'code')) {
    case 'EROFS':
      return `${dataDir} is on a read-only file system. Point DATA_DIR at a writable folder.`;
    case 'EACCES':
    case 'EPERM':
      return `no permission to write in ${dataDir}. Point DATA_DIR at a folder this user may write, or fix its permissions.`;
    case 'ENOTDIR':
    case 'EEXIST':
      return `${dataDir} is not a directory. Point DATA_DIR at a folder (it is created when missing).`;
    case 'ENOSPC':
      return `the disk of ${dataDir} is full. Free space, or point DATA_DIR elsewhere.`;
    default:
      return undefined;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
