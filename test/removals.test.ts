/**
 * Removing profiles and namespaces with data files (docs/data.md, "Removing profiles"): removal
 * lines, `replaceAll` (`--replace-all`), `dryRun` (`--dry-run`), and what running servers answer
 * once a removal has committed.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDataLine } from '../src/data/data-line.js';
import { type ImportOptions, importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { eq, sql } from '../src/db/drizzle.js';
import { namespaces, profiles, records, walletAddresses } from '../src/db/schema.js';
import { startTestServer, type TestServer } from './support/app-server.js';
import { emptyDatabase, exportText, ndjson, snapshotDatabase } from './support/data-files.js';
import { createTestDatabase, databaseKinds, type TestDatabase, useTestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';

const NEWS = { kind: 'namespace', name: 'news', ownerEmail: 'news-owner@example.com' };
const OLDS = { kind: 'namespace', name: 'olds', ownerEmail: 'olds-owner@example.com' };
const profile = (name: string, description = `About ${name}`) => ({
  kind: 'profile',
  name,
  creatorEmail: 'maker@example.org',
  description,
  records: {
    '1': { type: 'name', value: name },
    '8': { type: 'crypto', value: { eth: `0x${name.length.toString(16).padStart(40, '0')}` } },
  },
});
const removeName = (name: string) => ({ kind: 'remove', name });
const removeNamespace = (namespace: string) => ({ kind: 'remove', namespace });
/** Small batches: removals and the lines they undo or follow fall into different batches too. */
const SMALL_BATCHES: ImportOptions = { batchSize: 3 };
/** Small and large batches, batches prepared in worker threads (as for big files), and --bulk. */
const BATCH_SIZES: ImportOptions[] = [
  { batchSize: 3 },
  { batchSize: 2000 },
  { batchSize: 2, parallel: { workers: 2, inlineBatches: 0 } },
  { batchSize: 3, bulk: true },
];

describe('removal lines', () => {
  it('parse to canonical names, and bad ones are rejected with a reason', () => {
    expect(parseDataLine('{"kind":"remove","name":"Zoe\\u0301@ME"}')).toEqual({
      ok: true,
      line: { kind: 'remove', what: 'profile', name: 'zoé@me' },
    });
    expect(parseDataLine('{"kind":"remove","namespace":"ME"}')).toEqual({
      ok: true,
      line: { kind: 'remove', what: 'namespace', name: 'me' },
    });
    const reasons: Array<[string, string]> = [
      ['{"kind":"remove"}', 'a removal needs "name" (a profile) or "namespace"'],
      ['{"kind":"remove","name":"a@me","namespace":"me"}', 'not both'],
      ['{"kind":"remove","name":"me"}', 'invalid name "me": no "@"'],
      ['{"kind":"remove","namespace":"a@me"}', 'invalid namespace "a@me"'],
      ['{"kind":"remove","name":7}', '"name" must be a string'],
      ['{"kind":"remove","name":"a@me","why":"expired"}', 'unknown field "why" for a removal'],
      ['{"kind":"delete","name":"a@me"}', 'unknown kind "delete" (expected "namespace", "profile" or "remove")'],
    ];
    for (const [line, reason] of reasons) {
      const result = parseDataLine(line);
      expect(result.ok, line).toBe(false);
      if (!result.ok) expect(result.reason).toContain(reason);
    }
  });
});

