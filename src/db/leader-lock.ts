/**
 * Leadership of one process among all the processes of a deployment, through a PostgreSQL
 * session-level advisory lock: the process whose session holds the lock leads. What it is for
 * here: the one process that purges shared caches (src/edge/purge-queues.ts).
 *
 * - The session is a direct one to the primary (DATABASE_LISTEN_URL, else DATABASE_URL), never
 *   through a pooler: a transaction-mode pooler hands the session to other clients and keeps the
 *   lock after the process is gone.
 * - Every CHECK_INTERVAL_MS a follower tries the lock, and the leader checks that its session
 *   still holds it (`pg_locks` for its own backend): postgres.js reconnects a lost session
 *   silently, and the new session holds nothing. A check that fails or does not answer within
 *   the interval ends the leadership and the session, which releases the lock if the server still
 *   has it.
 * - When the leader's process dies, PostgreSQL ends its session and releases the lock; another
 *   process takes it at its next try, within CHECK_INTERVAL_MS.
 *
 * PGlite: the process is the whole deployment and leads from the start.
 */
import type postgres from 'postgres';

/** The advisory lock's two keys: this service's number, and the role's. */
const LEADER_LOCK_CLASS = 0x6e707331; // "nps1"
export const PURGE_LEADER_KEY = 1;

const CHECK_INTERVAL_MS = 1000;

export interface LeadershipHandlers {
  lead(): void;
  follow(reason: string): void;
}

export interface Leadership {
  readonly leading: boolean;
  close(): Promise<void>;
}

/** Leads from the start: the embedded database has one process. */
export function soleLeadership(handlers: LeadershipHandlers): Leadership {
  handlers.lead();
  let leading = true;
  return {
    get leading() {
      return leading;
    },
    async close() {
      leading = false;
    },
  };
}

export interface AdvisoryLeadershipOptions {
  /** A new single-session client on the primary (direct, not through a pooler). */
  connect: () => postgres.Sql;
  key: number;
  intervalMs?: number;
}

export function advisoryLeadership(options: AdvisoryLeadershipOptions, handlers: LeadershipHandlers): Leadership {
  const intervalMs = options.intervalMs ?? CHECK_INTERVAL_MS;
  let session: postgres.Sql | undefined;
  let leading = false;
  let busy = false;
  let closed = false;

  const drop = (reason: string) => {
    const ended = session;
    session = undefined;
    void ended?.end({ timeout: 0 }).catch(() => {});
    if (leading) {
      leading = false;
      handlers.follow(reason);
    }
  };

  const within = <T>(work: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${intervalMs} ms`)), intervalMs);
      work.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });

  const tick = async () => {
    session ??= options.connect();
    const sql = session;
    if (!leading) {
      const [row] = await within(
        sql`select pg_try_advisory_lock(${LEADER_LOCK_CLASS}::int, ${options.key}::int) as locked`,
      );
      if (row?.locked === true && !closed && sql === session) {
        leading = true;
        handlers.lead();
      }
      return;
    }
    const [row] = await within(
      sql`select exists (select 1 from pg_locks where locktype = 'advisory' and granted and pid = pg_backend_pid()
            and classid = ${LEADER_LOCK_CLASS}::int::oid and objid = ${options.key}::int::oid and objsubid = 2) as held`,
    );
    if (row?.held !== true) drop('the session no longer holds the leader lock (it was replaced)');
  };

  const run = () => {
    if (busy || closed) return;
    busy = true;
    tick()
      .catch((error: unknown) => drop(`leader lock check failed: ${(error as Error).message}`))
      .finally(() => {
        busy = false;
      });
  };
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();

  return {
    get leading() {
      return leading;
    },
    async close() {
      closed = true;
      clearInterval(timer);
      const ended = session;
      session = undefined;
      leading = false;
      await ended?.end({ timeout: 0 }).catch(() => {});
    },
  };
}
