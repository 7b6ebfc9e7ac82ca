/**
 * Streaming NDJSON import, all or nothing (the contract's "Data files" section).
 *
 * One pass over the input inside one transaction: every line is validated; while no line has
 * failed, valid lines are written in large batches; after the first failure nothing more is
 * written but validation goes on, so the operator gets every bad line in one run. At the end
 * any failure rolls the transaction back, so a rejected file leaves the database untouched.
 *
 * The input is cut into batches of whole lines (line-batches.ts); each batch is checked and
 * serialized by import-batch.ts, in worker threads for big inputs (batch-preparer.ts); this
 * module checks namespaces across batches in line order, writes (import-writer.ts) with the
 * next batch's statements queued behind the previous one's, and on success announces the
 * changed profiles (change-notifications.ts) before committing.
 *
 * Rules beyond the contract: blank lines are skipped (they still count for line numbers), a
 * UTF-8 byte order mark on the first line is ignored, a line that is not valid UTF-8 is bad, and
 * when a file names the same profile or namespace twice the last line wins.
 */

import { open } from 'node:fs/promises';
import {
  EVERYTHING,
  MAX_NAMED_CHANGES,
  newChangeId,
  notifyCommitted,
  notifyProfileChanges,
} from '../db/change-notifications.js';
import type { Database } from '../db/database.js';
import { sql } from '../db/drizzle.js';
import { BatchPreparer, type PreparerOptions } from './batch-preparer.js';
import type { NamespaceLine } from './data-line.js';
import type { BatchProblem, PreparedBatch } from './import-batch.js';
import { startBatch, type WriteInProgress } from './import-writer.js';
import { KnownNamespaces } from './known-namespaces.js';
import { type LineBatch, lineBatches, textLineBatches } from './line-batches.js';
import { deferReferenceChecks } from './reference-checks.js';

