/**
 * The change log in the database (drizzle/0006_change_log.sql, 0008, src/db/change-log.ts): what
 * writes an entry and what does not, on every test database; and the promise the feed rests on,
 * on PostgreSQL with concurrent writers: a reader that asks for the entries after the last
 * position it was given never skips one, however the writers' transactions interleave and
 * whatever order they commit in. And what keeps the log's costs bounded by what a statement
 * writes or a page returns, not by what came before.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import {
  comparePositions,
  endOfLog,
  entriesOfThisTransaction,
  type LogEntry,
  type LogPosition,
  latestOfNames,
  latestOfNamespace,
  prunedThrough,
  pruneLog,
  readLog,
  readLogOfNames,
  readLogOfNamespace,
  START_OF_LOG,
} from '../src/db/change-log.js';
import type { Database } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import { ndjson } from './support/data-files.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';

const namespace = (name: string) => ({ kind: 'namespace', name, ownerEmail: `owner@${name}.example` });
const profile = (name: string, description = '', extra: Record<string, unknown> = {}) => ({
  kind: 'profile',
  name,
  creatorEmail: 'maker@example.com',
  description,
  ...extra,
});

async function everything(db: Database): Promise<LogEntry[]> {
  const all: LogEntry[] = [];
  for (let after = START_OF_LOG; ; ) {
    const page = await readLog(db, after, 1000);
    all.push(...page.entries);
    after = page.next;
    if (!page.hasMore) return all;
  }
}

const summary = (entries: readonly LogEntry[]) => entries.map((entry) => `${entry.kind} ${entry.name}`);

describe.each(databaseKinds())('the change log on %s', (kind) => {
  const database = useTestDatabase(kind);
  const db = () => database.handle.db;
  let mark: LogPosition;

  const since = async () => {
    const page = await readLog(db(), mark, 1000);
    mark = page.next;
    return page.entries;
  };

  beforeAll(async () => {
    const report = await importLines(db(), ndjson(namespace('log'), namespace('other')));
    expect(report.ok).toBe(true);
    mark = await endOfLog(db());
  });

  it('records a new profile as created, once per name, in its commit', async () => {
    await importLines(db(), ndjson(profile('ada@log', 'First'), profile('bob@log', 'First')));
    const entries = await since();
    expect(summary(entries).sort()).toEqual(['created ada@log', 'created bob@log']);
    expect(entries[0]?.committedAt).toBeInstanceOf(Date);
    expect(entries[0]?.commitSeq).toBe(entries[1]?.commitSeq);
  });

  it('records nothing for a line that changes nothing, nor for a new creator e-mail or owner', async () => {
    await importLines(db(), ndjson(profile('ada@log', 'First'), profile('bob@log', 'First')));
    await importLines(
      db(),
      ndjson({ ...profile('ada@log', 'First'), creatorEmail: 'someone-else@example.com' }, namespace('log')),
    );
    await importLines(db(), ndjson({ ...namespace('log'), ownerEmail: 'new-owner@log.example' }));
    expect(await since()).toEqual([]);
  });

  it('records a changed profile as updated, its records included', async () => {
    await importLines(db(), ndjson(profile('ada@log', 'Second')));
    await importLines(db(), ndjson(profile('bob@log', 'First', { records: { '1': { type: 'name', value: 'Bob' } } })));
    expect(summary(await since())).toEqual(['updated ada@log', 'updated bob@log']);
  });

  it('records removals: of a profile, and of every profile of a removed namespace', async () => {
    await importLines(db(), ndjson(namespace('gone'), profile('x@gone'), profile('y@gone')));
    expect(summary(await since()).sort()).toEqual(['created x@gone', 'created y@gone']);
    await importLines(db(), ndjson({ kind: 'remove', name: 'ada@log' }));
    await importLines(db(), ndjson({ kind: 'remove', namespace: 'gone' }));
    expect(summary(await since()).slice(0, 1)).toEqual(['removed ada@log']);
    const byNamespace = await readLogOfNames(db(), START_OF_LOG, ['x@gone', 'y@gone'], 10);
    expect(summary(byNamespace.entries).sort()).toEqual([
      'created x@gone',
      'created y@gone',
      'removed x@gone',
      'removed y@gone',
    ]);
  });

  it('records what SQL run by hand changes, as every writer', async () => {
    await db().execute(
      sql`update profiles set description = 'by hand', content_hash = 'by-hand' where name = 'bob@log'`,
    );
    await db().execute(sql`update profiles set level = level where name = 'bob@log'`);
    expect(summary(await since())).toEqual(['updated bob@log']);
  });

  it('writes nothing in a dry run, and says how many entries the import would write', async () => {
    const report = await importLines(db(), ndjson(profile('carl@log'), profile('bob@log', 'Third')), { dryRun: true });
    expect(report.changeLogEntries).toBe(2);
    expect(await since()).toEqual([]);
  });

  it('counts the entries of the transaction it runs in', async () => {
    const counted = await db().transaction(async (tx) => {
      await tx.execute(sql`update profiles set content_hash = 'counted' where name = 'bob@log'`);
      return entriesOfThisTransaction(tx);
    });
    expect(counted).toBe(1);
    expect(summary(await since())).toEqual(['updated bob@log']);
  });

  it('pages in log order: a page ends where the next begins, and the last page says there is no more', async () => {
    const all = await everything(db());
    expect(all.length).toBeGreaterThan(5);
    const pages: LogEntry[] = [];
    for (let after = START_OF_LOG; ; ) {
      const page = await readLog(db(), after, 2);
      expect(page.entries.length).toBeLessThanOrEqual(2);
      pages.push(...page.entries);
      after = page.next;
      if (!page.hasMore) break;
    }
    expect(pages).toEqual(all);
    for (let i = 1; i < all.length; i += 1) expect(comparePositions(all[i - 1]!, all[i]!)).toBeLessThan(0);
    expect(await endOfLog(db())).toEqual({ commitSeq: all.at(-1)?.commitSeq, seq: all.at(-1)?.seq });
  });

  it('reads a page after a cursor inside a large transaction from the cursor on, not from its first entry', async () => {
    const many = Array.from({ length: 2000 }, (_, i) => profile(`m${i}@big`));
    expect((await importLines(db(), ndjson(namespace('big'), ...many))).ok).toBe(true);
    const start = mark;
    const first = await readLog(db(), start, 1000);
    const second = await readLog(db(), first.next, 1000);
    mark = second.next;
    const commit = [...first.entries, ...second.entries];
    expect(commit).toHaveLength(2000);
    expect(new Set(commit.map((entry) => entry.commitSeq)).size).toBe(1);
    const cursor = commit[1499]!;
    const { page, indexEntries } = await db().transaction(async (tx) => {
      // Entries of the log's primary key read by this transaction's scans so far.
      const readSoFar = async () => {
        const result = (await tx.execute(
          sql`select pg_stat_get_xact_tuples_returned('change_log_pkey'::regclass)::int as n`,
        )) as unknown as Array<{ n: number }> | { rows: Array<{ n: number }> };
        return (Array.isArray(result) ? result : result.rows)[0]?.n ?? 0;
      };
      const before = await readSoFar();
      const page = await readLog(tx, cursor, 10);
      return { page, indexEntries: (await readSoFar()) - before };
    });
    expect(page.entries).toEqual(commit.slice(1500, 1510));
    // The 1,500 entries before the cursor are not read to be skipped: a consumer reading through
    // one large transaction page by page would read it again for every page.
    expect(indexEntries).toBeLessThan(1000);
  });

  it('filters by names and by namespace, with `next` past what it looked at', async () => {
    const all = await everything(db());
    const end = await endOfLog(db());
    const named = await readLogOfNames(db(), START_OF_LOG, ['bob@log'], 100);
    expect(named.entries).toEqual(all.filter((entry) => entry.name === 'bob@log'));
    expect(named).toMatchObject({ next: end, hasMore: false });
    const firstOfBob = await readLogOfNames(db(), START_OF_LOG, ['bob@log'], 1);
    expect(firstOfBob).toMatchObject({ hasMore: true, next: named.entries[0] });

    const inGone = await readLogOfNamespace(db(), START_OF_LOG, 'gone', 100, 10_000);
    expect(inGone.entries).toEqual(all.filter((entry) => entry.name.endsWith('@gone')));
    expect(inGone).toMatchObject({ next: end, hasMore: false });
    // A full page ends at its last entry, and says there are more.
    const gone = all.filter((entry) => entry.name.endsWith('@gone'));
    expect(await readLogOfNamespace(db(), START_OF_LOG, 'gone', 1, 10_000)).toEqual({
      entries: gone.slice(0, 1),
      next: gone[0],
      hasMore: true,
    });
    // A scan cut short moves `next` to the last entry it looked at, matching or not.
    const short = await readLogOfNamespace(db(), START_OF_LOG, 'nowhere', 100, 3);
    expect(short).toMatchObject({ entries: [], next: all[2], hasMore: true });
    const firstGone = all.findIndex((entry) => entry.name.endsWith('@gone'));
    const upToGone = await readLogOfNamespace(db(), START_OF_LOG, 'gone', 100, firstGone + 1);
    expect(upToGone).toEqual({ entries: gone.slice(0, 1), next: gone[0], hasMore: true });
  });

  it("finds each name's latest change after a position, in log order", async () => {
    const all = await everything(db());
    const end = await endOfLog(db());
    const latest = await latestOfNames(db(), ['bob@log', 'ada@log', 'nobody@log'], START_OF_LOG, end);
    const lastOf = (name: string): LogEntry => {
      const last = all.filter((entry) => entry.name === name).at(-1);
      if (last === undefined) throw new Error(`no entry of ${name}`);
      return last;
    };
    expect(latest).toEqual([lastOf('bob@log'), lastOf('ada@log')].sort(comparePositions));
    expect(await latestOfNames(db(), ['ada@log'], lastOf('ada@log'), end)).toEqual([]);
    expect(await latestOfNamespace(db(), 'gone', START_OF_LOG, end, 10_000)).toEqual(
      [lastOf('x@gone'), lastOf('y@gone')].sort(comparePositions),
    );
    expect(await latestOfNamespace(db(), 'gone', START_OF_LOG, end, 2)).toBeUndefined();
  });

  it('prunes whole transactions older than a time, and remembers where it stopped', async () => {
    const all = await everything(db());
    expect(await prunedThrough(db())).toEqual(START_OF_LOG);
    const cut = all.find((entry) => entry.name === 'bob@log' && entry.kind === 'updated');
    expect(cut).toBeDefined();
    const before = new Date(cut!.committedAt.getTime() + 1);
    const removed = await pruneLog(db(), before, 2);
    const kept = all.filter((entry) => entry.committedAt.getTime() > cut!.committedAt.getTime());
    expect(removed).toBe(all.length - kept.length);
    expect(await everything(db())).toEqual(kept);
    const lastPruned = all[all.length - kept.length - 1]!;
    expect(await prunedThrough(db())).toEqual({ commitSeq: lastPruned.commitSeq, seq: lastPruned.seq });
    expect(await pruneLog(db(), before)).toBe(0);
  });
});

const postgresUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(postgresUrl === undefined)('the change log with concurrent writers on PostgreSQL', () => {
  const database = useTestDatabase('postgres');
  const sessions: postgres.Sql[] = [];
  const session = () => {
    const opened = postgres(database.testDb.url ?? '', { max: 1, onnotice: () => {} });
    sessions.push(opened);
    return opened;
  };
  const changeHash = (tx: postgres.TransactionSql, name: string) =>
    tx`update profiles set content_hash = md5(random()::text) where name = ${name}`;

  beforeAll(async () => {
    const names = Array.from({ length: 20 }, (_, i) => profile(`p${i}@race`));
    expect((await importLines(database.handle.db, ndjson(namespace('race'), ...names))).ok).toBe(true);
  });
  afterAll(async () => {
    await Promise.all(sessions.map((opened) => opened.end()));
  });

  it('shows a transaction that wrote first and committed last after the one that committed first', async () => {
    const [early, late] = [session(), session()];
    const start = await endOfLog(database.handle.db);
    let commitEarly: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      commitEarly = resolve;
    });
    let wrote: () => void = () => {};
    const written = new Promise<void>((resolve) => {
      wrote = resolve;
    });
    // The early transaction writes its entry (taking the lower seq), then waits to commit.
    const earlyDone = early.begin(async (tx) => {
      await changeHash(tx, 'p0@race');
      wrote();
      await held;
    });
    await written;
    await late.begin((tx) => changeHash(tx, 'p1@race'));
    const firstRead = await readLog(database.handle.db, start, 100);
    expect(summary(firstRead.entries)).toEqual(['updated p1@race']);
    commitEarly();
    await earlyDone;
    // Read on from where the first read ended: the early transaction's entry comes now.
    const secondRead = await readLog(database.handle.db, firstRead.next, 100);
    expect(summary(secondRead.entries)).toEqual(['updated p0@race']);
    // Its seq is below the entry read first: a reader that followed seq alone would have skipped it.
    expect(secondRead.entries[0]!.seq).toBeLessThan(firstRead.entries[0]!.seq);
  });

  it('never skips an entry for a reader that follows `next` while writers commit in every order', async () => {
    const writers = Array.from({ length: 4 }, () => session());
    const start = await endOfLog(database.handle.db);
    let writing = true;
    const committedBy: number[] = [];
    const write = async (writer: postgres.Sql, index: number) => {
      let round = 0;
      while (writing) {
        round += 1;
        await writer.begin(async (tx) => {
          // Entries early, commit late, for some: commit order differs from the order of seq.
          await changeHash(tx, `p${(index * 5 + round) % 20}@race`);
          if ((index + round) % 3 === 0) await tx`select pg_sleep(0.005 * ${index + 1})`;
          await changeHash(tx, `p${(index * 7 + round) % 20}@race`);
        });
        committedBy.push(index);
      }
    };
    const running = writers.map((writer, index) => write(writer, index));
    const seen: LogEntry[] = [];
    let next = start;
    while (committedBy.length < 200) {
      const page = await readLog(database.handle.db, next, 7);
      seen.push(...page.entries);
      next = page.next;
    }
    writing = false;
    await Promise.all(running);
    for (;;) {
      const page = await readLog(database.handle.db, next, 50);
      seen.push(...page.entries);
      next = page.next;
      if (!page.hasMore) break;
    }
    const all: LogEntry[] = [];
    for (let after = start; ; ) {
      const page = await readLog(database.handle.db, after, 1000);
      all.push(...page.entries);
      after = page.next;
      if (!page.hasMore) break;
    }
    expect(all.length).toBeGreaterThanOrEqual(400);
    // Every entry, each once, in log order.
    expect(seen).toEqual(all);
  }, 60_000);

  it("plans an update's entries for its own rows, after a session's smaller updates", async () => {
    const many = Array.from({ length: 2000 }, (_, i) => profile(`q${i}@plans`));
    expect((await importLines(database.handle.db, ndjson(namespace('plans'), ...many))).ok).toBe(true);
    const plans: string[] = [];
    const explained = postgres(database.testDb.url ?? '', {
      max: 1,
      onnotice: ({ message = '' }) => {
        if (/Insert on change_log\b/.test(message) && message.includes('old_profiles')) plans.push(message);
      },
    });
    sessions.push(explained);
    // auto_explain sends the plan of every statement, the triggers' too, to this session.
    await explained`load 'auto_explain'`;
    await explained`set auto_explain.log_min_duration = 0`;
    await explained`set auto_explain.log_nested_statements = on`;
    await explained`set auto_explain.log_level = notice`;
    // First a statement that changes nothing (an import's batch of unchanged lines), then one profile.
    await explained`update profiles set content_hash = content_hash where name = 'q0@plans'`;
    await explained`update profiles set content_hash = md5(random()::text) where name = 'q0@plans'`;
    await explained`update profiles set content_hash = md5(random()::text) where namespace = 'plans'`;
    expect(plans).toHaveLength(3);
    // A nested loop over the two transition tables takes time growing with the square of their rows.
    expect(plans[2]).toContain('Named Tuplestore Scan');
    expect(plans[2]).not.toContain('Nested Loop');
  }, 60_000);
});
