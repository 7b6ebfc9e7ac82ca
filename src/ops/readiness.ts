/**
 * Readiness: whether this process should get traffic from a load balancer now. It is ready when
 * the database answers within a short bound and holds every committed migration, and it stops
 * being ready as soon as shutdown begins, so the balancer drains it before it goes away.
 */

import { type DatabaseHandle, MIGRATIONS_FOLDER } from '../db/database.js';
import { bigint, max, pgSchema, readMigrationFiles } from '../db/drizzle.js';
import { describeFailure } from '../errors/cause-chain.js';
import type { Logger } from '../logging/logger.js';

/** A readiness probe answers within this, whatever the database does. */
const READINESS_TIMEOUT_MS = 2000;

type NotReadyReason = 'shutting down' | 'database unreachable' | 'migrations pending';

type ReadinessResult = { ready: true } | { ready: false; reason: NotReadyReason };

/** A failed probe also says why, for the log (never for the response). */
type ProbeResult = { ready: true } | { ready: false; reason: NotReadyReason; cause?: string };

export interface Readiness {
  check(): Promise<ReadinessResult>;
  /** From now on every check answers "shutting down". */
  beginShutdown(): void;
  readonly shuttingDown: boolean;
}

/** Drizzle's own bookkeeping table of applied migrations. */
const appliedMigrations = pgSchema('drizzle').table('__drizzle_migrations', {
  createdAt: bigint('created_at', { mode: 'number' }),
});

/** The `when` of the newest committed migration, which the database must have reached. */
function newestMigrationMillis(): number {
  return Math.max(0, ...readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).map((m) => m.folderMillis));
}

class ProbeTimeout extends Error {
  constructor() {
    super(`no answer within ${READINESS_TIMEOUT_MS} ms`);
  }
}

function withinBound<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout()), READINESS_TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export function createReadiness(database: DatabaseHandle, logger: Logger): Readiness {
  const required = newestMigrationMillis();
  let migrated = false;
  let shuttingDown = false;
  // Probes arriving together share one round trip, so a flood of them cannot fill the pool.
  let inFlight: Promise<ReadinessResult> | undefined;

  const migrationsApplied = async (): Promise<boolean> => {
    // Once true it stays true: migrations are never undone under a running service.
    if (migrated) return true;
    const [row] = await database.readPrimary((db) =>
      db.select({ newest: max(appliedMigrations.createdAt) }).from(appliedMigrations),
    );
    migrated = Number(row?.newest ?? 0) >= required;
    return migrated;
  };

  const probe = async (): Promise<ProbeResult> => {
    try {
      await withinBound(database.ping());
    } catch (error) {
      return { ready: false, reason: 'database unreachable', cause: describeFailure(error) };
    }
    try {
      if (await withinBound(migrationsApplied())) return { ready: true };
      return { ready: false, reason: 'migrations pending' };
    } catch (error) {
      // Before the first migration the bookkeeping table itself is missing.
      return { ready: false, reason: 'migrations pending', cause: describeFailure(error) };
    }
  };

  // Load balancers probe every few seconds: log changes, not every answer.
  let last: ReadinessResult['ready'] | undefined;
  const noteChange = (result: ProbeResult): ReadinessResult => {
    if (result.ready !== last) {
      if (result.ready) logger.info('ready');
      else logger.warn({ reason: result.reason, cause: result.cause }, 'not ready');
      last = result.ready;
    }
    return result.ready ? { ready: true } : { ready: false, reason: result.reason };
  };

  return {
    async check() {
      if (shuttingDown) return { ready: false, reason: 'shutting down' };
      inFlight ??= probe()
        .then(noteChange)
        .finally(() => {
          inFlight = undefined;
        });
      const result = await inFlight;
      return shuttingDown ? { ready: false, reason: 'shutting down' } : result;
    },
    beginShutdown() {
      shuttingDown = true;
    },
    get shuttingDown() {
      return shuttingDown;
    },
  };
}
