/**
 * The write path of the importer: one batch of validated lines into the database, in a few
 * statements whatever the batch size.
 *
 * Each column of a batch travels as ONE parameter, a JSON array, and the statement zips the
 * columns back into rows with `ROWS FROM (json_array_elements_text(...), ...)`. So a statement
 * has a handful of parameters whatever the batch size (PostgreSQL allows 65535), Node builds
 * each parameter with one native JSON.stringify (in worker threads, import-batch.ts), and the
 * server unpacks it in C. Measured against the alternatives (multi-row VALUES, typed arrays with
 * `unnest`, one JSON document with `json_to_recordset`, jsonb) this costs the least CPU on both
 * sides: see docs/data.md.
 *
 * Record values are elements of a JSON array unpacked by `json_array_elements` into a `json`
 * column, which keeps their text, and with it the order of map entries, exactly as serialised.
 */

import type { Database } from '../db/database.js';
import { inArray, type SQL, sql } from '../db/drizzle.js';
import { recordsObjectText } from '../db/records-text.js';
import { namespaces, profiles, records } from '../db/schema.js';
import type { NamespaceLine } from './data-line.js';
import type { BatchColumns } from './import-batch.js';
import { noteNamedProfiles, type RemovalResult, removeNamespaces, removeProfiles } from './import-removals.js';

export interface WriteBatch {
  /** At most one entry per name. */
  namespaces: readonly NamespaceLine[];
  /** The profiles, at most one per name (one statement cannot upsert the same row twice). */
  profiles?: BatchColumns;
  /**
   * Whether to return the names of the changed profiles (for the change announcement; past
   * MAX_NAMED_CHANGES the importer announces everything and stops asking).
   */
  withNames?: boolean;
  /** Profiles to delete (canonical names), before anything else of the batch is written. */
  removeProfiles?: readonly string[];
  /** Namespaces to delete with their profiles, after `removeProfiles`. */
  removeNamespaces?: readonly string[];
  /** Note the batch's profiles as named by the file (`--replace-all`, see import-removals.ts). */
  noteNamed?: boolean;
}

export interface WriteResult {
  /** Namespaces inserted or given a new owner e-mail. */
  namespacesChanged: number;
  /** Of those, the ones that existed (given a new owner e-mail). */
  namespacesReplaced: number;
  /**
   * Whether an existing namespace got a new owner e-mail: that changes the owner check of every
   * profile under it, not only of the profiles in the file.
   */
  ownerChanged: boolean;
  /** Profiles inserted or replaced because their content or creator e-mail changed. */
  profilesChanged: number;
  /** Of those, the ones that existed. */
  profilesReplaced: number;
  /** Their canonical names, when asked for (see WriteBatch.withNames). */
  changedNames: string[] | undefined;
  /** What the batch's removals deleted; their names are in `removedNames`, when asked for. */
  profilesRemoved: number;
  namespacesRemoved: number;
  /** Profiles and namespaces the batch removes that did not exist. */
  removalsOfNothing: number;
  removedNames: string[] | undefined;
}

export interface WriteInProgress {
  /** Resolves once the batch's profile statement is on its way (or there is none). */
  started: Promise<void>;
  done: Promise<WriteResult>;
}

/**
 * Writes a batch; namespaces first, since the batch's profiles may refer to them.
 *
 * The importer starts the next batch once this one's profile statement is on its way, so the
 * database finds the next statement queued when it finishes one, instead of waiting for Node.
 * Statements still reach the database in the file's order, which decides which line wins and
 * which profile gets the lower id. The second step for changed profiles (delete and insert
 * their records) waits for `previous`, the batch before, so that such steps keep the file's
 * order when a later batch changes the same profile again. A batch with removals must start
 * only once every batch before it is done (the importer waits): a removal must not delete a
 * profile whose records an earlier batch has yet to write.
 */
