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

import { entriesOfThisTransaction } from '../db/change-log.js';
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
import { removeUnnamed, startReplaceAll } from './import-removals.js';
import { startBatch, type WriteInProgress, type WriteResult } from './import-writer.js';
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
  /**
   * The file is the whole truth: profiles it does not write and namespaces it does not name
   * are removed, in the same transaction. Other writers wait until the import ends.
   */
  replaceAll?: boolean;
  /** Do everything, report it, and roll back: nothing is written or announced. */
  dryRun?: boolean;
}

interface ImportProgress {
  lines: number;
  elapsedMs: number;
}

interface LineProblem {
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
  /** Valid removal lines (of profiles and of namespaces). */
  removals: number;
  /**
   * Rows actually inserted or changed (0 when the file was rejected; in a dry run, what the
   * import would have written).
   */
  namespacesChanged: number;
  profilesChanged: number;
  /** Of the changed rows, those that existed before (the rest were added). */
  namespacesReplaced: number;
  profilesReplaced: number;
  /** Rows deleted: by removal lines (a namespace's profiles too) and by `replaceAll`. */
  namespacesRemoved: number;
  profilesRemoved: number;
  /** Profiles and namespaces that removal lines named but that did not exist. */
  removalsOfNothing: number;
  /**
   * Change-log entries the import wrote (src/db/change-log.ts): one per profile created, changed
   * in what lookups answer, or removed. In a dry run, what it would have written.
   */
  changeLogEntries: number;
  /** True when this was a dry run: nothing was written, whatever the counts say. */
  dryRun: boolean;
  /** The first bad lines, in line order. */
  problems: LineProblem[];
  /** Every bad line, including those not kept in `problems`. */
  problemCount: number;
}

/** A line of input: text, or raw bytes that still have to be checked for valid UTF-8. */
export type InputLine = string | Uint8Array;

const DEFAULTS = {
  bulk: false,
  batchSize: 2000,
  maxReportedProblems: 1000,
  progressIntervalMs: 2000,
  parallel: {},
  replaceAll: false,
  dryRun: false,
};

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