export interface ImportOptions {
  /**
   * Check references once at the end instead of per statement; other writers wait until the
   * import ends, readers do not (see reference-checks.ts).
   */
  bulk?: boolean;
  /** Lines per write batch. */
  batchSize?: number;
  /** Bad lines kept in the report; all of them are counted. */
  maxReportedProblems?: number;
  /** Called about every `progressIntervalMs` while the import runs. */
  onProgress?: (progress: ImportProgress) => void;
  progressIntervalMs?: number;
  /** Worker threads that check and serialize lines of big inputs (see batch-preparer.ts). */
  parallel?: PreparerOptions;
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

const DEFAULTS = { bulk: false, batchSize: 2000, maxReportedProblems: 1000, progressIntervalMs: 2000, parallel: {} };

/** Imports a file. */
export async function importFile(db: Database, path: string, options: ImportOptions = {}): Promise<ImportReport> {
  const file = await open(path);
  try {
    return await importStream(db, file.createReadStream(), options);
  } finally {
    await file.close();
  }
}

/** Imports any byte stream, such as stdin. */
export async function importStream(
  db: Database,
  input: AsyncIterable<Uint8Array | string>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const batchSize = options.batchSize ?? DEFAULTS.batchSize;
  return importBatches(db, lineBatches(input, batchSize), options);
}

/** Imports lines given one by one (without their line ends): text, or raw bytes still to be checked for UTF-8. */
export async function importLines(
  db: Database,
  lines: AsyncIterable<InputLine> | Iterable<InputLine>,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const batchSize = options.batchSize ?? DEFAULTS.batchSize;
  return importBatches(db, textLineBatches(lines, batchSize), options);
}

/** Thrown inside the transaction to roll it back; never leaves this module. */
class RejectedFile extends Error {}

async function importBatches(
  db: Database,
  batches: AsyncIterable<LineBatch>,
  options: ImportOptions,
): Promise<ImportReport> {
  const run = new ImportRun({ ...DEFAULTS, ...options });
  const preparer = new BatchPreparer(run.options.parallel);
  const changeId = newChangeId();
  let announced = false;
  try {
    await db.transaction(async (tx) => {
      // The statement timeout protects API requests; a batch of a big import may need longer.
      await tx.execute(sql`set local statement_timeout = 0`);
      const checkReferences = run.options.bulk ? await deferReferenceChecks(tx) : undefined;
      for await (const batch of preparer.prepare(batches)) {
        await run.add(tx, batch);
        if (run.report.problemCount > 0) preparer.markRejected();
      }
      await run.finish();
      if (run.report.problemCount > 0) throw new RejectedFile();
      await checkReferences?.();
      // Delivered by PostgreSQL when this transaction commits, and never if it rolls back.
      const changed = run.changedNames();
      await notifyProfileChanges(tx, changeId, changed);
      announced = changed === EVERYTHING || changed.length > 0;
    });
  } catch (error) {
    if (!(error instanceof RejectedFile)) throw error;
    run.report.namespacesChanged = 0;
    run.report.profilesChanged = 0;
  } finally {
    await preparer.close();
  }
  // Where the commit ends in the WAL, for servers that read from replicas. Committed already:
  // should this fail, their heartbeats cover the change in a moment.
  if (announced) await notifyCommitted(db, changeId).catch(() => {});
  if (run.report.profilesChanged > ANALYZE_AFTER_PROFILES) {
    await analyzeDataTables(db).catch(() => {
      // The import has committed; a failed ANALYZE is not its failure, and autovacuum refreshes
      // the statistics in its time.
    });
  }
  return run.report;
}

/** Past this many changed profiles an import refreshes the planner's statistics. */
export const ANALYZE_AFTER_PROFILES = MAX_NAMED_CHANGES;

/**
 * ANALYZE of the tables imports write; an import runs it after it has committed. Autovacuum would
 * get there later, or never where it is off (as on the benchmark machine): meanwhile the planner
 * knows nothing of the new rows, and a lookup of 100 names took 35 ms instead of 4 ms on a plan
 * made for thousands of records per profile. ANALYZE reads a sample (30,000 rows a table), so it
 * takes about the same fraction of a second whatever the size, and blocks no reader or writer.
 */
export async function analyzeDataTables(db: Database): Promise<void> {
  await db.execute(sql`analyze namespaces, profiles, records, wallet_addresses`);
}

/** Batches whose statements may be sent before the earlier ones have finished. */
const WRITES_IN_FLIGHT = 3;

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
  private readonly known = new KnownNamespaces();
  /** Profiles inserted or replaced so far, until there are too many to name. */
  private changed: Set<string> | typeof EVERYTHING = new Set();
  /**
   * Writes under way, oldest first: the next batch is prepared, and its statements sent, while
   * the database still works on the previous one, so neither waits for the other.
   */
  private readonly writing: Array<{ started: Promise<void>; done: Promise<void> }> = [];
  private readonly startedAt = Date.now();
  private lastProgressAt = Date.now();

  constructor(readonly options: Required<Omit<ImportOptions, 'onProgress'>> & Pick<ImportOptions, 'onProgress'>) {}

  /** Checks the batch's namespaces in line order, then writes it unless a line has failed. */
  async add(db: Database, batch: PreparedBatch): Promise<void> {
    this.report.lines += batch.lines;
    await this.lookUpNamespaces(db, batch);
    const namespaces = new Map<string, NamespaceLine>();
    for (const problem of this.classify(batch, namespaces)) this.addProblem(problem);
    this.reportProgress();
    if (this.report.problemCount > 0) return;

    while (this.writing.length >= WRITES_IN_FLIGHT) await this.writing.shift()?.done;
    const previous = this.writing.at(-1);
    // The statements of the batch before go first (see startBatch).
    await previous?.started;
    const write: WriteInProgress = startBatch(
      db,
      { namespaces: [...namespaces.values()], profiles: batch.columns, withNames: this.changed !== EVERYTHING },
      previous?.done,
    );
    const done = write.done.then((result) => {
      this.report.namespacesChanged += result.namespacesChanged;
      this.report.profilesChanged += result.profilesChanged;
      this.noteChanges(result.changedNames, result.ownerChanged);
    });
    // Awaited in turn; this only stops Node from calling a failure unhandled meanwhile.
    done.catch(() => {});
    this.writing.push({ started: write.started, done });
  }

