/**
 * `npm run import -- [--replace-all] [--dry-run] [--bulk] [--progress-every SECONDS] <file>`: loads an NDJSON data
 * file into the configured database, all or nothing. `-` reads standard input. Bad lines are listed on stderr as `line N: reason`,
 * with a summary; the exit code is 1 when the file was rejected or could not be read, 2 for bad
 * usage or configuration. Progress goes to stderr on large files. No import locks readers out;
 * `--bulk` checks references once at the end and makes other writers wait meanwhile.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { type ImportReport, importStream } from '../../data/importer.js';
import {
  type Command,
  CommandError,
  type CommandIo,
  commandConfig,
  databaseLabel,
  formatCount,
  formatSeconds,
  parseArguments,
  UsageError,
  withCommandDatabase,
} from '../command.js';
import { formatProgress } from '../import-progress.js';

const HELP = {
  usage:
    'npm run import -- [--replace-all] [--dry-run] [--bulk] [--progress-every SECONDS] <file.ndjson>   ("-" reads standard input)',
  details: `
Loads an NDJSON data file (the format of \`npm run export\`) into the configured database:
DATABASE_URL, or the embedded database in DATA_DIR. All or nothing: if any line is bad, every bad
line is listed as "line N: reason", nothing is written and the exit code is 1. Names that exist
are replaced whole; unchanged profiles are left alone; {"kind":"remove","name":"a@b"} and
{"kind":"remove","namespace":"b"} remove. Running servers are told which profiles changed or
went when the import commits. Progress goes to stderr every 2 seconds.

Options:
  --replace-all
              the file is the whole truth: profiles and namespaces it does not name are
              removed, in the same all-or-nothing transaction. Other writers wait until
              the import ends; lookups never do.
  --dry-run   check the file and print what the import would add, replace and remove;
              nothing is written (with --replace-all too)
  --bulk      check references once at the end instead of per statement. Other writers
              (imports, seeding) wait until the import ends; lookups never do. Measured
              about as fast as a plain import now that the per-statement checks are cheap;
              kept for scripts that pass it.
  --progress-every SECONDS
              how often the progress line comes (default 2; 0 prints one per batch of
              2,000 lines, as logs of slow imports may want)
  -h, --help  this text

Exit codes: 0 imported, 1 rejected or failed (nothing written), 2 bad arguments or settings.

Examples:
  npm run import -- data.ndjson
  npm run import -- --replace-all --dry-run dump.ndjson
  npm run -s gen -- --profiles 1000 | npm run import -- -`,
};

/** Past this size the importer's worker threads pay for their start at once. */
const BIG_INPUT_BYTES = 16 * 1024 * 1024;

export const importCommand: Command = { help: HELP, main: importFile };

async function importFile(io: CommandIo): Promise<number> {
  const { path, bulk, replaceAll, dryRun, progressIntervalMs } = readArguments(io);
  const config = commandConfig(io);
  // The file is checked before the database is opened: a typo fails fast and touches nothing.
  const file = path === '-' ? undefined : await openReadable(path);
  try {
    return await withCommandDatabase(config, async (database) => {
      const startedAt = Date.now();
      const source =
        file === undefined ? io.stdin() : { stream: file.createReadStream(), size: (await file.stat()).size };
      const input = countBytes(source.stream);
      const report = await importStream(database.db, input, {
        bulk,
        replaceAll,
        dryRun,
        progressIntervalMs,
        // A big file starts its worker threads at once instead of after a few batches.
        parallel: source.size !== undefined && source.size > BIG_INPUT_BYTES ? { inlineBatches: 0 } : {},
        onProgress: ({ lines, elapsedMs }) => {
          io.stderr.write(
            `${formatProgress({ lines, elapsedMs, bytesRead: input.bytesRead, totalBytes: source.size })}\n`,
          );
        },
      });
      return printReport(
        io,
        report,
        path === '-' ? 'standard input' : path,
        Date.now() - startedAt,
        databaseLabel(config),
      );
    });
  } finally {
    await file?.close();
  }
}

/** The input, counting the bytes the importer has taken from it. */
function countBytes(input: AsyncIterable<Uint8Array | string>): AsyncIterable<Uint8Array | string> & {
  bytesRead: number;
} {
  const counted = {
    bytesRead: 0,
    async *[Symbol.asyncIterator]() {
      for await (const chunk of input) {
        counted.bytesRead += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
        yield chunk;
      }
    },
  };
  return counted;
}

