/**
 * Databases as an older release left them, for the suites that prove a migration carries the
 * data that was there before it; and the query plans the index suites read.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { type GeneratorOptions, generateNdjson } from '../../src/data/generator.js';
import { importLines } from '../../src/data/importer.js';
import { type Database, type DatabaseHandle, MIGRATIONS_FOLDER, openDatabase } from '../../src/db/database.js';
import { migratePostgres, type PostgresJsDatabase, sql } from '../../src/db/drizzle.js';
import { createTestDatabase, type DatabaseKind } from './databases.js';

/** The rows of a `db.execute` result, on either driver. */
export const rows = <T>(result: unknown): T[] => ((result as { rows?: T[] }).rows ?? [...(result as T[])]) as T[];

/**
 * A new database of `kind` migrated only with the migrations whose tag `keep` accepts, handed
 * to `use`; the database and the migrations' copy are removed afterwards.
 */
export async function withOlderSchema(
  kind: DatabaseKind,
  keep: (tag: string) => boolean,
  use: (old: DatabaseHandle) => Promise<void>,
): Promise<void> {
  const before = await createTestDatabase(kind);
  const oldMigrations = mkdtempSync(path.join(os.tmpdir(), 'nps-old-migrations-'));
  try {
    cpSync(MIGRATIONS_FOLDER, oldMigrations, { recursive: true });
    const journalFile = path.join(oldMigrations, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: Array<{ tag: string }> };
    journal.entries = journal.entries.filter((entry) => keep(entry.tag));
    writeFileSync(journalFile, JSON.stringify(journal));
    const old = await openDatabase({ url: before.url, dataDir: before.dataDir });
    try {
      if (old.kind === 'pglite') {
        await migratePglite(old.db as unknown as PgliteDatabase, { migrationsFolder: oldMigrations });
      } else {
        await migratePostgres(old.db as unknown as PostgresJsDatabase, { migrationsFolder: oldMigrations });
      }
      await use(old);
    } finally {
      await old.close();
    }
  } finally {
    rmSync(oldMigrations, { recursive: true, force: true });
    await before.drop();
  }
}

/** Imports generated profiles and analyses, so that the planner sees a table of that size. */
export async function importGenerated(db: Database, options: GeneratorOptions): Promise<boolean> {
  const report = await importLines(db, [...generateNdjson(options)].join('').split('\n'));
  await db.execute(sql`analyze`);
  return report.ok;
}

/** The plan PostgreSQL chooses for `query`, as text. */
export async function queryPlan(db: Database, query: { getSQL(): ReturnType<typeof sql> }): Promise<string> {
  return rows<Record<string, string>>(await db.execute(sql`explain ${query.getSQL()}`))
    .map((row) => Object.values(row)[0])
    .join('\n');
}
