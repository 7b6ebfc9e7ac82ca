/**
 * Look-alikes of a name among the existing ones: the names in its namespace whose local part has
 * the same UTS #39 skeleton (profiles.local_skeleton), other than the name itself, in code-point
 * order. One lookup of `profiles_namespace_skeleton_idx` (namespace, skeleton): its cost depends
 * on how many names share the skeleton (a handful: the names that look alike), not on the number
 * of profiles; those are sorted by name afterwards. Tests read its plan.
 */

import { and, sql } from './drizzle.js';
import type { Database } from './schema.js';
import { profiles } from './schema.js';

export interface LookAlikeQuery {
  /** The canonical namespace. */
  namespace: string;
  /** The skeleton of the canonical local part (src/names/skeleton.ts). */
  skeleton: string;
  /** The canonical name itself, which is never its own look-alike. */
  name: string;
  limit: number;
}

type Values = Record<keyof LookAlikeQuery, unknown>;

const nameC = sql`${profiles.name} collate "C"`;

function lookAlikeSelect(db: Database, values: Values) {
  return db
    .select({ name: profiles.name })
    .from(profiles)
    .where(
      and(
        sql`${profiles.namespace} = ${values.namespace}`,
        sql`${profiles.localSkeleton} = ${values.skeleton}`,
        sql`${profiles.name} <> ${values.name}`,
      ),
    )
    .orderBy(nameC)
    .limit(values.limit as number);
}

/** The query with its values in place, as the database sees it (tests read its plan). */
export function lookAlikesQuery(db: Database, query: LookAlikeQuery) {
  return lookAlikeSelect(db, query);
}

interface Prepared {
  execute(values: Values): Promise<Array<{ name: string }>>;
}

/** Prepared once per database, like the listings (./discovery-queries.ts): name checks are frequent. */
const preparedByDatabase = new WeakMap<Database, Prepared>();

function prepared(db: Database): Prepared {
  let statement = preparedByDatabase.get(db);
  if (statement === undefined) {
    const placeholders: Values = {
      namespace: sql.placeholder('namespace'),
      skeleton: sql.placeholder('skeleton'),
      name: sql.placeholder('name'),
      limit: sql.placeholder('limit'),
    };
    statement = lookAlikeSelect(db, placeholders).prepare('look_alikes') as Prepared;
    preparedByDatabase.set(db, statement);
  }
  return statement;
}

export async function findLookAlikes(db: Database, query: LookAlikeQuery): Promise<string[]> {
  const rows = await prepared(db).execute({ ...query });
  return rows.map((row) => row.name);
}
