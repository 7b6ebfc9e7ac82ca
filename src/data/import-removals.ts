/**
 * The removals of an import: profiles and namespaces that removal lines name, and with
 * `--replace-all` everything the file does not name (docs/data.md, "Removing profiles").
 *
 * Each removal is one statement whatever its size. A removed profile takes its records with it,
 * and those their wallet addresses (the triggers of migrations 0001 and 0002); its skeleton goes
 * with its row. A statement answers with one row: how many rows went, and the names of the
 * removed profiles while the importer still announces names (MAX_NAMED_CHANGES; past that it
 * announces everything), so a removal of a million profiles sends no million names to Node.
 */

import { MAX_NAMED_CHANGES } from '../db/change-notifications.js';
import type { Database } from '../db/database.js';
import { type SQL, sql } from '../db/drizzle.js';
import { namespaces, profiles } from '../db/schema.js';

export interface RemovalResult {
  /** Profile rows deleted (also those of removed namespaces). */
  profiles: number;
  namespaces: number;
  /** Canonical names of the deleted profiles; undefined when not asked for or too many to name. */
  names: string[] | undefined;
}

/** The temporary table of the profile names a `--replace-all` file has written so far. */
const NAMED_PROFILES = sql.raw('import_named_profiles');

/** Deletes the profiles of `names` (canonical name IDs); names without a profile are skipped. */
export async function removeProfiles(
  db: Database,
  names: readonly string[],
  withNames: boolean,
): Promise<RemovalResult> {
  if (names.length === 0) return { profiles: 0, namespaces: 0, names: withNames ? [] : undefined };
  return removeProfilesWhere(
    db,
    sql`name in (select json_array_elements_text(${JSON.stringify(names)}::json))`,
    withNames,
  );
}

/** Deletes the namespaces of `names` with all their profiles; names that do not exist are skipped. */
export async function removeNamespaces(
  db: Database,
  names: readonly string[],
  withNames: boolean,
): Promise<RemovalResult> {
  if (names.length === 0) return { profiles: 0, namespaces: 0, names: withNames ? [] : undefined };
  const targets = sql`(select json_array_elements_text(${JSON.stringify(names)}::json))`;
  // Locked first: a concurrent writer cannot add a profile under them any more (its reference
  // check waits for this transaction), so the profiles deleted next, whose names are announced,
  // are all there are; the namespaces' own cascade then finds none left.
  await db.execute(sql`select 1 from ${namespaces} where name in ${targets} for update`);
  const removed = await removeProfilesWhere(db, sql`namespace in ${targets}`, withNames);
  return { ...removed, namespaces: await removeNamespacesWhere(db, sql`name in ${targets}`) };
}

/**
 * Starts a `--replace-all` import: locks the tables against other writers (readers never wait),
 * so that nothing another writer adds meanwhile survives a file that does not name it, and
 * creates the table of the names written (dropped at the end of the transaction).
 */
export async function startReplaceAll(db: Database): Promise<void> {
  await db.execute(sql`lock table namespaces, profiles, records in share row exclusive mode`);
  await db.execute(sql`create temporary table ${NAMED_PROFILES} (name text not null) on commit drop`);
}

/** Notes the profiles a batch writes (a JSON array of canonical names) as named by the file. */
export async function noteNamedProfiles(db: Database, namesJson: string): Promise<void> {
  await db.execute(sql`insert into ${NAMED_PROFILES} (name) select json_array_elements_text(${namesJson}::json)`);
}

/**
 * Ends a `--replace-all` import: deletes every profile the file has not written and every
 * namespace it has not named (`namedNamespaces`: its namespace lines and the namespaces of its
 * profiles, so a profile it names never loses its namespace).
 */
export async function removeUnnamed(
  db: Database,
  namedNamespaces: readonly string[],
  withNames: boolean,
): Promise<RemovalResult> {
  // Statistics of the temporary table let the planner choose a hash anti-join for a big file.
  await db.execute(sql`analyze ${NAMED_PROFILES}`);
  const removed = await removeProfilesWhere(
    db,
    sql`not exists (select 1 from ${NAMED_PROFILES} named where named.name = ${sql.raw('profiles.name')})`,
    withNames,
  );
  const named = sql`(select json_array_elements_text(${JSON.stringify(namedNamespaces)}::json))`;
  return { ...removed, namespaces: await removeNamespacesWhere(db, sql`name not in ${named}`) };
}

async function removeProfilesWhere(db: Database, condition: SQL, withNames: boolean): Promise<RemovalResult> {
  const removed = db
    .$with('removed', { name: sql<string>`name`.as('name') })
    .as(sql`delete from ${profiles} where ${condition} returning name`);
  // One more than can be named: a longer list is announced as "everything" anyway.
  const limit = sql.raw(String(withNames ? MAX_NAMED_CHANGES + 1 : 0));
  const [row] = await db
    .with(removed)
    .select({
      count: sql<number>`count(*)::int`,
      names: sql<string>`(select coalesce(json_agg(first_ones.name), '[]')::text from (select name from removed limit ${limit}) as first_ones)`,
    })
    .from(removed);
  const names = JSON.parse(row?.names ?? '[]') as string[];
  return {
    profiles: row?.count ?? 0,
    namespaces: 0,
    names: withNames && names.length <= MAX_NAMED_CHANGES ? names : undefined,
  };
}

async function removeNamespacesWhere(db: Database, condition: SQL): Promise<number> {
  const removed = db
    .$with('removed', { name: sql<string>`name`.as('name') })
    .as(sql`delete from ${namespaces} where ${condition} returning name`);
  const [row] = await db.with(removed).select({ count: sql<number>`count(*)::int` }).from(removed);
  return row?.count ?? 0;
}
