/**
 * The write path of the importer: one batch of validated lines into the database, in a few
 * statements whatever the batch size.
 *
 * Each column of a batch travels as ONE parameter, a JSON array, and the statement zips the
 * columns back into rows with `ROWS FROM (json_array_elements_text(...), ...)`. So a statement
 * has a handful of parameters whatever the batch size (PostgreSQL allows 65535), Node builds
 * each parameter with one native JSON.stringify, and the server unpacks it in C. Measured
 * against the alternatives (multi-row VALUES, typed arrays with `unnest`, one JSON document with
 * `json_to_recordset`) this costs the least CPU on both sides: see /work/notes/readme-data.md.
 *
 * Record values are elements of a JSON array unpacked by `json_array_elements` into a `json`
 * column, which keeps their text, and with it the order of map entries, exactly as serialised.
 */
import { inArray, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../db/database.js';
import { namespaces, profiles, records } from '../db/schema.js';
import { contentHash } from '../profiles/content-hash.js';
import type { NamespaceLine, ProfileLine } from './data-line.js';

export interface WriteBatch {
  /** At most one entry per name. */
  namespaces: readonly NamespaceLine[];
  /** At most one entry per name: one statement cannot upsert the same row twice. */
  profiles: readonly ProfileLine[];
}

export interface WriteCounts {
  /** Namespaces inserted or given a new owner e-mail. */
  namespacesChanged: number;
  /** Profiles inserted or replaced because their content or creator e-mail changed. */
  profilesChanged: number;
}

/** Writes a batch; namespaces first, since the batch's profiles may refer to them. */
export async function writeBatch(db: Database, batch: WriteBatch): Promise<WriteCounts> {
  const namespacesChanged = await upsertNamespaces(db, batch.namespaces);
  const profilesChanged = await replaceProfiles(db, batch.profiles);
  return { namespacesChanged, profilesChanged };
}

/** A column of values as one parameter: a JSON array. */
function column<T>(rows: readonly T[], value: (row: T) => unknown): SQL {
  return sql`${JSON.stringify(rows.map(value))}::json`;
}

async function upsertNamespaces(db: Database, lines: readonly NamespaceLine[]): Promise<number> {
  if (lines.length === 0) return 0;
  const changed = await db
    .insert(namespaces)
    .select(
      sql`select * from rows from (
            json_array_elements_text(${column(lines, (line) => line.name)}),
            json_array_elements_text(${column(lines, (line) => line.ownerEmail)}))`,
    )
    .onConflictDoUpdate({
      target: namespaces.name,
      set: { ownerEmail: sql`excluded.owner_email` },
      // An unchanged namespace is left alone: re-importing the same file writes nothing.
      setWhere: sql`${namespaces.ownerEmail} is distinct from excluded.owner_email`,
    })
    .returning({ name: namespaces.name });
  return changed.length;
}

/**
 * Upserts the profiles and replaces the records of exactly those that were inserted or changed.
 * An unchanged profile (same content hash and creator e-mail) is not touched at all, so its
 * `updated_at`, and with it every cache validator, stays as it was.
 *
 * The records of new profiles are inserted by the same statement, so a batch of new profiles
 * (the bulk of a big import) costs one round trip. Changed profiles need a second step: their
 * old records must be deleted before the new ones go in, which one statement cannot order.
 */
async function replaceProfiles(db: Database, lines: readonly ProfileLine[]): Promise<number> {
  if (lines.length === 0) return 0;
  const recordRows = lines.flatMap((line) => line.records.map((record) => ({ name: line.name, ...record })));
  // Drizzle's INSERT ... SELECT cannot skip the identity column, so the upsert is plain SQL in a
  // CTE, and Drizzle's typed SELECT around it maps the returned rows the same way on both drivers.
  const upserted = db
    .$with('upserted', {
      id: sql<number>`id`.mapWith(Number).as('id'),
      name: sql<string>`name`.as('name'),
      // xmax is 0 only on a row version this statement inserted (an updated row carries the
      // updating transaction's lock): a new profile has no old records to delete.
      inserted: sql<boolean>`inserted`.as('inserted'),
    })
    .as(
      sql`insert into ${profiles} (name, local_part, namespace, description, image, level, creator_email, content_hash)
          select name, local_part, namespace, description, image, level::integer, creator_email, content_hash
          from rows from (
            json_array_elements_text(${column(lines, (line) => line.name)}),
            json_array_elements_text(${column(lines, (line) => line.localPart)}),
            json_array_elements_text(${column(lines, (line) => line.namespace)}),
            json_array_elements_text(${column(lines, (line) => line.description)}),
            json_array_elements_text(${column(lines, (line) => line.image)}),
            json_array_elements_text(${column(lines, (line) => line.level)}),
            json_array_elements_text(${column(lines, (line) => line.creatorEmail)}),
            json_array_elements_text(${column(lines, (line) => contentHash(line))})
          ) as input(name, local_part, namespace, description, image, level, creator_email, content_hash)
          on conflict (name) do update set
            local_part = excluded.local_part, namespace = excluded.namespace, description = excluded.description,
            image = excluded.image, level = excluded.level, creator_email = excluded.creator_email,
            content_hash = excluded.content_hash, updated_at = now()
          where profiles.content_hash <> excluded.content_hash or profiles.creator_email <> excluded.creator_email
          returning id, name, xmax = 0 as inserted`,
    );
  // Drizzle's $with needs a selection, hence `returning key`; nothing reads it.
  const recordsOfNewProfiles = db.$with('records_of_new_profiles', { key: sql<number>`key`.as('key') }).as(
    sql`insert into ${records} (profile_id, key, type, value)
        select upserted.id, input.key::integer, input.type, input.value
        from upserted join rows from (
          json_array_elements_text(${column(recordRows, (row) => row.name)}),
          json_array_elements_text(${column(recordRows, (row) => row.key)}),
          json_array_elements_text(${column(recordRows, (row) => row.type)}),
          json_array_elements(${column(recordRows, (row) => row.value)})
        ) as input(name, key, type, value) on input.name = upserted.name
        where upserted.inserted
        returning key`,
  );
  const changed = await db.with(upserted, recordsOfNewProfiles).select().from(upserted);

  const replaced = changed.filter((row) => !row.inserted);
  if (replaced.length > 0) {
    await db.delete(records).where(
      inArray(
        records.profileId,
        replaced.map((row) => row.id),
      ),
    );
    await insertRecords(db, replaced, lines);
  }
  return changed.length;
}

async function insertRecords(
  db: Database,
  targets: ReadonlyArray<{ id: number; name: string }>,
  lines: readonly ProfileLine[],
): Promise<void> {
  const byName = new Map(lines.map((line) => [line.name, line]));
  const rows = targets.flatMap(({ id, name }) =>
    (byName.get(name)?.records ?? []).map((record) => ({ id, ...record })),
  );
  if (rows.length === 0) return;
  await db.insert(records).select(
    sql`select profile_id::bigint, key::integer, type, value
        from rows from (
          json_array_elements_text(${column(rows, (row) => row.id)}),
          json_array_elements_text(${column(rows, (row) => row.key)}),
          json_array_elements_text(${column(rows, (row) => row.type)}),
          json_array_elements(${column(rows, (row) => row.value)})
        ) as input(profile_id, key, type, value)`,
  );
}
