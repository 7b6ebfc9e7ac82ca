/**
 * Bulk mode of the importer: the reference checks once at the end instead of per statement.
 *
 * The references (profiles -> namespaces, records -> profiles) are checked by statement-level
 * triggers (migration 0001), which also lock the referenced rows FOR KEY SHARE so that a
 * concurrent delete or rename waits for the import. Bulk mode instead takes the write lock on
 * all three tables for the whole import (SHARE ROW EXCLUSIVE: other writers wait, readers do
 * not), switches the check triggers off inside its transaction, and before committing checks
 * every row of the tables with one anti-join per reference. A rolled-back import rolls the
 * switch back too; other sessions never see the triggers off (ALTER TABLE is transactional).
 *
 * The per-statement checks are cheap and the final check reads both tables once, so bulk mode
 * comes out about as fast as a plain import (docs/decisions.md, "References checked per
 * statement, and bulk mode"). It stays for scripts that pass --bulk.
 */

import type { Database } from '../db/database.js';
import { type SQL, sql } from '../db/drizzle.js';

/** The check triggers of migration 0001, by table. */
const CHECK_TRIGGERS: ReadonlyArray<readonly [table: string, trigger: string]> = [
  ['profiles', 'profiles_check_namespace_on_insert'],
  ['profiles', 'profiles_check_namespace_on_update'],
  ['records', 'records_check_profile_on_insert'],
  ['records', 'records_check_profile_on_update'],
];

/** A reference the final check found broken; SQLSTATE 23503 like a foreign key's. */
class BrokenReferenceError extends Error {
  readonly code = '23503';
}

/** Locks the tables against other writers and switches the per-statement checks off; the returned function checks and switches them back on. */
export async function deferReferenceChecks(db: Database): Promise<() => Promise<void>> {
  await db.execute(sql`lock table namespaces, profiles, records in share row exclusive mode`);
  for (const [table, trigger] of CHECK_TRIGGERS) {
    await db.execute(sql`alter table ${sql.identifier(table)} disable trigger ${sql.identifier(trigger)}`);
  }
  return async () => {
    await checkAllReferences(db);
    for (const [table, trigger] of CHECK_TRIGGERS) {
      await db.execute(sql`alter table ${sql.identifier(table)} enable trigger ${sql.identifier(trigger)}`);
    }
  };
}

/** The references the check triggers guard: a row of `rows` whose `reference` names no row of `referenced`. */
const REFERENCES: ReadonlyArray<{
  rows: SQL;
  reference: SQL<string | number>;
  referenced: SQL;
  broken: (reference: string | number) => string;
}> = [
  {
    rows: sql`profiles p`,
    reference: sql`p.namespace`,
    referenced: sql`select 1 from namespaces s where s.name = p.namespace`,
    broken: (namespace) => `a profile names the namespace "${namespace}", which does not exist`,
  },
  {
    rows: sql`records r`,
    reference: sql`r.profile_id`,
    referenced: sql`select 1 from profiles p where p.id = r.profile_id`,
    broken: (profileId) => `a record names the profile ${profileId}, which does not exist`,
  },
];

async function checkAllReferences(db: Database): Promise<void> {
  for (const { rows, reference, referenced, broken } of REFERENCES) {
    const [orphan] = await db.select({ reference }).from(rows).where(sql`not exists (${referenced})`).limit(1);
    if (orphan !== undefined) throw new BrokenReferenceError(broken(orphan.reference));
  }
}
