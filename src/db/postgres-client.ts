/**
 * postgres.js clients as the service opens them: the request path's pools (the primary's and
 * each replica's), and single sessions for LISTEN and migrations.
 *
 * Pool mode. Through a transaction-mode pooler (PgBouncer, DATABASE_POOL_MODE=transaction) each
 * transaction may run on another server connection, so a client may keep nothing on one:
 * - no named prepared statements (postgres.js `prepare: false`: every statement is parsed and
 *   planned again, see bench/README.md for what that costs);
 * - no start-up parameters: PgBouncer refuses a connection that sends `statement_timeout` or
 *   `jit` (08P01 "unsupported startup parameter"). Those two are then the operator's to set for
 *   the service's role (`ALTER ROLE … SET statement_timeout = '5s'`, `… SET jit = off`) or in
 *   PgBouncer's `connect_query`; the service's own deadline bounds every read either way
 *   (./postgres-deadlines.ts);
 * - no session state: LISTEN needs a direct session (DATABASE_LISTEN_URL) and the migration lock
 *   is held by a transaction (./migrations.ts).
 */

import postgres from 'postgres';
import type { DatabasePoolMode } from '../config/config.js';
import {
  parseTextArray,
  reconnectDelaySeconds,
  silenceTimeoutMs,
  TEXT_ARRAY_OID,
  textArrayLiteral,
} from './postgres-deadlines.js';
import { type PostgresSockets, postgresSockets } from './postgres-sockets.js';

export const APPLICATION_NAME = 'name-profile-service';

export interface PoolSettings {
  poolSize: number;
  connectTimeoutSeconds: number;
  statementTimeoutMs: number;
  poolMode: DatabasePoolMode;
}

export interface ServicePool {
  sql: postgres.Sql;
  sockets: PostgresSockets;
  end(): Promise<void>;
}

/**
 * Start-up parameters of a session-mode connection. Every statement here is an index lookup or a
 * batch of them. PostgreSQL compiles a plan whose estimated cost passes jit_above_cost, and a
 * misestimate (tables not analyzed yet) made a lookup of 100 names take several times as long,
 * compiling on every execution (docs/decisions.md, "ANALYZE after imports, and no JIT for the
 * service's sessions").
 */
function sessionParameters(settings: PoolSettings, role: string): Record<string, string | number> {
  if (settings.poolMode === 'transaction') return {};
  return { statement_timeout: settings.statementTimeoutMs, application_name: role, jit: 'off' };
}

/** A pool of the request path: deadlines on every socket, text[] without a type fetch. */
export function servicePool(url: string, settings: PoolSettings, role = APPLICATION_NAME): ServicePool {
  let closing = false;
  const sockets = postgresSockets({
    silenceMs: silenceTimeoutMs(settings.connectTimeoutSeconds, settings.statementTimeoutMs),
    youngMs: settings.connectTimeoutSeconds * 1000,
    maxStarts: settings.poolSize,
    closing: () => closing,
  });
  const sql = postgres(url, {
    max: settings.poolSize,
    connect_timeout: settings.connectTimeoutSeconds,
    idle_timeout: 60,
    backoff: reconnectDelaySeconds,
    prepare: settings.poolMode === 'session',
    // The array types would be fetched with one more round trip on every new connection: on a
    // slow link that alone pushed a new connection's first read past the deadline. Our only
    // array parameter is text[], serialised below; array results would come back as text.
    fetch_types: false,
    types: {
      textArray: { to: TEXT_ARRAY_OID, from: [TEXT_ARRAY_OID], serialize: textArrayLiteral, parse: parseTextArray },
    },
    onnotice: () => {},
    connection: sessionParameters(settings, role),
    // A documented postgres.js option that its type declarations lack.
    ...({ socket: sockets.socket } as object),
  });
  return {
    sql,
    sockets,
    async end() {
      closing = true;
      await sql.end({ timeout: 5 });
    },
  };
}

/**
 * One session of its own (LISTEN, the migration lock). `statementTimeout: '0'` for work that may
 * run long: a string, as postgres.js leaves out parameters whose value is falsy (the number 0).
 */
export function singleSession(
  url: string,
  settings: Pick<PoolSettings, 'connectTimeoutSeconds' | 'poolMode'>,
  role: string,
  statementTimeout?: string,
): postgres.Sql {
  const parameters =
    settings.poolMode === 'transaction'
      ? {}
      : { application_name: role, ...(statementTimeout === undefined ? {} : { statement_timeout: statementTimeout }) };
  return postgres(url, {
    max: 1,
    connect_timeout: settings.connectTimeoutSeconds,
    prepare: settings.poolMode === 'session',
    // These sessions send and read no arrays. And postgres.js runs the query that fetches array
    // types as a promise nobody awaits: a close while it ran (a shutdown during a reconnect of the
    // LISTEN) was an unhandled rejection, which ends a Node process.
    fetch_types: false,
    onnotice: () => {},
    connection: parameters,
  });
}
