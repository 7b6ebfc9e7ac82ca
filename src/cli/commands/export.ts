/**
 * `npm run export -- <file>`: writes the whole configured database as NDJSON, in the format
 * `npm run import` reads (private e-mails included: keep the file safe). With `-` or no argument
 * it writes to standard output; use `npm run -s export` then, so npm's own banner stays out of
 * the data. A file is written under a temporary name and renamed at the end, so a failed export
 * never leaves a truncated file behind that looks complete; it is readable by its owner only.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { type ExportCounts, exportDatabase } from '../../data/exporter.js';
import type { Database } from '../../db/database.js';
import {
  type Command,
  CommandError,
  type CommandIo,
  commandConfig,
  formatCount,
  formatSeconds,
  parseArguments,
  UsageError,
  withCommandDatabase,
} from '../command.js';

const HELP = {
  usage: 'npm run export -- [file.ndjson]   ("-" or nothing: standard output, with npm run -s)',
  details: `
Writes every namespace and profile of the configured database (DATABASE_URL, or the embedded
database in DATA_DIR) as NDJSON in the format \`npm run import\` reads, from one consistent
snapshot: it can run while the service is serving.

The dump holds the private e-mails of owners and creators: a file is created readable by its
owner only (mode 0600). It is written under a temporary name and renamed when complete.

Examples:
  npm run export -- dump.ndjson
  npm run -s export > dump.ndjson
  npm run -s export | head`,
};

/** Owner read and write only: the dump holds private e-mails. */
const DUMP_FILE_MODE = 0o600;

export const exportCommand: Command = { help: HELP, main: exportAll };

async function exportAll(io: CommandIo): Promise<undefined> {
  const path = fileArgument(io);
  const config = commandConfig(io);
  await withCommandDatabase(config, async (database) => {
    const startedAt = Date.now();
    const counts =
      path === undefined ? await exportDatabase(database.db, io.stdout) : await exportToFile(database.db, path);
    // stderr, as stdout may be the data itself.
    io.stderr.write(
      `Exported ${formatCount(counts.namespaces)} namespaces and ${formatCount(counts.profiles)} profiles ` +
        `to ${path ?? 'standard output'} in ${formatSeconds(Date.now() - startedAt)}.\n`,
    );
  });
}

function fileArgument(io: CommandIo): string | undefined {
  const { positionals } = parseArguments(io, { allowPositionals: true, strict: true });
  if (positionals.length > 1) throw new UsageError('Name at most one file to export to.');
  const path = positionals[0];
  return path === '-' ? undefined : path;
}

async function exportToFile(db: Database, path: string): Promise<ExportCounts> {
  const partial = `${path}.partial-${process.pid}`;
  // The mode applies when the file is created (wx: always), and rename keeps it.
  const output = createWriteStream(partial, { flags: 'wx', mode: DUMP_FILE_MODE });
  try {
    const counts = await exportDatabase(db, output);
    output.end();
    await finished(output);
    await rename(partial, path);
    return counts;
  } catch (error) {
    output.destroy();
    await rm(partial, { force: true });
    // File-system errors carry a syscall; database errors go to the generic message.
    if (error instanceof Error && 'syscall' in error) throw new CommandError(`Cannot write ${path}: ${error.message}`);
    throw error;
  }
}
