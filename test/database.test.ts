import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import { parseTextArray, textArrayLiteral } from '../src/db/postgres-deadlines.js';
import { findProfilesByNames, isOwnerOrCreator } from '../src/db/queries.js';
import { namespaces, profiles, records } from '../src/db/schema.js';
import { Profile } from '../src/profiles/profile.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';

/** The records of a profile as the service reads them. */
async function recordsOf(db: Database, name: string) {
  // The values as read (parsed from their stored text), with that text: what every answer writes.
  return (await findProfilesByNames(db, [name])).flatMap((row) =>
    new Profile(row).records.map(({ key, type, raw, text }) => {
      expect(JSON.stringify(raw)).toBe(text);
      return { key, type, raw };
    }),
  );
}

describe.each(databaseKinds())('database on %s', (kind) => {
  const database = useTestDatabase(kind);

  it.runIf(kind === 'postgres')('runs its statements without JIT compilation (index lookups only)', async () => {
    const result: unknown = await database.handle.db.execute(sql`select current_setting('jit') as jit`);
    expect(result).toEqual([{ jit: 'off' }]);
  });

  it('applies migrations idempotently', async () => {
    await database.handle.migrate();
    const rows = await database.handle.db.execute(sql`select count(*)::int as n from profiles`);
    expect(rows).toBeDefined();
  });

  it('enforces level >= 0, numeric keys and cascades', async () => {
    const { db } = database.handle;
    await db.insert(namespaces).values({ name: 'cascade', ownerEmail: 'Owner@Example.com' });
    const [row] = await db
      .insert(profiles)
      .values({
        name: 'a@cascade',
        localPart: 'a',
        namespace: 'cascade',
        creatorEmail: 'maker@example.com',
        contentHash: 'x',
      })
      .returning({ id: profiles.id });
    await db.insert(records).values({ profileId: row!.id, key: 3, type: 'name', value: 'A' });
    await expect(
      db.insert(profiles).values({
        name: 'b@cascade',
        localPart: 'b',
        namespace: 'cascade',
        level: -1,
        creatorEmail: 'x@example.com',
        contentHash: 'x',
      }),
    ).rejects.toThrow();
    await expect(
      db.insert(records).values({ profileId: row!.id, key: -1, type: 'name', value: 'A' }),
    ).rejects.toThrow();
    await expect(
      db.insert(records).values({ profileId: row!.id, key: 4, type: 'name', value: 5 as unknown as string }),
    ).rejects.toThrow();

    expect(await findProfilesByNames(db, ['a@cascade', 'missing@cascade'])).toHaveLength(1);
    expect(await recordsOf(db, 'a@cascade')).toEqual([{ key: '3', type: 'name', raw: 'A' }]);
    expect(await isOwnerOrCreator(db, 'a@cascade', 'owner@example.com')).toBe(true);
    expect(await isOwnerOrCreator(db, 'a@cascade', 'maker@example.com')).toBe(true);
    expect(await isOwnerOrCreator(db, 'a@cascade', 'nobody@example.com')).toBe(false);
    expect(await isOwnerOrCreator(db, 'missing@cascade', 'owner@example.com')).toBe(false);

    await db.delete(namespaces).where(sql`${namespaces.name} = 'cascade'`);
    expect(await findProfilesByNames(db, ['a@cascade'])).toHaveLength(0);
    expect(await recordsOf(db, 'a@cascade')).toHaveLength(0);
  });

  it('keeps the key order of map values as written', async () => {
    const { db } = database.handle;
    await db.insert(namespaces).values({ name: 'order', ownerEmail: 'o@example.com' });
    const [row] = await db
      .insert(profiles)
      .values({ name: 'o@order', localPart: 'o', namespace: 'order', creatorEmail: 'm@example.com', contentHash: 'x' })
      .returning({ id: profiles.id });
    const social = { twitter: 'demo', discord: 'demo#0001', instagram: 'demo.pics' };
    await db.insert(records).values({ profileId: row!.id, key: 6, type: 'social', value: social });
    const [stored] = await recordsOf(db, 'o@order');
    expect(Object.keys(stored!.raw as object)).toEqual(['twitter', 'discord', 'instagram']);
  });

  it('gives back string values that look like JSON as strings', async () => {
    const { db } = database.handle;
    await db.insert(namespaces).values({ name: 'strings', ownerEmail: 'o@example.com' });
    const [row] = await db
      .insert(profiles)
      .values({
        name: 's@strings',
        localPart: 's',
        namespace: 'strings',
        creatorEmail: 'm@example.com',
        contentHash: 'x',
      })
      .returning({ id: profiles.id });
    const values = ['123', 'null', 'true', '"quoted"', '{"a":1}'];
    await db
      .insert(records)
      .values(values.map((value, key) => ({ profileId: row!.id, key, type: 'notes_raw', value })));
    expect((await recordsOf(db, 's@strings')).map((record) => record.raw)).toEqual(values);
  });
});

describe('text arrays without postgres.js type fetching', () => {
  it('serialise and parse back any list of strings and nulls', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.string(), { nil: null })), (values) => {
        expect(parseTextArray(textArrayLiteral(values))).toEqual(values);
      }),
    );
  });
});