describe.each(databaseKinds())('removals on %s', (kind) => {
  const database = useTestDatabase(kind);
  const db = () => database.handle.db;
  beforeEach(async () => {
    await emptyDatabase(db());
    await seedDemoData(db());
    const loaded = await importLines(
      db(),
      ndjson(NEWS, OLDS, profile('a@news'), profile('b@news'), profile('c@news'), profile('x@olds'), profile('y@olds')),
    );
    expect(loaded.ok).toBe(true);
  });

  const names = async () =>
    (await db().select({ name: profiles.name }).from(profiles).orderBy(profiles.name)).map((row) => row.name);
  const namespaceNames = async () =>
    (await db().select({ name: namespaces.name }).from(namespaces).orderBy(namespaces.name)).map((row) => row.name);
  /** Records and wallet addresses of profiles that do not exist: none may be left. */
  const orphans = async () => {
    const [row] = await db()
      .select({
        records: sql<number>`(select count(*)::int from ${records} r where not exists (select 1 from ${profiles} p where p.id = r.profile_id))`,
        wallets: sql<number>`(select count(*)::int from ${walletAddresses} w where not exists (select 1 from ${profiles} p where p.id = w.profile_id))`,
      })
      .from(sql`(select 1) as one`);
    return row;
  };

  it.each(BATCH_SIZES)(
    'removes a profile by name with its records, counting what did not exist (%j)',
    async (options) => {
      const report = await importLines(
        db(),
        ndjson(removeName('B@NEWS'), removeName('nobody@news'), removeName('a@nowhere')),
        options,
      );
      expect(report).toMatchObject({
        ok: true,
        removals: 3,
        profilesRemoved: 1,
        namespacesRemoved: 0,
        removalsOfNothing: 2,
        profilesChanged: 0,
      });
      expect(await names()).not.toContain('b@news');
      expect(await names()).toContain('a@news');
      expect(await orphans()).toEqual({ records: 0, wallets: 0 });
    },
  );

  it.each(BATCH_SIZES)(
    'removes a namespace with its profiles; a missing one counts as nothing (%j)',
    async (options) => {
      const report = await importLines(db(), ndjson(removeNamespace('olds'), removeNamespace('never')), options);
      expect(report).toMatchObject({
        ok: true,
        removals: 2,
        namespacesRemoved: 1,
        profilesRemoved: 2,
        removalsOfNothing: 1,
      });
      expect(await namespaceNames()).not.toContain('olds');
      expect((await names()).filter((name) => name.endsWith('@olds'))).toEqual([]);
      expect(await orphans()).toEqual({ records: 0, wallets: 0 });
    },
  );

  it.each(BATCH_SIZES)('lets the last line for a name win, removal or profile (%j)', async (options) => {
    const report = await importLines(
      db(),
      ndjson(
        removeName('a@news'),
        profile('a@news', 'back again'), // re-added after its removal
        profile('new@news'),
        removeName('new@news'), // added, then removed: never there
        profile('c@news', 'changed first'),
        removeName('c@news'),
        removeNamespace('olds'),
        OLDS, // declared again: it comes back empty, then gets one profile
        profile('z@olds'),
      ),
      options,
    );
    expect(report.ok).toBe(true);
    expect(await names()).toEqual(expect.arrayContaining(['a@news', 'b@news', 'z@olds']));
    expect(await names()).not.toEqual(expect.arrayContaining(['new@news']));
    for (const gone of ['new@news', 'c@news', 'x@olds', 'y@olds']) expect(await names()).not.toContain(gone);
    const [a] = await db().select().from(profiles).where(eq(profiles.name, 'a@news'));
    expect(a?.description).toBe('back again');
    expect(await orphans()).toEqual({ records: 0, wallets: 0 });
  });

  it.each(BATCH_SIZES)(
    'drops profiles and namespace lines that a later namespace removal undoes (%j)',
    async (options) => {
      const report = await importLines(
        db(),
        ndjson(
          { ...OLDS, ownerEmail: 'new-owner@example.com' },
          profile('w@olds'),
          profile('x@olds', 'changed'),
          removeNamespace('olds'),
        ),
        options,
      );
      expect(report.ok).toBe(true);
      expect(await namespaceNames()).not.toContain('olds');
      expect((await names()).filter((name) => name.endsWith('@olds'))).toEqual([]);
    },
  );

  it('rejects a profile after the removal of its namespace unless the namespace is declared again', async () => {
    const before = await snapshotDatabase(db());
    const report = await importLines(
      db(),
      ndjson(removeNamespace('olds'), profile('x@olds'), removeName('a@news'), { kind: 'remove' }),
      SMALL_BATCHES,
    );
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      {
        line: 2,
        reason: 'unknown namespace "olds" of "x@olds": removed on an earlier line and not declared again since',
      },
      { line: 4, reason: 'a removal needs "name" (a profile) or "namespace"' },
    ]);
    expect(report).toMatchObject({ profilesRemoved: 0, namespacesRemoved: 0 });
    expect(await snapshotDatabase(db())).toEqual(before);
  });

  it('with replaceAll removes every profile and namespace the file does not name', async () => {
    const report = await importLines(
      db(),
      ndjson(NEWS, profile('a@news'), profile('b@news', 'edited'), profile('d@news')),
      { ...SMALL_BATCHES, replaceAll: true },
    );
    expect(report).toMatchObject({
      ok: true,
      profilesChanged: 2,
      profilesReplaced: 1,
      // c@news, x@olds, y@olds and the 7 demo profiles; olds and the 3 demo namespaces.
      profilesRemoved: 10,
      namespacesRemoved: 4,
    });
    expect(await names()).toEqual(['a@news', 'b@news', 'd@news']);
    expect(await namespaceNames()).toEqual(['news']);
    expect(await orphans()).toEqual({ records: 0, wallets: 0 });
  });

  it('with replaceAll keeps a namespace that only its profiles name', async () => {
    const report = await importLines(db(), ndjson(profile('x@olds')), { replaceAll: true });
    expect(report.ok).toBe(true);
    expect(await names()).toEqual(['x@olds']);
    expect(await namespaceNames()).toEqual(['olds']);
  });

  it('with replaceAll writes and removes nothing when a line is bad', async () => {
    const before = await snapshotDatabase(db());
    const report = await importLines(db(), ndjson(NEWS, profile('a@news'), '{"kind":"profile"', profile('q@news')), {
      ...SMALL_BATCHES,
      replaceAll: true,
    });
    expect(report).toMatchObject({ ok: false, problemCount: 1, profilesRemoved: 0, namespacesRemoved: 0 });
    expect(report.problems[0]?.line).toBe(3);
    expect(await snapshotDatabase(db())).toEqual(before);
  });

  it('in a dry run reports what it would add, replace and remove, and writes nothing', async () => {
    const before = await snapshotDatabase(db());
    const lines = ndjson(
      NEWS,
      profile('a@news'),
      profile('b@news', 'edited'),
      profile('new@news'),
      removeName('c@news'),
    );
    const dry = await importLines(db(), lines, { ...SMALL_BATCHES, dryRun: true, replaceAll: true });
    expect(dry).toMatchObject({
      ok: true,
      dryRun: true,
      profilesChanged: 2,
      profilesReplaced: 1,
      profilesRemoved: 10,
      namespacesRemoved: 4,
    });
    expect(await snapshotDatabase(db())).toEqual(before);
    const plain = await importLines(db(), lines, { dryRun: true });
    expect(plain).toMatchObject({ ok: true, dryRun: true, profilesChanged: 2, profilesRemoved: 1 });
    expect(await snapshotDatabase(db())).toEqual(before);

    // The real import does what the dry run said.
    const real = await importLines(db(), lines, { ...SMALL_BATCHES, replaceAll: true });
    expect(real).toMatchObject({ ...dry, dryRun: false });
  });

  it('round-trips: an export imported with replaceAll changes nothing, and rebuilds the same data after removals', async () => {
    const exported = (await exportText(db())).trimEnd().split('\n');
    const before = await snapshotDatabase(db());
    const again = await importLines(db(), exported, { ...SMALL_BATCHES, replaceAll: true });
    expect(again).toMatchObject({ ok: true, profilesChanged: 0, profilesRemoved: 0, namespacesRemoved: 0 });
    expect(await snapshotDatabase(db())).toEqual(before);

    await importLines(db(), ndjson(removeNamespace('olds'), removeName('a@news'), profile('extra@news')));
    const restored = await importLines(db(), exported, { ...SMALL_BATCHES, replaceAll: true });
    expect(restored).toMatchObject({ ok: true, profilesRemoved: 1 });
    // The same lines; re-added profiles have new ids, which the export's order follows.
    const lines = (await exportText(db())).trimEnd().split('\n');
    expect(lines.sort()).toEqual([...exported].sort());

    // Into an empty database, line for line.
    await emptyDatabase(db());
    await importLines(db(), exported, { replaceAll: true });
    expect(await exportText(db())).toBe(`${exported.join('\n')}\n`);
  });

  it('keeps the look-alike index right: a removed name is no look-alike any more', async () => {
    const lookAlike = async () =>
      (
        await db()
          .select({ name: profiles.name })
          .from(profiles)
          .where(sql`${profiles.namespace} = 'news' and ${profiles.localSkeleton} = ${'a'}`)
      ).map((row) => row.name);
    expect(await lookAlike()).toEqual(['a@news']);
    await importLines(db(), ndjson(removeName('a@news')));
    expect(await lookAlike()).toEqual([]);
  });
});

