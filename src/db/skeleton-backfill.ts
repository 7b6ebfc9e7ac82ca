/**
 * Skeletons for the profiles that have none (`profiles.local_skeleton is null`): the rows that
 * existed before migration 0003, and rows that a writer other than the importer added (a
 * hand-written INSERT). A migration cannot compute them (they take Unicode's confusables data,
 * src/names/skeleton.ts), so this runs right after the migrations, wherever they run: at every
 * start of the server and of the data commands, and by `npm run db:migrate`.
 *
 * Batches of rows in id order, each its own statement: readers never wait, and an interrupted
 * backfill goes on at the next start. With nothing to do it costs one look into an empty partial
 * index (`profiles_missing_skeleton_idx`).
 */

import { skeleton } from '../names/skeleton.js';
import { and, asc, gt, isNull, sql } from './drizzle.js';
import { inIdBatches } from './id-batches.js';
import type { Database } from './schema.js';
import { profiles } from './schema.js';

const BATCH_SIZE = 5000;

/** Fills the missing skeletons; returns how many rows it wrote. */
export async function backfillSkeletons(db: Database, batchSize = BATCH_SIZE): Promise<number> {
  return inIdBatches(
    (after) =>
      db
        .select({ id: profiles.id, localPart: profiles.localPart })
        .from(profiles)
        .where(and(isNull(profiles.localSkeleton), gt(profiles.id, after)))
        .orderBy(asc(profiles.id))
        .limit(batchSize),
    (rows) => writeSkeletons(db, rows),
  );
}

async function writeSkeletons(db: Database, rows: ReadonlyArray<{ id: number; localPart: string }>): Promise<void> {
  const ids = JSON.stringify(rows.map((row) => row.id));
  const skeletons = JSON.stringify(rows.map((row) => skeleton(row.localPart)));
  // `is null` again: an import may have written the row (and its skeleton) in between.
  await db.execute(
    sql`update ${profiles} set local_skeleton = input.skeleton
        from rows from (json_array_elements_text(${ids}::json), json_array_elements_text(${skeletons}::json))
          as input(id, skeleton)
        where ${profiles.id} = input.id::bigint and ${profiles.localSkeleton} is null`,
  );
}
