import { beforeEach, describe, expect, it } from 'vitest';
import { DEMO_DATA } from '../src/data/demo-data.js';
import { seedDemoData, seedIfEmpty } from '../src/data/seed.js';
import { asc, eq, sql } from '../src/db/drizzle.js';
import { namespaces, profiles, records } from '../src/db/schema.js';
import { MAP_RECORD_TYPES, STRING_RECORD_TYPES } from '../src/profiles/record-types.js';
import { CONTRACT_EXAMPLE_RECORDS } from './support/contract-example.js';
import { emptyDatabase, snapshotDatabase } from './support/data-files.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';

describe.each(databaseKinds())('demo data on %s', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(async () => {
    await emptyDatabase(database.handle.db);
  });

  it('seeds an empty database once', async () => {
    expect(await seedIfEmpty(database.handle)).toBe(true);
    const after = await snapshotDatabase(database.handle.db);
    expect(after.profiles.length).toBe(DEMO_DATA.filter((object) => object.kind === 'profile').length);
    expect(await seedIfEmpty(database.handle)).toBe(false);
    expect(await snapshotDatabase(database.handle.db)).toEqual(after);
  });

  it('leaves a database alone that holds data of its own', async () => {
    await database.handle.db.insert(namespaces).values({ name: 'mine', ownerEmail: 'me@example.com' });
    expect(await seedIfEmpty(database.handle)).toBe(false);
    expect(await database.handle.db.select().from(profiles)).toEqual([]);
  });

  it('writes demo@me exactly as the contract example: values, key order and map order', async () => {
    await seedDemoData(database.handle.db);
    const [demo] = await database.handle.db.select().from(profiles).where(eq(profiles.name, 'demo@me'));
    expect(demo).toMatchObject({
      name: 'demo@me',
      localPart: 'demo',
      namespace: 'me',
      description: 'A sample profile that shows every kind of record.',
      image: 'https://img.example.org/avatars/demo@me.jpg',
      level: 2,
    });
    const stored = await database.handle.db
      .select({ key: records.key, type: records.type, value: sql<string>`${records.value}::text` })
      .from(records)
      .where(eq(records.profileId, demo!.id))
      .orderBy(asc(records.key));
    const expected = Object.entries(CONTRACT_EXAMPLE_RECORDS);
    expect(stored.map((record) => String(record.key))).toEqual(expected.map(([key]) => key));
    expect(stored.map((record) => [record.type, record.value])).toEqual(
      expected.map(([, record]) => [record.type, JSON.stringify(record.value)]),
    );
  });

  it('is idempotent when asked again', async () => {
    await seedDemoData(database.handle.db);
    const before = await snapshotDatabase(database.handle.db);
    const report = await seedDemoData(database.handle.db);
    expect(report).toMatchObject({ namespacesChanged: 0, profilesChanged: 0 });
    expect(await snapshotDatabase(database.handle.db)).toEqual(before);
  });

  it('covers every record type, empty values, non-ASCII text, no records and an unspecified type', async () => {
    await seedDemoData(database.handle.db);
    const types = new Set(
      (await database.handle.db.selectDistinct({ type: records.type }).from(records)).map((row) => row.type),
    );
    for (const type of [...STRING_RECORD_TYPES, ...MAP_RECORD_TYPES]) expect(types, type).toContain(type);
    expect(
      [...types].some(
        (type) =>
          !(STRING_RECORD_TYPES as readonly string[]).includes(type) &&
          !(MAP_RECORD_TYPES as readonly string[]).includes(type),
      ),
    ).toBe(true);

    const values = (await database.handle.db.select({ value: sql<string>`${records.value}::text` }).from(records)).map(
      (row) => row.value,
    );
    expect(values).toContain('""');
    expect(values).toContain('{}');

    const all = await database.handle.db.select().from(profiles);
    expect(all.some((profile) => /\P{ASCII}/u.test(profile.localPart))).toBe(true);
    expect(all.some((profile) => /\P{ASCII}/u.test(profile.description))).toBe(true);
    const withRecords = new Set(
      (await database.handle.db.selectDistinct({ id: records.profileId }).from(records)).map((row) => row.id),
    );
    expect(all.some((profile) => !withRecords.has(profile.id))).toBe(true);
  });

  it('uses only reserved example domains for private e-mails', async () => {
    await seedDemoData(database.handle.db);
    const snapshot = await snapshotDatabase(database.handle.db);
    const emails = [
      ...snapshot.namespaces.map((row) => row.ownerEmail),
      ...snapshot.profiles.map((row) => row.creatorEmail),
    ];
    for (const email of emails) expect(email, email).toMatch(/@example\.(com|org)$/i);
  });
});
