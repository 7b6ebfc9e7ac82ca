import { Readable } from 'node:stream';
import { beforeEach, describe, expect, it } from 'vitest';
import { generateNdjson } from '../src/data/generator.js';
import { ANALYZE_AFTER_PROFILES, type ImportOptions, importLines, importStream } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import { eq, sql } from '../src/db/drizzle.js';
import { profiles, records } from '../src/db/schema.js';
import { emptyDatabase, exportText, ndjson, snapshotDatabase } from './support/data-files.js';
import { createTestDatabase, databaseKinds, useTestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';

const NAMESPACE = { kind: 'namespace', name: 'bulk', ownerEmail: 'bulk-owner@example.com' };
const goodProfile = (index: number) => ({
  kind: 'profile',
  name: `user${index}@bulk`,
  creatorEmail: `user${index}@example.org`,
  description: `Profile ${index}`,
  records: { '1': { type: 'name', value: `User ${index}` }, '6': { type: 'social', value: { twitter: `u${index}` } } },
});
/** Line 1 is the namespace, lines 2..count+1 are good profiles. */
const goodLines = (count: number) =>
  ndjson(NAMESPACE, ...Array.from({ length: count }, (_, index) => goodProfile(index)));
/** Small batches, so good lines before a bad one have really been written when it is found. */
const SMALL_BATCHES: ImportOptions = { batchSize: 7 };

describe.each(databaseKinds())('import and export on %s', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(async () => {
    await emptyDatabase(database.handle.db);
    await seedDemoData(database.handle.db);
  });

  it('imports a file and reports what it wrote', async () => {
    const report = await importLines(database.handle.db, goodLines(30), SMALL_BATCHES);
    expect(report).toMatchObject({
      ok: true,
      lines: 31,
      namespaces: 1,
      profiles: 30,
      namespacesChanged: 1,
      profilesChanged: 30,
      problemCount: 0,
    });
    const [stored] = await database.handle.db.select().from(profiles).where(eq(profiles.name, 'user29@bulk'));
    expect(stored).toMatchObject({
      localPart: 'user29',
      namespace: 'bulk',
      description: 'Profile 29',
      creatorEmail: 'user29@example.org',
      level: 0,
      image: '',
    });
  });

  const badLines: Array<[string, string, string]> = [
    ['bad JSON', '{"kind":"profile","name":"x@bulk"', 'invalid JSON'],
    ['unknown kind', '{"kind":"person","name":"x@bulk"}', 'unknown kind "person"'],
    ['invalid name', JSON.stringify({ ...goodProfile(1000), name: 'bad name@bulk' }), 'invalid name "bad name@bulk"'],
    ['invalid e-mail', JSON.stringify({ ...goodProfile(1000), creatorEmail: 'nobody' }), 'invalid creatorEmail'],
    ['invalid owner e-mail', '{"kind":"namespace","name":"other","ownerEmail":"@example.com"}', 'invalid ownerEmail'],
    [
      'wrong value shape',
      JSON.stringify({ ...goodProfile(1000), records: { '6': { type: 'social', value: 'u1000' } } }),
      'record type "social" needs an object',
    ],
    [
      'non-numeric key',
      JSON.stringify({ ...goodProfile(1000), records: { one: { type: 'name', value: 'x' } } }),
      'record key "one" is not a record number',
    ],
    ['unknown namespace', JSON.stringify({ ...goodProfile(1000), name: 'x@nowhere' }), 'unknown namespace "nowhere"'],
    ['bad level', JSON.stringify({ ...goodProfile(1000), level: -3 }), '"level" must be an integer'],
    [
      'over-long description',
      JSON.stringify({ ...goodProfile(1000), description: 'x'.repeat(5000) }),
      '"description" is too long: 5000 characters, at most 4096',
    ],
    [
      'over-long record value',
      JSON.stringify({ ...goodProfile(1000), records: { '1': { type: 'name', value: 'x'.repeat(5000) } } }),
      'record "1" value is too long: 5000 characters, at most 4096',
    ],
    [
      'line longer than any valid one',
      JSON.stringify({ ...goodProfile(1000), description: 'x'.repeat(10_000_000) }),
      'bytes long, at most 1048576 (no valid profile needs that many)',
    ],
  ];

  it.each(badLines)('rejects a file with one %s line and writes nothing', async (_, badLine, reason) => {
    const before = await snapshotDatabase(database.handle.db);
    // 40 good lines, then the bad one as line 42, then more good lines that change the demo data.
    const lines = [...goodLines(40), badLine, JSON.stringify({ ...goodProfile(7), name: 'demo@me' })];
    const report = await importLines(database.handle.db, lines, SMALL_BATCHES);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([{ line: 42, reason: expect.stringContaining(reason) }]);
    expect(report.problemCount).toBe(1);
    expect(report.profilesChanged).toBe(0);
    expect(await snapshotDatabase(database.handle.db)).toEqual(before);
  });

  it('rejects a line that is not valid UTF-8', async () => {
    const before = await snapshotDatabase(database.handle.db);
    const file = Buffer.concat([
      Buffer.from(`${goodLines(3).join('\n')}\n`),
      Buffer.from('{"kind":"profile","name":"caf'),
      Buffer.from([0xe9]), // "é" in Latin-1: not UTF-8
      Buffer.from('@bulk","creatorEmail":"a@example.com"}\n'),
    ]);
    const report = await importStream(database.handle.db, Readable.from([file]));
    expect(report.problems).toEqual([{ line: 5, reason: 'not valid UTF-8 text' }]);
    expect(await snapshotDatabase(database.handle.db)).toEqual(before);
  });

  it('lists every bad line in order, keeps validating after the first, and caps the list', async () => {
    const lines = goodLines(60);
    lines[4] = '{';
    lines[20] = JSON.stringify({ ...goodProfile(20), name: 'x@unknown' });
    lines[21] = '{"kind":"namespace","name":"-bad","ownerEmail":"o@example.com"}';
    lines[59] = JSON.stringify({ ...goodProfile(59), records: { '1': { type: 'name', value: 1 } } });
    const report = await importLines(database.handle.db, lines, { ...SMALL_BATCHES, maxReportedProblems: 3 });
    expect(report.problemCount).toBe(4);
    expect(report.problems.map((problem) => problem.line)).toEqual([5, 21, 22]);
    const all = await importLines(database.handle.db, lines, SMALL_BATCHES);
    expect(all.problems.map((problem) => problem.line)).toEqual([5, 21, 22, 60]);
  });

  /** Text PostgreSQL cannot store, in every field that holds free text (see data-line.test.ts). */
  const unstorableProfiles = (index: number) =>
    ['\u0000', '\ud800'].flatMap((bad) => [
      { ...goodProfile(index), description: `a${bad}` },
      { ...goodProfile(index), image: `https://img.example/${bad}` },
      { ...goodProfile(index), records: { '3': { type: `t${bad}`, value: 'x' } } },
      { ...goodProfile(index), records: { '1': { type: 'name', value: `A${bad}` } } },
      { ...goodProfile(index), records: { '6': { type: 'social', value: { [`k${bad}`]: 'v' } } } },
      { ...goodProfile(index), records: { '6': { type: 'social', value: { twitter: `${bad}v` } } } },
    ]);

  it('rejects text the database cannot store line by line, with the line numbers, writing nothing', async () => {
    const before = await snapshotDatabase(database.handle.db);
    const bad = ndjson(...unstorableProfiles(500));
    // Alone: they used to pass validation and fail the whole import with 22P05 at the end.
    const alone = await importLines(database.handle.db, [...goodLines(20), ...bad], SMALL_BATCHES);
    expect(alone.ok).toBe(false);
    expect(alone.problems.map((problem) => problem.line)).toEqual(bad.map((_, index) => 22 + index));
    expect(
      alone.problems.every((problem) => /holds (U\+0000 \(NUL\)|a lone surrogate U\+D800)/.test(problem.reason)),
    ).toBe(true);
    // Among ordinary bad lines: every one of them listed, in line order.
    const mixed = [...goodLines(10), '{', ...bad, JSON.stringify({ ...goodProfile(1), level: -1 }), ...bad];
    const report = await importLines(database.handle.db, mixed, SMALL_BATCHES);
    expect(report.problemCount).toBe(2 * bad.length + 2);
    expect(report.problems.map((problem) => problem.line)).toEqual(
      Array.from({ length: 2 * bad.length + 2 }, (_, index) => 12 + index),
    );
    expect(await snapshotDatabase(database.handle.db)).toEqual(before);
  });

  it('reports a bad namespace line once, not again for every profile under it', async () => {
    const lines = ndjson(
      { kind: 'namespace', name: 'fresh', ownerEmail: 'not-an-email' },
      { ...goodProfile(1), name: 'a@fresh' },
      { ...goodProfile(2), name: 'b@fresh' },
    );
    const report = await importLines(database.handle.db, lines);
    expect(report.problems).toEqual([{ line: 1, reason: expect.stringContaining('invalid ownerEmail') }]);
  });

  it('requires a namespace to be declared before the profiles that use it', async () => {
    const lines = ndjson(
      { ...goodProfile(1), name: 'a@later' },
      { kind: 'namespace', name: 'later', ownerEmail: 'o@example.com' },
      { ...goodProfile(2), name: 'b@later' },
    );
    const report = await importLines(database.handle.db, lines);
    expect(report.problems).toEqual([{ line: 1, reason: expect.stringContaining('unknown namespace "later"') }]);
  });

  it('uses namespaces that already exist, matched case-insensitively', async () => {
    const report = await importLines(
      database.handle.db,
      ndjson({ ...goodProfile(1), name: 'New@ME' }, { ...goodProfile(2), name: 'other@Studio' }),
    );
    expect(report.ok).toBe(true);
    const names = await database.handle.db
      .select({ name: profiles.name, namespace: profiles.namespace })
      .from(profiles)
      .where(sql`${profiles.name} in ('new@me', 'other@studio')`);
    expect(names).toHaveLength(2);
  });

  it('replaces an existing profile whole, records too, whatever the case of its name', async () => {
    const [old] = await database.handle.db.select().from(profiles).where(eq(profiles.name, 'demo@me'));
    const replacement = {
      kind: 'profile',
      name: 'DEMO@Me',
      creatorEmail: ' New.Maker@Example.com ',
      description: 'Replaced',
      records: {
        '2': { type: 'email', value: 'new@demo.example' },
        '70': { type: 'notes', value: { b: '2', a: '1' } },
      },
    };
    const report = await importLines(database.handle.db, ndjson(replacement));
    expect(report).toMatchObject({ ok: true, profilesChanged: 1 });

    const [stored] = await database.handle.db.select().from(profiles).where(eq(profiles.name, 'demo@me'));
    expect(stored).toMatchObject({
      id: old!.id,
      description: 'Replaced',
      image: '',
      level: 0,
      creatorEmail: 'New.Maker@Example.com',
    });
    expect(stored!.contentHash).not.toBe(old!.contentHash);
    expect(stored!.updatedAt.getTime()).toBeGreaterThanOrEqual(old!.updatedAt.getTime());
    const storedRecords = await database.handle.db
      .select({ key: records.key, type: records.type, value: sql<string>`${records.value}::text` })
      .from(records)
      .where(eq(records.profileId, old!.id))
      .orderBy(records.key);
    expect(storedRecords).toEqual([
      { key: 2, type: 'email', value: '"new@demo.example"' },
      { key: 70, type: 'notes', value: '{"b":"2","a":"1"}' },
    ]);
  });

  it('updates a namespace owner only when it changed', async () => {
    const same = await importLines(
      database.handle.db,
      ndjson({ kind: 'namespace', name: 'ME', ownerEmail: 'owner@example.com' }),
    );
    expect(same.namespacesChanged).toBe(0);
    const changed = await importLines(
      database.handle.db,
      ndjson({ kind: 'namespace', name: 'me', ownerEmail: 'new-owner@example.com' }),
    );
    expect(changed.namespacesChanged).toBe(1);
  });

  it('lets the last line win when a file names a profile twice, within a batch and across batches', async () => {
    const lines = [
      ...goodLines(20),
      JSON.stringify({ ...goodProfile(3), description: 'second' }),
      JSON.stringify({ ...goodProfile(19), description: 'third', records: {} }),
    ];
    lines.splice(5, 0, JSON.stringify({ ...goodProfile(19), description: 'first' }));
    const report = await importLines(database.handle.db, lines, SMALL_BATCHES);
    expect(report.ok).toBe(true);
    const rows = await database.handle.db
      .select({ name: profiles.name, description: profiles.description, id: profiles.id })
      .from(profiles)
      .where(sql`${profiles.name} in ('user3@bulk', 'user19@bulk')`)
      .orderBy(profiles.name);
    expect(rows.map((row) => [row.name, row.description])).toEqual([
      ['user19@bulk', 'third'],
      ['user3@bulk', 'second'],
    ]);
    const leftover = await database.handle.db.select().from(records).where(eq(records.profileId, rows[0]!.id));
    expect(leftover).toEqual([]);
  });

  it('skips blank lines, a byte order mark and CR line ends, and counts them for line numbers', async () => {
    const text = `\uFEFF${JSON.stringify(NAMESPACE)}\r\n\r\n   \n${JSON.stringify(goodProfile(1))}\r\n{bad}\n`;
    const report = await importStream(database.handle.db, Readable.from([Buffer.from(text)]));
    expect(report.lines).toBe(5);
    expect(report.problems).toEqual([{ line: 5, reason: expect.stringContaining('invalid JSON') }]);
  });

  it('reads lines split across chunks of a stream', async () => {
    const text = `${goodLines(5).join('\n')}\n`;
    const bytes = Buffer.from(text);
    const chunks = Array.from({ length: Math.ceil(bytes.length / 13) }, (_, index) =>
      bytes.subarray(index * 13, index * 13 + 13),
    );
    const report = await importStream(database.handle.db, Readable.from(chunks));
    expect(report).toMatchObject({ ok: true, profiles: 5 });
  });

  it('changes nothing when an export is imported again', async () => {
    await importLines(
      database.handle.db,
      [...generateNdjson({ profiles: 150, seed: 11, namespaces: 4 })].join('').split('\n'),
      SMALL_BATCHES,
    );
    const exported = await exportText(database.handle.db);
    const before = await snapshotDatabase(database.handle.db);
    // A changed row would get a later updated_at: the database's clock is past every one now.
    const clockPassed = async () => {
      const [row] = await database.handle.db
        .select({ passed: sql<boolean>`clock_timestamp() > max(${profiles.updatedAt})` })
        .from(profiles);
      return row?.passed === true;
    };
    await eventually(clockPassed, { what: "the database's clock past the newest updated_at", everyMs: 1 });
    const report = await importLines(database.handle.db, exported.split('\n'), SMALL_BATCHES);
    expect(report).toMatchObject({ ok: true, namespacesChanged: 0, profilesChanged: 0 });
    expect(await snapshotDatabase(database.handle.db)).toEqual(before);
  });

  it('exports string values that look like JSON as the strings they are', async () => {
    const tricky = {
      '1': { type: 'name', value: '123' },
      '2': { type: 'tg_bot', value: 'null' },
      '3': { type: 'web3_url', value: 'true' },
      '4': { type: 'name', value: '{"x":"y"}' },
      '5': { type: 'notes', value: { quoted: '"q"', number: '1e3' } },
    };
    await importLines(
      database.handle.db,
      ndjson({ kind: 'profile', name: 'tricky@me', creatorEmail: 't@example.com', records: tricky }),
    );
    const exported = (await exportText(database.handle.db)).split('\n').find((line) => line.includes('"tricky@me"'));
    expect((JSON.parse(exported!) as { records: unknown }).records).toEqual(tricky);
    const again = await importLines(database.handle.db, [exported!]);
    expect(again).toMatchObject({ ok: true, profilesChanged: 0 });
  });

  it('exports the same text whatever the page size', async () => {
    const whole = await exportText(database.handle.db);
    expect(await exportText(database.handle.db, { pageSize: 2 })).toBe(whole);
    const lines = whole
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; name: string });
    const namespaces = lines.filter((line) => line.kind === 'namespace').map((line) => line.name);
    expect(lines.slice(0, namespaces.length).every((line) => line.kind === 'namespace')).toBe(true);
    expect(namespaces).toEqual([...namespaces].sort());
  });

  it('imports the same data in bulk mode, and leaves the reference checks on and in force', async () => {
    const checkTriggers = () =>
      database.handle.db
        .select({ name: sql<string>`tgname::text`, enabled: sql<string>`tgenabled::text` })
        .from(sql`pg_trigger`)
        .where(sql`not tgisinternal and tgname like '%check%'`)
        .orderBy(sql`tgname`);
    const triggersBefore = await checkTriggers();
    expect(triggersBefore).toHaveLength(4);
    expect(triggersBefore.every((trigger) => trigger.enabled === 'O')).toBe(true);

    const lines = [...goodLines(30), JSON.stringify({ ...goodProfile(3), name: 'demo@me' })];
    const normal = await importLines(database.handle.db, lines, SMALL_BATCHES);
    const normalSnapshot = await snapshotDatabase(database.handle.db);
    await emptyDatabase(database.handle.db);
    await seedDemoData(database.handle.db);
    const bulk = await importLines(database.handle.db, lines, { ...SMALL_BATCHES, bulk: true });
    expect(bulk).toEqual(normal);
    const strip = (snapshot: typeof normalSnapshot) => ({
      ...snapshot,
      profiles: snapshot.profiles.map(({ updatedAt: _updatedAt, ...rest }) => rest),
    });
    expect(strip(await snapshotDatabase(database.handle.db))).toEqual(strip(normalSnapshot));
    expect(await checkTriggers()).toEqual(triggersBefore);

    const rejected = await importLines(database.handle.db, [...lines, '{'], { ...SMALL_BATCHES, bulk: true });
    expect(rejected.ok).toBe(false);
    expect(await checkTriggers()).toEqual(triggersBefore);

    // The checks still refuse a broken reference, and deletes still cascade.
    await expect(
      database.handle.db.insert(records).values({ profileId: 999_999, key: 1, type: 'name', value: 'orphan' }),
    ).rejects.toMatchObject({ cause: expect.objectContaining({ code: '23503' }) });
    await database.handle.db.execute(sql`delete from namespaces where name = 'bulk'`);
    expect(await database.handle.db.select().from(profiles).where(eq(profiles.namespace, 'bulk'))).toEqual([]);
    const orphans = await database.handle.db
      .select()
      .from(records)
      .where(sql`${records.profileId} not in (select id from ${profiles})`);
    expect(orphans).toEqual([]);
  });

  it('refreshes the planner statistics after a large import, not after a small one', async () => {
    const db = database.handle.db;
    await db.execute(sql`analyze profiles`);
    /** The planner's idea of the row count, as ANALYZE left it (the two drivers shape results apart). */
    const estimatedProfiles = async (): Promise<number> => {
      const result: unknown = await db.execute(sql`select reltuples from pg_class where relname = 'profiles'`);
      const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { reltuples: number }[];
      return Number(rows[0]?.reltuples);
    };
    const before = await estimatedProfiles();
    expect(before).toBeLessThan(10);

    const small = [...generateNdjson({ profiles: ANALYZE_AFTER_PROFILES - 100, seed: 21, namespaces: 2 })];
    expect((await importLines(db, small.join('').trimEnd().split('\n'))).ok).toBe(true);
    expect(await estimatedProfiles()).toBe(before);

    const large = [...generateNdjson({ profiles: ANALYZE_AFTER_PROFILES + 100, seed: 22, namespaces: 2 })];
    expect((await importLines(db, large.join('').trimEnd().split('\n'))).ok).toBe(true);
    expect(await estimatedProfiles()).toBeGreaterThan(ANALYZE_AFTER_PROFILES);
  }, 60_000);

  it('gives the same result, bad lines included, when worker threads prepare the batches', async () => {
    const generated = [...generateNdjson({ profiles: 300, seed: 17, namespaces: 3 })].join('').trimEnd().split('\n');
    // A name again later (the last line wins across batches) and a namespace declared late.
    const lines = [...generated, generated[200]!.replace('"description":"', '"description":"again ')];
    const strip = (snapshot: Awaited<ReturnType<typeof snapshotDatabase>>) => ({
      ...snapshot,
      profiles: snapshot.profiles.map(({ updatedAt: _updatedAt, ...rest }) => rest),
    });
    const inline = await importLines(database.handle.db, lines, { batchSize: 40, parallel: { workers: 0 } });
    const inlineSnapshot = strip(await snapshotDatabase(database.handle.db));
    await emptyDatabase(database.handle.db);
    await seedDemoData(database.handle.db);
    const threaded = await importLines(database.handle.db, lines, {
      batchSize: 40,
      parallel: { workers: 2, inlineBatches: 1 },
    });
    expect(threaded).toEqual(inline);
    expect(strip(await snapshotDatabase(database.handle.db))).toEqual(inlineSnapshot);

    const bad = [...lines];
    bad[3] = '{';
    bad[150] = JSON.stringify({ ...goodProfile(1), name: 'x@nowhere' });
    bad[299] = Buffer.from([0x7b, 0xff, 0x7d]).toString('latin1');
    const badInline = await importLines(database.handle.db, bad, { batchSize: 40, parallel: { workers: 0 } });
    const badThreaded = await importLines(database.handle.db, bad, {
      batchSize: 40,
      parallel: { workers: 2, inlineBatches: 0 },
    });
    expect(badInline.problems.map((problem) => problem.line)).toEqual([4, 151, 300]);
    expect(badThreaded).toEqual(badInline);
  });

  it('round-trips through an export into an empty database, private e-mails included', async () => {
    await importLines(
      database.handle.db,
      [...generateNdjson({ profiles: 120, seed: 5, namespaces: 3 })].join('').split('\n'),
    );
    const exported = await exportText(database.handle.db);
    expect(exported).toContain('"ownerEmail":"Studio.Admin@example.org"');
    expect(exported).toContain('"creatorEmail":"maker@example.com"');

    const otherDb = await createTestDatabase(kind);
    const other = await otherDb.open();
    try {
      const report = await importLines(other.db, exported.split('\n'));
      expect(report.ok).toBe(true);
      expect(await exportText(other.db)).toBe(exported);
      const withoutVolatile = (snapshot: Awaited<ReturnType<typeof snapshotDatabase>>) => ({
        namespaces: snapshot.namespaces,
        profiles: snapshot.profiles.map(({ id: _id, updatedAt: _updatedAt, ...rest }) => rest),
        records: snapshot.records.map(({ profileId: _profileId, ...rest }) => rest),
      });
      expect(withoutVolatile(await snapshotDatabase(other.db))).toEqual(
        withoutVolatile(await snapshotDatabase(database.handle.db)),
      );
    } finally {
      await other.close();
      await otherDb.drop();
    }
  });
});