export function startBatch(
  db: Database,
  batch: WriteBatch,
  previous: Promise<unknown> = Promise.resolve(),
): WriteInProgress {
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const done = (async (): Promise<WriteResult> => {
    try {
      const removed = await removeAll(db, batch);
      const namespacesChanged = await upsertNamespaces(db, batch.namespaces);
      const written = batch.profiles;
      if (batch.noteNamed && written !== undefined && written.profileCount > 0) {
        await noteNamedProfiles(db, written.names);
      }
      const profiles =
        written === undefined || written.profileCount === 0
          ? { changed: 0, replaced: 0, names: batch.withNames ? [] : undefined }
          : await replaceProfiles(db, written, batch.withNames ?? false, previous, markStarted);
      const namespacesReplaced = namespacesChanged.filter((row) => !row.inserted).length;
      return {
        namespacesChanged: namespacesChanged.length,
        namespacesReplaced,
        ownerChanged: namespacesReplaced > 0,
        profilesChanged: profiles.changed,
        profilesReplaced: profiles.replaced,
        changedNames: profiles.names,
        profilesRemoved: removed.profiles,
        namespacesRemoved: removed.namespaces,
        removalsOfNothing: removed.ofNothing,
        removedNames: removed.names,
      };
    } finally {
      markStarted();
    }
  })();
  return { started, done };
}

/** The batch's removals. */
async function removeAll(db: Database, batch: WriteBatch): Promise<RemovalResult & { ofNothing: number }> {
  const profileNames = batch.removeProfiles ?? [];
  const namespaceNames = batch.removeNamespaces ?? [];
  const withNames = batch.withNames ?? false;
  if (profileNames.length === 0 && namespaceNames.length === 0) {
    return { profiles: 0, namespaces: 0, names: withNames ? [] : undefined, ofNothing: 0 };
  }
  // Profiles first: one whose namespace goes too counts as found, not as removed by nothing.
  const byName = await removeProfiles(db, profileNames, withNames);
  const byNamespace = await removeNamespaces(db, namespaceNames, withNames);
  const names =
    byName.names === undefined || byNamespace.names === undefined ? undefined : [...byName.names, ...byNamespace.names];
  return {
    profiles: byName.profiles + byNamespace.profiles,
    namespaces: byNamespace.namespaces,
    names,
    ofNothing: profileNames.length - byName.profiles + (namespaceNames.length - byNamespace.namespaces),
  };
}

/** A column of values as one parameter: a JSON array. */
function column<T>(rows: readonly T[], value: (row: T) => unknown): SQL {
  return sql`${JSON.stringify(rows.map(value))}::json`;
}

/** A column already serialized as a JSON array. */
function serialized(json: string): SQL {
  return sql`${json}::json`;
}

async function upsertNamespaces(
  db: Database,
  lines: readonly NamespaceLine[],
): Promise<Array<{ name: string; inserted: boolean }>> {
  if (lines.length === 0) return [];
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
    // xmax is 0 only on a row version this statement inserted, see replaceProfiles.
    .returning({ name: namespaces.name, inserted: sql<boolean>`xmax = 0` });
  return changed;
}