/** Thrown inside the transaction of a dry run, to roll back what it did; never leaves this module. */
class DryRun extends Error {}

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
      if (run.options.replaceAll) await startReplaceAll(tx);
      for await (const batch of preparer.prepare(batches)) {
        await run.add(tx, batch);
        if (run.report.problemCount > 0) preparer.markRejected();
      }
      await run.finish();
      if (run.report.problemCount > 0) throw new RejectedFile();
      if (run.options.replaceAll) await run.removeUnnamed(tx);
      await checkReferences?.();
      run.report.changeLogEntries = await entriesOfThisTransaction(tx);
      if (run.options.dryRun) throw new DryRun();
      // Delivered by PostgreSQL when this transaction commits, and never if it rolls back.
      const changed = run.changedNames();
      await notifyProfileChanges(tx, changeId, changed);
      announced = changed === EVERYTHING || changed.length > 0;
    });
  } catch (error) {
    if (error instanceof RejectedFile) run.nothingWritten();
    else if (!(error instanceof DryRun)) throw error;
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
 * knows nothing of the new rows, and a lookup of 100 names took several times as long on a plan
 * made for thousands of records per profile (docs/decisions.md, "ANALYZE after imports, and no
 * JIT for the service's sessions"). ANALYZE reads a sample (30,000 rows a table), so it
 * takes about the same fraction of a second whatever the size, and blocks no reader or writer.
 */
export async function analyzeDataTables(db: Database): Promise<void> {
  await db.execute(sql`analyze namespaces, profiles, records, wallet_addresses, change_log, change_log_commits`);
}

/** Batches whose statements may be sent before the earlier ones have finished. */
const WRITES_IN_FLIGHT = 3;

class ImportRun {
  readonly report: ImportReport = {
    ok: true,
    lines: 0,
    namespaces: 0,
    profiles: 0,
    removals: 0,
    namespacesChanged: 0,
    profilesChanged: 0,
    namespacesReplaced: 0,
    profilesReplaced: 0,
    namespacesRemoved: 0,
    profilesRemoved: 0,
    removalsOfNothing: 0,
    changeLogEntries: 0,
    problems: [],
    problemCount: 0,
    dryRun: false,
  };
  private readonly known = new KnownNamespaces();
  /** With `replaceAll`: the namespaces the file names (namespace lines, and those of its profiles). */
  private readonly namedNamespaces = new Set<string>();
  /** Profiles inserted or replaced so far, until there are too many to name. */
  private changed: Set<string> | typeof EVERYTHING = new Set();
  /**
   * Writes under way, oldest first: the next batch is prepared, and its statements sent, while
   * the database still works on the previous one, so neither waits for the other.
   */
  private readonly writing: Array<{ started: Promise<void>; done: Promise<void> }> = [];
  private readonly startedAt = Date.now();
  private lastProgressAt = Date.now();

  constructor(readonly options: Required<Omit<ImportOptions, 'onProgress'>> & Pick<ImportOptions, 'onProgress'>) {
    this.report.dryRun = options.dryRun;
  }

  /** Checks the batch's namespaces in line order, then writes it unless a line has failed. */
  async add(db: Database, batch: PreparedBatch): Promise<void> {
    this.report.lines += batch.lines;
    await this.lookUpNamespaces(db, batch);
    const namespaces = new Map<string, NamespaceLine>();
    for (const problem of this.classify(batch, namespaces)) this.addProblem(problem);
    this.reportProgress();
    if (this.report.problemCount > 0) return;

    const removesNamespaces = [...new Set(batch.namespaceRemovals.map((removal) => removal.name))];
    // A removal must not overtake the record writes of an earlier batch (see startBatch).
    const removes = batch.removedProfiles.length > 0 || removesNamespaces.length > 0;
    while (this.writing.length >= (removes ? 1 : WRITES_IN_FLIGHT)) await this.writing.shift()?.done;
    const previous = this.writing.at(-1);
    // The statements of the batch before go first (see startBatch).
    await previous?.started;
    const write: WriteInProgress = startBatch(
      db,
      {
        namespaces: [...namespaces.values()],
        profiles: batch.columns,
        withNames: this.changed !== EVERYTHING,
        removeProfiles: batch.removedProfiles,
        removeNamespaces: removesNamespaces,
        noteNamed: this.options.replaceAll,
      },
      previous?.done,
    );
    const done = write.done.then((result) => this.noteWritten(result));
    // Awaited in turn; this only stops Node from calling a failure unhandled meanwhile.
    done.catch(() => {});
    this.writing.push({ started: write.started, done });
  }

  async finish(): Promise<void> {
    while (this.writing.length > 0) await this.writing.shift()?.done;
    this.report.ok = this.report.problemCount === 0;
  }

  /** Deletes what a `replaceAll` file did not name. */
  async removeUnnamed(db: Database): Promise<void> {
    const removed = await removeUnnamed(db, [...this.namedNamespaces], this.changed !== EVERYTHING);
    this.report.profilesRemoved += removed.profiles;
    this.report.namespacesRemoved += removed.namespaces;
    this.noteChanges(removed.names, false);
  }

  /** The file was rejected: whatever the batches wrote is rolled back. */
  nothingWritten(): void {
    for (const count of WRITE_COUNTS) this.report[count] = 0;
  }

  /** What to announce: the changed names, or EVERYTHING. An empty list announces nothing. */
  changedNames(): readonly string[] | typeof EVERYTHING {
    return this.changed === EVERYTHING ? EVERYTHING : [...this.changed];
  }

  /**
   * Walks the batch in line order: namespace lines declare their name for the lines after them
   * (a namespace line that failed for another reason too, so the profiles under it are not all
   * reported a second time), removal lines undeclare it, and a profile's namespace must be
   * declared by then or exist in the database (and not be removed). Returns the batch's bad
   * lines in line order; fills `namespaces` (last line per name wins, none before the batch's
   * last removal of that name).
   */
  private classify(batch: PreparedBatch, namespaces: Map<string, NamespaceLine>): BatchProblem[] {
    const events = namespaceEvents(batch);
    const lastRemoval = new Map(batch.namespaceRemovals.map((removal) => [removal.name, removal.line]));
    for (const namespace of batch.namespaces) {
      // A later line of the batch removes it again, and the writer deletes before it upserts.
      if (namespace.line < (lastRemoval.get(namespace.name) ?? 0)) continue;
      namespaces.set(namespace.name, { kind: 'namespace', name: namespace.name, ownerEmail: namespace.ownerEmail });
    }
    this.report.namespaces += batch.namespaces.length;
    this.report.removals += batch.profileRemovalLines + batch.namespaceRemovals.length;
    if (this.options.replaceAll) {
      for (const namespace of batch.namespaces) this.namedNamespaces.add(namespace.name);
      for (const namespace of batch.profileNamespaces) this.namedNamespaces.add(namespace);
    }
    const unknown: BatchProblem[] = [];
    let applied = 0;
    const applyUpTo = (line: number) => {
      for (; applied < events.length && (events[applied]?.line ?? 0) < line; applied += 1) {
        const event = events[applied];
        if (event?.removes) this.known.remove(event.name);
        else this.known.declare(event?.name ?? '');
      }
    };
    for (let index = 0; index < batch.profileLines.length; index += 1) {
      const line = batch.profileLines[index] ?? 0;
      applyUpTo(line);
      const namespace = batch.profileNamespaces[index] ?? '';
      if (this.known.isKnown(namespace)) {
        this.report.profiles += 1;
      } else {
        unknown.push({
          line,
          reason:
            `unknown namespace ${JSON.stringify(namespace)} of ${JSON.stringify(batch.profileNames[index])}: ` +
            (this.known.wasRemoved(namespace)
              ? 'removed on an earlier line and not declared again since'
              : 'not in the database and not declared on an earlier line'),
        });
      }
    }
    applyUpTo(Number.POSITIVE_INFINITY);
    return mergeByLine(batch.problems, unknown);
  }

  private noteWritten(result: WriteResult): void {
    this.report.namespacesChanged += result.namespacesChanged;
    this.report.namespacesReplaced += result.namespacesReplaced;
    this.report.profilesChanged += result.profilesChanged;
    this.report.profilesReplaced += result.profilesReplaced;
    this.report.profilesRemoved += result.profilesRemoved;
    this.report.namespacesRemoved += result.namespacesRemoved;
    this.report.removalsOfNothing += result.removalsOfNothing;
    this.noteChanges(result.changedNames, result.ownerChanged);
    // Removed profiles are announced like changed ones: a server then answers 404 for them.
    this.noteChanges(result.removedNames, false);
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

/** The report's counts of what was written, which a rejected file did not write. */
const WRITE_COUNTS = [
  'namespacesChanged',
  'profilesChanged',
  'namespacesReplaced',
  'profilesReplaced',
  'namespacesRemoved',
  'profilesRemoved',
  'removalsOfNothing',
] as const;

/**
 * The batch's lines that declare a namespace (also namespace lines that failed for another
 * reason, so the profiles under them are not all reported a second time) or remove one, in
 * line order.
 */
function namespaceEvents(batch: PreparedBatch): Array<{ line: number; name: string; removes: boolean }> {
  return [
    ...batch.namespaces.map(({ line, name }) => ({ line, name, removes: false })),
    ...batch.problems.flatMap((problem) =>
      problem.declaresNamespace === undefined
        ? []
        : [{ line: problem.line, name: problem.declaresNamespace, removes: false }],
    ),
    ...batch.namespaceRemovals.map(({ line, name }) => ({ line, name, removes: true })),
  ].sort((a, b) => a.line - b.line);
}

/** Two lists of problems, each in line order, as one list in line order. */
function mergeByLine(first: readonly BatchProblem[], second: readonly BatchProblem[]): BatchProblem[] {
  if (second.length === 0) return [...first];
  if (first.length === 0) return [...second];
  return [...first, ...second].sort((a, b) => a.line - b.line);
}
