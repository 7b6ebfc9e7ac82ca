/**
 * Telling "the database cannot answer now" (503, retry later) apart from every other failure
 * (500). Drivers and Drizzle wrap errors, so the whole `cause` chain is inspected.
 */
import { causeChain, stringField } from '../errors/cause-chain.js';
import { UnavailableError } from '../errors/service-error.js';

/** Node and postgres.js codes for a connection that could not be made or was lost, and ours. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  // The OutageGate refused the query without asking the database (src/db/outage-gate.ts).
  'DATABASE_UNAVAILABLE',
]);

/** SQLSTATE classes and codes meaning the server is unavailable, shutting down or too slow. */
function isUnavailableSqlState(code: string, severity: string | undefined): boolean {
  return (
    code.startsWith('08') || // connection exception
    code.startsWith('53') || // insufficient resources (too many connections, ...)
    code === '57014' || // query_canceled: statement timeout
    code === '57P01' || // admin_shutdown (pg_terminate_backend, a fast shutdown)
    code === '57P02' || // crash_shutdown
    code === '57P03' || // cannot_connect_now (starting up, shutting down, in recovery)
    // object_not_in_prerequisite_state is both "database is not currently accepting connections"
    // (ALTER DATABASE ... ALLOW_CONNECTIONS false) and a query's own mistake such as currval()
    // before nextval(). The first ends the session, so it is FATAL; the second is an ERROR.
    (code === '55000' && severity === 'FATAL')
  );
}

export function isDatabaseUnavailable(error: unknown): boolean {
  for (const link of causeChain(error)) {
    const code = stringField(link, 'code');
    // `severity` is PostgreSQL's untranslated severity (field V); postgres.js names it so.
    if (
      code !== undefined &&
      (CONNECTION_CODES.has(code) || isUnavailableSqlState(code, stringField(link, 'severity')))
    )
      return true;
  }
  return false;
}

/**
 * Runs one read of the request path and raises a failure of the database's availability as the
 * UnavailableError the service answers with (503, SERVICE_UNAVAILABLE): the one place such an
 * error is made from a failure. Any other failure is the query's own and passes unchanged.
 */
export async function raiseUnavailable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw isDatabaseUnavailable(error) ? new UnavailableError(error) : error;
  }
}
