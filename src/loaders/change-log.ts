/**
 * The change log's reads for the service (src/service/changes.ts, live updates): pages after a
 * position, its end, how far it was pruned, and the latest change of names since a position.
 * Always on the primary: a replica may be behind what lookups show (src/db/change-log.ts).
 */
import {
  endOfLog,
  type LogEntry,
  type LogPage,
  type LogPosition,
  latestOfNames,
  latestOfNamespace,
  prunedThrough,
  readLog,
  readLogOfNames,
  readLogOfNamespace,
} from '../db/change-log.js';
import type { ServiceDatabase } from './loaders.js';

export {
  type ChangeKind,
  comparePositions,
  type LogEntry,
  type LogPage,
  type LogPosition,
  START_OF_LOG,
} from '../db/change-log.js';

export interface LogPageQuery {
  after: LogPosition;
  limit: number;
  /** Only these canonical names. */
  names?: readonly string[];
  /** Only this canonical namespace. */
  namespace?: string;
  /** The most entries a page filtered by namespace looks at. */
  scan: number;
}

export function readChangeLogPage(database: ServiceDatabase, query: LogPageQuery): Promise<LogPage> {
  return database.readPrimary((db) => {
    if (query.names !== undefined) return readLogOfNames(db, query.after, query.names, query.limit);
    if (query.namespace !== undefined) {
      return readLogOfNamespace(db, query.after, query.namespace, query.limit, query.scan);
    }
    return readLog(db, query.after, query.limit);
  });
}

export function readChangeLogEnd(database: ServiceDatabase): Promise<LogPosition> {
  return database.readPrimary((db) => endOfLog(db));
}

export function readChangeLogPruned(database: ServiceDatabase): Promise<LogPosition> {
  return database.readPrimary((db) => prunedThrough(db));
}

/** Each name's latest change in (after, upTo], in log order. */
function readLatestChanges(
  database: ServiceDatabase,
  names: readonly string[],
  after: LogPosition,
  upTo: LogPosition,
): Promise<LogEntry[]> {
  return database.readPrimary((db) => latestOfNames(db, names, after, upTo));
}

/** The latest change in (after, upTo] of each name of a namespace; undefined past `scan` entries. */
function readLatestChangesInNamespace(
  database: ServiceDatabase,
  namespace: string,
  after: LogPosition,
  upTo: LogPosition,
  scan: number,
): Promise<LogEntry[] | undefined> {
  return database.readPrimary((db) => latestOfNamespace(db, namespace, after, upTo, scan));
}

/** The change log as the live-updates hub reads it (src/service/live-updates.ts). */
export function liveLog(database: ServiceDatabase) {
  return {
    end: () => readChangeLogEnd(database),
    pruned: () => readChangeLogPruned(database),
    page: (after: LogPosition, limit: number) => database.readPrimary((db) => readLog(db, after, limit)),
    latestOfNames: (names: readonly string[], after: LogPosition, upTo: LogPosition) =>
      readLatestChanges(database, names, after, upTo),
    latestOfNamespace: (namespace: string, after: LogPosition, upTo: LogPosition, scan: number) =>
      readLatestChangesInNamespace(database, namespace, after, upTo, scan),
  };
}
