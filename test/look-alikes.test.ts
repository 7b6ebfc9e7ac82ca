import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { Database, DatabaseHandle } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import { lookAlikesQuery } from '../src/db/look-alike-queries.js';
import { backfillSkeletons } from '../src/db/skeleton-backfill.js';
import { skeleton } from '../src/names/skeleton.js';
import { GRAPHQL_PATH_RERUN, startTestServer, type TestServer } from './support/app-server.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/databases.js';
import { importGenerated, queryPlan, rows, withOlderSchema } from './support/older-schema.js';

const namespace = (name: string) => JSON.stringify({ kind: 'namespace', name, ownerEmail: 'owner@example.com' });
const profile = (name: string, description = '') =>
  JSON.stringify({ kind: 'profile', name, creatorEmail: 'maker@example.com', description });

/** `coco` with each letter Latin or Cyrillic (с U+0441, о U+043E): 16 names of one skeleton. */
const COCO_VARIANTS = Array.from({ length: 16 }, (_, bits) =>
  [...'coco'].map((char, index) => ((bits >> index) & 1 ? (char === 'c' ? 'с' : 'о') : char)).join(''),
);

/** Code-point order (what "C" gives for UTF-8): byte order of UTF-8. */
const codePointOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

const MIXED_WARNING =
  'The local part mixes letters of the Latin and Cyrillic scripts, so it can look like a different name.';

interface NameCheckAnswer {
  canonical: string | null;
  valid: boolean;
  exists: boolean;
  warnings: string[];
  confusableWith: string[];
}

async function skeletonsOf(
  db: Database,
  where = sql`true`,
): Promise<Array<{ name: string; local_skeleton: string | null; local_part: string }>> {
  return rows(
    await db.execute(
      sql`select name, local_part, local_skeleton from profiles where ${where} order by name collate "C"`,
    ),
  );
}

