/**
 * The references of the schema (profiles -> namespaces, records -> profiles) hold as foreign keys
 * would, though they are checked per statement by triggers (migration 0001): no row may name a
 * missing one, deletes cascade, renames and lone truncates of referenced rows are refused, and a
 * concurrent delete waits for the transaction that refers to its row.
 */

import postgres from 'postgres';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { sql } from '../src/db/drizzle.js';
import { namespaces, profiles, records } from '../src/db/schema.js';
import { emptyDatabase } from './support/data-files.js';
import { databaseKinds, useTestDatabase } from './support/databases.js';
import { eventually } from './support/eventually.js';

const profile = (name: string, namespace: string) => ({
  name: `${name}@${namespace}`,
  localPart: name,
  namespace,
  creatorEmail: 'maker@example.com',
  contentHash: 'x',
});

/** The SQLSTATE of a failed statement (Drizzle wraps the driver's error). */
async function sqlState(statement: Promise<unknown>): Promise<string | undefined> {
  try {
    await statement;
  } catch (error) {
    let current: unknown = error;
    while (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      if (typeof code === 'string') return code;
      current = current.cause;
    }
    return 'no code';
  }
  return undefined;
}

async function count(db: Database, table: typeof namespaces | typeof profiles | typeof records): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(table);
  return row?.n ?? 0;
}

describe.each(databaseKinds())('references on %s', (kind) => {
  const database = useTestDatabase(kind);
  let profileId: number;
  beforeEach(async () => {
    const { db } = database.handle;
    await emptyDatabase(db);
    await db.insert(namespaces).values([
      { name: 'ns', ownerEmail: 'o@example.com' },
      { name: 'other', ownerEmail: 'o@example.com' },
    ]);
    const [row] = await db.insert(profiles).values(profile('a', 'ns')).returning({ id: profiles.id });
    profileId = row!.id;
    await db.insert(records).values([
      { profileId, key: 1, type: 'name', value: 'A' },
      { profileId, key: 2, type: 'email', value: 'a@example.org' },
    ]);
  });

  it('refuses a profile whose namespace does not exist, alone or among good rows', async () => {
    const { db } = database.handle;
    expect(await sqlState(db.insert(profiles).values(profile('b', 'nowhere')))).toBe('23503');
    expect(await sqlState(db.insert(profiles).values([profile('c', 'ns'), profile('d', 'nowhere')]))).toBe('23503');
    expect(await sqlState(db.update(profiles).set({ name: 'a@nowhere', namespace: 'nowhere' }))).toBe('23503');
    expect(await count(db, profiles)).toBe(1);
  });

  it('refuses a record whose profile does not exist, on insert and on update', async () => {
    const { db } = database.handle;
    expect(
      await sqlState(db.insert(records).values({ profileId: profileId + 1000, key: 1, type: 'name', value: 'X' })),
    ).toBe('23503');
    expect(await sqlState(db.update(records).set({ profileId: profileId + 1000 }))).toBe('23503');
    expect(await count(db, records)).toBe(2);
  });

  it('names the broken reference in the error, as a foreign key does', async () => {
    const { db } = database.handle;
    await expect(db.insert(profiles).values(profile('b', 'nowhere'))).rejects.toMatchObject({
      cause: expect.objectContaining({
        message: expect.stringContaining('violates foreign key constraint "profiles_namespace_namespaces_name_fk"'),
      }),
    });
  });

  it('deletes the records of a deleted profile, and the profiles and records of a deleted namespace', async () => {
    const { db } = database.handle;
    const [other] = await db.insert(profiles).values(profile('b', 'other')).returning({ id: profiles.id });
    await db.insert(records).values({ profileId: other!.id, key: 1, type: 'name', value: 'B' });
    await db.delete(profiles).where(sql`${profiles.id} = ${profileId}`);
    expect(await db.select({ profileId: records.profileId }).from(records)).toEqual([{ profileId: other!.id }]);
    await db.delete(namespaces).where(sql`${namespaces.name} = 'other'`);
    expect(await count(db, profiles)).toBe(0);
    expect(await count(db, records)).toBe(0);
    expect(await count(db, namespaces)).toBe(1);
  });

  it('refuses to rename a namespace that has profiles, and allows it for one without', async () => {
    const { db } = database.handle;
    expect(await sqlState(db.update(namespaces).set({ name: 'renamed' }).where(sql`${namespaces.name} = 'ns'`))).toBe(
      '23503',
    );
    await db.update(namespaces).set({ name: 'renamed' }).where(sql`${namespaces.name} = 'other'`);
    // A new owner is no rename.
    await db.update(namespaces).set({ ownerEmail: 'new@example.com' }).where(sql`${namespaces.name} = 'ns'`);
    expect((await db.select({ name: namespaces.name }).from(namespaces)).map((row) => row.name).sort()).toEqual([
      'ns',
      'renamed',
    ]);
  });

  it('refuses to truncate a referenced table alone, but not together with what refers to it', async () => {
    const { db } = database.handle;
    expect(await sqlState(db.execute(sql`truncate profiles`))).toBe('0A000');
    expect(await sqlState(db.execute(sql`truncate namespaces`))).toBe('0A000');
    expect(await count(db, records)).toBe(2);
    await db.execute(sql`truncate records, profiles`);
    expect(await count(db, profiles)).toBe(0);
    await db.execute(sql`truncate namespaces`);
  });

  it.skipIf(kind !== 'postgres')(
    'makes a concurrent delete of a referenced profile wait, then cascade to the new records',
    async () => {
      const other = postgres(database.testDb.url ?? '', { max: 1, onnotice: () => {} });
      const observer = postgres(database.testDb.url ?? '', { max: 1, onnotice: () => {} });
      try {
        const [session] = await other<{ pid: number }[]>`select pg_backend_pid() as pid`;
        let deleted: Promise<unknown> | undefined;
        let settled = false;
        await database.handle.db.transaction(async (tx) => {
          await tx.insert(records).values({ profileId, key: 3, type: 'name', value: 'new' });
          // The other session's delete now waits for this transaction's lock on the profile.
          deleted = other`delete from profiles where id = ${profileId}`.then(() => {
            settled = true;
            return 'deleted';
          });
          const waitsForALock = async () => {
            const [row] = await observer<{ waiting: string | null }[]>`
              select wait_event_type as waiting from pg_stat_activity where pid = ${session?.pid ?? 0}`;
            return row?.waiting === 'Lock';
          };
          await eventually(waitsForALock, 'the delete waiting for a lock');
          expect(settled).toBe(false);
        });
        expect(await deleted).toBe('deleted');
        expect(await count(database.handle.db, records)).toBe(0); // the record written meanwhile went too
      } finally {
        await other.end();
        await observer.end();
      }
    },
  );
});
