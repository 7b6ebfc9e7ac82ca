/**
 * Telling "the database cannot answer now" (503, retry later) apart from every other failure
 * (500). Drivers and Drizzle wrap errors, so the whole `cause` chain is inspected.
 */

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

function stringField(error: unknown, field: 'code' | 'severity'): string | undefined {
  if (typeof error !== 'object' || error === null || !(field in error)) return undefined;
  const value = (error as Record<typeof field, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth += 1) {
    const code = stringField(current, 'code');
    // `severity` is PostgreSQL's untranslated severity (field V); postgres.js names it so.
    if (
      code !== undefined &&
      (CONNECTION_CODES.has(code) || isUnavailableSqlState(code, stringField(current, 'severity')))
    )
      return true;
    current = current instanceof Error ? current.cause : undefined;
  }
  return false;
}

/**
 * A short description of a database error for logs: the driver's code and message only. The
 * Drizzle wrapper's own message holds the SQL and its parameters, which may carry private
 * e-mails, so it is never logged.
 */
export function describeDatabaseError(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  const code = stringField(current, 'code');
  const message = current instanceof Error ? current.message : String(current);
  return code === undefined ? message : `${code}: ${message}`;
}
