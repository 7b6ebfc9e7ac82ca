/**
 * Reading and pruning the change log (tables in ./schema.ts, triggers in
 * drizzle/0006_change_log.sql). An entry's position is (commit_seq of its transaction, seq):
 * positions increase in commit order, and every position a snapshot can see comes before every
 * position a later commit gets, so a reader that asks for entries after the last position it was
 * given never skips one.
 *
 * Entries are only ever read from the primary: a streaming replica never shows a gap either (its
 * snapshots follow the primary's commits in WAL order), but it may be behind what lookups already
 * show.
 */
import { sql } from './drizzle.js';
import { textArrayLiteral } from './postgres-deadlines.js';
import type { Database } from './schema.js';

/** A place in the log: after the entry at (commitSeq, seq); (0, 0) is before the first entry. */
export interface LogPosition {
  commitSeq: number;
  seq: number;
}

export const START_OF_LOG: LogPosition = { commitSeq: 0, seq: 0 };

export type ChangeKind = 'created' | 'updated' | 'removed';

/** The `kind` column's codes (drizzle/0006_change_log.sql writes them). */
const KIND_OF_CODE: Readonly<Record<number, ChangeKind>> = { 1: 'created', 2: 'updated', 3: 'removed' };

export interface LogEntry extends LogPosition {
  kind: ChangeKind;
  name: string;
  /** When its transaction committed (the clock at the commit). */
  committedAt: Date;
}

export const comparePositions = (a: LogPosition, b: LogPosition): number => a.commitSeq - b.commitSeq || a.seq - b.seq;

interface EntryRow extends Record<string, unknown> {
  commit_seq: string | number;
  seq: string | number;
  kind: number;
  name: string;
  committed_at: string | Date;
}

/** postgres.js and PGlite hand bigint and timestamptz columns of raw SQL back differently. */
function entryOf(row: EntryRow): LogEntry {
  return {
    commitSeq: Number(row.commit_seq),
    seq: Number(row.seq),
    kind: KIND_OF_CODE[row.kind] ?? 'updated',
    name: row.name,
    committedAt: row.committed_at instanceof Date ? row.committed_at : new Date(row.committed_at),
  };
}

async function rows<T extends Record<string, unknown>>(db: Database, statement: ReturnType<typeof sql>): Promise<T[]> {
  const result = (await db.execute(statement)) as unknown as T[] | { rows: T[] };
  return Array.isArray(result) ? result : result.rows;
}

/**
 * The committed entries after `after`, in log order, at most `limit`. Entries of one transaction
 * are read from its own range of the primary key, transaction after transaction in commit order,
 * so a page costs about its size whatever the log's. The range starts after `after.seq` in the
 * cursor's own transaction and at its first entry in later ones (seq comes from a sequence that
 * starts at 1): a bound the index scan starts from, where a condition on the transaction's number
 * would be checked entry by entry, from the first entry of a transaction of any size.
 */
function entriesAfter(after: LogPosition, limit: number) {
  return sql`
    select c.commit_seq, e.seq, e.kind, e.name, c.committed_at
    from change_log_commits as c
    cross join lateral (
      select seq, kind, name from change_log as e
      where e.xid = c.xid
        and e.seq > (case when c.commit_seq = ${after.commitSeq}::bigint then ${after.seq}::bigint else 0 end)
      order by e.seq
      limit ${limit}
    ) as e
    where c.commit_seq >= ${after.commitSeq}
    order by c.commit_seq, e.seq
    limit ${limit}`;
}

export interface LogPage {
  entries: LogEntry[];
  /** Where the next page starts: past every entry this one looked at, matching or not. */
  next: LogPosition;
  /** Whether entries after `next` were already there. */
  hasMore: boolean;
}

/** Entries after `after`, all of them. */
export async function readLog(db: Database, after: LogPosition, limit: number): Promise<LogPage> {
  const found = (await rows<EntryRow>(db, entriesAfter(after, limit + 1))).map(entryOf);
  const entries = found.slice(0, limit);
  return { entries, next: entries.at(-1) ?? after, hasMore: found.length > limit };
}

/**
 * Entries after `after` whose name is in `names`: from the name index, whatever lies between.
 * `next` is the last entry returned when there are more, else the end of the log as this read
 * saw it (nothing of these names lies before it).
 */
