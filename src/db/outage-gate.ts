/**
 * Fail fast while PostgreSQL is down. Once several queries in a row failed because the database
 * cannot be reached, further queries are refused at once for a short cool-down instead of
 * queuing inside the driver (where each would wait for a connect timeout, and all of them would
 * run together when the database returns). After the cool-down one query at a time goes through
 * as a probe; the first success lets everything through again.
 *
 * One failure alone does not close the gate: a single connection dropped by a firewall or a
 * restarted pooler fails its queries while the database itself is fine. Nor does a deadline that
 * passed while the database answered other queries: that is a slow link or a long queue, and
 * refusing the next queries would turn slow answers into 503s.
 */
import { isDatabaseUnavailable } from './driver-errors.js';
import { DatabaseTimeoutError } from './postgres-deadlines.js';

/**
 * The gate's cool-down: how long reads are refused before the next probe. Short, because the
 * database's return is noticed only by a probe, and the service promises to answer again within
 * about a second of it; a refused probe costs one connection attempt, and failing attempts are
 * braked (postgres-sockets.ts), so probing this often does not hammer a server that refuses.
 */
export const OUTAGE_PROBE_INTERVAL_MS = 250;

/** Refused without asking the database; the cause is the failure that closed the gate. */
export class DatabaseUnavailableError extends Error {
  /** Known to `isDatabaseUnavailable` whatever the cause was. */
  readonly code = 'DATABASE_UNAVAILABLE';

  constructor(cause: unknown) {
    super('PostgreSQL is unavailable; query refused until it answers again', { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

/** How a query failed, for the database error metric. */
export type QueryFailureKind = 'unavailable' | 'statement_timeout' | 'refused' | 'query';

function failureKind(error: unknown): Exclude<QueryFailureKind, 'refused'> {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '57014') return 'statement_timeout';
  return isDatabaseUnavailable(error) ? 'unavailable' : 'query';
}

export class OutageGate {
  /** Refuse until this time (ms since epoch); 0 while the database answers. */
  private downUntil = 0;
  private probing = false;
  private lastFailure: unknown = undefined;
  private outagesInARow = 0;
  /** When the database last answered anything, an error of the query's own included. */
  private lastAnswerAt = Number.NEGATIVE_INFINITY;
  /** Running totals of failed queries (and failed pings) by kind. */
  readonly failures: Record<QueryFailureKind, number> = {
    unavailable: 0,
    statement_timeout: 0,
    refused: 0,
    query: 0,
  };

  constructor(
    private readonly coolDownMs: number,
    private readonly failuresToClose = 3,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs `attempt` unless the database is known to be down; learns from its outcome. */
  run<T>(attempt: () => Promise<T>): Promise<T> {
    if (this.downUntil === 0) return this.observe(attempt, false);
    if (this.now() < this.downUntil || this.probing) {
      this.failures.refused += 1;
      return Promise.reject(new DatabaseUnavailableError(this.lastFailure));
    }
    this.probing = true;
    return this.observe(attempt, true);
  }

  /** Runs `attempt` in any case (a health probe) and learns from its outcome. */
  observe<T>(attempt: () => Promise<T>, isProbe = false): Promise<T> {
    const startedAt = this.now();
    return attempt().then(
      (value) => {
        if (isProbe) this.probing = false;
        this.answered();
        return value;
      },
      (error: unknown) => {
        if (isProbe) this.probing = false;
        const kind = failureKind(error);
        this.failures[kind] += 1;
        if (kind !== 'unavailable') {
          // The server answered, with an error of the query's own (a statement that ran too
          // long is one slow query, not an outage): it is up.
          this.answered();
        } else if (!(error instanceof DatabaseTimeoutError && this.lastAnswerAt >= startedAt)) {
          // (A deadline that passed while the database answered other queries is left out: the
          // database is slow or the queue long, and refusing would turn slow answers into 503s.)
          this.lastFailure = error;
          this.outagesInARow += 1;
          // A failed probe closes the gate again at once.
          if (isProbe || this.outagesInARow >= this.failuresToClose) this.downUntil = this.now() + this.coolDownMs;
        }
        throw error;
      },
    );
  }

  private answered(): void {
    this.lastAnswerAt = this.now();
    this.downUntil = 0;
    this.outagesInARow = 0;
  }
}
