/**
 * The read queries of the API. Each takes a batch of keys, so DataLoader can turn the lookups of
 * one request into one statement per table. None of them selects a private e-mail.
 */
import { and, asc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Database } from './database.js';
import { namespaces, profiles, type RecordValue, records } from './schema.js';

/** The public columns of a profile. */
export interface PublicProfile {
  id: number;
  name: string;
  localPart: string;
  namespace: string;
  description: string;
  image: string;
  level: number;
  contentHash: string;
  updatedAt: Date;
}

export interface ProfileRecord {
  profileId: number;
  key: number;
  type: string;
  value: RecordValue;
}

const publicProfileColumns = {
  id: profiles.id,
  name: profiles.name,
  localPart: profiles.localPart,
  namespace: profiles.namespace,
  description: profiles.description,
  image: profiles.image,
  level: profiles.level,
  contentHash: profiles.contentHash,
  updatedAt: profiles.updatedAt,
};

/**
 * The lookups of the hot path as Drizzle prepared statements, built once per database: the SQL
 * text is not rebuilt for every call, and PostgreSQL plans it once per connection. A batch of
 * names is one array parameter (`= any($1)`), so one statement serves any batch size.
 */
function preparedLookups(db: Database) {
  // One name compares with `=`, a batch with `= any(array)`: PostgreSQL answers the single-name
  // form (every REST lookup) markedly faster.
  const oneName = sql`${profiles.name} = ${sql.placeholder('name')}`;
  const someNames = sql`${profiles.name} = any(${sql.placeholder('names')}::text[])`;
  const plain = () => db.select(publicProfileColumns).from(profiles);
  const withRecords = () =>
    db
      .select({
        ...publicProfileColumns,
        records: sql<RecordTuple[] | string>`coalesce((
          select json_agg(json_build_array(${records.key}, ${records.type}, ${records.value}) order by ${records.key})
          from ${records} where ${records.profileId} = ${profiles.id}), '[]'::json)`,
      })
      .from(profiles);
  return {
    profileByName: plain().where(oneName).prepare('profile_by_name'),
    profilesByNames: plain().where(someNames).prepare('profiles_by_names'),
    profileWithRecordsByName: withRecords().where(oneName).prepare('profile_with_records_by_name'),
    profilesWithRecordsByNames: withRecords().where(someNames).prepare('profiles_with_records_by_names'),
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

/** Profiles by canonical name ID; names that do not exist are simply absent from the result. */
export async function findProfilesByNames(db: Database, names: readonly string[]): Promise<PublicProfile[]> {
  if (names.length === 0) return [];
  const lookups = prepared(db);
  return names.length === 1
    ? lookups.profileByName.execute({ name: names[0] })
    : lookups.profilesByNames.execute({ names: [...names] });
}

export interface ProfileWithRecords extends PublicProfile {
  records: ProfileRecord[];
}

/**
 * Profiles with their records in one statement, for requests that want both (every REST lookup):
 * one round trip instead of two. The records come as a JSON array per profile.
 */
export async function findProfilesWithRecordsByNames(
  db: Database,
  names: readonly string[],
): Promise<ProfileWithRecords[]> {
  if (names.length === 0) return [];
  const lookups = prepared(db);
  const rows =
    names.length === 1
      ? await lookups.profileWithRecordsByName.execute({ name: names[0] })
      : await lookups.profilesWithRecordsByNames.execute({ names: [...names] });
  return rows.map(({ records: tuples, ...profile }) => ({
    ...profile,
    // Drivers hand json over parsed or as text, depending on their type parsers.
    records: (typeof tuples === 'string' ? (JSON.parse(tuples) as RecordTuple[]) : tuples).map(
      ([key, type, value]) => ({ profileId: profile.id, key, type, value }),
    ),
  }));
}

type RecordTuple = [key: number, type: string, value: RecordValue];

/** Records of the given profiles, in ascending key order within each profile. */
export async function findRecordsByProfileIds(db: Database, ids: readonly number[]): Promise<ProfileRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db
    // As text, parsed once here: drivers parse json themselves and Drizzle's json column would
    // parse the result again, turning the string "123" into the number 123.
    .select({
      profileId: records.profileId,
      key: records.key,
      type: records.type,
      json: sql<string>`${records.value}::text`,
    })
    .from(records)
    .where(inArray(records.profileId, [...ids]))
    .orderBy(asc(records.profileId), asc(records.key));
  return rows.map(({ json, ...record }) => ({ ...record, value: JSON.parse(json) as RecordValue }));
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
