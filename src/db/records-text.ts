/**
 * A profile's `records` object as JSON text, built by the database: keys ascending, each value's
 * text exactly as stored (a `json` column keeps it byte for byte, map entries in their order).
 * The service embeds it in answers without parsing it (src/profiles/profile.ts).
 *
 * The importer writes it with the profile (`profiles.records_json`, from the same rows it writes
 * to `records`, src/data/import-writer.ts), so a lookup reads one column instead of PostgreSQL
 * building it every time (docs/decisions.md, "The records text stored with the profile").
 * Where it is null (rows of other writers, and of before migration 0005) a lookup builds it from
 * `records` with the same expression, and the backfill below, run after the migrations, stores it.
 */
import { and, asc, gt, isNull, type SQL, sql } from './drizzle.js';
import { inIdBatches } from './id-batches.js';
import type { Database } from './schema.js';
import { profiles, records } from './schema.js';

/**
 * The aggregate that builds the text from record rows (`key` a record number, `type` text, `value`
 * json), null when there are none. One expression for the importer's input and for `records`, so
 * the stored text and the one built at lookup are the same bytes.
 */
export function recordsObjectText(key: SQL, type: SQL, value: SQL): SQL {
  return sql`'{' || string_agg(
      '"' || (${key})::integer || '":{"type":' || to_json(${type})::text || ',"value":' || (${value})::text || '}',
      ',' order by (${key})::integer) || '}'`;
}

/** The text built from a profile's rows in `records`, `'{}'` for none. */
function builtFromRecords(profileId: SQL): SQL {
  return sql`coalesce((
    select ${recordsObjectText(sql`${records.key}`, sql`${records.type}`, sql`${records.value}`)}
    from ${records} where ${records.profileId} = ${profileId}), '{}')`;
}

/** The profile's records text, as a lookup selects it: the stored text, or built where there is none. */
export const recordsTextOfProfile = sql<string>`coalesce(${profiles.recordsJson}, ${builtFromRecords(sql`${profiles.id}`)})`;

const BATCH_SIZE = 5000;

/**
 * Stores the records text of the profiles that have none; returns how many rows it wrote. Batches
 * of rows in id order, each its own statement: readers never wait, and an interrupted backfill
 * goes on at the next start. With nothing to do it costs one look into an empty partial index
 * (`profiles_missing_records_json_idx`).
 */
export async function backfillRecordsText(db: Database, batchSize = BATCH_SIZE): Promise<number> {
  return inIdBatches(
    (after) =>
      db
        .select({ id: profiles.id })
        .from(profiles)
        .where(and(isNull(profiles.recordsJson), gt(profiles.id, after)))
        .orderBy(asc(profiles.id))
        .limit(batchSize),
    // `is null` again: an import may have written a row (and its text) in between.
    (rows) =>
      db
        .execute(
          sql`update ${profiles} set records_json = ${builtFromRecords(sql`${profiles.id}`)}
              where ${profiles.id} between ${rows[0]?.id} and ${rows.at(-1)?.id} and ${profiles.recordsJson} is null`,
        )
        .then(() => {}),
  );
}
