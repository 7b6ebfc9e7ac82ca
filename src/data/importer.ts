/**
 * Streaming NDJSON import, all or nothing (the contract's "Data files" section).
 *
 * One pass over the input inside one transaction: every line is validated; while no line has
 * failed, valid lines are written in large batches; after the first failure nothing more is
 * written but validation goes on, so the operator gets every bad line in one run. At the end
 * any failure rolls the transaction back, so a rejected file leaves the database untouched.
 *
 * Rules beyond the contract: blank lines are skipped (they still count for line numbers), a
 * UTF-8 byte order mark on the first line is ignored, a line that is not valid UTF-8 is bad, and
 * when a file names the same profile or namespace twice the last line wins.
 */

import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import { sql } from 'drizzle-orm';
import type { Database } from '../db/database.js';
import { suspendReadOnlyIndexes } from './bulk-indexes.js';
import { type DataLine, type NamespaceLine, type ProfileLine, parseDataLine } from './data-line.js';
import { suspendForeignKeys } from './foreign-keys.js';
import { writeBatch } from './import-writer.js';
import { KnownNamespaces } from './known-namespaces.js';
import { readLines } from './line-reader.js';

export interface ImportOptions {
  /**
   * Check foreign keys once at the end instead of per row: about twice as fast, but the tables
   * are locked against readers until the import ends (see foreign-keys.ts).
   */
  bulk?: boolean;
  /** Lines per write batch. */
  batchSize?: number;
  /** Bad lines kept in the report; all of them are counted. */
  maxReportedProblems?: number;
  /** Called about every `progressIntervalMs` while the import runs. */
  onProgress?: (progress: ImportProgress) => void;
  progressIntervalMs?: number;
}

export interface ImportProgress {
  lines: number;
  elapsedMs: number;
}

export interface LineProblem {
  line: number;
  reason: string;
}

export interface ImportReport {
  /** True when the file was accepted and written. */
  ok: boolean;
  /** Lines read, blank ones included. */
  lines: number;
  /** Valid namespace and profile lines. */
  namespaces: number;
  profiles: number;
  /** Rows actually inserted or changed (0 when the file was rejected). */
  namespacesChanged: number;
  profilesChanged: number;
  /** The first bad lines, in line order. */
  problems: LineProblem[];
  /** Every bad line, including those not kept in `problems`. */
  problemCount: number;
}

/** A line of input: text, or raw bytes that still have to be checked for valid UTF-8. */
export type InputLine = string | Uint8Array;

const DEFAULTS = { bulk: false, batchSize: 2000, maxReportedProblems: 1000, progressIntervalMs: 2000 };

/** Imports a file (or any byte stream, such as stdin). */
export async function importFile(db: Database, path: string, options: ImportOptions = {}): Promise<ImportReport> {
  const file = await open(path);
  try {
    return await importLines(db, readLines(file.createReadStream()), options);
  } finally {
    await file.close();
  }
}

export async function importStream(
  db: Database,
  input: AsyncIterable<Uint8Array | string>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  return importLines(db, readLines(input), options);
}

/** Thrown inside the transaction to roll it back; never leaves this module. */
class RejectedFile extends Error {}

export async function importLines(
  db: Database,
  lines: AsyncIterable<InputLine> | Iterable<InputLine>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const run = new ImportRun({ ...DEFAULTS, ...options });
  try {
    await db.transaction(async (tx) => {
      // The statement timeout protects API requests; a batch of a big import may need longer.
      await tx.execute(sql`set local statement_timeout = 0`);
      const restoreForeignKeys = run.options.bulk ? await suspendForeignKeys(tx, ['profiles', 'records']) : undefined;
      const restoreIndexes = run.options.bulk ? await suspendReadOnlyIndexes(tx) : undefined;
      for await (const line of lines) await run.add(tx, line);
      await run.finish(tx);
      if (run.report.problemCount > 0) throw new RejectedFile();
      await restoreIndexes?.();
      await restoreForeignKeys?.();
    });
  } catch (error) {
    if (!(error instanceof RejectedFile)) throw error;
    run.report.namespacesChanged = 0;
    run.report.profilesChanged = 0;
  }
  return run.report;
}

type PendingLine = { line: number; data: DataLine } | { line: number; reason: string; declaresNamespace?: string };

