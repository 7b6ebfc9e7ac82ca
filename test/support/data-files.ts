/**
 * Helpers for the data-file suites: the whole content of a database as comparable rows, and the
 * export as text.
 */
import { PassThrough } from 'node:stream';
import { type ExportOptions, exportDatabase, RECORD_COLUMNS_AS_TEXT } from '../../src/data/exporter.js';
import type { Database } from '../../src/db/database.js';
import { asc, sql } from '../../src/db/drizzle.js';
import { namespaces, profiles, records } from '../../src/db/schema.js';

/** Every row of every table, with record values as stored text (so map order counts). */
export async function snapshotDatabase(db: Database) {
  return {
    namespaces: await db.select().from(namespaces).orderBy(asc(namespaces.name)),
    profiles: await db.select().from(profiles).orderBy(asc(profiles.id)),
    records: await db.select(RECORD_COLUMNS_AS_TEXT).from(records).orderBy(asc(records.profileId), asc(records.key)),
  };
}

export async function exportText(db: Database, options: ExportOptions = {}): Promise<string> {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on('data', (chunk: Buffer) => chunks.push(chunk));
  await exportDatabase(db, output, options);
  output.end();
  return Buffer.concat(chunks).toString('utf8');
}

/** Empties the tables between tests of one suite. */
export async function emptyDatabase(db: Database): Promise<void> {
  await db.execute(sql`truncate ${records}, ${profiles}, ${namespaces} restart identity cascade`);
}

export function ndjson(...objects: unknown[]): string[] {
  return objects.map((object) => (typeof object === 'string' ? object : JSON.stringify(object)));
}