export async function readLogOfNames(
  db: Database,
  after: LogPosition,
  names: readonly string[],
  limit: number,
): Promise<LogPage> {
  const found = (
    await rows<EntryRow>(
      db,
      sql`
        select c.commit_seq, e.seq, e.kind, e.name, c.committed_at
        from change_log as e join change_log_commits as c on c.xid = e.xid
        where e.name = any(${textArrayLiteral(names)}::text[]) and c.commit_seq is not null
          and (c.commit_seq, e.seq) > (${after.commitSeq}, ${after.seq})
        order by c.commit_seq, e.seq
        limit ${limit + 1}`,
    )
  ).map(entryOf);
  const entries = found.slice(0, limit);
  if (found.length > limit) return { entries, next: entries.at(-1) ?? after, hasMore: true };
  const end = await endOfLog(db);
  return { entries, next: comparePositions(end, after) > 0 ? end : after, hasMore: false };
}

/**
 * Entries after `after` in `namespace`, looking at no more than `scan` entries of the log: a
 * namespace that changed little would otherwise cost a scan of everything after the cursor.
 * `next` is the last entry returned when the page is full, else the last entry looked at.
 */
export async function readLogOfNamespace(
  db: Database,
  after: LogPosition,
  namespace: string,
  limit: number,
  scan: number,
): Promise<LogPage> {
  // Only what the page needs leaves the database: the matching entries up to one past the page,
  // and the last entry looked at with its number (where `next` goes when the page is not full).
  const found = (
    await rows<EntryRow & { matches: boolean; number: string | number }>(
      db,
      sql`
        select commit_seq, seq, kind, name, committed_at, matches, number
        from (
          select *,
                 count(*) filter (where matches) over log_order as match_number,
                 row_number() over log_order as number,
                 lead(true, 1, false) over log_order as followed
          from (
            select *, split_part(name, '@', 2) = ${namespace} as matches
            from (${entriesAfter(after, scan)}) as entries
          ) as looked_at
          window log_order as (order by commit_seq, seq)
        ) as numbered
        where (matches and match_number <= ${limit + 1}) or not followed
        order by commit_seq, seq`,
    )
  ).map((row) => ({ entry: entryOf(row), matches: row.matches, number: Number(row.number) }));
  const entries: LogEntry[] = [];
  for (const { entry, matches } of found) {
    if (!matches) continue;
    if (entries.length === limit) return { entries, next: entries.at(-1) ?? after, hasMore: true };
    entries.push(entry);
  }
  const last = found.at(-1);
  return { entries, next: last?.entry ?? after, hasMore: last?.number === scan };
}

/**
 * The end of the log: the position of the last committed entry, or where pruning stopped when
 * nothing after it is left (START_OF_LOG for a log that never had an entry).
 */
export async function endOfLog(db: Database): Promise<LogPosition> {
  const [row] = await rows<{
    commit_seq: string | number | null;
    seq: string | number | null;
    pruned_commit_seq: string | number;
    pruned_seq: string | number;
  }>(
    db,
    sql`
      select last.commit_seq, last.seq, p.commit_seq as pruned_commit_seq, p.seq as pruned_seq
      from change_log_pruned as p
      left join lateral (
        select c.commit_seq, (select max(seq) from change_log as e where e.xid = c.xid) as seq
        from change_log_commits as c
        where c.commit_seq is not null
        order by c.commit_seq desc
        limit 1
      ) as last on true`,
  );
  if (row === undefined) return START_OF_LOG;
  const pruned = { commitSeq: Number(row.pruned_commit_seq), seq: Number(row.pruned_seq) };
  if (row.commit_seq === null || row.seq === null) return pruned;
  const last = { commitSeq: Number(row.commit_seq), seq: Number(row.seq) };
  return comparePositions(last, pruned) > 0 ? last : pruned;
}

/** The position of the last entry pruned: a cursor before it asks for entries that are gone. */
export async function prunedThrough(db: Database): Promise<LogPosition> {
  const [row] = await rows<{ commit_seq: string | number; seq: string | number }>(
    db,
    sql`select commit_seq, seq from change_log_pruned`,
  );
  return row === undefined ? START_OF_LOG : { commitSeq: Number(row.commit_seq), seq: Number(row.seq) };
}

/**
 * Each of `names`' latest entry in (after, upTo], in log order: what a stream resumed at `after`
 * has to report before it goes live at `upTo`.
 */
export async function latestOfNames(
  db: Database,
  names: readonly string[],
  after: LogPosition,
  upTo: LogPosition,
): Promise<LogEntry[]> {
  return (
    await rows<EntryRow>(
      db,
      sql`
        select * from (
          select distinct on (e.name) c.commit_seq, e.seq, e.kind, e.name, c.committed_at
          from change_log as e join change_log_commits as c on c.xid = e.xid
          where e.name = any(${textArrayLiteral(names)}::text[]) and c.commit_seq is not null
            and (c.commit_seq, e.seq) > (${after.commitSeq}, ${after.seq})
            and (c.commit_seq, e.seq) <= (${upTo.commitSeq}, ${upTo.seq})
          order by e.name, c.commit_seq desc, e.seq desc
        ) as latest
        order by commit_seq, seq`,
    )
  ).map(entryOf);
}