/** The batch's records: rows (name, key, type, value) unpacked from their columns. */
function recordRows(columns: BatchColumns): SQL {
  return sql`rows from (
      json_array_elements_text(${serialized(columns.recordNames)}),
      json_array_elements_text(${serialized(columns.recordKeys)}),
      json_array_elements_text(${serialized(columns.recordTypes)}),
      json_array_elements(${serialized(columns.recordValues)})
    ) as input(name, key, type, value)`;
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
async function replaceProfiles(
  db: Database,
  columns: BatchColumns,
  withNames: boolean,
  previous: Promise<unknown>,
  onStarted: () => void,
): Promise<{ changed: number; replaced: number; names: string[] | undefined }> {
  // The batch's records, unpacked once: the profiles' records text and the records of new
  // profiles below are both made from them.
  const inputRecords = db
    .$with('input_records', {
      name: sql<string>`name`.as('name'),
      key: sql<string>`key`.as('key'),
      type: sql<string>`type`.as('type'),
      value: sql<string>`value`.as('value'),
    })
    .as(sql`select name, key, type, value from ${recordRows(columns)}`);
  // Each profile's `records` object as text, stored with it (src/db/records-text.ts): the same
  // expression a lookup would build it with from the rows written to `records`; '{}' for none.
  const withRecords = columns.recordCount > 0;
  const recordsTextJoin = withRecords
    ? sql`left join (
            select name as records_name, ${recordsObjectText(sql`key`, sql`type`, sql`value`)} as records_json
            from input_records group by name
          ) as records_text on records_text.records_name = input.name`
    : sql``;
  const recordsTextValue = withRecords ? sql`coalesce(records_text.records_json, '{}')` : sql`'{}'`;
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
      sql`insert into ${profiles} (name, local_part, local_skeleton, namespace, description, image, level, creator_email, content_hash, records_json)
          select name, local_part, local_skeleton, namespace, description, image, level::integer, creator_email, content_hash,
            ${recordsTextValue}
          from rows from (
            json_array_elements_text(${serialized(columns.names)}),
            json_array_elements_text(${serialized(columns.localParts)}),
            json_array_elements_text(${serialized(columns.localSkeletons)}),
            json_array_elements_text(${serialized(columns.namespaces)}),
            json_array_elements_text(${serialized(columns.descriptions)}),
            json_array_elements_text(${serialized(columns.images)}),
            json_array_elements_text(${serialized(columns.levels)}),
            json_array_elements_text(${serialized(columns.creatorEmails)}),
            json_array_elements_text(${serialized(columns.contentHashes)})
          ) as input(name, local_part, local_skeleton, namespace, description, image, level, creator_email, content_hash)
          ${recordsTextJoin}
          on conflict (name) do update set
            local_part = excluded.local_part, local_skeleton = excluded.local_skeleton, namespace = excluded.namespace,
            description = excluded.description,
            image = excluded.image, level = excluded.level, creator_email = excluded.creator_email,
            content_hash = excluded.content_hash, records_json = excluded.records_json, updated_at = now()
          where profiles.content_hash <> excluded.content_hash or profiles.creator_email <> excluded.creator_email
          returning id, name, xmax = 0 as inserted`,
    );
  // Drizzle's $with needs a selection, hence `returning key`; nothing reads it.
  const recordsOfNewProfiles = db.$with('records_of_new_profiles', { key: sql<number>`key`.as('key') }).as(
    sql`insert into ${records} (profile_id, key, type, value)
        select upserted.id, input.key::integer, input.type, input.value
        from upserted join input_records as input on input.name = upserted.name
        where upserted.inserted
        returning key`,
  );
  // Prepared (named): postgres.js sends an unnamed statement with parameters as Parse and
  // Describe first and waits for the answer before it sends Bind and Execute, a round trip per
  // batch in which the database waits for Node; a prepared one is parsed once per import.
  // One row back, not one per profile: Node's main thread, which feeds the database, parses a
  // count and the (usually empty) list of replaced profiles, and names only while they are
  // wanted.
  const summary = {
    changed: sql<number>`count(*)::int`,
    replaced: sql<string>`coalesce(json_agg(json_build_array(${upserted.id}, ${upserted.name})) filter (where not ${upserted.inserted}), '[]')::text`,
    names: sql<
      string | null
    >`case when ${withNames}::boolean then coalesce(json_agg(${upserted.name}), '[]')::text end`,
  };
  const statement = !withRecords
    ? db.with(upserted).select(summary).from(upserted).prepare('import_profiles')
    : db
        .with(inputRecords, upserted, recordsOfNewProfiles)
        .select(summary)
        .from(upserted)
        .prepare('import_profiles_and_records');
  const running = statement.execute();
  onStarted();
  const [row] = await running;
  const replaced = (JSON.parse(row?.replaced ?? '[]') as Array<[number | string, string]>).map(([id, name]) => ({
    id: Number(id),
    name,
  }));
  const names = row?.names == null ? undefined : (JSON.parse(row.names) as string[]);

  if (replaced.length > 0) {
    await previous.catch(() => {}); // its failure is the importer's to report
    await db.delete(records).where(
      inArray(
        records.profileId,
        replaced.map((row) => row.id),
      ),
    );
    if (columns.recordCount > 0) await insertRecords(db, replaced, columns);
  }
  return { changed: row?.changed ?? 0, replaced: replaced.length, names };
}

/** The records of `targets` (replaced profiles) from the batch's columns. */
async function insertRecords(
  db: Database,
  targets: ReadonlyArray<{ id: number; name: string }>,
  columns: BatchColumns,
): Promise<void> {
  await db.insert(records).select(
    sql`select target.id::bigint, input.key::integer, input.type, input.value
        from rows from (
          json_array_elements_text(${column(targets, (target) => target.id)}),
          json_array_elements_text(${column(targets, (target) => target.name)})
        ) as target(id, name)
        join ${recordRows(columns)} on input.name = target.name`,
  );
}
