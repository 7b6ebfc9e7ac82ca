/**
 * The read queries of the API. Each takes a batch of keys, so DataLoader can turn the lookups of
 * one request into one statement. None of them selects a private e-mail.
 */

import type { ProfileRow } from '../profiles/profile.js';
import { and, eq, inArray, or, sql } from './drizzle.js';
import { recordsTextOfProfile } from './records-text.js';
import type { Database } from './schema.js';
import { namespaces, profiles } from './schema.js';

const profileColumns = {
  id: profiles.id,
  name: profiles.name,
  localPart: profiles.localPart,
  namespace: profiles.namespace,
  description: profiles.description,
  image: profiles.image,
  level: profiles.level,
  contentHash: profiles.contentHash,
  // Stored with the profile, or built from its records where it is not (./records-text.ts).
  recordsJson: recordsTextOfProfile,
};

/**
 * The lookups of the hot path as Drizzle prepared statements, built once per database: the SQL
 * text is not rebuilt for every call, and PostgreSQL plans it once per connection. One name
 * compares with `=` (every REST lookup; PostgreSQL answers it markedly faster than `= any`), a
 * batch with `= any` of one array parameter, so one statement serves any batch size.
 */
function preparedLookups(db: Database) {
  const select = () => db.select(profileColumns).from(profiles);
  return {
    one: select()
      .where(sql`${profiles.name} = ${sql.placeholder('name')}`)
      .prepare('profile_by_name'),
    many: select()
      .where(sql`${profiles.name} = any(${sql.placeholder('names')}::text[])`)
      .prepare('profiles_by_names'),
  };
}

const preparedByDatabase = new WeakMap<Database, ReturnType<typeof preparedLookups>>();

function prepared(db: Database): ReturnType<typeof preparedLookups> {
  let lookups = preparedByDatabase.get(db);
  if (lookups === undefined) {
    lookups = preparedLookups(db);
    preparedByDatabase.set(db, lookups);
  }
  return lookups;
}

/** Profiles with their records by canonical name ID; names without a profile are absent. */
export async function findProfilesByNames(db: Database, names: readonly string[]): Promise<ProfileRow[]> {
  if (names.length === 0) return [];
  const lookups = prepared(db);
  return names.length === 1 ? lookups.one.execute({ name: names[0] }) : lookups.many.execute({ names: [...names] });
}

/** Which of the given canonical namespaces exist (public: only the names). */
export async function findNamespaces(db: Database, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const rows = await db
    .select({ name: namespaces.name })
    .from(namespaces)
    .where(inArray(namespaces.name, [...names]));
  return rows.map((row) => row.name);
}

/**
 * Whether `emailKey` (lower case) owns the namespace of `name` or created `name`. The private
 * e-mails are compared inside the database and never leave it; a name that does not exist
 * answers false.
 */
export async function isOwnerOrCreator(db: Database, name: string, emailKey: string): Promise<boolean> {
  const rows = await db
    .select({ one: sql<number>`1` })
    .from(profiles)
    .innerJoin(namespaces, eq(namespaces.name, profiles.namespace))
    .where(
      and(
        eq(profiles.name, name),
        or(eq(sql`lower(${profiles.creatorEmail})`, emailKey), eq(sql`lower(${namespaces.ownerEmail})`, emailKey)),
      ),
    )
    .limit(1);
  return rows.length > 0;
}