/**
 * The latest entry in (after, upTo] of each name of `namespace`, in log order, looking at no more
 * than `scan` entries: undefined when there were more (the caller tells its client to start over).
 */
export async function latestOfNamespace(
  db: Database,
  namespace: string,
  after: LogPosition,
  upTo: LogPosition,
  scan: number,
): Promise<LogEntry[] | undefined> {
  const found = (await rows<EntryRow>(db, entriesAfter(after, scan + 1))).map(entryOf);
  const within = found.filter((entry) => comparePositions(entry, upTo) <= 0);
  if (within.length > scan) return undefined;
  const latest = new Map<string, LogEntry>();
  for (const entry of within) {
    if (entry.name.slice(entry.name.lastIndexOf('@') + 1) !== namespace) continue;
    latest.delete(entry.name);
    latest.set(entry.name, entry);
  }
  return [...latest.values()];
}

/** Entries the current transaction has written (an import's dry run reports them). */
export async function entriesOfThisTransaction(db: Database): Promise<number> {
  const [row] = await rows<{ count: number }>(
    db,
    sql`select count(*)::int as count from change_log where xid = pg_current_xact_id()::text::bigint`,
  );
  return row?.count ?? 0;
}

export interface LogStats {
  /** Entries, as the planner's statistics estimate them (exact after an ANALYZE; no count scan). */
  entries: number;
  /** Bytes on disk of the log's tables and their indexes. */
  bytes: number;
  /** When the oldest retained entry's transaction committed; undefined for an empty log. */
  oldestAt: Date | undefined;
}

/** The log's size and age, for /metrics. */
export async function logStats(db: Database): Promise<LogStats> {
  const [row] = await rows<{
    entries: string | number | null;
    bytes: string | number | null;
    oldest: string | Date | null;
  }>(
    db,
    sql`
      select (select greatest(reltuples, 0)::bigint from pg_class where oid = 'change_log'::regclass) as entries,
             pg_total_relation_size('change_log') + pg_total_relation_size('change_log_commits') as bytes,
             (select committed_at from change_log_commits where commit_seq is not null order by commit_seq limit 1) as oldest`,
  );
  const oldest = row?.oldest;
  return {
    entries: Number(row?.entries ?? 0),
    bytes: Number(row?.bytes ?? 0),
    oldestAt: oldest === null || oldest === undefined ? undefined : oldest instanceof Date ? oldest : new Date(oldest),
  };
}

/**
 * Removes the entries of transactions committed before `before`, oldest first, a bounded batch
 * per statement and each in a transaction of its own, so that pruning holds no lock long and
 * never waits for imports or lookups (it touches only old rows). The pruned position moves first:
 * a reader that finds entries missing also finds the position that says so. Returns the entries
 * removed.
 */
export async function pruneLog(db: Database, before: Date, batch = 10_000, signal?: AbortSignal): Promise<number> {
  let removed = 0;
  for (;;) {
    if (signal?.aborted) return removed;
    const [oldest] = await rows<{
      xid: string | number;
      commit_seq: string | number;
      last_seq: string | number | null;
    }>(
      db,
      sql`
        select xid, commit_seq, (select max(seq) from change_log as e where e.xid = c.xid) as last_seq
        from change_log_commits as c
        where commit_seq is not null and committed_at < ${before.toISOString()}::timestamptz
        order by commit_seq limit 1`,
    );
    if (oldest === undefined) return removed;
    const xid = Number(oldest.xid);
    // Without entries left, an earlier run moved the position and was stopped before it finished.
    if (oldest.last_seq !== null) {
      const commitSeq = Number(oldest.commit_seq);
      const seq = Number(oldest.last_seq);
      await db.execute(sql`
        update change_log_pruned set commit_seq = ${commitSeq}, seq = ${seq}
        where (commit_seq, seq) < (${commitSeq}, ${seq})`);
    }
    for (;;) {
      const deleted = await rows<{ seq: string | number }>(
        db,
        sql`
          delete from change_log where xid = ${xid} and seq in (
            select seq from change_log where xid = ${xid} order by seq limit ${batch})
          returning seq`,
      );
      removed += deleted.length;
      if (deleted.length < batch) break;
    }
    await db.execute(sql`delete from change_log_commits where xid = ${xid}`);
  }
}