  async finish(): Promise<void> {
    while (this.writing.length > 0) await this.writing.shift()?.done;
    this.report.ok = this.report.problemCount === 0;
  }

  /** What to announce: the changed names, or EVERYTHING. An empty list announces nothing. */
  changedNames(): readonly string[] | typeof EVERYTHING {
    return this.changed === EVERYTHING ? EVERYTHING : [...this.changed];
  }

  /**
   * Walks the batch in line order: namespace lines declare their name for the lines after them
   * (a namespace line that failed for another reason too, so the profiles under it are not all
   * reported a second time), and a profile's namespace must be declared by then or exist in
   * the database. Returns the batch's bad lines in line order; fills `namespaces` (last line
   * per name wins).
   */
  private classify(batch: PreparedBatch, namespaces: Map<string, NamespaceLine>): BatchProblem[] {
    const declarations = [
      ...batch.namespaces,
      ...batch.problems.flatMap((problem) =>
        problem.declaresNamespace === undefined ? [] : [{ line: problem.line, name: problem.declaresNamespace }],
      ),
    ].sort((a, b) => a.line - b.line);
    for (const namespace of batch.namespaces) {
      namespaces.set(namespace.name, { kind: 'namespace', name: namespace.name, ownerEmail: namespace.ownerEmail });
    }
    this.report.namespaces += batch.namespaces.length;
    const unknown: BatchProblem[] = [];
    let declared = 0;
    for (let index = 0; index < batch.profileLines.length; index += 1) {
      const line = batch.profileLines[index] ?? 0;
      for (; declared < declarations.length && (declarations[declared]?.line ?? 0) < line; declared += 1) {
        this.known.declare(declarations[declared]?.name ?? '');
      }
      const namespace = batch.profileNamespaces[index] ?? '';
      if (this.known.isKnown(namespace)) {
        this.report.profiles += 1;
      } else {
        unknown.push({
          line,
          reason:
            `unknown namespace ${JSON.stringify(namespace)} of ${JSON.stringify(batch.profileNames[index])}: ` +
            'not in the database and not declared on an earlier line',
        });
      }
    }
    for (; declared < declarations.length; declared += 1) this.known.declare(declarations[declared]?.name ?? '');
    return mergeByLine(batch.problems, unknown);
  }

  private noteChanges(names: readonly string[] | undefined, ownerChanged: boolean): void {
    if (this.changed === EVERYTHING) return;
    // A new owner changes the owner check of every profile under the namespace, named or not;
    // a write that was not asked for names (it started after the list was given up) changed
    // profiles nobody noted.
    if (ownerChanged || names === undefined) {
      this.changed = EVERYTHING;
      return;
    }
    for (const name of names) this.changed.add(name);
    if (this.changed.size > MAX_NAMED_CHANGES) this.changed = EVERYTHING;
  }

  /** Looks up, in the database, the batch's namespaces that are neither declared nor known yet. */
  private async lookUpNamespaces(db: Database, batch: PreparedBatch): Promise<void> {
    const unresolved = this.known.unresolved(new Set(batch.profileNamespaces));
    if (unresolved.length === 0) return;
    // Queued behind the writes under way; namespaces they insert are declared ones anyway.
    await this.known.lookUp(db, unresolved);
  }

  private addProblem(problem: BatchProblem): void {
    this.report.problemCount += 1;
    if (this.report.problems.length < this.options.maxReportedProblems) {
      this.report.problems.push({ line: problem.line, reason: problem.reason });
    }
  }

  private reportProgress(): void {
    const now = Date.now();
    if (this.options.onProgress === undefined || now - this.lastProgressAt < this.options.progressIntervalMs) return;
    this.lastProgressAt = now;
    this.options.onProgress({ lines: this.report.lines, elapsedMs: now - this.startedAt });
  }
}

/** Two lists of problems, each in line order, as one list in line order. */
function mergeByLine(first: readonly BatchProblem[], second: readonly BatchProblem[]): BatchProblem[] {
  if (second.length === 0) return [...first];
  if (first.length === 0) return [...second];
  return [...first, ...second].sort((a, b) => a.line - b.line);
}
