/**
 * Bounds on every wait for PostgreSQL, built only from supported mechanisms: postgres.js's
 * documented options, Node's documented socket API, and deadlines in our own code around the work.
 * Nothing here replaces a method of a driver object, so a driver upgrade cannot silently undo it.
 *
 * `connect_timeout` bounds the start of a connection and `statement_timeout` the work on the
 * server, but neither helps when the server (or the network in between) stops answering on a
 * connection that is already open (a "black hole"): postgres.js then waits as long as TCP keeps
 * the connection. Reads queued behind connections that are still connecting wait too, and the
 * reconnect backoff grows to 20 s during a long outage. So:
 *
 * - every read of the request path runs under a deadline (`withDeadline`, DB_READ_TIMEOUT_MS) and
 *   the OutageGate (see `DatabaseHandle.readPrimary`). The deadline is short and of its own, not the
 *   sum of the other bounds: a database that stalls (connections open, nothing answered) for
 *   less than the silence bound below would otherwise hold every request until it answers again;
 *   a client is better served by a 503 with Retry-After (or an answer from the profile cache)
 *   within a couple of seconds;
 * - every connection is a socket of ours (the documented `socket` option) that destroys itself
 *   when PostgreSQL stays silent after a request for longer than a statement may run plus a
 *   connection start, so the pool heals by itself (postgres-sockets.ts);
 * - reconnect attempts back off quickly but never wait longer than MAX_RECONNECT_DELAY_SECONDS.
 */
const MAX_RECONNECT_DELAY_SECONDS = 1;

/** Our own deadline passed: PostgreSQL may be slow rather than gone. */
export class DatabaseTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';

  constructor(readonly waitedMs: number) {
    super(`PostgreSQL did not answer within ${waitedMs} ms`);
    this.name = 'DatabaseTimeoutError';
  }
}

/** postgres.js `backoff`: seconds before reconnect attempt `retries`, with jitter, capped. */
export function reconnectDelaySeconds(retries: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, MAX_RECONNECT_DELAY_SECONDS);
}

/**
 * How long PostgreSQL may stay silent after a request before the connection is given up: the
 * longest a statement may run, plus the connect timeout as the allowance for the round trip (a
 * link slower than that could not even start a connection).
 */
export function silenceTimeoutMs(connectTimeoutSeconds: number, statementTimeoutMs: number): number {
  return statementTimeoutMs + connectTimeoutSeconds * 1000;
}

/**
 * Runs `work` and rejects with a DatabaseTimeoutError when it has not settled `deadlineMs` later.
 * The work itself is not cancelled (postgres.js offers that only on its own query objects, which
 * Drizzle does not hand out); statement_timeout ends the server's part, the silence watchdog a
 * dead connection's. Its late outcome is dropped, a late failure included.
 */
export function withDeadline<T>(work: () => PromiseLike<T>, deadlineMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new DatabaseTimeoutError(deadlineMs)), deadlineMs);
    const settle =
      <A>(how: (argument: A) => void) =>
      (argument: A) => {
        clearTimeout(timer);
        how(argument);
      };
    Promise.resolve().then(work).then(settle(resolve), settle(reject));
  });
}

/**
 * The one array type our queries use (`= any($1::text[])`), as PostgreSQL's array literal. With
 * `fetch_types: false` postgres.js knows no array types, and asking for them costs a round trip
 * on every new connection, which a slow link cannot spare. Elements are always quoted, so commas,
 * braces, blanks and the word NULL stay text. A string is taken as a literal already.
 */
export function textArrayLiteral(values: readonly (string | null)[] | string): string {
  if (typeof values === 'string') return values;
  const element = (value: string | null) => (value === null ? 'NULL' : `"${value.replace(/[\\"]/g, '\\$&')}"`);
  return `{${values.map(element).join(',')}}`;
}

/** A one-dimensional `text[]` result, from PostgreSQL's array literal (quoted or bare elements, NULL). */
export function parseTextArray(literal: string): Array<string | null> {
  const values: Array<string | null> = [];
  let i = 1; // after "{"
  while (i < literal.length - 1) {
    let value = '';
    if (literal[i] === '"') {
      for (i += 1; literal[i] !== '"'; i += 1) {
        if (literal[i] === '\\') i += 1;
        value += literal[i];
      }
      values.push(value);
      i += 1; // the closing quote
    } else {
      const end = literal.indexOf(',', i);
      const bare = literal.slice(i, end < 0 ? literal.length - 1 : end);
      values.push(bare === 'NULL' ? null : bare);
      i += bare.length;
    }
    i += 1; // the comma, or the closing brace
  }
  return values;
}

/** OID of `text[]` in pg_catalog.pg_type (fixed since PostgreSQL 7). */
export const TEXT_ARRAY_OID = 1009;