describe.each(databaseKinds())('look-alikes of existing names on %s', (kind) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let server: TestServer;

  const check = async (name: string): Promise<NameCheckAnswer> => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query ($name: String!) { nameCheck(name: $name) { canonical valid exists warnings confusableWith } }',
        variables: { name },
      }),
    });
    const body = (await response.json()) as { data?: { nameCheck: NameCheckAnswer }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    return body.data?.nameCheck as NameCheckAnswer;
  };

  beforeAll(async () => {
    testDb = await createTestDatabase(kind);
    handle = await testDb.open();
    await seedDemoData(handle.db);
    const lines = [
      namespace('acme'),
      namespace('other'),
      namespace('many'),
      profile('coco@acme'),
      profile('coco@other'),
      ...COCO_VARIANTS.map((local) => profile(`${local}@many`)),
    ];
    expect((await importLines(handle.db, lines)).ok).toBe(true);
    server = await startTestServer(handle, { PROFILE_LIMIT: '100000' });
  });
  afterAll(async () => {
    await server?.close();
    await handle?.close();
    await testDb?.drop();
  });

  describe('nameCheck', () => {
    it('lists an existing Latin name for its all-Cyrillic look-alike, with a warning naming it', async () => {
      expect(await check('СОСО@ACME')).toEqual({
        canonical: 'сосо@acme',
        valid: true,
        exists: false,
        // All Cyrillic is one script: only the look-alike of an existing name warns.
        warnings: ['The name can be taken for the existing name "coco@acme".'],
        confusableWith: ['coco@acme'],
      });
    });

    it('lists it for a mixed-script look-alike too, after the mixed-script warning', async () => {
      expect(await check('cоco@acme')).toEqual({
        canonical: 'cоco@acme',
        valid: true,
        exists: false,
        warnings: [MIXED_WARNING, 'The name can be taken for the existing name "coco@acme".'],
        confusableWith: ['coco@acme'],
      });
    });

    it('never lists the name itself, nor names in another namespace', async () => {
      expect(await check('Coco@Acme')).toMatchObject({ exists: true, warnings: [], confusableWith: [] });
      expect((await check('сосо@other')).confusableWith).toEqual(['coco@other']);
      expect((await check('сосо@nowhere')).confusableWith).toEqual([]);
      expect((await check('cocoa@acme')).confusableWith).toEqual([]);
    });

    it('lists at most 10, in code-point order', async () => {
      const others = COCO_VARIANTS.filter((local) => local !== 'coco')
        .map((local) => `${local}@many`)
        .sort(codePointOrder);
      expect(others).toHaveLength(15);
      const answer = await check('COCO@many');
      expect(answer.exists).toBe(true);
      expect(answer.confusableWith).toEqual(others.slice(0, 10));
      expect(answer.warnings).toEqual([
        `The name can be taken for the existing names ${others
          .slice(0, 10)
          .map((name) => `"${name}"`)
          .slice(0, -1)
          .join(', ')} and "${others[9]}".`,
      ]);
      // From another variant: the Latin name comes first ("c" < "с").
      expect((await check('сосо@many')).confusableWith[0]).toBe('coco@many');
    });

    it('lists nothing for an invalid name', async () => {
      expect(await check('сосо@')).toMatchObject({ valid: false, warnings: [], confusableWith: [] });
    });

    it('finds a look-alike of the demo data', async () => {
      expect((await check('d\u0435mo@me')).confusableWith).toEqual(['demo@me']);
    });
  });

  describe('skeletons', () => {
    it.skipIf(GRAPHQL_PATH_RERUN)('are written by every import, the demo data included', async () => {
      const all = await skeletonsOf(handle.db);
      expect(all.length).toBeGreaterThan(20);
      for (const row of all) expect(row.local_skeleton, row.name).toBe(skeleton(row.local_part));
    });

    it('are written again when an import replaces a profile', async () => {
      // A local part that is not its own skeleton ("m" is "rn", "0" is "O").
      expect((await importLines(handle.db, [profile('m0@other')])).ok).toBe(true);
      await handle.db.execute(sql`update profiles set local_skeleton = 'stale' where name = 'm0@other'`);
      expect((await importLines(handle.db, [profile('M0@other', 'replaced')])).profilesChanged).toBe(1);
      expect(await skeletonsOf(handle.db, sql`name = 'm0@other'`)).toEqual([
        { name: 'm0@other', local_part: 'm0', local_skeleton: 'rnO' },
      ]);
      expect((await check('rn0@other')).confusableWith).toEqual(['m0@other']);
      await handle.db.execute(sql`delete from profiles where name = 'm0@other'`);
    });

    it('are written by a bulk import', async () => {
      const report = await importLines(handle.db, [profile('сосо@other'), profile('new@other')], { bulk: true });
      expect(report.ok).toBe(true);
      expect(await skeletonsOf(handle.db, sql`name in ('сосо@other', 'new@other')`)).toEqual([
        { name: 'new@other', local_part: 'new', local_skeleton: 'new' },
        { name: 'сосо@other', local_part: 'сосо', local_skeleton: 'coco' },
      ]);
      expect((await check('coco@other')).confusableWith).toEqual(['сосо@other']);
      await handle.db.execute(sql`delete from profiles where name in ('сосо@other', 'new@other')`);
    });

    it('are filled by the backfill for rows that another writer added without one', async () => {
      await handle.db.execute(
        sql`insert into profiles (name, local_part, namespace, creator_email, content_hash)
            values ('сосо@acme', 'сосо', 'acme', 'x@example.com', 'x'), ('plain@acme', 'plain', 'acme', 'x@example.com', 'x')`,
      );
      expect((await check('coco@acme')).confusableWith).toEqual([]);
      expect(await backfillSkeletons(handle.db, 1)).toBe(2);
      expect(await backfillSkeletons(handle.db)).toBe(0);
      expect((await check('coco@acme')).confusableWith).toEqual(['сосо@acme']);
      await handle.db.execute(sql`delete from profiles where name in ('сосо@acme', 'plain@acme')`);
    });

    it.skipIf(GRAPHQL_PATH_RERUN)('are computed by the migration for the data that was there before it', async () => {
      // The migrations as they were before skeletons (later ones came after them).
      await withOlderSchema(
        kind,
        (tag) => tag < '0003_name_skeletons',
        async (old) => {
          // The importer of that time: no skeleton column to write.
          await old.db.execute(sql`insert into namespaces (name, owner_email) values ('acme', 'owner@example.com')`);
          await old.db.execute(
            sql`insert into profiles (name, local_part, namespace, creator_email, content_hash)
                values ('coco@acme', 'coco', 'acme', 'x@example.com', 'x'), ('сосо@acme', 'сосо', 'acme', 'x@example.com', 'x'),
                       ('zoë@acme', 'zoë', 'acme', 'x@example.com', 'x')`,
          );
          await old.migrate();
          const migrated = await skeletonsOf(old.db);
          expect(migrated.map((row) => row.local_skeleton)).toEqual(['coco', 'zoe\u0308', 'coco']);
        },
      );
    });
  });

  describe.skipIf(GRAPHQL_PATH_RERUN)('query plan', () => {
    // biome-ignore lint/suspicious/noDuplicateTestHooks: describe.skipIf(…) opens a block of its own, which Biome does not read as one
    beforeAll(async () => {
      // Enough rows that the planner would rather scan the table if the index did not fit.
      expect(await importGenerated(handle.db, { profiles: 3000, seed: 7, namespaces: 3 })).toBe(true);
    }, 120_000);

    it('looks the skeleton up in its index', async () => {
      const query = lookAlikesQuery(handle.db, { namespace: 'many', skeleton: 'coco', name: 'coco@many', limit: 10 });
      const plan = await queryPlan(handle.db, query);
      expect(plan).toContain('profiles_namespace_skeleton_idx');
      expect(plan).not.toContain('Seq Scan');
    });
  });
});
