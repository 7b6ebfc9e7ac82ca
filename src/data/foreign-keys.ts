/**
 * Bulk mode of the importer: foreign keys checked once at the end instead of row by row.
 *
 * PostgreSQL checks a foreign key with one query per inserted row; for a big import that is half
 * of the database's work (measured: see /work/notes/readme-data.md). Dropping the foreign keys
 * of the loaded tables inside the import's transaction and adding them back before it commits
 * checks each of them with a single join instead. The definitions are read from the catalog, so
 * the constraints come back exactly as the migrations made them, and a rolled-back import rolls
 * the drop back too.
 *
 * The price: dropping a constraint locks its tables exclusively until the transaction ends, so
 * nothing can read profiles while a bulk import runs. Meant for initial loads and maintenance
 * windows, never the default.
 */
import { inArray, sql } from 'drizzle-orm';
import type { Database } from '../db/database.js';

interface ForeignKey {
  table: string;
  name: string;
  definition: string;
}

/** Drops the foreign keys declared on `tables`; the returned function adds them back. */
export async function suspendForeignKeys(db: Database, tables: readonly string[]): Promise<() => Promise<void>> {
  const foreignKeys: ForeignKey[] = await db
    .select({
      // regclass prints as a valid (quoted where needed) table name.
      table: sql<string>`conrelid::regclass::text`,
      name: sql<string>`conname::text`,
      definition: sql<string>`pg_get_constraintdef(oid)`,
    })
    .from(sql`pg_constraint`)
    .where(sql`contype = 'f' and ${inArray(sql`conrelid::regclass::text`, [...tables])}`);
  for (const key of foreignKeys) {
    await db.execute(sql`alter table ${sql.raw(key.table)} drop constraint ${sql.identifier(key.name)}`);
  }
  return async () => {
    for (const key of foreignKeys) {
      await db.execute(
        sql`alter table ${sql.raw(key.table)} add constraint ${sql.identifier(key.name)} ${sql.raw(key.definition)}`,
      );
    }
  };
}
