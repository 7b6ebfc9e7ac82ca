/**
 * Each profile's records text stored with it (`profiles.records_json`, src/db/records-text.ts):
 * the importer writes the very bytes a lookup would build from `records`, lookups read it, and
 * rows without it (other writers, data from before migration 0005) are answered and backfilled.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { importLines } from '../src/data/importer.js';
import { seedDemoData } from '../src/data/seed.js';
import type { Database } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import { findProfilesByNames } from '../src/db/queries.js';
import { backfillRecordsText } from '../src/db/records-text.js';
import { emptyDatabase, ndjson } from './support/data-files.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';
import { rows, withOlderSchema } from './support/older-schema.js';

const NAMESPACE = { kind: 'namespace', name: 'texts', ownerEmail: 'owner@example.com' };

/** Records whose text is easy to get wrong: escapes, non-ASCII, numeric order, map order. */
const TRICKY_RECORDS = {
  '10': { type: 'name', value: 'after 2, not after 1' },
  '2': { type: 'url', value: 'https://example.com/?q="quoted"&back=\\slash' },
  '1': { type: 'name', value: 'Zoë 🦊 \u0001 tab\there\nline' },
  '6': { type: 'social', value: { twitter: 'zoe', '2024': 'a numeric-looking key', github: 'z' } },
};

const profileLine = (name: string, records: object, description = '') => ({
  kind: 'profile',
  name,
  creatorEmail: 'creator@example.org',
  description,
  records,
});

/** Every profile's stored text beside the text built from its rows in `records`. */
async function storedAndBuilt(db: Database): Promise<Array<{ name: string; stored: string | null; built: string }>> {
  return rows(
    await db.execute(sql`
      select p.name, p.records_json as stored,
        coalesce((select '{' || string_agg('"' || r.key || '":{"type":' || to_json(r.type)::text || ',"value":' || r.value::text || '}', ',' order by r.key) || '}'
                  from records r where r.profile_id = p.id), '{}') as built
      from profiles p order by p.name`),
  );
}

describe.each(databaseKinds())('records text stored with the profile on %s', (kind) => {
  const database = useTestDatabase(kind);
  const db = () => database.handle.db;
  beforeEach(async () => {
    await emptyDatabase(db());
    await seedDemoData(db());
  });

  it('is written by imports as the bytes a lookup would build from the records, also when they change', async () => {
    const first = ndjson(
      NAMESPACE,
      profileLine('tricky@texts', TRICKY_RECORDS),
      profileLine('none@texts', {}),
      profileLine('changes@texts', { '1': { type: 'name', value: 'old' }, '3': { type: 'email', value: 'a@b.c' } }),
      profileLine('stays@texts', { '1': { type: 'name', value: 'same' } }),
    );
    expect((await importLines(db(), first, { batchSize: 2 })).ok).toBe(true);
    const second = ndjson(
      NAMESPACE,
      profileLine('changes@texts', { '3': { type: 'email', value: 'new@b.c' }, '5': { type: 'name', value: 'added' } }),
      profileLine('stays@texts', { '1': { type: 'name', value: 'same' } }),
      profileLine('gains@texts', {}),
    );
    expect((await importLines(db(), second)).ok).toBe(true);
    expect(
      (await importLines(db(), ndjson(profileLine('gains@texts', { '4': { type: 'name', value: 'now' } })))).ok,
    ).toBe(true);

    const texts = await storedAndBuilt(db());
    expect(texts.length).toBeGreaterThan(5);
    for (const { name, stored, built } of texts) expect({ name, stored }).toEqual({ name, stored: built });
    const byName = new Map(texts.map((text) => [text.name, text.stored]));
    expect(byName.get('none@texts')).toBe('{}');
    expect(byName.get('changes@texts')).toBe(
      '{"3":{"type":"email","value":"new@b.c"},"5":{"type":"name","value":"added"}}',
    );
    expect(JSON.parse(byName.get('tricky@texts') ?? '')).toEqual(TRICKY_RECORDS);
  });

  it('is what lookups answer with; where it is missing they build it, and the backfill stores it', async () => {
    expect((await importLines(db(), ndjson(NAMESPACE, profileLine('tricky@texts', TRICKY_RECORDS)))).ok).toBe(true);
    const [stored] = await findProfilesByNames(db(), ['tricky@texts']);
    // The lookup reads the column: a different (valid) text there is what it answers.
    await db().execute(sql`update profiles set records_json = '{"9":{"type":"name","value":"from the column"}}'
                           where name = 'tricky@texts'`);
    expect((await findProfilesByNames(db(), ['tricky@texts']))[0]?.recordsJson).toBe(
      '{"9":{"type":"name","value":"from the column"}}',
    );
    // Missing (another writer's row): built from `records`, the same bytes as stored by the import.
    await db().execute(sql`update profiles set records_json = null`);
    const built = await findProfilesByNames(db(), ['tricky@texts']);
    expect(built[0]?.recordsJson).toBe(stored?.recordsJson);
    const missing = Number(rows<{ n: number }>(await db().execute(sql`select count(*)::int as n from profiles`))[0]?.n);
    expect(await backfillRecordsText(db(), 2)).toBe(missing);
    expect(await backfillRecordsText(db())).toBe(0);
    for (const { name, stored: text, built: fromRecords } of await storedAndBuilt(db())) {
      expect({ name, text }).toEqual({ name, text: fromRecords });
    }
  });

  it('is stored by the migration for the data that was there before it', async () => {
    await withOlderSchema(
      kind,
      (tag) => tag < '0005_stored_records_text',
      async (old) => {
        // The importer of that time wrote no records text: profiles and records by hand, as it did.
        await old.db.execute(sql`insert into namespaces (name, owner_email) values ('texts', 'owner@example.com')`);
        await old.db.execute(
          sql`insert into profiles (name, local_part, namespace, creator_email, content_hash)
              values ('old@texts', 'old', 'texts', 'x@example.com', 'x'), ('empty@texts', 'empty', 'texts', 'x@example.com', 'y')`,
        );
        await old.db.execute(
          sql`insert into records (profile_id, key, type, value)
              select id, 2, 'social', '{"b":"1","a":"2"}'::json from profiles where name = 'old@texts'
              union all select id, 1, 'name', '"Old \\"one\\""'::json from profiles where name = 'old@texts'`,
        );
        await old.migrate();
        expect(
          (await storedAndBuilt(old.db)).map(({ name, stored, built }) => ({ name, stored, same: stored === built })),
        ).toEqual([
          { name: 'empty@texts', stored: '{}', same: true },
          {
            name: 'old@texts',
            stored: '{"1":{"type":"name","value":"Old \\"one\\""},"2":{"type":"social","value":{"b":"1","a":"2"}}}',
            same: true,
          },
        ]);
      },
    );
  });
});