function readArguments(io: CommandIo): {
  path: string;
  bulk: boolean;
  replaceAll: boolean;
  dryRun: boolean;
  progressIntervalMs: number;
} {
  const { positionals, values } = parseArguments(io, {
    options: {
      bulk: { type: 'boolean', default: false },
      'replace-all': { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      'progress-every': { type: 'string', default: '2' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [path] = positionals;
  if (path === undefined || positionals.length !== 1) throw new UsageError('Name exactly one file to import.');
  return {
    path,
    bulk: values.bulk,
    replaceAll: values['replace-all'],
    dryRun: values['dry-run'],
    progressIntervalMs: progressInterval(values['progress-every']),
  };
}

function progressInterval(text: string): number {
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(seconds) || seconds > 86_400) {
    throw new UsageError(`--progress-every takes seconds from 0 to 86400, not "${text}".`);
  }
  return seconds * 1000;
}

async function openReadable(path: string): Promise<FileHandle> {
  let file: FileHandle;
  try {
    file = await open(path, 'r');
  } catch (error) {
    throw new CommandError(`Cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if ((await file.stat()).isDirectory()) {
    await file.close();
    throw new CommandError(`Cannot read ${path}: it is a directory`);
  }
  return file;
}

function printReport(io: CommandIo, report: ImportReport, source: string, elapsedMs: number, target: string): number {
  if (!report.ok) {
    for (const problem of report.problems) io.stderr.write(`line ${problem.line}: ${problem.reason}\n`);
    const unlisted = report.problemCount - report.problems.length;
    if (unlisted > 0) io.stderr.write(`... and ${formatCount(unlisted)} more bad lines\n`);
    io.stderr.write(
      `Rejected ${source}: ${formatCount(report.problemCount)} bad line${report.problemCount === 1 ? '' : 's'} ` +
        `of ${formatCount(report.lines)}. Nothing was written.\n`,
    );
    return 1;
  }
  const into = target.replace(/^The /, 'the ');
  if (report.dryRun) {
    io.stdout.write(
      `Dry run of ${source} against ${into} (${formatCount(report.lines)} lines): ${whatChanges(report)}; ` +
        `${formatCount(report.changeLogEntries)} change-log entries to write. Nothing was written (${formatSeconds(elapsedMs)}).\n`,
    );
    return 0;
  }
  io.stdout.write(
    `Imported ${source} into ${into}: ${formatCount(report.lines)} lines, ` +
      `${formatCount(report.namespaces)} namespaces (${formatCount(report.namespacesChanged)} new or changed), ` +
      `${formatCount(report.profiles)} profiles (${formatCount(report.profilesChanged)} new or changed)` +
      `${removalSummary(report)}, ${formatCount(report.changeLogEntries)} change-log entries in ${formatSeconds(elapsedMs)}.\n`,
  );
  return 0;
}

/** What the import changes, for a dry run: every count, zeros too, so scripts can read them. */
function whatChanges(report: ImportReport): string {
  const counts = (added: number, replaced: number, removed: number) =>
    `${formatCount(added)} to add, ${formatCount(replaced)} to replace, ${formatCount(removed)} to remove`;
  const namespaces = counts(
    report.namespacesChanged - report.namespacesReplaced,
    report.namespacesReplaced,
    report.namespacesRemoved,
  );
  const profiles = counts(
    report.profilesChanged - report.profilesReplaced,
    report.profilesReplaced,
    report.profilesRemoved,
  );
  return `namespaces ${namespaces}; profiles ${profiles}${nothingFound(report)}`;
}

/** The removals of an import, when it had any (the line of a plain import stays as it was). */
function removalSummary(report: ImportReport): string {
  if (report.removals === 0 && report.profilesRemoved === 0 && report.namespacesRemoved === 0) return '';
  return (
    `, removed ${formatCount(report.namespacesRemoved)} namespaces and ${formatCount(report.profilesRemoved)} profiles` +
    nothingFound(report)
  );
}

function nothingFound(report: ImportReport): string {
  const count = report.removalsOfNothing;
  if (count === 0) return '';
  return ` (${formatCount(count)} removal${count === 1 ? '' : 's'} of what did not exist)`;
}
