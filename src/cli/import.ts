/**
 * `npm run import -- [--bulk] <file>`: loads an NDJSON data file into the configured database,
 * all or nothing. `-` reads standard input. Bad lines are listed on stderr as `line N: reason`,
 * with a summary; the exit code is 1 when the file was rejected or could not be read, 2 for bad
 * usage or configuration. Progress goes to stderr on large files. `--bulk` checks foreign keys
 * once at the end (about twice as fast) but keeps the tables locked against readers meanwhile;
 * an import into a database without profiles (a first load) does so by itself, since there is
 * nothing to serve yet.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { type ImportReport, importStream } from '../data/importer.js';
import type { Database } from '../db/database.js';
import { profiles } from '../db/schema.js';
import {
  CommandError,
  commandConfig,
  databaseLabel,
  formatCount,
  formatSeconds,
  openCommandDatabase,
  parseArguments,
  runCommand,
  UsageError,
} from './command.js';

const USAGE =
  'npm run import -- [--bulk] <file.ndjson>   ("-" reads standard input; --bulk locks the tables while it runs, automatic into a database without profiles)';

runCommand(USAGE, async () => {
  const { path, bulk } = readArguments();
  const config = commandConfig();
  // The file is checked before the database is opened: a typo fails fast and touches nothing.
  const file = path === '-' ? undefined : await openReadable(path);
  const database = await openCommandDatabase(config);
  const startedAt = Date.now();
  try {
    const input = file?.createReadStream() ?? process.stdin;
    const firstLoad = !bulk && (await hasNoProfiles(database.db));
    if (firstLoad) process.stderr.write('The database has no profiles yet: loading in bulk mode.\n');
    const report = await importStream(database.db, input, {
      bulk: bulk || firstLoad,
      onProgress: ({ lines, elapsedMs }) => {
        const rate = Math.round(lines / (elapsedMs / 1000));
        process.stderr.write(`... ${formatCount(lines)} lines read (${formatCount(rate)} lines/s)\n`);
      },
    });
    return printReport(report, path === '-' ? 'standard input' : path, Date.now() - startedAt, databaseLabel(config));
  } finally {
    await file?.close();
    await database.close();
  }
});

async function hasNoProfiles(db: Database): Promise<boolean> {
  return (await db.select({ id: profiles.id }).from(profiles).limit(1)).length === 0;
}

function readArguments(): { path: string; bulk: boolean } {
  const { positionals, values } = parseArguments({
    options: { bulk: { type: 'boolean', default: false } },
    allowPositionals: true,
    strict: true,
  });
  const [path] = positionals;
  if (path === undefined || positionals.length !== 1) throw new UsageError('Name exactly one file to import.');
  return { path, bulk: values.bulk };
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

function printReport(report: ImportReport, source: string, elapsedMs: number, target: string): number {
  if (!report.ok) {
    for (const problem of report.problems) process.stderr.write(`line ${problem.line}: ${problem.reason}\n`);
    const unlisted = report.problemCount - report.problems.length;
    if (unlisted > 0) process.stderr.write(`... and ${formatCount(unlisted)} more bad lines\n`);
    process.stderr.write(
      `Rejected ${source}: ${formatCount(report.problemCount)} bad line${report.problemCount === 1 ? '' : 's'} ` +
        `of ${formatCount(report.lines)}. Nothing was written.\n`,
    );
    return 1;
  }
  process.stdout.write(
    `Imported ${source} into ${target.replace(/^The /, 'the ')}: ${formatCount(report.lines)} lines, ` +
      `${formatCount(report.namespaces)} namespaces (${formatCount(report.namespacesChanged)} new or changed), ` +
      `${formatCount(report.profiles)} profiles (${formatCount(report.profilesChanged)} new or changed) ` +
      `in ${formatSeconds(elapsedMs)}.\n`,
  );
  return 0;
}
