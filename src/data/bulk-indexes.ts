/**
 * Bulk mode of the importer, continued (see ./foreign-keys.ts): the indexes that only readers
 * use are dropped for the load and built again before it commits.
 *
 * The discovery indexes (prefix search in code-point order, the reverse lookup by address) take
 * names and addresses in random order: kept up to date row by row, a first load of a million
 * profiles touches their pages all over, far beyond the database's buffers, and took about half
 * as long again as without them (measured). One sorted build at the end costs a few seconds. No
 * write of the import reads them (it matches profiles by the unique name index and wallet rows
 * by profile), and bulk mode has the tables locked against readers anyway. The definitions are
 * read from the catalog, so they come back exactly as the migrations made them; a rolled-back
 * import rolls the drop back too.
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../db/database.js';

/** Indexes only the API's reads use (drizzle/0001_discovery.sql). */
export const READ_ONLY_INDEXES = [
  'profiles_name_c_idx',
  'profiles_namespace_name_c_idx',
  'wallet_addresses_lookup_idx',
];

/** Drops the read-only indexes that exist; the returned function builds them again. */
export async function suspendReadOnlyIndexes(db: Database): Promise<() => Promise<void>> {
  const indexes = await db
    .select({ name: sql<string>`indexname::text`, definition: sql<string>`indexdef` })
    .from(sql`pg_indexes`)
    .where(sql`schemaname = current_schema() and indexname = any(${`{${READ_ONLY_INDEXES.join(',')}}`}::text[])`);
  for (const index of indexes) await db.execute(sql`drop index ${sql.identifier(index.name)}`);
  return async () => {
    for (const index of indexes) await db.execute(sql.raw(index.definition));
  };
}
