/**
 * The write path of the importer: one batch of validated lines into the database, in a few
 * statements whatever the batch size.
 *
 * Each statement takes its whole batch as one array parameter per column, unpacked by `unnest`:
 * a handful of parameters whatever the batch size (far below PostgreSQL's limit of 65535), no
 * placeholders to build, and the cheapest input for the server to parse (measured against a
 * JSON document per batch with `json_to_recordset`: see /work/notes/readme-data.md). Record
 * values travel as JSON text into a `json` column, so their text, and with it the order of map
 * entries, is stored exactly as serialised here.
 */
import { inArray, sql } from 'drizzle-orm';
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

async function upsertNamespaces(db: Database, lines: readonly NamespaceLine[]): Promise<number> {
  if (lines.length === 0) return 0;
  const names = sql.param(lines.map((line) => line.name));
  const ownerEmails = sql.param(lines.map((line) => line.ownerEmail));
  const changed = await db
    .insert(namespaces)
    .select(sql`select * from unnest(${names}::text[], ${ownerEmails}::text[])`)
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
 * Upserts the profiles, then replaces the records of exactly those that were inserted or
 * changed. An unchanged profile (same content hash and creator e-mail) is not touched at all,
 * so its `updated_at`, and with it every cache validator, stays as it was.
 */
async function replaceProfiles(db: Database, lines: readonly ProfileLine[]): Promise<number> {
  if (lines.length === 0) return 0;
  const column = <T>(value: (line: ProfileLine) => T) => sql.param(lines.map(value));
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
          select * from unnest(${column((line) => line.name)}::text[], ${column((line) => line.localPart)}::text[],
            ${column((line) => line.namespace)}::text[], ${column((line) => line.description)}::text[],
            ${column((line) => line.image)}::text[], ${column((line) => line.level)}::integer[],
            ${column((line) => line.creatorEmail)}::text[], ${column((line) => contentHash(line))}::text[])
          on conflict (name) do update set
            local_part = excluded.local_part, namespace = excluded.namespace, description = excluded.description,
            image = excluded.image, level = excluded.level, creator_email = excluded.creator_email,
            content_hash = excluded.content_hash, updated_at = now()
          where profiles.content_hash <> excluded.content_hash or profiles.creator_email <> excluded.creator_email
          returning id, name, xmax = 0 as inserted`,
    );
  const changed = await db.with(upserted).select().from(upserted);
  if (changed.length === 0) return 0;

  const replaced = changed.filter((row) => !row.inserted).map((row) => row.id);
  if (replaced.length > 0) await db.delete(records).where(inArray(records.profileId, replaced));
  await insertRecords(db, changed, lines);
  return changed.length;
}

async function insertRecords(
  db: Database,
  changed: ReadonlyArray<{ id: number; name: string }>,
  lines: readonly ProfileLine[],
): Promise<void> {
  const byName = new Map(lines.map((line) => [line.name, line]));
  const profileIds: number[] = [];
  const keys: number[] = [];
  const types: string[] = [];
  const values: string[] = [];
  for (const { id, name } of changed) {
    for (const record of byName.get(name)?.records ?? []) {
      profileIds.push(id);
      keys.push(record.key);
      types.push(record.type);
      // Serialised here, parsed by nobody: the json column keeps this text, map order included.
      values.push(JSON.stringify(record.value));
    }
  }
  if (profileIds.length === 0) return;
  await db
    .insert(records)
    .select(
      sql`select * from unnest(${sql.param(profileIds)}::bigint[], ${sql.param(keys)}::integer[],
            ${sql.param(types)}::text[], ${sql.param(values)}::json[])`,
    );
}