describe.each(databaseKinds())('a running server after a removal on %s', (kind) => {
  let testDb: TestDatabase;
  let writer: DatabaseHandle;
  let serverHandle: DatabaseHandle | undefined;
  let server: TestServer;

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    writer = await testDb.open();
    await importLines(writer.db, ndjson(NEWS, OLDS, profile('a@news'), profile('b@news'), profile('x@olds')));
    // PGlite serves one handle per folder: the server shares the importer's, as in one process.
    serverHandle = kind === 'pglite' ? undefined : await testDb.open();
    server = await startTestServer(serverHandle ?? writer, { PROFILE_LIMIT: '0' });
    await eventually(() => server.app.cache.stats().answering, { what: 'the profile cache answering', withinMs: 5000 });
  });
  afterAll(async () => {
    await server?.close();
    await serverHandle?.close();
    await writer?.close();
    await testDb?.drop();
  });

  const status = async (name: string) => (await fetch(`${server.url}/api/${name}`)).status;

  it('answers 404 at once for removed names, hot cache included', async () => {
    // Three times each: a name is cached from its second lookup, so the third answer comes from the cache.
    for (const name of ['a@news', 'x@olds', 'a@news', 'x@olds', 'a@news', 'x@olds'])
      expect(await status(name)).toBe(200);
    expect(server.app.cache.stats().hits).toBeGreaterThan(0);
    const report = await importLines(writer.db, ndjson(removeName('a@news'), removeNamespace('olds')));
    expect(report).toMatchObject({ ok: true, profilesRemoved: 2 });
    // The notification arrives after the commit; on PostgreSQL through the server's own connection.
    await eventually(async () => (await status('a@news')) === 404, {
      what: 'a 404 for a@news',
      withinMs: 1000,
      everyMs: 10,
    });
    expect(await status('a@news')).toBe(404);
    expect(await status('x@olds')).toBe(404);
    expect(await status('b@news')).toBe(200);

    const replaced = await importLines(writer.db, ndjson(NEWS, profile('a@news')), { replaceAll: true });
    expect(replaced).toMatchObject({ ok: true, profilesRemoved: 1 });
    await eventually(async () => (await status('b@news')) === 404, {
      what: 'a 404 for b@news',
      withinMs: 1000,
      everyMs: 10,
    });
    expect(await status('b@news')).toBe(404);
    expect(await status('a@news')).toBe(200);
  });
});
