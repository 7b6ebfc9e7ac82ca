/**
 * Transactions whose connection dies must fail, not crash the process.
 *
 * postgres.js 3.4.9 (the latest release) has a known defect, porsager/postgres#1208 (also #1066
 * and #1154; the proposed fixes #1168 and #1176 are not released): a query written to a
 * connection after the connection's `closed()` handler has run is buffered for a setImmediate,
 * and that callback writes to the socket `closed()` set to null. It throws `TypeError: Cannot
 * read properties of null (reading 'write')` outside any promise: an uncaught exception that
 * ends the process with a stack trace, which no caller can catch. A connection that is merely
 * closed (backend terminated with pg_terminate_backend, server restart, reset) is not marked
 * terminated, so postgres.js still accepts queries for it. Pooled queries never meet it (a
 * closed connection leaves the pool), but a transaction's connection is reserved, and two
 * writes reach it after the close:
 *
 * - postgres.js's own ROLLBACK, sent by `begin()` when the transaction's body fails;
 * - the body's next statement, when the connection closed between two statements (the importer
 *   parses the next batch while the connection sits idle in its transaction).
 *
 * The containment sits where the driver is wrapped, so every transaction of the service gets it:
 *
 * - once the transaction's connection is known to be gone (a statement failed with a
 *   lost-connection error, or `begin()` itself failed, which postgres.js does as soon as the
 *   connection closes), statements of that transaction are refused before they reach the driver
 *   (a socket error of the body's own work, such as EPIPE from a closed output pipe, says nothing
 *   about the connection);
 * - when the body fails once the connection is gone (because of that, or because its caller
 *   gave up when `begin()` failed and closed what the body reads), it does not hand that
 *   failure back to postgres.js (which would send the ROLLBACK) but waits for `begin()` to fail
 *   by itself, and
 *   the caller gets the original error (such as 57P01 "terminating connection due to
 *   administrator command"). The server rolls back a transaction whose session ends, so no
 *   ROLLBACK is needed. Should the close not come within `closeWaitMs`, the failure is handed
 *   back after all: the socket is then still there to write to.
 *
 * Statements go through `tx.unsafe`, which is what Drizzle uses; nested transactions
 * (savepoints) are not covered. Remove this once a postgres.js release guards nextWrite against
 * a closed socket.
 */
import type postgres from 'postgres';

/** How long a failed transaction waits for its lost connection to close. */
const CLOSE_WAIT_MS = 10_000;

/** Error codes only postgres.js gives, for a connection that is gone or going. */
const DRIVER_LOST_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED']);

/**
 * Node's codes for a socket that failed. They mean the transaction's connection is lost only
 * when one of its statements failed with them: a body's own work fails with the same codes (an
 * export whose reader closed the pipe gets EPIPE), and taking that for a lost connection would
 * hold the failure for `closeWaitMs` on a connection that is fine.
 */
const SOCKET_LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/**
 * Whether `error` means the connection it came from is closed or about to close; `fromStatement`:
 * it is the failure of one of the transaction's statements. Drizzle wraps driver errors, so the
 * whole cause chain counts.
 */
function isLostConnection(error: unknown, fromStatement: boolean): boolean {
  let current = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth += 1) {
    const { code, severity, cause } = current as { code?: unknown; severity?: unknown; cause?: unknown };
    if (typeof code === 'string' && DRIVER_LOST_CODES.has(code)) return true;
    if (fromStatement && typeof code === 'string' && SOCKET_LOST_CODES.has(code)) return true;
    // PostgreSQL ends the session after any FATAL or PANIC error (57P01 admin_shutdown, ...).
    if (severity === 'FATAL' || severity === 'PANIC') return true;
    current = cause;
  }
  return false;
}

type TransactionBody = (tx: postgres.TransactionSql) => unknown;

/** What one transaction knows about its connection. */
interface TransactionState {
  /** The first sign that the connection is gone. */
  lost: unknown;
  /** begin() has settled: nothing may be sent any more. */
  settled: boolean;
}

/** Wraps `client.begin` as described above; queries outside transactions are not affected. */
export function containLostTransactions(client: postgres.Sql, closeWaitMs = CLOSE_WAIT_MS): void {
  const begin = client.begin.bind(client) as (options: string, body: TransactionBody) => Promise<unknown>;
  const guarded = (first: string | TransactionBody, second?: TransactionBody): Promise<unknown> => {
    const options = typeof first === 'string' ? first : '';
    const body = typeof first === 'function' ? first : second;
    if (body === undefined) return begin(options, second as TransactionBody);
    const state: TransactionState = { lost: undefined, settled: false };
    let giveUp: NodeJS.Timeout | undefined;
    const run = async (tx: postgres.TransactionSql): Promise<unknown> => {
      refuseStatementsOnceLost(tx, state);
      try {
        const result = body(tx);
        // As postgres.js itself does: an array of queries runs as a pipeline.
        return await (Array.isArray(result) ? Promise.all(result) : result);
      } catch (error) {
        if (isLostConnection(error, false)) state.lost ??= error;
        // Any failure once the connection is gone (the caller may have closed its input
        // because begin() failed, say) must not reach postgres.js either.
        if (state.lost === undefined && !state.settled) throw error;
        // Never settles when begin() has already failed: nothing must reach the driver then.
        return new Promise((_, reject) => {
          if (!state.settled) giveUp = setTimeout(() => reject(error), closeWaitMs);
        });
      }
    };
    return begin(options, run).then(
      (value) => {
        state.settled = true;
        clearTimeout(giveUp);
        return value;
      },
      (error: unknown) => {
        state.settled = true;
        clearTimeout(giveUp);
        const reason = state.lost ?? error;
        state.lost ??= error;
        throw reason;
      },
    );
  };
  client.begin = guarded as postgres.Sql['begin'];
}

type LazyQuery = Promise<unknown> & { values?: unknown };

/**
 * Statements of the transaction run (postgres.js queries are lazy: they start when first
 * awaited) only while its connection is not known to be gone; lost-connection failures are
 * noted. `catch` and `finally` of a postgres.js query start it without going through `then`,
 * so all three are replaced.
 */
function refuseStatementsOnceLost(tx: postgres.TransactionSql, state: TransactionState): void {
  const unsafe = tx.unsafe.bind(tx);
  tx.unsafe = ((...args: Parameters<typeof unsafe>) => {
    const query = unsafe(...args) as LazyQuery;
    const start = query.then.bind(query);
    let outcome: Promise<unknown> | undefined;
    const settle = (): Promise<unknown> => {
      outcome ??=
        state.lost !== undefined || state.settled
          ? Promise.reject(state.lost ?? new Error('the transaction has ended'))
          : start(undefined, (error: unknown) => {
              if (isLostConnection(error, true)) state.lost ??= error;
              throw error;
            });
      return outcome;
    };
    // biome-ignore lint/suspicious/noThenProperty: the query stays the promise it was; only its start is guarded.
    query.then = ((onFulfilled, onRejected) => settle().then(onFulfilled, onRejected)) as typeof query.then;
    query.catch = ((onRejected) => settle().catch(onRejected)) as typeof query.catch;
    query.finally = ((onFinally) => settle().finally(onFinally)) as typeof query.finally;
    return query;
  }) as typeof tx.unsafe;
}
