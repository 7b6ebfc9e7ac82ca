/**
 * What the rest of the service sees of a database, PostgreSQL (./database.ts) or the embedded one
 * (./pglite.ts): the types only, in a module of their own so that the modules they mention
 * (the change feed, replicas, statement observers) and the drivers need not import each other.
 */
import type { Logger } from 'pino';
import type { DatabasePoolMode } from '../config/config.js';
import type { ChangeFeed, ChangeFeedHandlers } from './change-feed.js';
import type { Logger as DrizzleLogger } from './drizzle.js';
import type { Leadership, LeadershipHandlers } from './leader-lock.js';
import type { QueryFailureKind } from './outage-gate.js';
import type { ReplicaStatus } from './replicas.js';
import type { Database, Read } from './schema.js';
import type { Detach, StatementObserver } from './statement-observer.js';

export interface DatabaseOptions {
  /** PostgreSQL URL; undefined opens PGlite in `dataDir`. */
  url: string | undefined;
  /** Folder of the embedded database; `memory://` keeps it in memory (tests). */
  dataDir: string;
  poolSize?: number;
  connectTimeoutSeconds?: number;
  statementTimeoutMs?: number;
  /** The deadline of a read of the request path (`readReplica`, `readPrimary`, `ping`). */
  readTimeoutMs?: number;
  /** Streaming read replicas of `url`: reads of the request path go to them (./replicas.ts). */
  replicaUrls?: readonly string[];
  /** A direct session to the primary for LISTEN, when `url` goes through a pooler; default `url`. */
  listenUrl?: string;
  /** `transaction` when `url` and the replica URLs go through a transaction-mode pooler. */
  poolMode?: DatabasePoolMode;
  /** A replica further behind than this is not read from. */
  replicaMaxLagMs?: number;
  /** How long `migrate()` waits for another process's migration lock (tests shorten it). */
  migrationLockTimeoutMs?: number;
  /** Sees every SQL statement; tests use it to count round trips. */
  logger?: DrizzleLogger;
  /** Where the database layer tells operators what they should know (a lock waited for, a replica out of use). */
  log?: Logger;
}

export interface DatabaseHandle {
  /**
   * The primary, for the data commands (import, export, seeding), start-up checks and tests. The
   * request path never takes it: it reads through `readReplica` and `readPrimary`.
   */
  db: Database;
  kind: 'postgres' | 'pglite';
  /**
   * Applies the committed migrations under drizzle/, then computes what they cannot (the name
   * skeletons, see skeleton-backfill.ts). Idempotent, safe from several processes.
   */
  migrate(): Promise<void>;
  /**
   * Runs one read of the request path that a replica may answer (lookups, batch, search, reverse
   * lookup): on a replica in use (./replicas.ts), else as `readPrimary` does.
   */
  readReplica<T>(work: Read<T>): Promise<T>;
  /**
   * Runs one read of the request path on the primary (owner checks, look-alikes). On PostgreSQL
   * it is refused at once while the database is known to be down (the OutageGate) and fails when
   * it has not finished within the read deadline (`readTimeoutMs`). Either read raises every
   * failure of the database's availability as an UnavailableError (src/errors/service-error.ts),
   * the service's 503; the query's own errors pass unchanged.
   */
  readPrimary<T>(work: Read<T>): Promise<T>;
  /**
   * A write of the request path (an API key's last use, a webhook endpoint): on the primary, with
   * the same gate, deadline and UnavailableError as `readPrimary`. The work may open a transaction.
   */
  writePrimary<T>(work: Read<T>): Promise<T>;
  /** Cheap reachability probe for readiness checks; bounded by the same deadline, never refused. */
  ping(): Promise<void>;
  /** Each replica: in use or why not, lag, reads (undefined without replicas). */
  replicas?(): ReplicaStatus[];
  /**
   * Takes part in electing the one process of the deployment that does `key`'s work (see
   * leader-lock.ts): `handlers.lead()` when this process leads, `follow()` when it no longer does.
   */
  leadership(key: number, handlers: LeadershipHandlers): Leadership;
  /**
   * Starts hearing which profiles change (see change-feed.ts); a database that cannot answer
   * fails it with an UnavailableError, as it fails the reads.
   */
  listenForChanges(handlers: ChangeFeedHandlers): Promise<ChangeFeed>;
  /**
   * Shows `observer` every statement the request path sends (drizzle's, on the primary and the
   * replicas) until the returned function is called: tracing's SQL spans.
   */
  observeStatements?(observer: StatementObserver): Detach;
  /** Figures for metrics: connections, and failed queries by kind (PostgreSQL only). */
  stats?(): DatabaseStats;
  close(): Promise<void>;
}

export interface DatabaseStats {
  openConnections: number;
  maxConnections: number;
  failedQueries: Readonly<Record<QueryFailureKind, number>>;
}
