/**
 * Streaming NDJSON export of the whole database in the import format: namespaces first (by
 * name), then profiles (by id, which is creation order) with their records and private e-mails.
 *
 * Everything is read in one read-only, repeatable-read transaction, so an import running at the
 * same time cannot leave the file half old and half new. Rows are read in pages with keyset
 * pagination (`where key > last order by key limit n`), so memory stays flat for any size, and
 * the next page is read only when the output has taken the previous one.
 */
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Database } from '../db/database.js';
import { asc, between, gt, sql } from '../db/drizzle.js';
import { namespaces, profiles, type RecordValue, records } from '../db/schema.js';
import { parseJsonKeepingOrder } from '../profiles/record-value.js';
import { type ContentLine, type DataRecord, toDataObject } from './data-line.js';

export interface ExportCounts {
  namespaces: number;
  profiles: number;
}

export interface ExportOptions {
  /** Rows per page. */
  pageSize?: number;
}

/** Writes every namespace and profile to `output` as NDJSON; leaves `output` open. */
export async function exportDatabase(
  db: Database,
  output: Writable,
  options: ExportOptions = {},
): Promise<ExportCounts> {
  const pageSize = options.pageSize ?? 2000;
  return db.transaction(
    async (tx) => {
      const counts: ExportCounts = { namespaces: 0, profiles: 0 };
      // pipeline handles the output's backpressure and errors, and stops reading pages when it fails.
      await pipeline(Readable.from(ndjsonPages(tx, pageSize, counts)), output, { end: false });
      return counts;
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/** One chunk of NDJSON text per page of rows; counts what it yields. */
async function* ndjsonPages(db: Database, pageSize: number, counts: ExportCounts): AsyncGenerator<string> {
  const text = (lines: ContentLine[]) => lines.map((line) => `${JSON.stringify(toDataObject(line))}\n`).join('');
  for await (const page of namespacePages(db, pageSize)) {
    counts.namespaces += page.length;
    yield text(page);
  }
  for await (const page of profilePages(db, pageSize)) {
    counts.profiles += page.length;
    yield text(page);
  }
}

async function* namespacePages(db: Database, pageSize: number): AsyncGenerator<ContentLine[]> {
  let after: string | undefined;
  for (;;) {
    const rows = await db
      .select({ name: namespaces.name, ownerEmail: namespaces.ownerEmail })
      .from(namespaces)
      .where(after === undefined ? undefined : gt(namespaces.name, after))
      .orderBy(asc(namespaces.name))
      .limit(pageSize);
    const last = rows.at(-1);
    if (last === undefined) return;
    yield rows.map((row) => ({ kind: 'namespace', ...row }));
    after = last.name;
  }
}

async function* profilePages(db: Database, pageSize: number): AsyncGenerator<ContentLine[]> {
  let after = 0;
  for (;;) {
    const rows = await db
      .select({
        id: profiles.id,
        name: profiles.name,
        localPart: profiles.localPart,
        namespace: profiles.namespace,
        creatorEmail: profiles.creatorEmail,
        description: profiles.description,
        image: profiles.image,
        level: profiles.level,
      })
      .from(profiles)
      .where(gt(profiles.id, after))
      .orderBy(asc(profiles.id))
      .limit(pageSize);
    const first = rows[0];
    const lastRow = rows.at(-1);
    if (first === undefined || lastRow === undefined) return;
    const last = lastRow.id;
    const recordsByProfile = new Map<number, DataRecord[]>();
    for (const { profileId, key, type, value } of await recordsOf(db, first.id, last)) {
      const list = recordsByProfile.get(profileId) ?? [];
      if (list.length === 0) recordsByProfile.set(profileId, list);
      list.push({ key, type, value: parseJsonKeepingOrder(value) as RecordValue });
    }
    yield rows.map(({ id, ...profile }) => ({ kind: 'profile', ...profile, records: recordsByProfile.get(id) ?? [] }));
    after = last;
  }
}

/**
 * The columns of a record with its value as stored text. Parsed once by the reader: Drizzle's
 * json column parses what the driver has already parsed, which turns a string value that looks
 * like JSON ("123", "null") into a number or null.
 */
export const RECORD_COLUMNS_AS_TEXT = {
  profileId: records.profileId,
  key: records.key,
  type: records.type,
  value: sql<string>`${records.value}::text`,
};

/** Records of the profiles with ids from `first` to `last`, in order, values as text. */
async function recordsOf(db: Database, first: number, last: number) {
  return db
    .select(RECORD_COLUMNS_AS_TEXT)
    .from(records)
    .where(between(records.profileId, first, last))
    .orderBy(asc(records.profileId), asc(records.key));
}