class ImportRun {
  readonly report: ImportReport = {
    ok: true,
    lines: 0,
    namespaces: 0,
    profiles: 0,
    namespacesChanged: 0,
    profilesChanged: 0,
    problems: [],
    problemCount: 0,
  };
  private pending: PendingLine[] = [];
  private readonly known = new KnownNamespaces();
  /** The batch being written while the next one is parsed: Node and the database work at once. */
  private writing: Promise<void> = Promise.resolve();
  private readonly startedAt = Date.now();
  private lastProgressAt = Date.now();

  constructor(readonly options: Required<Omit<ImportOptions, 'onProgress'>> & Pick<ImportOptions, 'onProgress'>) {}

  async add(db: Database, input: InputLine): Promise<void> {
    this.report.lines += 1;
    const line = this.report.lines;
    const text = decodeLine(input, line);
    if (text === null) {
      this.pending.push({ line, reason: 'not valid UTF-8 text' });
    } else if (text.trim() !== '') {
      const parsed = parseDataLine(text);
      this.pending.push(parsed.ok ? { line, data: parsed.line } : { line, ...parsed });
    }
    if (this.pending.length >= this.options.batchSize) await this.flush(db);
    if (line % 4096 === 0) this.reportProgress();
  }

  async finish(db: Database): Promise<void> {
    await this.flush(db);
    await this.writing;
    this.report.ok = this.report.problemCount === 0;
  }

  /** Checks the batch's namespaces in line order, then writes it unless a line has failed. */
  private async flush(db: Database): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    await this.lookUpNamespaces(db, batch);

    const namespaces = new Map<string, NamespaceLine>();
    const profiles = new Map<string, ProfileLine>();
    for (const entry of batch) {
      if (!('data' in entry)) {
        // A namespace line that failed for another reason still declares its (valid) name, so
        // the profiles under it are not all reported a second time as "unknown namespace".
        if (entry.declaresNamespace !== undefined) this.known.declare(entry.declaresNamespace);
        this.addProblem(entry.line, entry.reason);
      } else if (entry.data.kind === 'namespace') {
        this.known.declare(entry.data.name);
        namespaces.set(entry.data.name, entry.data);
        this.report.namespaces += 1;
      } else if (!this.known.isKnown(entry.data.namespace)) {
        this.addProblem(
          entry.line,
          `unknown namespace ${JSON.stringify(entry.data.namespace)} of ${JSON.stringify(entry.data.name)}: ` +
            'not in the database and not declared on an earlier line',
        );
      } else {
        // Last one wins: a later line for the same name replaces the earlier one in the batch,
        // and a later batch overwrites what an earlier batch wrote.
        profiles.set(entry.data.name, entry.data);
        this.report.profiles += 1;
      }
    }
    if (this.report.problemCount > 0) return;

    await this.writing;
    const write = writeBatch(db, { namespaces: [...namespaces.values()], profiles: [...profiles.values()] });
    this.writing = write.then((counts) => {
      this.report.namespacesChanged += counts.namespacesChanged;
      this.report.profilesChanged += counts.profilesChanged;
    });
    // Awaited before the next statement; this only stops Node from calling it unhandled meanwhile.
    this.writing.catch(() => {});
  }

  private async lookUpNamespaces(db: Database, batch: readonly PendingLine[]): Promise<void> {
    const used = batch.flatMap((entry) =>
      'data' in entry && entry.data.kind === 'profile' ? [entry.data.namespace] : [],
    );
    const unresolved = this.known.unresolved(used);
    if (unresolved.length === 0) return;
    await this.writing; // one statement at a time on the transaction's connection
    await this.known.lookUp(db, unresolved);
  }

  private addProblem(line: number, reason: string): void {
    this.report.problemCount += 1;
    if (this.report.problems.length < this.options.maxReportedProblems) this.report.problems.push({ line, reason });
  }

  private reportProgress(): void {
    const now = Date.now();
    if (this.options.onProgress === undefined || now - this.lastProgressAt < this.options.progressIntervalMs) return;
    this.lastProgressAt = now;
    this.options.onProgress({ lines: this.report.lines, elapsedMs: now - this.startedAt });
  }
}

/** The text of a line, or null when its bytes are not valid UTF-8. */
function decodeLine(input: InputLine, lineNumber: number): string | null {
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    if (!isUtf8(input)) return null;
    text = Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('utf8');
  }
  // A byte order mark is an encoding marker, not content.
  return lineNumber === 1 && text.startsWith('\uFEFF') ? text.slice(1) : text;
}
